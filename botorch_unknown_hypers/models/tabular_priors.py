r"""K Gaussian priors over N arms: the tabular priors of prior selection.

Sandberg & Haghir Chehreghani (arXiv:2502.01226 v1) select among a finite set
:math:`\mathcal{P}` of GP priors on a finite arm set :math:`\mathcal{X}`
(:math:`|\mathcal{X}| = N`, :math:`|\mathcal{P}| = K`). Prior :math:`p` is a mean vector
:math:`m_p \in \mathbb{R}^N` and a covariance matrix :math:`C_p \in \mathbb{R}^{N \times N}`
over the arms, all a finite-arm rule ever uses: kernel priors are evaluated on the arms once
(:meth:`TabularPriors.from_kernels`), empirical priors are given directly. Observations are
:math:`y_t = f(x_t) + \varepsilon_t`, :math:`\varepsilon_t \sim \mathcal{N}(0, \sigma^2)` with
the known :math:`\sigma^2` shared by all priors.
:class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP` conditions all K at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

KernelFunction = Callable[[Tensor, Tensor], Tensor]
r"""A kernel as a plain function: ``(N x d, M x d) -> N x M``."""

MeanFunction = Callable[[Tensor], Tensor]
r"""A prior mean as a plain function: ``N x d -> N``."""


def symmetry_tolerance(dtype: torch.dtype) -> float:
    r"""Relative asymmetry accepted in a covariance (``sqrt(eps)``: 1.5e-8 float64, 3.5e-4 float32)."""
    return math.sqrt(torch.finfo(dtype).eps)


def as_index_tensor(indices: Tensor | Sequence[int], size: int, name: str, device: torch.device) -> Tensor:
    r"""A non-empty 1-d ``LongTensor`` of indices in ``[0, size)``; ValueError naming ``name`` otherwise."""
    idx = torch.as_tensor(indices, dtype=torch.long, device=device)
    if idx.ndim != 1 or idx.numel() == 0:
        raise ValueError(f"{name} must be a non-empty 1-d list of indices, got shape {tuple(idx.shape)}.")
    if (idx < 0).any() or (idx >= size).any():
        raise ValueError(f"{name} must lie in [0, {size - 1}], got {idx.tolist()}.")
    return idx


@dataclass(frozen=True)
class TabularPriors:
    r"""K Gaussian priors over N arms: ``K x N`` means and ``K x N x N`` covariances.

    This is the paper's :math:`\{(\mu_{1,p}, k_{1,p})\}_{p \in \mathcal{P}}`
    restricted to the arm set, which is all a finite-arm rule ever uses; kernel
    priors are evaluated on the arms once (:meth:`from_kernels`), and empirical
    priors (Intel, PeMS) are given directly.

    Args:
        arms: ``N x d`` arm coordinates (used only to map BoTorch inputs to arms).
        means: ``K x N`` prior means :math:`m_p`.
        covariances: ``K x N x N`` prior covariances :math:`C_p`, symmetric up to
            a relative tolerance ``sqrt(eps)`` (then symmetrised exactly), with a
            non-negative diagonal. Positive semi-definiteness is not checked
            (it would cost ``O(K N^3)``); :class:`TabularPriorGP` clips negative
            eigenvalues when sampling.
        noise: The known observation noise variance :math:`\sigma^2 > 0`, shared
            by all priors.
        names: Optional ``K`` labels.

    Example:
        >>> arms = torch.linspace(0, 20, 500, dtype=torch.float64).unsqueeze(-1)
        >>> priors = TabularPriors.from_kernels(
        ...     arms, [paper_rbf(1.0), paper_matern(2.5, 1.0)], noise=0.25**2, names=["se", "m52"]
        ... )
        >>> len(priors), priors.covariances.shape
        (2, torch.Size([2, 500, 500]))
    """

    arms: Tensor
    means: Tensor
    covariances: Tensor
    noise: float
    names: list[str] | None = None

    def __post_init__(self) -> None:
        for name in ("arms", "means", "covariances"):
            value = getattr(self, name)
            if not isinstance(value, Tensor):
                raise ValueError(f"{name} must be a torch.Tensor, got {type(value).__name__}.")
            if not value.is_floating_point():
                raise ValueError(f"{name} must be a floating-point tensor, got {value.dtype}.")
        arms, means, cov = self.arms, self.means, self.covariances
        if arms.ndim != 2 or arms.shape[0] == 0:
            raise ValueError(
                f"arms must be N x d with N >= 1 (use arms.unsqueeze(-1) for 1-d arms), "
                f"got shape {tuple(arms.shape)}."
            )
        num_arms = arms.shape[0]
        if means.ndim != 2 or means.shape[0] == 0 or means.shape[1] != num_arms:
            raise ValueError(f"means must be K x N with N = {num_arms}, got shape {tuple(means.shape)}.")
        num_priors = means.shape[0]
        if cov.shape != (num_priors, num_arms, num_arms):
            raise ValueError(
                f"covariances must be K x N x N = ({num_priors}, {num_arms}, {num_arms}), "
                f"got shape {tuple(cov.shape)}."
            )
        for name in ("arms", "means", "covariances"):
            value = getattr(self, name)
            if value.dtype != means.dtype or value.device != means.device:
                raise ValueError(
                    f"{name} must share dtype and device with means ({means.dtype}, {means.device}), "
                    f"got ({value.dtype}, {value.device})."
                )
            if not torch.isfinite(value).all():
                raise ValueError(f"{name} contains NaN or inf.")
        scale = max(1.0, float(cov.abs().max()))
        asymmetry = float((cov - cov.transpose(-1, -2)).abs().max())
        if asymmetry > symmetry_tolerance(cov.dtype) * scale:
            raise ValueError(
                f"covariances must be symmetric: max |C - C^T| = {asymmetry:.3g} "
                f"exceeds {symmetry_tolerance(cov.dtype) * scale:.3g}."
            )
        if (cov.diagonal(dim1=-2, dim2=-1) < -symmetry_tolerance(cov.dtype) * scale).any():
            raise ValueError("covariances must have a non-negative diagonal.")
        # Exact symmetry, so that eigh / Cholesky see one well-defined matrix.
        object.__setattr__(self, "covariances", 0.5 * (cov + cov.transpose(-1, -2)))
        noise = float(self.noise)
        if not math.isfinite(noise) or noise <= 0:
            raise ValueError(f"noise must be a finite, strictly positive variance, got {self.noise}.")
        object.__setattr__(self, "noise", noise)
        if self.names is not None:
            names = list(self.names)
            if len(names) != num_priors or not all(isinstance(n, str) for n in names):
                raise ValueError(f"names must be None or a list of {num_priors} strings, got {self.names!r}.")
            object.__setattr__(self, "names", names)

    # ----------------------------------------------------------------- basics
    def __len__(self) -> int:
        return self.means.shape[0]

    @property
    def num_arms(self) -> int:
        r"""The number of arms N."""
        return self.arms.shape[0]

    def labels(self) -> list[str]:
        r"""Text label per prior: ``names``, or ``p0, p1, ...``."""
        return list(self.names) if self.names is not None else [f"p{k}" for k in range(len(self))]

    def subset(self, indices: Tensor | Sequence[int]) -> TabularPriors:
        r"""The priors at ``indices`` (in that order), on the same arms and noise."""
        idx = as_index_tensor(indices, len(self), "indices", self.means.device)
        return TabularPriors(
            arms=self.arms,
            means=self.means[idx],
            covariances=self.covariances[idx],
            noise=self.noise,
            names=None if self.names is None else [self.names[i] for i in idx.tolist()],
        )

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> TabularPriors:
        r"""A copy on ``device`` with floating-point ``dtype``."""
        return TabularPriors(
            arms=self.arms.to(device=device, dtype=dtype),
            means=self.means.to(device=device, dtype=dtype),
            covariances=self.covariances.to(device=device, dtype=dtype),
            noise=self.noise,
            names=self.names,
        )

    def to_dict(self) -> dict[str, Any]:
        r"""JSON-safe representation (nested lists of floats)."""
        return {
            "type": "tabular",
            "arms": self.arms.tolist(),
            "means": self.means.tolist(),
            "covariances": self.covariances.tolist(),
            "noise": self.noise,
            "names": None if self.names is None else list(self.names),
        }

    @classmethod
    def from_dict(
        cls,
        state: dict[str, Any],
        dtype: torch.dtype = torch.float64,
        device: torch.device | str | None = None,
    ) -> TabularPriors:
        r"""Inverse of :meth:`to_dict`; raises ``ValueError`` on a malformed dict."""
        if not isinstance(state, dict) or state.get("type") != "tabular":
            raise ValueError("state is not a TabularPriors dict (missing type='tabular').")
        try:
            tensors = {
                key: torch.tensor(state[key], dtype=dtype, device=device)
                for key in ("arms", "means", "covariances")
            }
            noise = state["noise"]
        except KeyError as e:
            raise ValueError(f"state is missing the key {e.args[0]!r}.") from None
        return cls(noise=noise, names=state.get("names"), **tensors)

    @classmethod
    def from_kernels(
        cls,
        arms: Tensor,
        kernels: Sequence[KernelFunction],
        means: Sequence[MeanFunction] | None = None,
        *,
        noise: float,
        names: list[str] | None = None,
    ) -> TabularPriors:
        r"""Evaluate K kernel (and mean) functions on the arms.

        Args:
            arms: ``N x d`` arm coordinates.
            kernels: K functions ``(N x d, M x d) -> N x M``, e.g. :func:`paper_rbf`.
            means: K functions ``N x d -> N``; ``None`` is the zero mean for all.
            noise: Observation noise variance :math:`\sigma^2`.
            names: Optional K labels.
        """
        if not isinstance(arms, Tensor) or arms.ndim != 2:
            raise ValueError(f"arms must be an N x d tensor, got {getattr(arms, 'shape', type(arms))}.")
        kernels = list(kernels)
        if len(kernels) == 0:
            raise ValueError("kernels is empty: at least one prior is needed.")
        if means is not None and len(means) != len(kernels):
            raise ValueError(f"means must have one function per kernel ({len(kernels)}), got {len(means)}.")
        # One evaluation per prior at construction: the priors are arbitrary callables.
        covariances = torch.stack([kernel(arms, arms) for kernel in kernels])
        if means is None:
            mean_values = torch.zeros(len(kernels), arms.shape[0], dtype=arms.dtype, device=arms.device)
        else:
            mean_values = torch.stack([mean(arms).reshape(arms.shape[0]) for mean in means])
        return cls(arms=arms, means=mean_values, covariances=covariances, noise=noise, names=names)
