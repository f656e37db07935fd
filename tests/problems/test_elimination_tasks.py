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


def test_additive3d_matches_the_cited_definition():
    problem = get_problem("additive3d")
    # the value the cited authors report at their optimum (0.8, 0.8, 0), sign flipped
    assert problem.optimal_value == pytest.approx(3.437432141220581, abs=1e-9)
    X = torch.rand(20000, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    assert float(additive3d(X).max()) <= problem.optimal_value
    # brute force of the formula at one point
    x1, x2 = 0.7, 0.9
    v, rho = 0.02, 0.75
    mode = (1 / 3.5) / (2 * math.pi * v * math.sqrt(1 - rho**2)) * math.exp(
        (-0.5 * (x1 - 0.8) ** 2 / v - 0.5 * (x2 - 0.8) ** 2 / v + rho * (x1 - 0.8) * (x2 - 0.8) / v) / (1 - rho**2)
    )
    ridges = (2.5 / 3.5) / (2 * math.pi * 0.1) * (math.exp(-0.5 * 0.16 / 0.01) + math.exp(-0.5 * 0.36 / 0.01))
    assert float(additive3d(torch.tensor([[x1, x2, 0.3]], dtype=torch.float64))) == pytest.approx(mode + ridges)
    # x3 is redundant
    Z = X.clone()
    Z[:, 2] = 0.0
    torch.testing.assert_close(additive3d(X), additive3d(Z))
    f = lambda a, b: float(additive3d(torch.tensor([[a, b, 0.0]], dtype=torch.float64)))  # noqa: E731
    # the local maximum (0.3, 0.3) of the ridges is below the correlated mode
    assert 2.2 < f(0.3, 0.3) < 2.3 < f(0.8, 0.8)
    # near the optimum x1, x2 interact: f(a, b) + f(c, d) != f(a, d) + f(c, b)
    assert f(0.7, 0.7) + f(0.9, 0.9) - f(0.7, 0.9) - f(0.9, 0.7) > 1.0
    # away from it (bottom-left) the function is additive
    assert abs(f(0.0, 0.0) + f(0.1, 0.1) - f(0.0, 0.1) - f(0.1, 0.0)) < 1e-4 < f(0.1, 0.1) - f(0.0, 0.0)


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
        # the local fits find the local periods 1/4, 3/14, 1/4, 1/4 (halved on the unit cube), never 1
        assert periods[1:] == pytest.approx([0.125, 3 / 28, 0.125, 0.125], abs=1e-4)
    with pytest.raises(ValueError, match="candidates must be one of"):
        task_candidates("nope", 0.01)
