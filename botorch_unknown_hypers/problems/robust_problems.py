r"""A robust-optimisation task with a fragile global peak (our own, for HE-StableOpt).

On 401 grid points of :math:`[0, 1]`,

.. math::

    f(x) = 0.6\, e^{-(x - 0.3)^2 / (2 \cdot 0.1^2)}
        + e^{-(x - 0.7)^2 / (2 \cdot 0.1^2)} \big(1 - 0.9\, e^{-(x - 0.72)^2 / (2 \cdot 0.004^2)}\big):

two broad hills; the taller one (height 1 at :math:`x = 0.7`) hides a narrow pit at
:math:`x = 0.72`. Under perturbations of :math:`\epsilon = 0.05` the robust optimum
is the left flank of the tall hill, :math:`x \approx 0.66`, whose neighbourhood just
avoids the pit (:math:`\max_x \min_{|\delta| \le \epsilon} f \approx 0.686`); the top
of the tall hill is worth about 0.1. A long length scale (what maximum likelihood
picks before the pit is seen) trusts the top; a short one keeps the pit plausible.
Length-scale candidates: 0.01, 0.03, 0.1, 0.3 (``candidates="robust-peak"``). The task
is described with the paper's tasks in ``docs/hyperparameter-elimination.md``.

References:
    I. Bogunovic, J. Scarlett, S. Jegelka, V. Cevher. Adversarially Robust Optimization
    with Gaussian Processes. NeurIPS 2018 (StableOpt).
"""

from __future__ import annotations

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.robust import robust_min
from botorch_unknown_hypers.problems.problem import Problem
from botorch_unknown_hypers.domains import FiniteDomain


def robust_peak(X: Tensor) -> Tensor:
    x = X[..., 0]
    low = 0.6 * torch.exp(-(x - 0.3).square() / (2 * 0.1**2))
    tall = torch.exp(-(x - 0.7).square() / (2 * 0.1**2))
    pit = 1 - 0.9 * torch.exp(-(x - 0.72).square() / (2 * 0.004**2))
    return low + tall * pit


class RobustPeakProblem(Problem):
    r"""Maximise :func:`robust_peak` on 401 grid points of :math:`[0, 1]`; :math:`\epsilon`-robust values."""

    def __init__(self, epsilon: float = 0.05, noise_std: float = 0.01, dtype: torch.dtype = torch.float64) -> None:
        points = torch.linspace(0, 1, 401, dtype=dtype).unsqueeze(-1)
        self.epsilon = float(epsilon)
        mask = FiniteDomain(points).neighbourhoods(self.epsilon, "box")
        robust = robust_min(robust_peak(points).unsqueeze(0), mask)[0]
        super().__init__(
            name="robust-peak",
            domain=FiniteDomain(points),
            optimal_value=float(robust_peak(points).max()),
            noise_std=noise_std,
            n_init=5,
            metadata={"epsilon": self.epsilon, "robust_optimizer": (float(points[int(robust.argmax())]),)},
        )
        self.robust_optimal_value = float(robust.max())

    def evaluate_true(self, X: Tensor) -> Tensor:
        return robust_peak(X)

    def robust_value(self, X: Tensor) -> Tensor:
        r""":math:`\min_{|\delta|_\infty \le \epsilon,\ x + \delta \in X} f(x + \delta)` at each row of ``X``."""
        points = self.domain.points
        near = torch.cdist(X.reshape(-1, X.shape[-1]).to(points), points, p=float("inf")) <= self.epsilon * (1 + 1e-12)
        values = robust_peak(points).unsqueeze(0).expand(near.shape[0], -1)
        return torch.where(near, values, torch.full_like(values, float("inf"))).amin(-1).reshape(X.shape[:-1])
