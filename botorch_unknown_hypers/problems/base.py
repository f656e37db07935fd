r"""Black-box problems: a domain, a noiseless objective and its optimum.

Every problem in this package is a *maximisation* problem. A problem knows

- its domain, either a box :math:`[l, u] \subset \mathbb{R}^d`
  (:class:`BoxDomain`) or a finite pool of points (:class:`FiniteDomain`);
- its noiseless objective :math:`f`, evaluated in batch;
- its optimum value :math:`f^* = \max_x f(x)`, so that the regret
  :math:`r_t = f^* - f(x_t)` is always computed on the noiseless :math:`f`;
- its observation noise standard deviation :math:`\sigma_N`
  (:math:`y = f(x) + \varepsilon`, :math:`\varepsilon \sim \mathcal{N}(0, \sigma_N^2)`);
- the size of its initial design.

The setting is the one all five papers share (see the length-scale balancing
paper, Ziomek et al. 2024, Sec. 2).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import torch
from torch import Tensor


@dataclass(frozen=True)
class BoxDomain:
    r"""A box :math:`\prod_j [l_j, u_j]`.

    Args:
        bounds: A ``2 x d``-dim tensor of lower and upper bounds.
    """

    bounds: Tensor

    def __post_init__(self) -> None:
        if self.bounds.ndim != 2 or self.bounds.shape[0] != 2:
            raise ValueError(
                f"bounds must have shape 2 x d, got {tuple(self.bounds.shape)}."
            )
        if not torch.isfinite(self.bounds).all():
            raise ValueError("bounds must be finite.")
        if (self.bounds[1] <= self.bounds[0]).any():
            raise ValueError("bounds: every upper bound must exceed its lower bound.")

    @property
    def dim(self) -> int:
        return self.bounds.shape[-1]

    def contains(self, X: Tensor, atol: float = 1e-9) -> Tensor:
        r"""Whether each row of ``X`` (``... x d``) lies in the box; ``...``-dim bool."""
        lower, upper = self.bounds.to(X)
        return ((X >= lower - atol) & (X <= upper + atol)).all(dim=-1)

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> BoxDomain:
        return BoxDomain(self.bounds.to(device=device, dtype=dtype))


@dataclass(frozen=True)
class FiniteDomain:
    r"""A finite pool of points :math:`\{x_1, \dots, x_N\}`; points may be queried again.

    Args:
        points: An ``N x d``-dim tensor of the pool's points.
    """

    points: Tensor

    def __post_init__(self) -> None:
        if self.points.ndim != 2 or self.points.shape[0] == 0:
            raise ValueError(
                f"points must be a non-empty N x d tensor, got {tuple(self.points.shape)}."
            )
        if not torch.isfinite(self.points).all():
            raise ValueError("points must be finite.")

    @property
    def dim(self) -> int:
        return self.points.shape[-1]

    @property
    def bounds(self) -> Tensor:
        r"""The ``2 x d`` bounding box of the pool."""
        return torch.stack([self.points.min(dim=0).values, self.points.max(dim=0).values])

    def index_of(self, X: Tensor, atol: float = 1e-9) -> Tensor:
        r"""Pool index of each row of ``X`` (``n x d``); ``-1`` where a row is not in the pool."""
        # Exact distances: the matrix-product mode loses ~1e-8 and would miss pool points.
        dist = torch.cdist(X.to(self.points), self.points, compute_mode="donot_use_mm_for_euclid_dist")
        best, idx = dist.min(dim=-1)
        return torch.where(best <= atol, idx, torch.full_like(idx, -1))

    def contains(self, X: Tensor, atol: float = 1e-9) -> Tensor:
        flat = X.reshape(-1, X.shape[-1])
        return (self.index_of(flat, atol=atol) >= 0).reshape(X.shape[:-1])

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> FiniteDomain:
        return FiniteDomain(self.points.to(device=device, dtype=dtype))


Domain = BoxDomain | FiniteDomain


@dataclass
class Problem(ABC):
    r"""A maximisation black box with a known optimum.

    Subclasses implement :meth:`evaluate_true`, the noiseless objective.

    Attributes:
        name: Registered name (``buh list``).
        domain: The search space.
        optimal_value: :math:`f^*`, the maximum of the noiseless objective.
        noise_std: Observation noise standard deviation :math:`\sigma_N`.
        n_init: Size of the initial design the papers use.
    """

    name: str
    domain: Domain
    optimal_value: float
    noise_std: float = 0.0
    n_init: int = 10
    metadata: dict = field(default_factory=dict)

    @property
    def dim(self) -> int:
        return self.domain.dim

    @property
    def is_finite(self) -> bool:
        return isinstance(self.domain, FiniteDomain)

    @abstractmethod
    def evaluate_true(self, X: Tensor) -> Tensor:
        r"""The noiseless objective.

        Args:
            X: A ``batch_shape x d``-dim tensor of points in the domain.

        Returns:
            A ``batch_shape``-dim tensor of values :math:`f(x)`.
        """

    def evaluate(self, X: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        r"""Noisy observation and noiseless value at ``X``.

        Args:
            X: A ``batch_shape x d``-dim tensor.
            generator: Random generator for the noise (on ``X``'s device).

        Returns:
            ``(y, f)``, each ``batch_shape``-dim: ``y = f + noise_std * eps``.
        """
        if X.shape[-1] != self.dim:
            raise ValueError(f"X must have {self.dim} columns, got {X.shape[-1]}.")
        if not self.domain.contains(X).all():
            raise ValueError(f"X has points outside the domain of problem {self.name!r}.")
        f = self.evaluate_true(X)
        if self.noise_std > 0:
            eps = torch.randn(f.shape, generator=generator, device=f.device, dtype=f.dtype)
            return f + self.noise_std * eps, f
        return f.clone(), f

    def instance(self, seed: int) -> Problem:
        r"""The black box of run ``seed``: ``self`` unless the problem draws a function per seed
        (e.g. functions sampled from a GP prior, the same for every method given the seed)."""
        return self

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> Problem:
        r"""Move the domain (and any tensors a subclass holds) to ``device`` / ``dtype``."""
        self.domain = self.domain.to(device=device, dtype=dtype)
        return self
