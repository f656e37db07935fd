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
each call costs matrix products; a model given cached factors computes its posteriors from them
instead (:class:`~botorch_unknown_hypers.models.factor_predictive.FactorPredictive`).

References:
    C. E. Rasmussen, C. K. I. Williams. Gaussian Processes for Machine Learning. 2006.
"""

from __future__ import annotations

import copy
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
from torch import Tensor

from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.domains import check_training_data
from botorch_unknown_hypers.host import to_device
from botorch_unknown_hypers.models.factor_cache import CandidateFactor, FactorCache
from botorch_unknown_hypers.models.factor_predictive import FactorPredictive
from botorch_unknown_hypers.models.quiet_normal import (
    QuietMultivariateNormal,
    untransformed_marginals,
    untransformed_posterior,
)
from botorch_unknown_hypers.shared_constraints import build_sharing

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
            raise ValueError(f"X must be batch_shape x K x q x d with K in (1, {self.num_candidates}), got shape {tuple(X.shape)}.")

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


class GPyTorchPredictive:
    r"""The posterior of K candidates through GPyTorch's exact predictive, for a :class:`CandidateGP`
    built without factors.

    It holds nothing: GPyTorch keeps its predictive cache on the model (``prediction_strategy``),
    factorises the K training covariances at the first posterior call and reuses them while the
    model's data and modules stay as they are. Conditioning on pending points needs the factors
    themselves, so :meth:`CandidateGP.condition_on_pending` gives a model on the factor path
    (:class:`~botorch_unknown_hypers.models.factor_predictive.FactorPredictive`).
    """

    factor: CandidateFactor | None = None
    fixed_points: Tensor | None = None
    fixed_raw_points: Tensor | None = None

    def subset(self, indices: list[int]) -> GPyTorchPredictive:
        r"""A view's predictive: GPyTorch's own, which holds nothing."""
        return GPyTorchPredictive()

    def mvn(self, model: CandidateGP, X: Tensor, observation_noise: bool, lazy: bool = False) -> MultivariateNormal:
        r"""MVN of batch ``batch_shape x K`` over ``q`` points; ``X`` already transformed (its covariance
        always lazy: ``lazy`` is for the factor path's interface)."""
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
            mvn = model(X)  # of forward's class, as is the likelihood's marginal
            if observation_noise:
                mvn = model.likelihood(mvn, X)
        return mvn

    def marginals(self, model: CandidateGP, X: Tensor, observation_noise: bool) -> tuple[Tensor, Tensor]:
        r"""Marginal means and variances (``batch_shape x K x q``) at transformed points ``X``."""
        mvn = self.mvn(model, X, observation_noise)
        return mvn.mean, mvn.variance

    def log_marginal_likelihood(self, model: CandidateGP) -> Tensor:
        r"""``K`` log marginal likelihoods from GPyTorch's ``MultivariateNormal.log_prob``."""
        X = model.transform_inputs(model.raw_train_X)
        with torch.no_grad(), gpytorch.settings.fast_computations(log_prob=False):
            prior = MultivariateNormal(model.mean_module(X), model.covar_module(X))
            marginal = model.likelihood(prior)
            return marginal.log_prob(model.train_targets).reshape(model.num_candidates)


class CandidateGP(ExactGP, GPyTorchModel, CandidateModel):
    r"""A batched exact GP whose K batch members are fixed hyperparameter candidates.

    Its posteriors come from one of two predictive strategies, chosen at construction and held in
    :attr:`predictive`: with ``factor``, a
    :class:`~botorch_unknown_hypers.models.factor_predictive.FactorPredictive` on those Cholesky
    factors (its docstring states what it holds and when it is valid); without, a
    :class:`GPyTorchPredictive` through GPyTorch's cached exact predictive. The methods of this
    class do not branch on which one it is.

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
        modules: tuple[gpytorch.means.Mean, gpytorch.kernels.Kernel, gpytorch.likelihoods.Likelihood] | None = None,
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
            check_data: Check the data (:func:`~botorch_unknown_hypers.domains.check_training_data`)
                and that ``factor`` was computed on them; ``False`` for callers that checked them
                at their own boundary and computed ``factor`` on them (the rules do, once per
                round): then only the factor's shape is compared.
            factor: Optional Cholesky factors of the K training covariances on the transformed
                inputs (:class:`~botorch_unknown_hypers.models.factor_cache.CandidateFactor`,
                usually kept across rounds by a
                :class:`~botorch_unknown_hypers.models.factor_cache.FactorCache`). With it,
                posteriors are computed from the factors (:math:`O(K q n^2)` per call) and the
                model never factorises; without it, GPyTorch's cached predictive factorises
                once at the first posterior call.
            modules: ``candidates.build(d)`` on the data's device and dtype when the caller holds
                it already (a rule keeps it across rounds): shared, not copied; only the kernel's
                batch shape is checked (``K``): checking the values would read the device.
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
        if modules is not None and modules[1].batch_shape != torch.Size([num]):
            raise ValueError(f"modules must hold {num} candidates, got a kernel of batch shape {tuple(modules[1].batch_shape)}.")
        mean_module, covar_module, likelihood = modules or candidates.build(dim=transformed_X.shape[-1])
        predictive: FactorPredictive | GPyTorchPredictive = GPyTorchPredictive()
        if factor is not None:
            same = factor.X.shape == transformed_X.shape and (not check_data or torch.equal(factor.X, transformed_X.detach()))
            if factor.num_candidates != num or not same:
                raise ValueError(
                    f"factor must hold {num} candidates on the model's transformed training inputs "
                    f"({transformed_X.shape[0]} points), got {factor.num_candidates} on {factor.X.shape[0]}."
                )
            predictive = FactorPredictive.from_factor(factor, mean_module, transformed_X, train_Y)
        self._assemble(
            train_X.expand(num, *train_X.shape), train_Y.squeeze(-1).expand(num, train_Y.shape[0]), likelihood,
            mean_module, covar_module, input_transform, outcome_transform, candidates, squeeze_candidate_dim,
            predictive, raw_X, raw_Y,
        )
        to_device(self, train_X)
        self.eval()

    def _assemble(
        self,
        train_inputs: Tensor,
        train_targets: Tensor,
        likelihood: gpytorch.likelihoods.Likelihood,
        mean_module: gpytorch.means.Mean,
        covar_module: gpytorch.kernels.Kernel,
        input_transform: InputTransform | None,
        outcome_transform: OutcomeTransform | None,
        candidates: CandidateSpec,
        squeeze: bool,
        predictive: FactorPredictive | GPyTorchPredictive,
        raw_X: Tensor,
        raw_Y: Tensor,
    ) -> None:
        r"""Initialise the module from its parts, used as given (not copied): the K-batched training
        inputs ``K x n x d`` and targets ``K x n``, modules, transforms, predictive and the raw
        ``n x d`` and ``n x 1`` data."""
        ExactGP.__init__(self, train_inputs=train_inputs, train_targets=train_targets, likelihood=likelihood)
        self.mean_module = mean_module
        self.covar_module = covar_module
        if input_transform is not None:
            self.input_transform = input_transform
        if outcome_transform is not None:
            self.outcome_transform = outcome_transform
        self.candidates = candidates
        self.num_candidates = len(candidates)
        self._squeeze = squeeze
        self.predictive = predictive
        self.X_pending: Tensor | None = None
        # Untransformed data, to rebuild views (subset / select / add_candidates).
        self._raw_train_X = raw_X
        self._raw_train_Y = raw_Y

    # ------------------------------------------------------------------ basics
    @property
    def batch_shape(self) -> torch.Size:
        r"""``(K,)``, or ``()`` for a squeezed single-candidate view."""
        return torch.Size([]) if self._squeeze else torch.Size([self.num_candidates])

    @property
    def num_outputs(self) -> int:
        return 1

    @property
    def factor(self) -> CandidateFactor | None:
        r"""The cached factors the posteriors come from, or ``None`` on GPyTorch's predictive."""
        return self.predictive.factor

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
        return QuietMultivariateNormal(self.mean_module(x), self.covar_module(x))

    # -------------------------------------------------------------- posteriors
    def _check_X(self, X: Tensor) -> None:
        if X.ndim < 2 or X.shape[-1] != self._raw_train_X.shape[-1]:
            raise ValueError(f"X must be ... x q x d with d = {self._raw_train_X.shape[-1]}, got shape {tuple(X.shape)}.")

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
        mvn = self.predictive.mvn(self, X, observation_noise, lazy=self._squeeze)  # a view slices it lazily
        if self._squeeze:  # single-candidate view: drop the (size-1) candidate dimension
            mvn = QuietMultivariateNormal(mvn.mean[..., 0, :], mvn.lazy_covariance_matrix[..., 0, :, :])
            X = X[..., 0, :, :]
        posterior = untransformed_posterior(mvn, getattr(self, "outcome_transform", None), X)
        if posterior_transform is not None:
            return posterior_transform(posterior=posterior, X=X)
        return posterior

    # GPyTorchModel.posterior precedes CandidateModel's in the MRO; use the K-wide one.
    posterior = CandidateModel.posterior

    def marginal_mean_variance(self, X: Tensor, observation_noise: bool = False) -> tuple[Tensor, Tensor]:
        r"""Marginal means and variances, ``batch_shape x K x q`` each (see :class:`CandidateModel`).

        Only the diagonal of the predictive covariance is formed on the factor path, so the memory
        is ``O(K q n)`` even for thousands of points per candidate.
        """
        self._check_X(X)
        self._check_candidate_X(X)
        if self.training:  # a recursive eval() per call costs more than the posterior at a few points
            self.eval()
        Xt = self.transform_inputs(X)
        mean, variance = self.predictive.marginals(self, Xt, observation_noise)
        return self._untransformed(mean, variance, Xt)

    def _untransformed(self, mean: Tensor, variance: Tensor, Xt: Tensor) -> tuple[Tensor, Tensor]:
        r"""Marginal means and variances (``... x K x q``) in the units of the raw targets."""
        return untransformed_marginals(mean, variance, getattr(self, "outcome_transform", None), Xt)

    def fixed_point_moments(self, X: Tensor) -> tuple[Tensor, Tensor] | None:
        r"""Marginal means and variances at the factor cache's fixed points :math:`Z`, ``K x m`` each,
        in :math:`O(Knm)` from the cached :math:`V_u = L_u^{-1}k_u(X, Z)` (see
        :mod:`~botorch_unknown_hypers.models.factor_cache`):

        .. math::

            \mu_u(Z) = m_u(Z) + V_u^\top L_u^{-1}(y - m_u(X)), \qquad
            \sigma_u^2(Z) = k_u(Z, Z)_{\text{diag}} - \mathbf 1^\top(V_u \circ V_u).

        ``X``: the ``m x d`` points in raw input units. ``None`` (the caller computes the moments
        itself) unless the model's factors carry fixed points equal to ``X`` after the input
        transform (or name ``X`` itself as their raw points) and no pending points condition the model.
        """
        points = self.predictive.fixed_points
        if points is None or self._squeeze:
            return None
        with torch.no_grad():
            Xt = points if X is self.predictive.fixed_raw_points else self.transform_inputs(to_device(X.detach(), self._raw_train_X))
            if Xt is not points and (Xt.shape != points.shape or not torch.equal(Xt, points)):  # by value: one read
                return None
            mean, variance = self.predictive.fixed_point_moments(self, Xt)
            return self._untransformed(mean, variance, Xt)

    # ------------------------------------------------------------------- views
    def _rebuild(self, candidates: CandidateSpec, squeeze: bool = False, factor: CandidateFactor | None = None,
                 own: bool = False, predictive: FactorPredictive | GPyTorchPredictive | None = None) -> CandidateGP:
        r"""A model on this one's data and transforms; ``own``: ``candidates`` are this model's, whose modules it
        shares (other candidates' modules share its constraints); ``predictive``: the new model's, given by this model's
        (``predictive.subset``), in place of ``factor``."""
        model = CandidateGP(
            self._raw_train_X,
            self._raw_train_Y,
            candidates,
            input_transform=copy.deepcopy(getattr(self, "input_transform", None)),
            outcome_transform=copy.deepcopy(getattr(self, "outcome_transform", None)),
            squeeze_candidate_dim=squeeze,
            check_data=False,
            factor=factor,
            modules=(self.mean_module, self.covar_module, self.likelihood) if own else build_sharing(
                candidates, self.train_inputs[0].shape[-1], self.covar_module, self.likelihood, self._raw_train_X),
        )
        model.predictive = model.predictive if predictive is None else predictive
        return model

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
        view without pending points. The result is always on the factor path.
        """
        if X_pending is not None and (X_pending.ndim != 2 or X_pending.shape[-1] != self._raw_train_X.shape[-1]):
            raise ValueError(f"X_pending must be p x {self._raw_train_X.shape[-1]}, got shape {tuple(X_pending.shape)}.")
        if self.factor is not None and not self.training:
            model = self._view()
        else:
            factor = self.factor if self.factor is not None else self._own_factor()
            model = self._rebuild(self.candidates, squeeze=self._squeeze, factor=factor, own=True)
        if X_pending is None or X_pending.shape[0] == 0:
            return model
        with torch.no_grad():
            pending = model.transform_inputs(X_pending.detach().to(self._raw_train_X))
        model.predictive = model.predictive.conditioned(model.covar_module, pending)
        model.X_pending = X_pending
        return model

    def _view(self) -> CandidateGP:
        r"""This model without pending points: what :meth:`_rebuild` would give, without building
        the modules, transforming the data or solving for :math:`\alpha` again (a slot of a batch
        asks for one per slot).

        A shallow copy (``copy.copy``). Shared with this model, by reference: the likelihood, the
        mean and kernel modules, the transforms, the training data, the candidates and the factor
        predictive's factor, residual and :math:`\alpha` (all fixed in eval mode). The view's own:
        its predictive, its pending points and PyTorch's registries of modules, parameters and
        buffers (copied dicts of the same objects, so that a module assigned to the view stays on
        the view). A copy rather than :meth:`_assemble`: a newly initialised module holds a
        reference cycle (GPyTorch registers a bound method of it as a state-dict hook), so a
        discarded view and its ``K x (n + p) x (n + p)`` pending factor would wait for the cyclic
        garbage collector, and each slot would allocate fresh memory (measured: 2-3x the time of
        :meth:`condition_on_pending` at K = 11, n = 500).
        """
        view = copy.copy(self)
        view._modules, view._parameters, view._buffers = dict(self._modules), dict(self._parameters), dict(self._buffers)
        view.predictive = self.predictive.without_pending()
        view.X_pending = None
        return view

    def _own_factor(self) -> CandidateFactor:
        r"""The factors of this model's candidates, computed once (no cache across rounds)."""
        with torch.no_grad():
            Xt = self.transform_inputs(self._raw_train_X)
        return FactorCache().factor(self.candidates, Xt)

    def subset(self, indices: Tensor | list[int]) -> CandidateGP:
        r"""A ``CandidateGP`` over the candidates at ``indices`` (same data, transforms and factors)."""
        indices = [int(i) for i in indices]
        view = self._rebuild(self.candidates.subset(indices), predictive=self.predictive.subset(indices))
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
        return self.predictive.log_marginal_likelihood(self)

    def select(self, index: int, factors: bool = True) -> CandidateGP:
        r"""Candidate ``index`` as a plain single-output model (no candidate dimension).

        Its posteriors have BoTorch's usual ``batch_shape x q x 1`` shape, so it
        works with any BoTorch acquisition function and ``optimize_acqf``.

        Args:
            index: The candidate.
            factors: Keep this model's cached factors (the default). ``False``: GPyTorch's exact
                predictive. A view's joint covariance is lazy on both paths (left unfactorised
                until BoTorch's samplers factorise it, with jitter where it is singular: a
                Monte Carlo acquisition sampling jointly at observed points and at a point equal
                to one of them, qLogNEI's baseline); the K-wide model's on the factor path is
                dense, factorised at construction. Not with pending points, which condition
                through the factors.
        """
        if not (-self.num_candidates <= int(index) < self.num_candidates):
            raise ValueError(f"index must lie in [0, {self.num_candidates - 1}], got {index}.")
        if not factors and self.X_pending is not None:
            raise ValueError("factors=False needs a model without pending points (they condition through the factors).")
        index = int(index) % self.num_candidates
        view = self._rebuild(self.candidates.subset([index]), True, own=self.num_candidates == 1, predictive=self.predictive.subset([index]) if factors else None)
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
