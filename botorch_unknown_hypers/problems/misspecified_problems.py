r"""Misspecified test functions: an RKHS function of known norm plus a sup-norm-:math:`\epsilon` perturbation.

An empirical check of Bogunovic & Krause [Bogunovic2021]_, which has no experiments of
its own; the test functions are this package's design. On a regular grid :math:`D` of
:math:`[0, 1]^d`, the objective is :math:`f^* = \tilde f + m` with

1. :math:`\tilde f(x) = \sum_{j=1}^J \alpha_j k(x, z_j)`, random centres
   :math:`z_j \sim U[0, 1]^d` and :math:`\alpha \sim N(0, I)` rescaled so that
   :math:`\lVert \tilde f \rVert_k = \sqrt{\alpha^\top K_Z \alpha} = B` **exactly** (so
   :math:`|\tilde f| \le B` when :math:`k(x, x) \le 1`, Eq. 76);
2. a perturbation :math:`m` with :math:`\max_{x \in D} |m(x)| = \epsilon` exactly, of
   one of four kinds (:data:`PERTURBATIONS`):

   - ``"rough"``: :math:`m(x) = \epsilon u(x)/\max|u|`, :math:`u(x) \sim U[-1, 1]` per grid point;
   - ``"high-frequency"``: :math:`m(x) = \epsilon\sin(2\pi\omega\langle a, x\rangle + \phi)`,
     normalised to sup :math:`\epsilon` on the grid, :math:`\omega = 10`, random unit
     direction :math:`a` and phase;
   - ``"adversarial"``: a needle, :math:`m = +\epsilon` on a small ball around the point
     :math:`x_n` farthest from :math:`x_1 = \arg\max\tilde f` among those with
     :math:`\tilde f(x) \ge \max\tilde f - \tfrac32\epsilon`, and :math:`-\epsilon`
     elsewhere, so the needle always holds the maximiser of :math:`f^*`;
   - ``"biased"``: :math:`m = -\epsilon` on the half of the domain closer to :math:`x_1`
     than to the second mode :math:`x_2` (the best point at least 1.5 length scales from
     :math:`x_1`) and :math:`+\epsilon` on the other half.

   :math:`\epsilon = 0` gives :math:`m = 0` for every kind.

``evaluate_true`` is :math:`f^*` and :meth:`MisspecifiedProblem.evaluate_best_in_class`
is :math:`\tilde f`, so both the true regret :math:`R^*_T` and the best-in-class regret
:math:`R_T` can be reported. :math:`\tilde f` depends only on the seed, the perturbation
on the seed and the kind, so comparisons across :math:`\epsilon` are paired. The full
construction and the study that uses it are in ``docs/misspecified-bandits.md``
("Reproduction").

References:

.. [Bogunovic2021]
    I. Bogunovic, A. Krause. Misspecified Gaussian Process Bandit Optimization.
    NeurIPS 2021.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from botorch_unknown_hypers.checks import check_choice, check_int
from botorch_unknown_hypers.models.kernel_ridge import make_known_kernel
from botorch_unknown_hypers.problems.problem import Problem
from botorch_unknown_hypers.domains import FiniteDomain

PERTURBATIONS = ("rough", "high-frequency", "adversarial", "biased")
DEFAULT_POINTS_PER_AXIS = {1: 200, 2: 25}


def grid(dim: int, points_per_axis: int, dtype: torch.dtype = torch.float64) -> Tensor:
    r"""``points_per_axis ** dim x dim`` regular grid of :math:`[0, 1]^d` (corners included)."""
    axis = torch.linspace(0.0, 1.0, points_per_axis, dtype=dtype)
    return axis.unsqueeze(-1) if dim == 1 else torch.cartesian_prod(*([axis] * dim))


def rkhs_function(
    kernel: torch.nn.Module, points: Tensor, num_centres: int, B: float, generator: torch.Generator
) -> tuple[Tensor, Tensor, Tensor]:
    r""":math:`\tilde f = \sum_j \alpha_j k(\cdot, z_j)` with :math:`\lVert\tilde f\rVert_k = B` exactly.

    Returns:
        ``(values, alpha, centres)``: ``N`` values on ``points`` (``N x d``), ``J`` weights,
        ``J x d`` centres.
    """
    d = points.shape[-1]
    centres = torch.rand(num_centres, d, generator=generator, dtype=points.dtype)
    alpha = torch.randn(num_centres, generator=generator, dtype=points.dtype)
    with torch.no_grad():
        K_Z = kernel(centres).to_dense()
        norm = torch.sqrt(alpha @ K_Z @ alpha)
        alpha = alpha * (B / norm)
        values = kernel(points, centres).to_dense() @ alpha
    return values, alpha, centres


def modes(values: Tensor, points: Tensor, exclusion: float) -> tuple[int, int]:
    r"""Index of :math:`x_1 = \arg\max\tilde f` and of the best point at distance ``>= exclusion`` from it."""
    first = int(torch.argmax(values))
    far = torch.linalg.vector_norm(points - points[first], dim=-1) >= exclusion
    masked = torch.where(far, values, torch.full_like(values, -math.inf))
    return first, int(torch.argmax(masked))


def perturbation(
    kind: str,
    eps: float,
    points: Tensor,
    values: Tensor,
    generator: torch.Generator,
    exclusion: float = 0.3,
    radius: float = 0.05,
    frequency: float = 10.0,
) -> Tensor:
    r"""``N`` values of :math:`m` with :math:`\max|m| = \epsilon` on ``points`` (see the module docstring).

    Args:
        kind: One of :data:`PERTURBATIONS`.
        eps: :math:`\epsilon \ge 0`.
        points: ``N x d`` grid; values: ``N`` values of :math:`\tilde f`.
        exclusion: :math:`\rho`, the least distance of the second mode :math:`x_2` from
            :math:`x_1` (``"biased"``).
        radius: Radius of the adversarial needle.
        frequency: :math:`\omega` of the high-frequency kind.
    """
    check_choice("kind", kind, PERTURBATIONS)
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}.")
    n, d = points.shape
    if kind == "rough":
        u = 2.0 * torch.rand(n, generator=generator, dtype=points.dtype) - 1.0
        shape = u / u.abs().max()
    elif kind == "high-frequency":
        direction = torch.randn(d, generator=generator, dtype=points.dtype)
        direction = direction / torch.linalg.vector_norm(direction)
        phase = 2.0 * math.pi * float(torch.rand(1, generator=generator, dtype=points.dtype))
        wave = torch.sin(2.0 * math.pi * frequency * (points @ direction) + phase)
        shape = wave / wave.abs().max()
    else:
        first, second = modes(values, points, exclusion)
        if kind == "adversarial":
            distance = torch.linalg.vector_norm(points - points[first], dim=-1)
            eligible = values >= values[first] - 1.5 * eps
            needle = int(torch.argmax(torch.where(eligible, distance, torch.full_like(distance, -1.0))))
            near = torch.linalg.vector_norm(points - points[needle], dim=-1) <= radius
            shape = torch.where(near, 1.0, -1.0).to(points.dtype)
        else:
            to_first = torch.linalg.vector_norm(points - points[first], dim=-1)
            to_second = torch.linalg.vector_norm(points - points[second], dim=-1)
            shape = torch.where(to_first <= to_second, -1.0, 1.0).to(points.dtype)
    return eps * shape


class MisspecifiedProblem(Problem):
    r""":math:`f^* = \tilde f + m` on a grid of :math:`[0, 1]^d`: RKHS part of norm ``B`` plus perturbation.

    Args:
        dim: 1 or more.
        kind: Perturbation kind (:data:`PERTURBATIONS`).
        eps: :math:`\lVert m \rVert_\infty` (exactly, on the grid).
        seed: Seed of :math:`\tilde f` (and, with ``kind``, of :math:`m`).
        points_per_axis: Grid resolution (default 200 in 1-D, 25 in 2-D, 10 above).
        kernel, lengthscale: The known kernel (default RBF, length scale 0.2; output scale 1).
        B: RKHS norm of :math:`\tilde f` (default 1).
        num_centres: :math:`J` (default :math:`10d`).
        noise_std: Gaussian observation noise (default 0.1).

    Attributes:
        best_in_class_values, perturbation_values: :math:`\tilde f` and :math:`m` on the grid.
        best_in_class_optimum: :math:`\max\tilde f`.
        metadata: ``kind``, ``eps``, ``seed``, ``rkhs_norm``, ``argmax_moved`` (whether
            :math:`\arg\max f^* \ne \arg\max\tilde f`), the mode gap.
    """

    def __init__(
        self,
        dim: int = 1,
        kind: str = "adversarial",
        eps: float = 0.1,
        seed: int | None = None,
        points_per_axis: int | None = None,
        kernel: str = "rbf",
        lengthscale: float = 0.2,
        B: float = 1.0,
        num_centres: int | None = None,
        noise_std: float = 0.1,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        check_int("dim", dim, 1)
        check_choice("kind", kind, PERTURBATIONS)
        if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not math.isfinite(eps) or eps < 0:
            raise ValueError(f"eps must be a finite number >= 0, got {eps!r}.")
        if not B > 0:
            raise ValueError(f"B must be positive, got {B!r}.")
        points_per_axis = points_per_axis or DEFAULT_POINTS_PER_AXIS.get(dim, 10)
        num_centres = num_centres or 10 * dim
        points = grid(dim, points_per_axis, dtype)
        k = make_known_kernel(kernel, lengthscale, 1.0, dim, dtype=dtype)
        seed_value = 0 if seed is None else int(seed)
        f_gen = torch.Generator().manual_seed(7_919 + seed_value)
        f_tilde, alpha, centres = rkhs_function(k, points, num_centres, B, f_gen)
        m_gen = torch.Generator().manual_seed(104_729 + 31 * seed_value + PERTURBATIONS.index(kind))
        m = perturbation(kind, float(eps), points, f_tilde, m_gen, exclusion=1.5 * lengthscale)
        values = f_tilde + m
        first, second = modes(f_tilde, points, 1.5 * lengthscale)
        with torch.no_grad():
            norm = float(torch.sqrt(alpha @ k(centres).to_dense() @ alpha))
        super().__init__(
            name=f"misspecified-{dim}d-{kind}",
            domain=FiniteDomain(points),
            optimal_value=float(values.max()),
            noise_std=noise_std,
            n_init=0,
            metadata={
                "kind": kind,
                "eps": float(eps),
                "seed": seed,
                "rkhs_norm": norm,
                "kernel": kernel,
                "lengthscale": lengthscale,
                "argmax_moved": bool(f_tilde[int(torch.argmax(values))] < f_tilde.max()),
                "mode_gap": float(f_tilde[first] - f_tilde[second]),
            },
        )
        self._config = dict(
            dim=dim, kind=kind, eps=eps, points_per_axis=points_per_axis, kernel=kernel,
            lengthscale=lengthscale, B=B, num_centres=num_centres, noise_std=noise_std,
        )
        self.best_in_class_values = f_tilde
        self.perturbation_values = m
        self._values = values
        self.best_in_class_optimum = float(f_tilde.max())

    def instance(self, seed: int) -> MisspecifiedProblem:
        return MisspecifiedProblem(seed=seed, dtype=self.domain.points.dtype, **self._config).to(
            device=self.domain.points.device
        )

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> MisspecifiedProblem:
        super().to(device=device, dtype=dtype)
        self._values = self._values.to(device=device, dtype=dtype)
        self.best_in_class_values = self.best_in_class_values.to(device=device, dtype=dtype)
        self.perturbation_values = self.perturbation_values.to(device=device, dtype=dtype)
        return self

    def _lookup(self, table: Tensor, X: Tensor) -> Tensor:
        idx = self.domain.index_of(X.reshape(-1, X.shape[-1]))
        if (idx < 0).any():
            raise ValueError("X: every point must be one of the problem's grid points.")
        return table[idx].reshape(X.shape[:-1])

    def evaluate_true(self, X: Tensor) -> Tensor:
        r""":math:`f^*(x) = \tilde f(x) + m(x)` at ``batch_shape x d`` grid points."""
        return self._lookup(self._values, X)

    def evaluate_best_in_class(self, X: Tensor) -> Tensor:
        r""":math:`\tilde f(x)` at ``batch_shape x d`` grid points."""
        return self._lookup(self.best_in_class_values, X)
