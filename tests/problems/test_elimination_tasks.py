import math

import pytest
import torch

from botorch_unknown_hypers.loop import run
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.problems import get_problem
from botorch_unknown_hypers.problems.elimination_tasks import (
    HILLS_CANDIDATES,
    additive3d,
    hill_means,
    period_signal,
    task_candidates,
)


def test_period_signal_pieces_and_periodicity():
    x = torch.tensor([[0.0], [0.125], [0.25 + 3 / 56], [0.6], [0.9]], dtype=torch.float64)
    expected = [
        math.sin(-math.pi),
        math.sin(0.0),
        1.5,  # the reconstructed second piece peaks at 1/4 + 3/56
        1.2 * math.sin(8 * math.pi * (0.6 - 11 / 28)),
        0.8 * math.sin(8 * math.pi * (0.9 - 5 / 7)),
    ]
    assert period_signal(x).tolist() == pytest.approx(expected, abs=1e-12)
    grid = torch.linspace(0, 0.999, 1000, dtype=torch.float64).unsqueeze(-1)
    torch.testing.assert_close(period_signal(grid + 1.0), period_signal(grid))
    problem = get_problem("period")
    assert problem.optimal_value == 1.5 and problem.n_init == 5
    dense = torch.linspace(0, 2, 100001, dtype=torch.float64).unsqueeze(-1)
    assert float(period_signal(dense).max()) == pytest.approx(1.5, abs=1e-6)


def test_additive3d_is_locally_additive_with_a_correlated_optimum():
    problem = get_problem("additive3d")
    assert problem.optimal_value == pytest.approx(1.2, abs=1e-4)
    X = torch.rand(20000, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    assert float(additive3d(X).max()) <= problem.optimal_value
    # x3 is redundant
    Z = X.clone()
    Z[:, 2] = 0.0
    torch.testing.assert_close(additive3d(X), additive3d(Z))
    # near the optimum x1, x2 interact: f(a, b) + f(c, d) != f(a, d) + f(c, b)
    f = lambda a, b: float(additive3d(torch.tensor([[a, b, 0.0]], dtype=torch.float64)))  # noqa: E731
    assert abs(f(0.8, 0.8) + f(0.9, 0.7) - f(0.8, 0.7) - f(0.9, 0.8)) > 0.1
    # away from it (bottom-left) the function is additive
    assert abs(f(0.2, 0.2) + f(0.35, 0.4) - f(0.2, 0.4) - f(0.35, 0.2)) < 1e-6


def test_hills_same_function_per_seed_and_true_candidate_recorded():
    base = get_problem("hills")
    a, b, c = base.instance(4), base.instance(4), base.instance(5)
    torch.testing.assert_close(a.evaluate_true(a.domain.points), b.evaluate_true(b.domain.points))
    assert not torch.equal(a.evaluate_true(a.domain.points), c.evaluate_true(c.domain.points))
    assert a.metadata["true_candidate"] in HILLS_CANDIDATES
    means = hill_means(torch.linspace(0, 1, 101, dtype=torch.float64).unsqueeze(-1))
    assert means.shape == (11, 101)
    # candidate u's tallest hill is hill u (height 2 at its centre); -1 has all hills equal
    assert float(means[2, 25]) == pytest.approx(2.0, abs=1e-3)  # + exp(-8) tails of the neighbours
    assert float(means[-1].max()) == pytest.approx(1.0, abs=1e-3)
    # the run loop uses the seed's function
    policy = make_policy("random", base.domain, seed=4)
    history = run(base, policy, iterations=2, seed=4)
    assert history["f"].max() <= a.optimal_value + 1e-12


@pytest.mark.parametrize("name, size", [("lengthscale", 5), ("period", 5), ("additive3d", 4), ("hills", 11)])
def test_task_candidate_sets(name, size):
    cands = task_candidates(name, noise_std=0.01)
    assert len(cands) == size
    if name == "period":
        periods = cands.period.tolist()
        assert periods[0] == pytest.approx(0.5, abs=0.01)  # the global fit finds the true period 1 (of [0, 2])
        assert all(abs(p - 0.5) > 0.05 for p in periods[1:])  # local fits never do
    with pytest.raises(ValueError, match="candidates must be one of"):
        task_candidates("nope", 0.01)
