r"""K candidate GP priors (mean function, kernel) on a box, and the data every prior sees.

The box counterpart of :class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP` for prior
selection (Sandberg & Haghir Chehreghani): the K priors are one
:class:`~botorch_unknown_hypers.candidates.CandidateSpec` and the posterior of all of them is one
K-wide :class:`~botorch_unknown_hypers.models.candidate_gp.CandidateGP` over **all** observations,
built on demand from Cholesky factors that a
:class:`~botorch_unknown_hypers.models.factor_cache.FactorCache` keeps across observations (each
new row appended by a block update, :math:`O(K n^2)`; the model is cached until the next
observation). Families without a JSON identity or stated noise variances are factorised afresh.
Inputs are scaled to the unit cube by the box's bounds, so the candidates' length scales are in
unit-cube units. Before any data, moments and sample paths are the priors' own.

Like ``TabularPriorGP`` it offers the point-based interface the prior-selection rules use on
either domain: :meth:`BoxPriors.condition_at`, :meth:`BoxPriors.predictive_log_likelihood_at`,
:meth:`BoxPriors.mean_variance_at`, :attr:`BoxPriors.observed_X` / :attr:`BoxPriors.observed_Y`
and :meth:`BoxPriors.without_data`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from botorch.models.transforms import Normalize
from torch import Tensor
from torch.nn import Module

from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.domains import BoxDomain
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.factor_cache import FactorCache

class BoxPriors:
    r"""K candidate priors (mean, kernel) on a box and every observation so far.

    The box counterpart of :class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP`:
    :meth:`condition` only stores the observation, and the K-wide
    :class:`~botorch_unknown_hypers.models.candidate_gp.CandidateGP` of the priors (or a view of a
    subset) is built over **all** data on demand, cached until the next observation, on factors
    kept across observations (:math:`O(K n^2)` per new row; the data are the model's own and
    only ever extended, so they are not checked again). Inputs are scaled to the unit cube by
    the box's bounds (``Normalize``), so the candidates' length scales are in unit-cube units, as in
    :class:`~botorch_unknown_hypers.policies.elimination.he_gp_ucb.HEGPUCB`. Before any data the
    moments and sample paths are the priors' own.

    Args:
        candidates: The K priors, a :class:`~botorch_unknown_hypers.candidates.CandidateSpec`
            (the noise variances are the candidates' own).
        bounds: ``2 x d`` box.
        train_X: Optional ``n x d`` observed points; ``train_Y``: their ``n`` values.

    Attributes:
        domain: The box, checked once (:class:`~botorch_unknown_hypers.domains.BoxDomain`).
    """

    def __init__(
        self,
        candidates: CandidateSpec,
        bounds: Tensor,
        train_X: Tensor | None = None,
        train_Y: Tensor | None = None,
    ) -> None:
        self.domain = BoxDomain(bounds)
        self.candidates = candidates
        dim = bounds.shape[-1]
        self._train_X = bounds.new_zeros(0, dim) if train_X is None else train_X.to(bounds).reshape(-1, dim)
        self._train_Y = bounds.new_zeros(0) if train_Y is None else train_Y.to(bounds).reshape(-1)
        if self._train_X.shape[0] != self._train_Y.shape[0]:
            raise ValueError("train_X and train_Y must have as many rows.")
        self._modules = candidates.to(device=bounds.device, dtype=bounds.dtype).build(dim)  # (mean, kernel, likelihood)
        self.noise = self._modules[2].noise.detach().reshape(-1).to(bounds)  # K noise variances
        self._transform = self.input_transform()
        self._models: dict[tuple[int, ...], CandidateGP] = {}
        self._keys = FactorCache.cacheable_keys(candidates)
        self._cache = None if self._keys is None else FactorCache()
        self._factored: Tensor | None = None  # the unit-cube inputs of the cache's last call

    @property
    def bounds(self) -> Tensor:
        r"""The ``2 x d`` box (the :attr:`domain`'s)."""
        return self.domain.bounds

    @property
    def num_priors(self) -> int:
        return len(self.candidates)

    @property
    def dim(self) -> int:
        return self.bounds.shape[-1]

    @property
    def num_observations(self) -> int:
        return self._train_Y.shape[0]

    def labels(self) -> list[str]:
        return self.candidates.labels()

    def input_transform(self) -> Normalize:
        r"""A fresh ``Normalize`` to the unit cube of the box (eval mode)."""
        transform = Normalize(self.dim, bounds=self.bounds)
        transform.eval()
        return transform

    def _indices(self, indices: Sequence[int] | None) -> tuple[int, ...]:
        return tuple(range(self.num_priors)) if indices is None else tuple(int(i) for i in indices)

    def candidate_gp(self, indices: Sequence[int] | None = None) -> CandidateGP | None:
        r"""The ``CandidateGP`` of the priors ``indices`` (default all) over all data; ``None``
        before any data."""
        if self.num_observations == 0:
            return None
        key = self._indices(indices)
        if key not in self._models:
            every = tuple(range(self.num_priors))
            if self._cache is None:  # no identity to cache factors by: GPyTorch factorises
                candidates = self.candidates if key == every else self.candidates.subset(list(key))
                self._models[key] = CandidateGP(
                    self._train_X, self._train_Y.unsqueeze(-1), candidates, input_transform=self.input_transform()
                )
            elif key == every:
                unit = self._transform(self._train_X)  # row by row the inputs factored before, extended
                factor = self._cache.factor(self.candidates, unit, keys=self._keys, prefix=self._factored)
                self._factored = unit
                self._models[key] = CandidateGP(
                    self._train_X, self._train_Y.unsqueeze(-1), self.candidates, input_transform=self.input_transform(),
                    check_data=False, factor=factor, modules=self._modules,
                )
            else:  # a view of the K-wide model: its factors, not new ones
                whole = self.candidate_gp()
                assert whole is not None
                self._models[key] = whole.subset(list(key))
        return self._models[key]

    def prior_mean_variance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        r"""Prior means and latent variances of all K priors, candidate ``k`` at ``X[k]``
        (``K x m x d``); ``K x m`` each, differentiable in ``X``."""
        Z = self._transform(X)
        mean_module, covar_module, _ = self._modules
        return mean_module(Z), covar_module(Z, diag=True)

    def mean_variance(self, X: Tensor, indices: Sequence[int] | None = None) -> tuple[Tensor, Tensor]:
        r"""Posterior means and latent variances (``len(indices) x m``) at shared ``m x d`` points."""
        key = self._indices(indices)
        model = self.candidate_gp(key)
        with torch.no_grad():
            if model is not None:
                return model.marginal_mean_variance(X.unsqueeze(0))
            mean, variance = self.prior_mean_variance(X.expand(self.num_priors, *X.shape))
            rows = torch.tensor(key, device=X.device)
            return mean[rows], variance[rows]

    def predictive_log_likelihood(self, x: Tensor, y: float | Tensor) -> Tensor:
        r"""One-step predictive log-likelihood of every prior, **before** conditioning on ``(x, y)``:
        :math:`\log \mathcal{N}(y; \mu_p(x), \sigma_p^2(x) + \sigma^2)` (``K``)."""
        mean, variance = self.mean_variance(x.reshape(1, self.dim))
        predictive_variance = variance[:, 0].clamp_min(0) + self.noise
        value = torch.as_tensor(y).to(mean)
        return -0.5 * (
            (value - mean[:, 0]).square() / predictive_variance + predictive_variance.log() + math.log(2 * math.pi)
        )

    def log_marginal_likelihood(self) -> Tensor:
        r"""Log marginal likelihood of all data under every prior (``K``; zeros before any data)."""
        model = self.candidate_gp()
        return self.noise.new_zeros(self.num_priors) if model is None else model.log_marginal_likelihood()

    def condition(self, x: Tensor, y: float | Tensor) -> None:
        r"""Add one observation (the factorisations are rebuilt at the next use)."""
        self._train_X = torch.cat([self._train_X, x.reshape(1, self.dim).to(self._train_X)])
        self._train_Y = torch.cat([self._train_Y, torch.as_tensor(y).reshape(1).to(self._train_Y)])
        self._models = {}

    def prior_modules(self, indices: Sequence[int] | None = None) -> tuple[Module, Module]:
        r"""``(mean_module, covar_module)`` of the priors ``indices`` (default all), batched over them,
        acting on unit-cube inputs (apply :meth:`input_transform` first)."""
        key = self._indices(indices)
        candidates = self.candidates if key == tuple(range(self.num_priors)) else self.candidates.subset(list(key))
        mean_module, covar_module, _ = candidates.build(self.dim)
        return mean_module, covar_module

    # ------------------------------------------------------- point interface
    @property
    def observed_X(self) -> Tensor:
        r"""The ``n x d`` observed points."""
        return self._train_X

    @property
    def observed_Y(self) -> Tensor:
        r"""The ``n`` observed values."""
        return self._train_Y

    def condition_at(self, x: Tensor, y: float | Tensor) -> None:
        r"""Add one observation ``y`` at the point ``x`` (``d`` or ``1 x d``)."""
        self.condition(x, y)

    def predictive_log_likelihood_at(self, x: Tensor, y: float | Tensor) -> Tensor:
        r"""``K`` one-step predictive log-likelihoods at ``x``, before conditioning on ``(x, y)``."""
        return self.predictive_log_likelihood(x, y)

    def mean_variance_points(self, X: Tensor, indices: Sequence[int]) -> tuple[Tensor, Tensor]:
        r"""Posterior means and latent variances of the priors ``indices`` at ``m x d`` points; ``K' x m`` each."""
        return self.mean_variance(X, indices)

    def mean_variance_at(self, x: Tensor, indices: Sequence[int]) -> tuple[Tensor, Tensor]:
        r"""Posterior means and latent variances of the priors ``indices`` at ``x``; ``K'`` each."""
        mean, variance = self.mean_variance_points(x.reshape(1, self.dim), indices)
        return mean[:, 0], variance[:, 0]

    def without_data(self) -> BoxPriors:
        r"""The same priors before any observation."""
        return BoxPriors(self.candidates, self.bounds)
