r"""Finite-arm GPs under K candidate priors: the model behind PE-GP-TS and HP-GP-TS on a pool.

Prior :math:`p` of a :class:`~botorch_unknown_hypers.models.tabular_priors.TabularPriors` set is a
mean vector :math:`m_p` and a covariance :math:`C_p` over the N arms; **every** prior is conditioned
on **all** observations, whichever prior a rule selected. For observed arms :math:`S` and targets
:math:`y`, with :math:`L_p L_p^\top = C_p[S, S] + \sigma^2 I`, :math:`A_p = L_p^{-1} C_p[S, :]` and
:math:`w_p = L_p^{-1}(y - m_p[S])`,

.. math::

    \mu_p = m_p + A_p^\top w_p, \qquad \sigma_p^2(x) = C_p[x, x] - \lVert A_p[:, x] \rVert^2.

:class:`TabularPriorGP` keeps this state for all K priors in one batch and offers what the rules
need: :meth:`~TabularPriorGP.condition` adds one observation by appending a row to the growing
Cholesky (:math:`O(K(n^2 + nN))`, no refactorisation and no jitter: the new pivot is the predictive
variance :math:`\sigma_p^2(j) + \sigma^2 \ge \sigma^2`); :meth:`~TabularPriorGP.predictive_log_likelihood`
gives the one-step predictive of Alg. 2 line 6 (their sum is the log evidence, by the chain rule);
:meth:`~TabularPriorGP.sample` draws joint posterior samples over all arms by pathwise (Matheron)
conditioning, :math:`\tilde f_p = f_p + A_p^\top L_p^{-1}(y - f_p[S] - \varepsilon')` with
:math:`f_p = m_p + F_p z` and :math:`F_p = C_p^{1/2}` the symmetric square root from one
eigendecomposition of :math:`C_p` (:meth:`~TabularPriorGP.prior_factor`). It is also a
BoTorch ``Model`` (:meth:`~TabularPriorGP.posterior`) and offers the point-based interface shared
with :class:`~botorch_unknown_hypers.models.box_priors.BoxPriors` (``condition_at``, ...).

Derivations and costs: ``docs/prior-selection.md``.

References:
    J. Sandberg, M. Haghir Chehreghani. Efficient Prior Selection in Gaussian Process Bandits
    with Thompson Sampling. arXiv:2502.01226 v1, 2025.
    J. Wilson, V. Borovitskiy, A. Terenin, P. Mostowsky, M. Deisenroth. Efficiently Sampling
    Functions from Gaussian Process Posteriors. ICML 2020.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from botorch.posteriors.gpytorch import GPyTorchPosterior
from linear_operator import to_linear_operator
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor


from botorch_unknown_hypers.models.tabular_priors import TabularPriors, as_index_tensor
from botorch_unknown_hypers.models.quiet_normal import QuietMultivariateNormal


@dataclass(frozen=True)
class TabularPosteriorState:
    r"""The conditioned state of :class:`TabularPriorGP` (see the module docstring).

    Args:
        train_indices: ``n`` observed arm indices :math:`S` (repeats allowed).
        train_Y: ``n`` observations :math:`y`.
        cholesky: ``K x n x n`` lower :math:`L_p`, :math:`L_p L_p^\top = C_p[S, S] + \sigma^2 I`.
        whitened_cross: ``K x n x N`` :math:`A_p = L_p^{-1} C_p[S, :]`.
        whitened_residual: ``K x n`` :math:`w_p = L_p^{-1} (y - m_p[S])`.
        mean: ``K x N`` posterior means :math:`\mu_p`.
        variance: ``K x N`` latent posterior variances :math:`\sigma_p^2` (not clipped).
    """

    train_indices: Tensor
    train_Y: Tensor
    cholesky: Tensor
    whitened_cross: Tensor
    whitened_residual: Tensor
    mean: Tensor
    variance: Tensor

    def subset(self, idx: Tensor) -> TabularPosteriorState:
        r"""The state of the priors at ``idx`` (the data are shared)."""
        return TabularPosteriorState(
            train_indices=self.train_indices,
            train_Y=self.train_Y,
            cholesky=self.cholesky[idx],
            whitened_cross=self.whitened_cross[idx],
            whitened_residual=self.whitened_residual[idx],
            mean=self.mean[idx],
            variance=self.variance[idx],
        )

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> TabularPosteriorState:
        return TabularPosteriorState(
            train_indices=self.train_indices.to(device=device),
            **{
                name: getattr(self, name).to(device=device, dtype=dtype)
                for name in ("train_Y", "cholesky", "whitened_cross", "whitened_residual", "mean", "variance")
            },
        )


class TabularPriorGP(Model):
    r"""Exact GP posteriors of K tabular priors, all conditioned on the same data.

    The data are arm indices and observations; every method is batched over the
    K priors. :meth:`condition` adds one observation in
    :math:`O(K (n^2 + n N))` (growing Cholesky, see the module docstring);
    :meth:`sample` draws joint posterior samples over all arms by pathwise
    conditioning; :meth:`posterior` implements BoTorch's ``Model`` API with the
    prior dimension at ``-3`` of the posterior (``batch_shape x K x q x 1``), as
    :class:`~botorch_unknown_hypers.models.CandidateGP` does.

    Everything lives on the priors' device and dtype; move with :meth:`to`.

    Example:
        >>> priors = kernel_task_priors()
        >>> model = TabularPriorGP(priors)
        >>> log_weights = model.predictive_log_likelihood(120, 0.3)  # K, before conditioning
        >>> model.condition(120, 0.3)
        >>> model.sample(2, prior_indices=[0, 3]).shape
        torch.Size([2, 2, 500])
    """

    _num_outputs = 1

    def __init__(
        self,
        priors: TabularPriors,
        train_indices: Tensor | None = None,
        train_Y: Tensor | None = None,
    ) -> None:
        r"""
        Args:
            priors: The K priors over N arms.
            train_indices: Optional ``n`` observed arm indices (``LongTensor``, repeats allowed).
            train_Y: Optional ``n`` (or ``n x 1``) observations, given iff ``train_indices`` is.
        """
        super().__init__()
        if not isinstance(priors, TabularPriors):
            raise ValueError(f"priors must be a TabularPriors, got {type(priors).__name__}.")
        self.priors = priors
        self._prior_factor: Tensor | None = None  # K x N x N, computed on the first sample()
        indices, targets = self._validate_data(train_indices, train_Y)
        self._state = self._factorise(indices, targets)

    # ----------------------------------------------------------------- basics
    @property
    def num_outputs(self) -> int:
        return 1

    @property
    def batch_shape(self) -> torch.Size:
        r"""``(K,)``: the prior dimension of every posterior."""
        return torch.Size([len(self.priors)])

    @property
    def num_priors(self) -> int:
        return len(self.priors)

    @property
    def num_arms(self) -> int:
        return self.priors.num_arms

    @property
    def noise(self) -> float:
        r"""The known noise variance :math:`\sigma^2`."""
        return self.priors.noise

    @property
    def num_observations(self) -> int:
        return self._state.train_indices.shape[0]

    @property
    def train_indices(self) -> Tensor:
        r"""The ``n`` observed arm indices (a copy)."""
        return self._state.train_indices.clone()

    @property
    def train_Y(self) -> Tensor:
        r"""The ``n`` observations (a copy)."""
        return self._state.train_Y.clone()

    @property
    def state(self) -> TabularPosteriorState:
        r"""The current (immutable) conditioned state."""
        return self._state

    def labels(self) -> list[str]:
        return self.priors.labels()

    def _tkwargs(self) -> dict[str, Any]:
        return {"dtype": self.priors.means.dtype, "device": self.priors.means.device}

    def _validate_data(self, train_indices: Tensor | None, train_Y: Tensor | None) -> tuple[Tensor, Tensor]:
        if (train_indices is None) != (train_Y is None):
            raise ValueError("train_indices and train_Y must be given together.")
        tkwargs = self._tkwargs()
        if train_indices is None:
            return (
                torch.zeros(0, dtype=torch.long, device=tkwargs["device"]),
                torch.zeros(0, **tkwargs),
            )
        indices = torch.as_tensor(train_indices, device=tkwargs["device"])
        if indices.is_floating_point() or indices.is_complex() or indices.ndim != 1:
            raise ValueError(f"train_indices must be a 1-d LongTensor of arm indices, got {indices.dtype} "
                             f"of shape {tuple(indices.shape)}.")
        indices = indices.long()
        if ((indices < 0) | (indices >= self.num_arms)).any():
            raise ValueError(f"train_indices must lie in [0, {self.num_arms - 1}].")
        targets = torch.as_tensor(train_Y, **tkwargs)
        if targets.ndim == 2 and targets.shape[-1] == 1:
            targets = targets.squeeze(-1)
        if targets.shape != indices.shape:
            raise ValueError(f"train_Y must have shape ({indices.shape[0]},), got {tuple(targets.shape)}.")
        if not torch.isfinite(targets).all():
            raise ValueError("train_Y contains NaN or inf.")
        return indices, targets

    # ------------------------------------------------------------ conditioning
    def _factorise(self, indices: Tensor, targets: Tensor) -> TabularPosteriorState:
        r"""The state conditioned on all of ``(indices, targets)`` at once (one batched Cholesky)."""
        means, cov = self.priors.means, self.priors.covariances
        num, n = len(self.priors), indices.shape[0]
        tkwargs = self._tkwargs()
        if n == 0:
            return TabularPosteriorState(
                train_indices=indices,
                train_Y=targets,
                cholesky=torch.zeros(num, 0, 0, **tkwargs),
                whitened_cross=torch.zeros(num, 0, self.num_arms, **tkwargs),
                whitened_residual=torch.zeros(num, 0, **tkwargs),
                mean=means.clone(),
                variance=cov.diagonal(dim1=-2, dim2=-1).clone(),
            )
        cov_SS = cov[:, indices.unsqueeze(-1), indices.unsqueeze(-2)]  # K x n x n
        eye = torch.eye(n, **tkwargs)
        # sigma^2 > 0 bounds the eigenvalues below: jitter is only a fallback for float32.
        chol = psd_safe_cholesky(cov_SS + self.noise * eye)
        cross = torch.linalg.solve_triangular(chol, cov[:, indices, :], upper=False)  # K x n x N
        residual = (targets - means[:, indices]).unsqueeze(-1)  # K x n x 1
        whitened_residual = torch.linalg.solve_triangular(chol, residual, upper=False).squeeze(-1)
        return TabularPosteriorState(
            train_indices=indices,
            train_Y=targets,
            cholesky=chol,
            whitened_cross=cross,
            whitened_residual=whitened_residual,
            mean=means + (whitened_residual.unsqueeze(-2) @ cross).squeeze(-2),
            variance=cov.diagonal(dim1=-2, dim2=-1) - cross.square().sum(-2),
        )

    def _check_observation(self, index: int | Tensor, y: float | Tensor) -> tuple[int, Tensor]:
        if isinstance(index, Tensor):
            if index.numel() != 1 or index.is_floating_point():
                raise ValueError(f"index must be one integer arm index, got {index}.")
            index = int(index.item())
        index = int(index)
        if not (0 <= index < self.num_arms):
            raise ValueError(f"index must lie in [0, {self.num_arms - 1}], got {index}.")
        value = torch.as_tensor(y, **self._tkwargs())
        if value.numel() != 1:
            raise ValueError(f"y must be a single observation, got shape {tuple(value.shape)}.")
        value = value.reshape(())
        if not torch.isfinite(value):
            raise ValueError(f"y must be finite, got {value.item()}.")
        return index, value

    def condition(self, index: int | Tensor, y: float | Tensor) -> None:
        r"""Condition every prior on one observation ``y`` at arm ``index``, in place.

        Appends one row to the growing Cholesky (module docstring): cost
        :math:`O(K (n^2 + n N))`, no refactorisation and no jitter (the pivot is
        the predictive variance :math:`\sigma_p^2(x) + \sigma^2 \ge \sigma^2`).

        Args:
            index: Arm index in ``[0, N)``.
            y: The observation.
        """
        index, value = self._check_observation(index, y)
        state, cov = self._state, self.priors.covariances
        num, n = len(self.priors), self.num_observations
        pivot_row = state.whitened_cross[:, :, index]  # K x n: l = L^{-1} C[S, j]
        # Predictive std d = sqrt(sigma_p^2(j) + sigma^2); the clip guards rounding only.
        pivot = (state.variance[:, index].clamp_min(0) + self.noise).sqrt()  # K
        projection = (pivot_row.unsqueeze(-2) @ state.whitened_cross).squeeze(-2)  # K x N: l^T A
        new_cross = (cov[:, index, :] - projection) / pivot.unsqueeze(-1)
        new_residual = (value - state.mean[:, index]) / pivot  # K: (y - mu_p(j)) / d
        chol = torch.zeros(num, n + 1, n + 1, **self._tkwargs())
        chol[:, :n, :n] = state.cholesky
        chol[:, n, :n] = pivot_row
        chol[:, n, n] = pivot
        index_tensor = torch.tensor([index], dtype=torch.long, device=state.train_indices.device)
        self._state = TabularPosteriorState(
            train_indices=torch.cat([state.train_indices, index_tensor]),
            train_Y=torch.cat([state.train_Y, value.reshape(1)]),
            cholesky=chol,
            whitened_cross=torch.cat([state.whitened_cross, new_cross.unsqueeze(-2)], dim=-2),
            whitened_residual=torch.cat([state.whitened_residual, new_residual.unsqueeze(-1)], dim=-1),
            mean=state.mean + new_residual.unsqueeze(-1) * new_cross,
            variance=state.variance - new_cross.square(),
        )

    def conditioned(self, index: int | Tensor, y: float | Tensor) -> TabularPriorGP:
        r"""Functional :meth:`condition`: a new model; ``self`` is unchanged (the state is shared, immutably)."""
        model = self._with_state(self.priors, self._state)
        model.condition(index, y)
        return model

    def condition_on_observations(self, X: Tensor, Y: Tensor, **kwargs: Any) -> TabularPriorGP:
        r"""BoTorch API: a new model that also observed ``Y`` (``m`` or ``m x 1``) at arms ``X`` (``m x d``).

        The observations are added one by one: each rank-one update depends on the previous one.
        """
        if X.ndim != 2:
            raise ValueError(f"X must be m x d (no batch dimensions), got shape {tuple(X.shape)}.")
        indices = self.arm_indices(X)
        Y = torch.as_tensor(Y, **self._tkwargs()).reshape(-1)
        if Y.shape[0] != indices.shape[0]:
            raise ValueError(f"Y must hold {indices.shape[0]} observations, got {Y.shape[0]}.")
        model = self._with_state(self.priors, self._state)
        for index, value in zip(indices.tolist(), Y, strict=True):
            model.condition(index, value)
        return model

    @classmethod
    def _with_state(
        cls, priors: TabularPriors, state: TabularPosteriorState, prior_factor: Tensor | None = None
    ) -> TabularPriorGP:
        model = cls(priors)
        model._state = state
        model._prior_factor = prior_factor
        return model

    def subset(self, prior_indices: Tensor | Sequence[int]) -> TabularPriorGP:
        r"""A model over the priors at ``prior_indices`` with the same data, sliced (no refactorisation)."""
        idx = as_index_tensor(prior_indices, self.num_priors, "prior_indices", self.priors.means.device)
        factor = None if self._prior_factor is None else self._prior_factor[idx]
        return self._with_state(self.priors.subset(idx), self._state.subset(idx), factor)

    def to(self, *args: Any, **kwargs: Any) -> TabularPriorGP:
        r"""Move priors and state in place, as ``nn.Module.to``: ``to(device)``, ``to(dtype)``,
        ``to(tensor)`` or ``to(device=..., dtype=...)``."""
        device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
        if kwargs:
            raise ValueError(f"to() got unexpected arguments {sorted(kwargs)}.")
        for arg in args:
            if isinstance(arg, Tensor):
                device, dtype = arg.device, arg.dtype
            elif isinstance(arg, torch.dtype):
                dtype = arg
            else:
                device = arg
        self.priors = self.priors.to(device=device, dtype=dtype)
        self._state = self._state.to(device=device, dtype=dtype)
        if self._prior_factor is not None:
            self._prior_factor = self._prior_factor.to(device=device, dtype=dtype)
        return super().to(device=device, dtype=dtype)

    # --------------------------------------------------------------- queries
    def mean_variance(self) -> tuple[Tensor, Tensor]:
        r"""Posterior means :math:`\mu_p` and latent (noise-free) variances :math:`\sigma_p^2` at every arm.

        Returns:
            ``(mean, variance)``, each ``K x N`` (variances clipped at 0).
        """
        return self._state.mean.clone(), self._state.variance.clamp_min(0)

    def predictive_log_likelihood(self, index: int | Tensor, y: float | Tensor) -> Tensor:
        r"""One-step predictive log-likelihood of every prior (Alg. 2, line 6), **before** conditioning.

        .. math::

            \log \mathcal{N}\big(y; \mu_p(x), \sigma_p^2(x) + \sigma^2\big), \quad x = \text{arm } index.

        Summed over rounds (each taken before the round's :meth:`condition`) it
        equals :meth:`log_evidence` (chain rule).

        Returns:
            ``K`` log-likelihoods.
        """
        index, value = self._check_observation(index, y)
        mean = self._state.mean[:, index]
        predictive_variance = self._state.variance[:, index].clamp_min(0) + self.noise
        return -0.5 * (
            (value - mean).square() / predictive_variance
            + predictive_variance.log()
            + math.log(2 * math.pi)
        )

    def log_evidence(self) -> Tensor:
        r"""Log marginal likelihood of all data under every prior, by a fresh Cholesky.

        .. math::

            \log \mathcal{N}\big(y_{1:n}; m_p[S], C_p[S, S] + \sigma^2 I\big).

        Costs :math:`O(K n^3)`; it cross-checks the sum of
        :meth:`predictive_log_likelihood` terms.

        Returns:
            ``K`` values (zeros when there are no data).
        """
        indices, targets = self._state.train_indices, self._state.train_Y
        n = indices.shape[0]
        if n == 0:
            return torch.zeros(self.num_priors, **self._tkwargs())
        cov = self.priors.covariances[:, indices.unsqueeze(-1), indices.unsqueeze(-2)]
        chol = psd_safe_cholesky(cov + self.noise * torch.eye(n, **self._tkwargs()))
        residual = (targets - self.priors.means[:, indices]).unsqueeze(-1)
        whitened = torch.linalg.solve_triangular(chol, residual, upper=False).squeeze(-1)
        log_det = chol.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * whitened.square().sum(-1) - log_det - 0.5 * n * math.log(2 * math.pi)

    def prior_factor(self) -> Tensor:
        r"""``K x N x N`` symmetric square roots :math:`F_p = V_p \Lambda_{p,+}^{1/2} V_p^\top` of
        :math:`C_p = V_p \Lambda_p V_p^\top`, with eigenvalues below the numerical-rank cutoff
        :math:`N \epsilon \max_i |\lambda_{p,i}|` set to 0 (a change below the eigensolver's own
        rounding). Unlike the eigen-factor :math:`V_p \Lambda_{p,+}^{1/2}`, it does not depend on
        the basis the eigensolver picks inside an eigenspace (the periodic prior on equidistant
        arms has pairs of equal eigenvalues), so its draws agree across CPU kernel paths
        (``docs/prior-selection.md``). Computed once in float64, then cast, and cached.
        """
        if self._prior_factor is None:
            cov = self.priors.covariances
            eigenvalues, eigenvectors = torch.linalg.eigh(cov.to(torch.float64))
            # Numerical rank, as torch.linalg.matrix_rank: eigenvalues below N eps lambda_max
            # are rounding noise of either sign; their square roots (~1e-8) would otherwise
            # add spurious directions, e.g. bend the linear prior's straight-line samples.
            cutoff = cov.shape[-1] * torch.finfo(torch.float64).eps * eigenvalues.abs().amax(-1, keepdim=True)
            eigenvalues = torch.where(eigenvalues > cutoff, eigenvalues, torch.zeros_like(eigenvalues))
            root = (eigenvectors * eigenvalues.sqrt().unsqueeze(-2)) @ eigenvectors.transpose(-1, -2)
            # Exactly symmetric, as the root is in exact arithmetic (the matmul rounds each half apart).
            self._prior_factor = (0.5 * (root + root.transpose(-1, -2))).to(cov.dtype)
        return self._prior_factor

    def sample(
        self,
        num_samples: int = 1,
        generator: torch.Generator | None = None,
        prior_indices: Sequence[int] | Tensor | None = None,
    ) -> Tensor:
        r"""Independent joint posterior samples over all arms (Alg. 1 line 3, Alg. 2 line 3).

        Pathwise (Matheron) conditioning, batched over priors and samples:

        .. math::

            \tilde f_p = m_p + F_p z + A_p^\top L_p^{-1} (y - m_p[S] - (F_p z)[S] - \varepsilon'),

        :math:`z \sim \mathcal{N}(0, I_N)`, :math:`\varepsilon' \sim \mathcal{N}(0, \sigma^2 I_n)`:
        :math:`O(N^2 + n^2 + n N)` per prior and sample, against :math:`O(N^3)`
        to factorise the posterior covariance.

        Args:
            num_samples: Number of samples per prior.
            generator: Optional ``torch.Generator`` on the priors' device.
            prior_indices: The priors to sample (``K'`` of them, in that order);
                ``None`` for all K. Every prior gets its own random numbers.

        Returns:
            ``num_samples x K' x N`` samples.
        """
        if int(num_samples) < 1:
            raise ValueError(f"num_samples must be a positive integer, got {num_samples}.")
        num_samples = int(num_samples)
        if prior_indices is None:
            idx = torch.arange(self.num_priors, device=self.priors.means.device)
        else:
            idx = as_index_tensor(prior_indices, self.num_priors, "prior_indices", self.priors.means.device)
        tkwargs = self._tkwargs()
        # A run of consecutive priors (all of them, or one) is a view: gathering would copy
        # the K' x N x N factors and the K' x n x N cached products at every call.
        start = int(idx[0])
        if bool((idx == torch.arange(start, start + idx.shape[0], device=idx.device)).all()):
            def take(values: Tensor) -> Tensor:
                return values[start : start + idx.shape[0]]
        else:
            def take(values: Tensor) -> Tensor:
                return values[idx]
        factor = take(self.prior_factor())  # K' x N x N
        z = torch.randn(idx.shape[0], num_samples, self.num_arms, generator=generator, **tkwargs)
        # K' x S x N, as batched matmuls over K' (no S-fold expansion of the factors).
        draws = take(self.priors.means).unsqueeze(-2) + z @ factor.transpose(-1, -2)
        n = self.num_observations
        if n > 0:
            state = self._state
            noise = self.noise**0.5 * torch.randn(idx.shape[0], num_samples, n, generator=generator, **tkwargs)
            gap = state.train_Y - draws[..., state.train_indices] - noise  # K' x S x n
            solved = torch.linalg.solve_triangular(
                take(state.cholesky), gap.transpose(-1, -2), upper=False
            )  # K' x n x S
            draws = draws + solved.transpose(-1, -2) @ take(state.whitened_cross)
        return draws.transpose(0, 1).contiguous()

    # ---------------------------------------------------------------- BoTorch
    def arm_indices(self, X: Tensor) -> Tensor:
        r"""Indices of the arms whose coordinates equal the rows of ``X`` exactly.

        Args:
            X: ``batch_shape x q x d`` (or ``q x d``) points, each an arm, in the priors' dtype.

        Returns:
            ``batch_shape x q`` arm indices (the first matching arm).
        """
        arms = self.priors.arms
        if X.ndim < 1 or X.shape[-1] != arms.shape[-1]:
            raise ValueError(f"X must be ... x d with d = {arms.shape[-1]}, got shape {tuple(X.shape)}.")
        if X.dtype != arms.dtype or X.device != arms.device:
            raise ValueError(f"X must have the arms' dtype and device ({arms.dtype}, {arms.device}), "
                             f"got ({X.dtype}, {X.device}).")
        matches = (X.unsqueeze(-2) == arms).all(-1)  # batch_shape x q x N
        found = matches.any(-1)
        if not found.all():
            missing = X[~found][0].tolist()
            raise ValueError(
                f"X: every row must be one of the {arms.shape[0]} arms (exact coordinates); "
                f"{int((~found).sum())} rows are not, e.g. {missing}."
            )
        return matches.to(torch.uint8).argmax(-1)

    def posterior(
        self,
        X: Tensor,
        output_indices: list[int] | None = None,
        observation_noise: bool | Tensor = False,
        posterior_transform: PosteriorTransform | None = None,
        **kwargs: Any,
    ) -> GPyTorchPosterior:
        r"""Joint posterior of all K priors at the arms ``X``.

        Args:
            X: ``batch_shape x q x d``; every row must be an arm (exact match).
            output_indices: ``None`` or ``[0]`` (single output).
            observation_noise: Add :math:`\sigma^2` to the diagonal (``bool`` only).
            posterior_transform: Optional BoTorch posterior transform.

        Returns:
            A ``GPyTorchPosterior`` of shape ``batch_shape x K x q x 1``: an MVN of
            batch shape ``batch_shape x K`` with the full ``q x q`` covariance.
        """
        if output_indices not in (None, [0]):
            raise ValueError(f"output_indices: {type(self).__name__} has a single output.")
        if isinstance(observation_noise, Tensor):
            raise ValueError(f"observation_noise: only True/False is supported by {type(self).__name__}.")
        if X.ndim < 2:
            raise ValueError(f"X must be batch_shape x q x d, got shape {tuple(X.shape)}.")
        indices = self.arm_indices(X)  # batch_shape x q
        batch_shape, q = indices.shape[:-1], indices.shape[-1]
        flat = indices.reshape(-1, q)  # B x q
        state, cov = self._state, self.priors.covariances
        cross = state.whitened_cross[:, :, flat]  # K x n x B x q
        covariance = cov[:, flat.unsqueeze(-1), flat.unsqueeze(-2)] - torch.einsum(
            "knbq,knbr->kbqr", cross, cross
        )  # K x B x q x q
        if observation_noise:
            covariance = covariance + self.noise * torch.eye(q, **self._tkwargs())
        mean = state.mean[:, flat]  # K x B x q
        K = self.num_priors
        mean = mean.transpose(0, 1).reshape(*batch_shape, K, q)
        covariance = covariance.transpose(0, 1).reshape(*batch_shape, K, q, q)
        # Lazy covariance: repeated arms in X or a low-rank prior make it singular, and a
        # dense MVN would Cholesky-factorise it eagerly (and fail).
        posterior = GPyTorchPosterior(distribution=QuietMultivariateNormal(mean, to_linear_operator(covariance)))
        if posterior_transform is not None:
            return posterior_transform(posterior=posterior, X=X)
        return posterior

    # ------------------------------------------------------- point interface
    @property
    def observed_X(self) -> Tensor:
        r"""The ``n x d`` observed arms' coordinates."""
        return self.priors.arms[self._state.train_indices]

    @property
    def observed_Y(self) -> Tensor:
        r"""The ``n`` observations (a copy)."""
        return self._state.train_Y.clone()

    def _arm(self, x: Tensor) -> int:
        return int(self.arm_indices(x.reshape(1, -1))[0])

    def condition_at(self, x: Tensor, y: float | Tensor) -> None:
        r""":meth:`condition` at the arm whose coordinates are ``x`` (``d`` or ``1 x d``)."""
        self.condition(self._arm(x), y)

    def predictive_log_likelihood_at(self, x: Tensor, y: float | Tensor) -> Tensor:
        r""":meth:`predictive_log_likelihood` at the arm ``x``: ``K`` values, before conditioning."""
        return self.predictive_log_likelihood(self._arm(x), y)

    def mean_variance_points(self, X: Tensor, indices: Sequence[int]) -> tuple[Tensor, Tensor]:
        r"""Posterior means and latent variances of the priors ``indices`` at the arms ``X`` (``m x d``); ``K' x m`` each."""
        arms = self.arm_indices(X.reshape(-1, X.shape[-1]))
        mean, variance = self.mean_variance()
        rows = torch.tensor(list(indices), device=mean.device).unsqueeze(-1)
        return mean[rows, arms], variance[rows, arms]

    def mean_variance_at(self, x: Tensor, indices: Sequence[int]) -> tuple[Tensor, Tensor]:
        r"""Posterior means and latent variances of the priors ``indices`` at the arm ``x``; ``K'`` each."""
        mean, variance = self.mean_variance_points(x.reshape(1, -1), indices)
        return mean[:, 0], variance[:, 0]

    def without_data(self) -> TabularPriorGP:
        r"""The same priors before any observation (their prior factor is kept)."""
        return self._with_state(self.priors, self._factorise(*self._validate_data(None, None)), self._prior_factor)
