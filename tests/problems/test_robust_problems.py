"""Tests of the robust-peak task (botorch_unknown_hypers.problems.robust_problems): the function by its
formula, the epsilon-robust values against a brute-force worst case, and the documented optima."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_unknown_hypers.acquisition.robust import robust_min
from botorch_unknown_hypers.domains import FiniteDomain
from botorch_unknown_hypers.problems import get_problem
from botorch_unknown_hypers.problems.robust_problems import RobustPeakProblem, robust_peak


def formula(x: float) -> float:
    low = 0.6 * math.exp(-((x - 0.3) ** 2) / (2 * 0.1**2))
    tall = math.exp(-((x - 0.7) ** 2) / (2 * 0.1**2))
    pit = 1 - 0.9 * math.exp(-((x - 0.72) ** 2) / (2 * 0.004**2))
    return low + tall * pit


def brute_force_robust(points: torch.Tensor, x: float, epsilon: float) -> float:
    r"""Worst value over the grid points within ``epsilon`` of ``x`` (``inf`` when there are none)."""
    return min((formula(float(p)) for p in points[:, 0] if abs(float(p) - x) <= epsilon * (1 + 1e-12)), default=math.inf)


def test_robust_peak_is_the_documented_formula():
    xs = [0.0, 0.3, 0.66, 0.7, 0.72, 0.75, 1.0]
    X = torch.tensor(xs, dtype=torch.float64).unsqueeze(-1)
    assert robust_peak(X).tolist() == pytest.approx([formula(x) for x in xs], rel=1e-13)
    assert formula(0.72) < 0.2 < 0.95 < formula(0.7)  # the narrow pit next to the tall top
    # batch shapes are kept; only the first coordinate matters
    assert robust_peak(torch.rand(2, 3, 1, dtype=torch.float64)).shape == (2, 3)


def test_problem_setup():
    problem = RobustPeakProblem()
    points = problem.domain.points
    assert isinstance(problem.domain, FiniteDomain) and points.shape == (401, 1)
    assert torch.equal(points[:, 0], torch.linspace(0, 1, 401, dtype=torch.float64))
    assert problem.name == "robust-peak" and problem.n_init == 5 and problem.noise_std == 0.01
    assert problem.optimal_value == pytest.approx(max(formula(float(p)) for p in points[:, 0]), rel=1e-14)
    assert problem.metadata["epsilon"] == 0.05 == problem.epsilon
    assert get_problem("robust-peak").robust_optimal_value == problem.robust_optimal_value


@pytest.mark.parametrize("epsilon", [0.0, 0.02, 0.05, 0.1])
def test_robust_value_is_the_brute_force_worst_case(epsilon):
    problem = RobustPeakProblem(epsilon=epsilon)
    points = problem.domain.points
    X = torch.tensor([[0.0], [0.3], [0.6625], [0.7], [0.71], [1.0], [0.6613]], dtype=torch.float64)  # last: off the grid
    expected = [brute_force_robust(points, float(x), epsilon) for x in X[:, 0]]
    assert problem.robust_value(X).tolist() == pytest.approx(expected, rel=1e-13)
    # on the grid, robust_value and the pool's neighbourhoods agree
    mask = problem.domain.neighbourhoods(epsilon)
    torch.testing.assert_close(problem.robust_value(points), robust_min(robust_peak(points).unsqueeze(0), mask)[0])
    assert problem.robust_value(X.reshape(7, 1, 1)).shape == (7, 1)


def test_robust_optimum_avoids_the_pit_and_the_top_is_not_robust():
    problem = RobustPeakProblem()
    robust = problem.robust_value(problem.domain.points)
    x_star = problem.metadata["robust_optimizer"][0]
    assert x_star == pytest.approx(0.66, abs=0.005)  # the left flank of the tall hill
    assert problem.robust_optimal_value == pytest.approx(0.686, abs=5e-4) == float(robust.max())
    assert float(problem.robust_value(torch.tensor([[0.7]], dtype=torch.float64))) < 0.15  # the pit is in reach
    assert problem.robust_optimal_value < problem.optimal_value


def test_robust_values_fall_as_epsilon_grows():
    points = RobustPeakProblem().domain.points
    values = [RobustPeakProblem(epsilon=e).robust_value(points) for e in (0.0, 0.02, 0.05, 0.1)]
    torch.testing.assert_close(values[0], robust_peak(points))
    for small, large in zip(values, values[1:]):
        assert bool((large <= small).all())


def test_evaluate_adds_seeded_noise_to_the_function():
    problem = RobustPeakProblem(noise_std=0.5)
    X = problem.domain.points[[10, 200, 300]]
    y1, f = problem.evaluate(X, generator=torch.Generator().manual_seed(0))
    y2, _ = problem.evaluate(X, generator=torch.Generator().manual_seed(0))
    assert torch.equal(y1, y2) and not torch.equal(y1, f)
    torch.testing.assert_close(f.reshape(-1), robust_peak(X))
