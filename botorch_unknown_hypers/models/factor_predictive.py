r"""The posterior of K candidates from their cached Cholesky factors (the factor path of
:class:`~botorch_unknown_hypers.models.candidate_gp.CandidateGP`).

With :math:`A_u = k_u(X, X) + (s_u + j_u) I = L_u L_u^\top` (a
:class:`~botorch_unknown_hypers.models.factor_cache.CandidateFactor`, usually kept across rounds
by a :class:`~botorch_unknown_hypers.models.factor_cache.FactorCache`) and the residuals
:math:`r_u = y - m_u(X)` of the (outcome-transformed) targets, candidate :math:`u`'s posterior at
points :math:`x` is

.. math::

    \mu_u(x) = m_u(x) + k_u(x, X)\alpha_u, \quad \alpha_u = A_u^{-1} r_u, \qquad
    \Sigma_u(x, x') = k_u(x, x') - V_u(x)^\top V_u(x'), \quad V_u(x) = L_u^{-1} k_u(X, x),

at :math:`O(K q n^2)` per call and no factorisation. Pending points :math:`Q` condition the
variance only (the fantasy of BUCB, Desautels et al. 2014): :math:`V_u` is then solved against the
factor of :math:`[X; Q]`, grown from :math:`L_u` by one block update
(:meth:`~botorch_unknown_hypers.models.factor_cache.CandidateFactor.extended`), and the mean keeps
:math:`\alpha_u`. The log marginal likelihood is
:math:`-\tfrac12 r_u^\top\alpha_u - \tfrac12\log\det A_u - \tfrac n2\log 2\pi`, with the
log-determinant from the factor's diagonal.
"""

from __future__ import annotations

import math

import gpytorch
import torch
from gpytorch.distributions import MultivariateNormal
from gpytorch.kernels import Kernel
from gpytorch.means import Mean
from gpytorch.models import ExactGP
from linear_operator import to_dense, to_linear_operator
from torch import Tensor

from botorch_unknown_hypers.host import host_tensor
from botorch_unknown_hypers.models.factor_cache import CandidateFactor
from botorch_unknown_hypers.models.quiet_normal import QuietMultivariateNormal


def variance_from(covar_module: Kernel, flat: Tensor, explained: Tensor) -> Tensor:
    r""":math:`\max(k_u(x, x) - e, \sigma^2_{\min})` at ``K x m x d`` points ``flat``, with ``explained``
    (``K x m``) the part of the prior variance the data explain."""
    with gpytorch.settings.lazily_evaluate_kernels(False):
        prior = to_dense(covar_module(flat, diag=True))  # K x m
    return (prior - explained).clamp_min(gpytorch.settings.min_variance.value(prior.dtype))


class FactorPredictive:
    r"""Posterior moments of K candidates from their cached factors (see the module docstring).

    What it holds (never changed after construction):

    - ``factor``: the :class:`~botorch_unknown_hypers.models.factor_cache.CandidateFactor` of
      :math:`A_u` on the model's transformed training inputs ``factor.X`` (``n x d``);
    - ``residual``: :math:`r_u = y - m_u(X)` (``K x n``), ``y`` the outcome-transformed targets;
    - ``alpha``: :math:`A_u^{-1} r_u` (``K x n``);
    - ``pending`` (``p x d``, transformed inputs) and ``pending_factor`` (``K x (n + p) x (n + p)``,
      the factor of :math:`[X; Q]`): both ``None`` without pending points.

    When it is valid: for the model it was built with (:meth:`from_factor`) and for views that share
    that model's mean and kernel modules, in eval mode, with the same candidates in the same order,
    the same transformed inputs (the model checks ``factor.X`` against them) and the same targets.
    Neither the model nor this object changes them in place: new data, new candidates or new
    hyperparameters build a new model and with it a new predictive.

    How it is updated: never in place. :meth:`conditioned` returns a new predictive that shares
    ``factor``, ``residual`` and ``alpha`` and grows the factor by the pending points;
    :meth:`without_pending` drops them; :meth:`subset` gives a view of some candidates their
    factors and their rows of ``residual`` and ``alpha``.
    """

    def __init__(
        self,
        factor: CandidateFactor,
        residual: Tensor,
        alpha: Tensor,
        pending: Tensor | None = None,
        pending_factor: Tensor | None = None,
    ) -> None:
        self.factor = factor
        self.residual = residual
        self.alpha = alpha
        self.pending = pending
        self.pending_factor = pending_factor

    @classmethod
    def from_factor(cls, factor: CandidateFactor, mean_module: Mean, X: Tensor, Y: Tensor) -> FactorPredictive:
        r"""The predictive of a model with mean module ``mean_module`` (K-batched) on transformed inputs
        ``X`` (``n x d``, equal to ``factor.X``) and outcome-transformed targets ``Y`` (``n x 1``)."""
        num = factor.num_candidates
        with torch.no_grad():  # alpha_u = A_u^{-1} (y - m_u(X)): K x n
            residual = Y.reshape(1, -1) - mean_module(X).reshape(-1, X.shape[0])
            residual = residual.expand(num, -1)
            alpha = factor.solve(residual.unsqueeze(-1)).squeeze(-1)
        return cls(factor, residual, alpha)

    def conditioned(self, covar_module: Kernel, pending: Tensor) -> FactorPredictive:
        r"""This predictive with the variance also conditioned on ``pending`` (``p x d``, transformed
        inputs; replaces earlier pending points) and the mean unchanged."""
        with torch.no_grad():
            pending_factor = self.factor.extended(covar_module, pending)
        return FactorPredictive(self.factor, self.residual, self.alpha, pending, pending_factor)

    def without_pending(self) -> FactorPredictive:
        r"""This predictive without pending points (itself when it has none)."""
        if self.pending is None:
            return self
        return FactorPredictive(self.factor, self.residual, self.alpha)

    def subset(self, indices: list[int]) -> FactorPredictive:
        r"""The predictive of the candidates at ``indices`` for a view of the same model (same data,
        transforms and hyperparameter values), without pending points: their factors and their
        rows of ``residual`` and :math:`\alpha`, taken rather than solved again. Each candidate's
        :math:`\alpha_u` is solved on its own factor (:meth:`CandidateFactor.solve`), so the rows
        are what :meth:`from_factor` would give the view, bit for bit, without comparing its
        targets with the last solve's (a read of the device)."""
        idx = host_tensor([int(i) for i in indices], torch.long, self.alpha.device)
        return FactorPredictive(self.factor.subset(indices), self.residual.index_select(0, idx), self.alpha.index_select(0, idx))

    @property
    def fixed_points(self) -> Tensor | None:
        r"""The factor's fixed points (``m x d``, transformed inputs) when :meth:`fixed_point_moments`
        can use them: ``None`` without them or with pending points (which change the variance)."""
        return None if self.pending is not None else self.factor.points

    @property
    def fixed_raw_points(self) -> Tensor | None:
        r"""The tensor whose input transform :attr:`fixed_points` are, when the factor names it
        (``CandidateFactor.raw_points``), else ``None``; ``None`` with pending points too."""
        return None if self.pending is not None else self.factor.raw_points

    def moments(self, mean_module: Mean, covar_module: Kernel, X: Tensor, full_cov: bool) -> tuple[Tensor, Tensor]:
        r"""Mean and (co)variance at transformed points ``X`` (``batch x K' x q x d``, :math:`K'` 1 or K).

        :math:`\mu_u = m_u(x) + k_u(x, X)\alpha_u` and
        :math:`\Sigma_u = k_u(x, x') - V_u^\top V_u`, :math:`V_u = L_u^{-1} k_u(X, x)`, with every
        batch member's points stacked as right-hand sides of one triangular solve per candidate.
        Returns ``batch x K x q`` means and ``batch x K x q`` variances or ``batch x K x q x q``
        covariances.
        """
        factor, K = self.factor, self.factor.num_candidates
        n = factor.X.shape[0]
        batch, q, d = X.shape[:-3], X.shape[-2], X.shape[-1]
        flat = X.movedim(-3, 0).reshape(X.shape[-3], -1, d).expand(K, -1, d)  # K x (B q) x d
        X_all = factor.X if self.pending_factor is None else torch.cat([factor.X, self.pending])
        with gpytorch.settings.lazily_evaluate_kernels(False):
            k_cross = to_dense(covar_module(flat, X_all))  # K x (B q) x (n + p)
        mean = mean_module(flat) + (k_cross[..., :n] @ self.alpha.unsqueeze(-1)).squeeze(-1)  # K x (B q)
        if self.pending_factor is None:  # K x n x (B q), on the factors in place
            V = factor.solve_lower(k_cross.transpose(-2, -1))
        else:  # variance also conditioned on pending points: K x (n + p) x (B q)
            V = torch.linalg.solve_triangular(self.pending_factor, k_cross.transpose(-2, -1), upper=False)
        shape = (K, *batch, q) if batch else (K, q)
        mean = mean.reshape(shape).movedim(0, -2)
        if not full_cov:
            var = variance_from(covar_module, flat, (V * V).sum(-2))  # K x (B q)
            return mean, var.reshape(shape).movedim(0, -2)
        Xk = flat.reshape(K, -1, q, d)  # K x B x q x d
        with gpytorch.settings.lazily_evaluate_kernels(False):
            prior = to_dense(covar_module(Xk.movedim(0, 1))).movedim(1, 0)  # K x B x q x q
        Vb = V.reshape(K, V.shape[-2], -1, q)  # K x n x B x q
        cov = prior - torch.einsum("knbi,knbj->kbij", Vb, Vb)
        cov = cov.reshape(K, *batch, q, q) if batch else cov.reshape(K, q, q)
        return mean, cov.movedim(0, -3)

    # The interface CandidateGP calls (shared with GPyTorchPredictive); ``model`` supplies the
    # mean and kernel modules and the training targets this predictive was built for.
    def mvn(self, model: ExactGP, X: Tensor, observation_noise: bool, lazy: bool = False) -> MultivariateNormal:
        r"""MVN of batch ``batch_shape x K`` over ``q`` points; ``X`` already transformed. Its covariance
        is dense (factorised at construction, a host read for the factorisation's check), or with
        ``lazy`` a linear operator left unfactorised."""
        mean, cov = self.moments(model.mean_module, model.covar_module, X, full_cov=True)
        if observation_noise:
            cov = cov + torch.diag_embed(self.factor.noise[:, None].expand(-1, X.shape[-2]))
        return QuietMultivariateNormal(mean, to_linear_operator(cov) if lazy else cov)

    def marginals(self, model: ExactGP, X: Tensor, observation_noise: bool) -> tuple[Tensor, Tensor]:
        r"""Marginal means and variances (``batch_shape x K x q``) at transformed points ``X``; only
        the diagonal of the covariance is formed."""
        mean, variance = self.moments(model.mean_module, model.covar_module, X, full_cov=False)
        if observation_noise:
            variance = variance + self.factor.noise[:, None]
        return mean, variance

    def fixed_point_moments(self, model: ExactGP, X: Tensor) -> tuple[Tensor, Tensor]:
        r"""``K x m`` means and variances at the fixed points ``X`` (``m x d``, transformed, equal to
        :attr:`fixed_points`) in :math:`O(Knm)` from the factor's kept solves (see
        :mod:`~botorch_unknown_hypers.models.factor_cache`):
        :math:`\mu_u(Z) = m_u(Z) + V_u^\top L_u^{-1} r_u`,
        :math:`\sigma_u^2(Z) = k_u(Z, Z)_{\text{diag}} - \mathbf 1^\top(V_u \circ V_u)`."""
        vw, sq = self.factor.point_products(self.residual)
        flat = X.expand(self.factor.num_candidates, *X.shape)
        return model.mean_module(flat) + vw, variance_from(model.covar_module, flat, sq)

    def log_marginal_likelihood(self, model: ExactGP) -> Tensor:
        r""":math:`-\tfrac12 r_u^\top\alpha_u - \tfrac12\log\det A_u - \tfrac n2\log 2\pi` (``K``)."""
        with torch.no_grad():
            Xt = self.factor.X
            resid = model.train_targets - model.mean_module(Xt).reshape(-1, Xt.shape[0])
            fit = (resid * self.alpha).sum(-1)
            n = Xt.shape[0]
            return -0.5 * (fit + self.factor.logdet() + n * math.log(2 * math.pi))


__all__ = ["FactorPredictive", "variance_from"]
