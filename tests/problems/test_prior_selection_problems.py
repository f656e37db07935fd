"""Tests of the prior-selection tasks (botorch_unknown_hypers.problems.prior_selection_problems).

The draw of f is checked independently of the model that drew it: an
eigendecomposition in the test whitens f - m_{p*}, whose coordinates must look
standard normal, and the rank-one linear prior must give an exact line through
the origin.
"""

from __future__ import annotations

import math

import pytest
import torch

from botorch_unknown_hypers.loop import run
from botorch_unknown_hypers.models.tabular_priors import TabularPriors
from botorch_unknown_hypers.problems.prior_tasks import paper_arms
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.problems import FiniteDomain, get_problem
from botorch_unknown_hypers.problems.prior_selection_problems import (
    PRIOR_SELECTION_TASKS,
    PriorSelectionProblem,
    task_priors,
)

TASKS = ["gp-kernel", "gp-lengthscale", "gp-hill"]
SIZES = {"gp-kernel": 6, "gp-lengthscale": 4, "gp-hill": 5}


@pytest.mark.parametrize("name", TASKS)
def test_registered_task_matches_the_paper_setup(name):
    problem = get_problem(name)
    assert isinstance(problem, PriorSelectionProblem) and problem.name == name
    assert isinstance(problem.domain, FiniteDomain)
    torch.testing.assert_close(problem.domain.points, paper_arms(500))  # 500 equidistant arms of [0, 20]
    assert problem.noise_std == 0.25 and problem.n_init == 0
    assert isinstance(problem.priors, TabularPriors) and len(problem.priors) == SIZES[name]
    assert problem.priors.noise == pytest.approx(0.25**2)
    assert problem.metadata["priors"] == task_priors(name).labels() == problem.priors.labels()
    assert 0 <= problem.metadata["true_prior"] == problem.true_prior < SIZES[name]
    values = problem.evaluate_true(problem.domain.points)
    assert problem.optimal_value == float(values.max())
    with pytest.raises(ValueError, match="arms"):
        problem.evaluate_true(torch.tensor([[0.01]], dtype=torch.float64))


@pytest.mark.parametrize("name", TASKS)
def test_same_function_per_seed_and_different_across_seeds(name):
    base = get_problem(name)
    a, b, c = base.instance(4), base.instance(4), base.instance(5)
    fa, fb, fc = (p.evaluate_true(p.domain.points) for p in (a, b, c))
    assert torch.equal(fa, fb) and a.true_prior == b.true_prior
    assert not torch.allclose(fa, fc)
    assert a.metadata["seed"] == 4 and c.metadata["seed"] == 5
    # The true prior is drawn uniformly: over 60 seeds every prior is drawn (p* is drawn
    # before f, so it does not depend on the number of arms; 20 arms keep this cheap).
    small = PriorSelectionProblem(name, num_arms=20)
    assert small.instance(4).true_prior == a.true_prior
    drawn = [small.instance(s).true_prior for s in range(60)]
    assert set(drawn) == set(range(SIZES[name]))


def whitened(priors: TabularPriors, prior: int, f: torch.Tensor) -> torch.Tensor:
    r"""Coordinates of ``f - m_p`` in the eigenbasis of ``C_p``, scaled to unit variance (top eigenvalues only)."""
    values, vectors = torch.linalg.eigh(priors.covariances[prior].double())
    keep = values > 1e-6 * values.max()
    return (vectors[:, keep].T @ (f - priors.means[prior].double())) / values[keep].sqrt()


@pytest.mark.parametrize("name", TASKS)
def test_function_is_a_draw_from_the_true_prior(name):
    checked = 0
    for seed in range(12):
        problem = get_problem(name).instance(seed)
        f = problem.evaluate_true(problem.domain.points)
        p = problem.true_prior
        if problem.metadata["priors"][p] == "linear":
            # rank one: a line through the origin, slope ~ N(0, 0.05^2)
            x = problem.domain.points[:, 0]
            slope = f[-1] / x[-1]
            torch.testing.assert_close(f, slope * x, rtol=0, atol=1e-9)
            continue
        z = whitened(problem.priors, p, f)
        # sum of z^2 ~ chi^2_r: mean(z^2) = 1 +- sqrt(2 / r); accept 5 standard deviations
        r = z.numel()
        assert r >= 5  # the periodic prior has numerical rank 9
        assert abs(float(z.square().mean()) - 1) < 5 * math.sqrt(2 / r), (seed, r)
        checked += 1
    assert checked >= 6


def test_whitening_test_has_power():
    # A draw from the l = 1/2 prior whitened with the l = 4 prior is very far from N(0, I).
    problem = PriorSelectionProblem("gp-lengthscale", seed=0)
    short = problem.metadata["priors"].index("se_l0.5")
    assert problem.true_prior == short
    z = whitened(problem.priors, problem.metadata["priors"].index("se_l4"), problem.evaluate_true(problem.domain.points))
    assert float(z.square().mean()) > 100


def test_dtype_device_noise_and_num_arms_options():
    a = get_problem("gp-hill")
    b = get_problem("gp-hill", dtype=torch.float32)
    assert b.domain.points.dtype == torch.float32 and b.priors.means.dtype == torch.float32
    torch.testing.assert_close(
        b.instance(2).evaluate_true(b.domain.points).double(), a.instance(2).evaluate_true(a.domain.points),
        rtol=0, atol=1e-6,
    )
    noisy = get_problem("gp-lengthscale", noise_std=0.1).instance(3)
    assert noisy.noise_std == 0.1 and noisy.priors.noise == pytest.approx(0.01)
    assert get_problem("gp-lengthscale", noise_std=0.0).instance(3).priors.noise == pytest.approx(0.25**2)
    small = PriorSelectionProblem("gp-kernel", seed=1, num_arms=50)
    assert small.domain.points.shape == (50, 1) and small.instance(2).domain.points.shape == (50, 1)
    with pytest.raises(ValueError, match="task"):
        task_priors("gp-nope")
    with pytest.raises(ValueError, match="num_arms"):
        task_priors("gp-kernel", num_arms=1)
    with pytest.raises(ValueError, match="noise_std"):
        PriorSelectionProblem("gp-kernel", noise_std=-1.0)
    assert set(PRIOR_SELECTION_TASKS) == set(TASKS)


def test_run_starts_from_no_data_and_uses_the_seeds_function():
    base = get_problem("gp-lengthscale")
    history = run(base, make_policy("random", base.domain, seed=3), iterations=5, seed=3)
    assert history["iteration"].tolist() == [1, 2, 3, 4, 5]  # n_init = 0: no initial design rows
    instance = base.instance(3)
    logged = torch.tensor([[float(v)] for v in history["x"]], dtype=torch.float64)  # 10 significant digits
    X = instance.domain.points[torch.cdist(logged, instance.domain.points).argmin(-1)]
    torch.testing.assert_close(torch.tensor(history["f"].tolist(), dtype=torch.float64), instance.evaluate_true(X))
    assert history["simple_regret"].iloc[-1] == pytest.approx(instance.optimal_value - history["f"].max())
