r"""One batched exact GP over K fixed hyperparameter candidates.

Every rule in this package compares K candidate hyperparameter settings :math:`u_1, \dots, u_K`
that share one data set. For each candidate the exact posterior (Rasmussen & Williams, Eqs.
2.25-2.26) is

.. math::

    \mu_u(x) = m_u(x) + k_u(x, X) (K_u + \sigma_u^2 I)^{-1} (y - m_u(X)), \qquad
    \sigma_u^2(x) = k_u(x, x) - k_u(x, X) (K_u + \sigma_u^2 I)^{-1} k_u(X, x).

:class:`CandidateGP` is **one** GPyTorch ``ExactGP`` with ``batch_shape = (K,)``: the K kernel
matrices are factorised in one batched Cholesky and a posterior call evaluates all K candidates
(one kernel launch per operation on CUDA instead of K), the design of BoTorch's fully Bayesian
GPs, with candidates instead of posterior samples. The candidate dimension sits at ``-3`` of
every posterior, as BoTorch's ``MCMC_DIM``: :meth:`~CandidateGP.posterior` takes
``batch_shape x q x d`` and returns ``batch_shape x K x q x 1``;
:meth:`~CandidateModel.candidate_posterior` lets candidate ``k`` see its own points
(``batch_shape x K x q x d``); :meth:`~CandidateGP.marginal_mean_variance` gives only the marginals
in :math:`O(Kqn)` memory (the acquisitions' hot path); :meth:`~CandidateGP.select` returns one
candidate as a plain BoTorch model. Input and outcome transforms behave as in ``SingleTaskGP``.
Variances are exact (no LOVE): rules compare widths :math:`\beta_u\sigma_u(x)` across candidates.
GPyTorch's predictive cache is used with Cholesky solves, so each model is factorised once and
each call costs matrix products.

References:
    C. E. Rasmussen, C. K. I. Williams. Gaussian Processes for Machine Learning. 2006.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import gpytorch
import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.gpytorch import GPyTorchModel
from botorch.models.model import Model
from botorch.models.transforms.input import InputTransform
from botorch.models.transforms.outcome import OutcomeTransform
from botorch.models.utils.assorted import gpt_posterior_settings
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch.distributions import MultivariateNormal
from gpytorch.models import ExactGP
from linear_operator import to_dense
from torch import Tensor

from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.domains import check_training_data
from botorch_unknown_hypers.models.factor_cache import CandidateFactor, FactorCache

CANDIDATE_DIM = -3
r"""Position of the candidate dimension in posterior batch shapes (as BoTorch's MCMC_DIM)."""


class CandidateModel(Model):
    r"""Interface of a K-wide candidate model (a :class:`CandidateGP` or a group of them).

    Acquisition functions in this package only use this interface, so they
    never loop over candidates in Python.
    """

    num_candidates: int

    def labels(self) -> list[str]:
        raise NotImplementedError

    def marginal_mean_variance(self, X: Tensor, observation_noise: bool = False) -> tuple[Tensor, Tensor]:
        r"""Marginal posterior means and variances.

        Args:
            X: ``batch_shape x K x q x d`` (candidate ``k`` evaluated at
                ``X[..., k, :, :]``) or ``batch_shape x 1 x q x d`` (shared points).
            observation_noise: Add each candidate's noise variance.

        Returns:
            ``(mean, variance)``, each ``batch_shape x K x q``.
        """
        raise NotImplementedError

    def fixed_point_moments(self, X: Tensor) -> tuple[Tensor, Tensor] | None:
        r"""``K x m`` marginal means and variances at ``m x d`` points ``X`` from a cache kept for
        exactly those points, or ``None`` when the model keeps none for them (the default): the
        caller then uses :meth:`marginal_mean_variance`."""
        return None

    def _check_candidate_X(self, X: Tensor) -> None:
        r"""``X`` must be ``batch_shape x K x q x d`` or ``batch_shape x 1 x q x d``."""
        if X.ndim < 3 or X.shape[CANDIDATE_DIM] not in (1, self.num_candidates):
            raise ValueError(
                f"X must be batch_shape x K x q x d with K in (1, {self.num_candidates}), "
                f"got shape {tuple(X.shape)}."
            )

    def candidate_posterior(
        self,
        X: Tensor,
        observation_noise: bool = False,
        posterior_transform: PosteriorTransform | None = None,
    ) -> GPyTorchPosterior:
        r"""Posterior of shape ``batch_shape x K x q x 1``; candidate ``k`` sees ``X[..., k, :, :]``."""
        raise NotImplementedError

    def posterior(
        self,
        X: Tensor,
        output_indices: list[int] | None = None,
        observation_noise: bool | Tensor = False,
        posterior_transform: PosteriorTransform | None = None,
        **kwargs: Any,
    ) -> GPyTorchPosterior:
        r"""Joint posterior of all K candidates at the same points.

        Args:
            X: ``batch_shape x q x d`` points.
            output_indices: Must be ``None`` or ``[0]`` (single output).
            observation_noise: Add each candidate's noise variance (``bool`` only).
            posterior_transform: Optional BoTorch posterior transform.

        Returns:
            A posterior of shape ``batch_shape x K x q x 1`` (``batch_shape x q x 1``
            for a squeezed single-candidate view).
        """
        if output_indices not in (None, [0]):
            raise ValueError(f"output_indices: {type(self).__name__} has a single output.")
        if isinstance(observation_noise, Tensor):
            raise ValueError(f"observation_noise: only True/False is supported by {type(self).__name__}.")
        if X.ndim < 2:
            raise ValueError(f"X must be batch_shape x q x d, got shape {tuple(X.shape)}.")
        return self.candidate_posterior(
            X.unsqueeze(CANDIDATE_DIM),
            observation_noise=bool(observation_noise),
            posterior_transform=posterior_transform,
        )

    def subset(self, indices: Tensor | list[int]) -> CandidateModel:
        raise NotImplementedError

    def select(self, index: int) -> Model:
        raise NotImplementedError


class CandidateGP(ExactGP, GPyTorchModel, CandidateModel):
    r"""A batched exact GP whose K batch members are fixed hyperparameter candidates.

    Example:
        >>> train_X = torch.rand(20, 2, dtype=torch.float64)
        >>> train_Y = torch.sin(6 * train_X).sum(-1, keepdim=True)
        >>> cands = KernelCandidates.from_lengthscales(torch.tensor([0.4, 0.2, 0.1]))
        >>> model = CandidateGP(train_X, train_Y, cands)
        >>> model.posterior(torch.rand(5, 1, 2, dtype=torch.float64)).mean.shape
        torch.Size([5, 3, 1, 1])
    """

    _num_outputs = 1

    def __init__(
        self,
        train_X: Tensor,
        train_Y: Tensor,
        candidates: CandidateSpec,
        input_transform: InputTransform | None = None,
        outcome_transform: OutcomeTransform | None = None,
        squeeze_candidate_dim: bool = False,
        check_data: bool = True,
        factor: CandidateFactor | None = None,
    ) -> None:
        r"""
        Args:
            train_X: ``n x d`` training inputs shared by all candidates.
            train_Y: ``n x 1`` (or ``n``) training targets shared by all candidates.
            candidates: A :class:`~botorch_unknown_hypers.candidates.CandidateSpec`
                with K entries, e.g. :class:`~botorch_unknown_hypers.candidates.KernelCandidates`.
            input_transform: Optional BoTorch input transform (e.g. ``Normalize``).
            outcome_transform: Optional BoTorch outcome transform (e.g. ``Standardize(m=1)``).
            squeeze_candidate_dim: Drop the candidate dimension from posteriors;
                only for ``K = 1`` (this is what :meth:`select` returns).
            check_data: Check the data (:func:`~botorch_unknown_hypers.domains.check_training_data`);
                ``False`` for callers that checked them at their own boundary (the rules do,
                once per round).
            factor: Optional Cholesky factors of the K training covariances on the transformed
                inputs (:class:`~botorch_unknown_hypers.models.factor_cache.CandidateFactor`,
                usually kept across rounds by a
                :class:`~botorch_unknown_hypers.models.factor_cache.FactorCache`). With it,
                posteriors are computed from the factors (:math:`O(K q n^2)` per call) and the
                model never factorises; without it, GPyTorch's cached predictive factorises
                once at the first posterior call.
        """
        train_Y = check_training_data(train_X, train_Y) if check_data else train_Y.reshape(-1, 1)
        if not isinstance(candidates, CandidateSpec):
            raise ValueError(f"candidates must be a CandidateSpec, got {type(candidates).__name__}.")
        num = len(candidates)
        if num == 0:
            raise ValueError("candidates is empty: at least one candidate is needed.")
        if squeeze_candidate_dim and num != 1:
            raise ValueError("squeeze_candidate_dim is only valid for a single candidate.")
        raw_X, raw_Y = train_X, train_Y
        with torch.no_grad():
            transformed_X = self.transform_inputs(X=train_X, input_transform=input_transform)
        if outcome_transform is not None:
            outcome_transform.train()
            train_Y, _ = outcome_transform(train_Y, X=transformed_X)
        candidates = candidates.to(device=train_X.device, dtype=train_X.dtype)
        mean_module, covar_module, likelihood = candidates.build(dim=transformed_X.shape[-1])
        batch_shape = torch.Size([num])
        ExactGP.__init__(
            self,
            train_inputs=train_X.expand(*batch_shape, *train_X.shape),
            train_targets=train_Y.squeeze(-1).expand(*batch_shape, train_Y.shape[0]),
            likelihood=likelihood,
        )
        self.mean_module = mean_module
        self.covar_module = covar_module
        if input_transform is not None:
            self.input_transform = input_transform
        if outcome_transform is not None:
            self.outcome_transform = outcome_transform
        self.candidates = candidates
        self.num_candidates = num
        self._squeeze = squeeze_candidate_dim
        self.factor = None
        self.X_pending: Tensor | None = None
        self._pending_factor: Tensor | None = None  # K x (n + p) x (n + p)
        if factor is not None:
            if factor.num_candidates != num or not torch.equal(factor.X, transformed_X.detach()):
                raise ValueError(
                    f"factor must hold {num} candidates on the model's transformed training inputs "
                    f"({transformed_X.shape[0]} points), got {factor.num_candidates} on {factor.X.shape[0]}."
                )
            self.factor = factor
            with torch.no_grad():  # alpha_u = A_u^{-1} (y - m_u(X)): K x n
                resid = train_Y.reshape(1, -1) - mean_module(transformed_X).reshape(-1, transformed_X.shape[0])
                self._resid = resid.expand(num, -1)
                self._alpha = factor.solve(self._resid.unsqueeze(-1)).squeeze(-1)
        # Untransformed data, to rebuild views (subset / select / add_candidates).
        self._raw_train_X = raw_X
        self._raw_train_Y = raw_Y
        self.to(train_X)
        self.eval()

    # ------------------------------------------------------------------ basics
    @property
    def batch_shape(self) -> torch.Size:
        r"""``(K,)``, or ``()`` for a squeezed single-candidate view."""
        return torch.Size([]) if self._squeeze else torch.Size([self.num_candidates])

    @property
    def num_outputs(self) -> int:
        return 1

    @property
    def raw_train_X(self) -> Tensor:
        r"""The untransformed ``n x d`` training inputs."""
        return self._raw_train_X

    @property
    def raw_train_Y(self) -> Tensor:
        r"""The untransformed ``n x 1`` training targets."""
        return self._raw_train_Y

    def labels(self) -> list[str]:
        return self.candidates.labels()

    def forward(self, x: Tensor) -> MultivariateNormal:
        if self.training:
            x = self.transform_inputs(x)
        return MultivariateNormal(self.mean_module(x), self.covar_module(x))

    # -------------------------------------------------------------- posteriors
    def _check_X(self, X: Tensor) -> None:
        if X.ndim < 2 or X.shape[-1] != self._raw_train_X.shape[-1]:
            raise ValueError(
                f"X must be ... x q x d with d = {self._raw_train_X.shape[-1]}, "
                f"got shape {tuple(X.shape)}."
            )

    def _factor_moments(self, X: Tensor, full_cov: bool) -> tuple[Tensor, Tensor]:
        r"""Mean and (co)variance from the cached factors; ``X``: ``batch x K' x q x d`` transformed.

        :math:`\mu_u = m_u(x) + k_u(x, X)\alpha_u` and
        :math:`\Sigma_u = k_u(x, x') - V_u^\top V_u`, :math:`V_u = L_u^{-1} k_u(X, x)`, with every
        batch member's points stacked as right-hand sides of one triangular solve per candidate.
        Returns ``batch x K x q`` means and ``batch x K x q`` variances or ``batch x K x q x q``
        covariances.
        """
        F, K = self.factor, self.num_candidates
        n = F.X.shape[0]
        batch, q, d = X.shape[:-3], X.shape[-2], X.shape[-1]
        flat = X.movedim(-3, 0).reshape(X.shape[-3], -1, d).expand(K, -1, d)  # K x (B q) x d
        X_all, L_all = F.X, F.L
        if self._pending_factor is not None:  # variance also conditioned on pending points
            X_all, L_all = torch.cat([F.X, self._pending_t]), self._pending_factor
        with gpytorch.settings.lazily_evaluate_kernels(False):
            k_cross = to_dense(self.covar_module(flat, X_all))  # K x (B q) x (n + p)
        mean = self.mean_module(flat) + (k_cross[..., :n] @ self._alpha.unsqueeze(-1)).squeeze(-1)  # K x (B q)
        V = torch.linalg.solve_triangular(L_all, k_cross.transpose(-2, -1), upper=False)  # K x (n + p) x (B q)
        shape = (K, *batch, q) if batch else (K, q)
        mean = mean.reshape(shape).movedim(0, -2)
        if not full_cov:
            var = self._variance_from(flat, (V * V).sum(-2))  # K x (B q)
            return mean, var.reshape(shape).movedim(0, -2)
        Xk = flat.reshape(K, -1, q, d)  # K x B x q x d
        with gpytorch.settings.lazily_evaluate_kernels(False):
            prior = to_dense(self.covar_module(Xk.movedim(0, 1))).movedim(1, 0)  # K x B x q x q
        Vb = V.reshape(K, V.shape[-2], -1, q)  # K x n x B x q
        cov = prior - torch.einsum("knbi,knbj->kbij", Vb, Vb)
        cov = cov.reshape(K, *batch, q, q) if batch else cov.reshape(K, q, q)
        return mean, cov.movedim(0, -3)

    def _candidate_mvn(self, X: Tensor, observation_noise: bool) -> MultivariateNormal:
        r"""MVN of batch ``batch_shape x K`` over ``q`` points; ``X`` already transformed."""
        if self.factor is not None:
            mean, cov = self._factor_moments(X, full_cov=True)
            if observation_noise:
                cov = cov + torch.diag_embed(self.factor.noise[:, None].expand(-1, X.shape[-2]))
            return MultivariateNormal(mean, cov)
        # Exact and cached: GPyTorch's exact path (fast_pred_var off) refactorises the
        # n x n training covariance on every call (measured 1.5 s per evaluation at
        # K = 16, n = 500 on 2 CPU cores). Its predictive-covariance cache
        # (fast_pred_var on) with Cholesky instead of Lanczos root decompositions and
        # Cholesky solves instead of CG is exact to ~1e-13 and costs one O(K n^3)
        # factorisation per model, then O(K q n^2) matrix products per call (35 ms).
        with (
            gpt_posterior_settings(),
            gpytorch.settings.fast_pred_var(True),
            gpytorch.settings.fast_computations(
                covar_root_decomposition=False, log_prob=False, solves=False
            ),
        ):
            mvn = self(X)
            if observation_noise:
                mvn = self.likelihood(mvn, X)
        return mvn

    def candidate_posterior(
        self,
        X: Tensor,
        observation_noise: bool = False,
        posterior_transform: PosteriorTransform | None = None,
    ) -> GPyTorchPosterior:
        r"""Posterior where candidate ``k`` sees its own points.

        Args:
            X: ``batch_shape x K x q x d`` or ``batch_shape x 1 x q x d``.
            observation_noise: Add each candidate's noise variance.
            posterior_transform: Optional BoTorch posterior transform.

        Returns:
            A posterior of shape ``batch_shape x K x q x 1`` (``batch_shape x q x 1``
            for a squeezed single-candidate view).
        """
        self._check_X(X)
        self._check_candidate_X(X)
        if self.training:  # a recursive eval() per call costs more than the posterior at a few points
            self.eval()
        X = self.transform_inputs(X)
        mvn = self._candidate_mvn(X, observation_noise)
        if self._squeeze:
            # Single-candidate view: drop the (size-1) candidate dimension.
            mvn = MultivariateNormal(
                mvn.mean[..., 0, :], mvn.lazy_covariance_matrix[..., 0, :, :]
            )
            X = X[..., 0, :, :]
        posterior = GPyTorchPosterior(distribution=mvn)
        if hasattr(self, "outcome_transform"):
            posterior = self.outcome_transform.untransform_posterior(posterior, X=X)
        if posterior_transform is not None:
            return posterior_transform(posterior=posterior, X=X)
        return posterior

    # GPyTorchModel.posterior precedes CandidateModel's in the MRO; use the K-wide one.
    posterior = CandidateModel.posterior

    def marginal_mean_variance(self, X: Tensor, observation_noise: bool = False) -> tuple[Tensor, Tensor]:
        r"""Marginal means and variances, ``batch_shape x K x q`` each (see :class:`CandidateModel`).

        Only the diagonal of the predictive covariance is formed, so the memory is
        ``O(K q n)`` even for thousands of points per candidate.
        """
        self._check_X(X)
        self._check_candidate_X(X)
        if self.training:  # a recursive eval() per call costs more than the posterior at a few points
            self.eval()
        Xt = self.transform_inputs(X)
        if self.factor is not None:
            mean, variance = self._factor_moments(Xt, full_cov=False)
            if observation_noise:
                variance = variance + self.factor.noise[:, None]
        else:
            mvn = self._candidate_mvn(Xt, observation_noise)
            mean, variance = mvn.mean, mvn.variance
        return self._untransformed(mean, variance, Xt)

    def _variance_from(self, flat: Tensor, explained: Tensor) -> Tensor:
        r""":math:`\max(k_u(x, x) - e, \sigma^2_{\min})` at ``K x m x d`` points ``flat``, with ``explained``
        (``K x m``) the part of the prior variance the data explain."""
        with gpytorch.settings.lazily_evaluate_kernels(False):
            prior = to_dense(self.covar_module(flat, diag=True))  # K x m
        return (prior - explained).clamp_min(gpytorch.settings.min_variance.value(prior.dtype))

    def _untransformed(self, mean: Tensor, variance: Tensor, Xt: Tensor) -> tuple[Tensor, Tensor]:
        r"""Marginal means and variances (``... x K x q``) in the units of the raw targets."""
        tf = getattr(self, "outcome_transform", None)
        if tf is not None:
            mean, variance = tf.untransform(mean.unsqueeze(-1), variance.unsqueeze(-1), X=Xt)
            mean, variance = mean.squeeze(-1), variance.squeeze(-1)
        return mean, variance

    def fixed_point_moments(self, X: Tensor) -> tuple[Tensor, Tensor] | None:
        r"""Marginal means and variances at the factor cache's fixed points, ``K x m`` each, in
        :math:`O(Knm)` from the cached :math:`V_u = L_u^{-1}k_u(X, R)` (see
        :mod:`~botorch_unknown_hypers.models.factor_cache`):

        .. math::

            \mu_u(R) = m_u(R) + V_u^\top L_u^{-1}(y - m_u(X)), \qquad
            \sigma_u^2(R) = k_u(R, R)_{\text{diag}} - \mathbf 1^\top(V_u \circ V_u).

        ``X``: the ``m x d`` points in raw input units. ``None`` (the caller computes the moments
        itself) unless the model's factors carry fixed points equal to ``X`` after the input
        transform and no pending points condition the model.
        """
        F = self.factor
        if F is None or F.points is None or self._pending_factor is not None or self._squeeze:
            return None
        with torch.no_grad():
            Xt = self.transform_inputs(X.detach().to(self._raw_train_X))
            if Xt.shape != F.points.shape or not torch.equal(Xt, F.points):
                return None
            vw, sq = F.point_products(self._resid)
            flat = Xt.expand(self.num_candidates, *Xt.shape)
            return self._untransformed(self.mean_module(flat) + vw, self._variance_from(flat, sq), Xt)

    # ------------------------------------------------------------------- views
    def _rebuild(self, candidates: CandidateSpec, squeeze: bool = False, factor: CandidateFactor | None = None) -> CandidateGP:
        tf_in = copy.deepcopy(getattr(self, "input_transform", None))
        tf_out = copy.deepcopy(getattr(self, "outcome_transform", None))
        return CandidateGP(
            self._raw_train_X,
            self._raw_train_Y,
            candidates,
            input_transform=tf_in,
            outcome_transform=tf_out,
            squeeze_candidate_dim=squeeze,
            check_data=False,
            factor=factor,
        )

    def _subset_factor(self, indices: list[int]) -> CandidateFactor | None:
        return None if self.factor is None else self.factor.subset(indices)

    def condition_on_pending(self, X_pending: Tensor | None) -> CandidateGP:
        r"""The model with every candidate's variance also conditioned on ``X_pending`` and its
        mean frozen.

        For pending points :math:`Q` (``p x d``, raw input units; points still being evaluated,
        or the earlier slots of a batch),

        .. math::

            \mu_u(x \mid Q) = \mu_u(x), \qquad
            \sigma_u^2(x \mid Q) = k_u(x, x) - k_u(x, X')(K_u(X', X') + \sigma_u^2 I)^{-1} k_u(X', x),
            \quad X' = [X; Q],

        the posterior after observing :math:`Q` at its posterior mean (the fantasy of BUCB,
        Desautels et al. 2014): the variance at and near a pending point drops to the noise level,
        so an acquisition maximised on this model does not propose it again. The factors grow by
        one block update (:meth:`~botorch_unknown_hypers.models.factor_cache.CandidateFactor.extended`);
        a model without cached factors factorises once. ``None`` or no rows give this model's
        view without pending points.
        """
        if X_pending is not None and (X_pending.ndim != 2 or X_pending.shape[-1] != self._raw_train_X.shape[-1]):
            raise ValueError(f"X_pending must be p x {self._raw_train_X.shape[-1]}, got shape {tuple(X_pending.shape)}.")
        if self.factor is not None and not self.training:
            model = self._view()
        else:
            factor = self.factor if self.factor is not None else self._own_factor()
            model = self._rebuild(self.candidates, squeeze=self._squeeze, factor=factor)
        factor = model.factor
        if X_pending is None or X_pending.shape[0] == 0:
            return model
        with torch.no_grad():
            Pt = model.transform_inputs(X_pending.detach().to(self._raw_train_X))
            model._pending_factor = factor.extended(model.covar_module, Pt)
        model._pending_t = Pt
        model.X_pending = X_pending
        return model

    def _view(self) -> CandidateGP:
        r"""A copy sharing this model's modules, factors and :math:`\alpha` (all fixed in eval mode)
        without pending points: what :meth:`_rebuild` would give, without building and
        transforming the model again (a slot of a batch asks for one per slot)."""
        view = copy.copy(self)
        for name in ("_parameters", "_buffers", "_modules"):  # own registries: later assignments stay local
            view.__dict__[name] = dict(self.__dict__[name])
        view.X_pending, view._pending_factor, view._pending_t = None, None, None
        return view

    def _own_factor(self) -> CandidateFactor:
        r"""The factors of this model's candidates, computed once (no cache across rounds)."""
        with torch.no_grad():
            Xt = self.transform_inputs(self._raw_train_X)
        return FactorCache().factor(self.candidates, Xt)

    def subset(self, indices: Tensor | list[int]) -> CandidateGP:
        r"""A ``CandidateGP`` over the candidates at ``indices`` (same data, transforms and factors)."""
        indices = [int(i) for i in indices]
        view = self._rebuild(self.candidates.subset(indices), factor=self._subset_factor(indices))
        return view if self.X_pending is None else view.condition_on_pending(self.X_pending)

    def log_marginal_likelihood(self) -> Tensor:
        r"""Exact log marginal likelihood :math:`\log p(y \mid X, u)` of every candidate.

        .. math::

            \log p(y \mid u) = -\tfrac12 (y - m_u)^\top (K_u + \sigma_u^2 I)^{-1} (y - m_u)
                - \tfrac12 \log|K_u + \sigma_u^2 I| - \tfrac n2 \log 2\pi,

        of the (outcome-transformed) training targets; an outcome transform adds the
        same constant to every candidate, so argmax and posterior weights are unchanged.

        Returns:
            ``K`` values (one per candidate).
        """
        if self.factor is not None:  # -1/2 r^T alpha - 1/2 log det A - n/2 log 2 pi
            with torch.no_grad():
                Xt = self.factor.X
                resid = self.train_targets - self.mean_module(Xt).reshape(-1, Xt.shape[0])
                fit = (resid * self._alpha).sum(-1)
                n = Xt.shape[0]
                return -0.5 * (fit + self.factor.logdet() + n * math.log(2 * math.pi))
        X = self.transform_inputs(self._raw_train_X)
        with torch.no_grad(), gpytorch.settings.fast_computations(log_prob=False):
            prior = MultivariateNormal(self.mean_module(X), self.covar_module(X))
            marginal = self.likelihood(prior)
            return marginal.log_prob(self.train_targets).reshape(self.num_candidates)

    def select(self, index: int) -> CandidateGP:
        r"""Candidate ``index`` as a plain single-output model (no candidate dimension).

        Its posteriors have BoTorch's usual ``batch_shape x q x 1`` shape, so it
        works with any BoTorch acquisition function and ``optimize_acqf``.
        """
        if not (-self.num_candidates <= int(index) < self.num_candidates):
            raise ValueError(f"index must lie in [0, {self.num_candidates - 1}], got {index}.")
        index = int(index) % self.num_candidates
        view = self._rebuild(self.candidates.subset([index]), squeeze=True, factor=self._subset_factor([index]))
        return view if self.X_pending is None else view.condition_on_pending(self.X_pending)

    def add_candidates(self, candidates: CandidateSpec) -> CandidateGP:
        r"""A model with ``candidates`` appended after the current K.

        The existing candidates keep their hyperparameters exactly (nothing is
        refitted); only the batched Cholesky is recomputed, lazily, at the next
        posterior call.
        """
        return self._rebuild(self.candidates.cat(candidates))

    def condition_on_observations(self, X: Tensor, Y: Tensor, **kwargs: Any) -> CandidateGP:
        r"""A model that also observed ``(X, Y)`` (``m x d``, ``m x 1``), untransformed scale.

        Note that an outcome transform is re-fitted on all data, as a fresh model would.
        """
        Y = check_training_data(X, Y)
        new = CandidateGP(
            torch.cat([self._raw_train_X, X]),
            torch.cat([self._raw_train_Y, Y]),
            self.candidates,
            input_transform=copy.deepcopy(getattr(self, "input_transform", None)),
            outcome_transform=copy.deepcopy(getattr(self, "outcome_transform", None)),
            squeeze_candidate_dim=self._squeeze,
        )
        return new
