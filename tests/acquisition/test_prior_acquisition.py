"""Tests of the (point, prior) selections of prior selection, on arms and on a box
(botorch_unknown_hypers.acquisition.prior_acquisition).

References: the textbook posterior of every prior (tests/prior_helpers.py), replays of the
caller's generator, and brute-force grid maxima of the UCB.
"""

from __future__ import annotations

import math

import pytest
import torch

from botorch_unknown_hypers.acquisition.optimize import optimize_ucb_joint
from botorch_unknown_hypers.acquisition.prior_sampling import sample_candidate_maxima
from botorch_unknown_hypers.acquisition.prior_acquisition import (
    sample_generator,
    thompson_prior_argmax,
    thompson_prior_batch,
    ucb_prior_argmax,
)
from botorch_unknown_hypers.candidate_families import MeanFunctionCandidates
from botorch_unknown_hypers.models.box_priors import BoxPriors
from botorch_unknown_hypers.models.tabular import TabularPriorGP
from botorch_unknown_hypers.models.tabular_priors import TabularPriors
from botorch_unknown_hypers.problems.prior_tasks import paper_rbf
from botorch_unknown_hypers.rng import draw_seed
from tests.prior_helpers import BOX_OPTIONS, box_candidates, small_priors, textbook_posterior

OBSERVED = [2, 5, 5, 11]
Y = torch.tensor([0.4, -0.3, -0.1, 0.9], dtype=torch.float64)
BOUNDS = torch.tensor([[0.0], [2.0]], dtype=torch.float64)
BOX_X = torch.tensor([[0.2], [0.7], [1.6]], dtype=torch.float64)
BOX_Y = torch.tensor([0.1, 0.8, -0.2], dtype=torch.float64)


def replay_of(generator: torch.Generator) -> torch.Generator:
    replay = torch.Generator()
    replay.set_state(generator.get_state())
    return replay


def tabular_model(priors: TabularPriors) -> TabularPriorGP:
    return TabularPriorGP(priors, torch.tensor(OBSERVED), Y)


def test_sample_generator_is_the_generator_itself_on_the_cpu():
    generator = torch.Generator().manual_seed(0)
    assert sample_generator(generator, torch.device("cpu")) is generator


# --------------------------------------------------------------------------- #
# on arms
# --------------------------------------------------------------------------- #


def test_thompson_on_arms_is_the_argmax_of_the_requested_priors_samples():
    base = small_priors()
    means = base.means.clone()
    means[1] += 100.0  # prior 1's sample would win every argmax it took part in
    priors = TabularPriors(base.arms, means, base.covariances, base.noise)
    model = tabular_model(priors)
    for seed in range(5):
        generator = torch.Generator().manual_seed(seed)
        replay = replay_of(generator)
        x, local = thompson_prior_argmax(model, [0, 2], generator)
        samples = model.sample(1, generator=replay, prior_indices=range(0, 3))[0]  # the span 0..2
        samples[1] = -math.inf  # not requested
        row, arm = divmod(int(samples.argmax()), priors.num_arms)
        assert local == [0, 2].index(row) and torch.equal(x, priors.arms[arm : arm + 1])
    x, local = thompson_prior_argmax(model, [1], torch.Generator().manual_seed(0))
    assert local == 0 and x.shape == (1, 1)


def test_thompson_on_arms_is_seeded_and_leaves_the_global_rng_alone():
    model = tabular_model(small_priors())
    rng = torch.get_rng_state()
    picks = [thompson_prior_argmax(model, [0, 1, 2], torch.Generator().manual_seed(s)) for s in range(10)]
    assert torch.equal(torch.get_rng_state(), rng)
    again = [thompson_prior_argmax(model, [0, 1, 2], torch.Generator().manual_seed(s)) for s in range(10)]
    assert all(torch.equal(a[0], b[0]) and a[1] == b[1] for a, b in zip(picks, again))
    assert len({(float(x), p) for x, p in picks}) > 1  # samples, not a fixed rule


@pytest.mark.parametrize("active", [[0, 1, 2], [0, 2], [1]])
def test_ucb_on_arms_is_the_doubly_optimistic_argmax_of_the_textbook_posterior(active):
    priors = small_priors()
    model = tabular_model(priors)
    sqrt_beta = 2.3
    x, local = ucb_prior_argmax(model, active, sqrt_beta, torch.Generator().manual_seed(0))
    mean, variance = textbook_posterior(priors, OBSERVED, Y)
    ucb = mean[active] + sqrt_beta * variance[active].clamp_min(0).sqrt()
    row, arm = divmod(int(ucb.argmax()), priors.num_arms)
    assert local == row and torch.equal(x, priors.arms[arm : arm + 1])


def test_ucb_on_arms_breaks_exact_ties_with_the_generator():
    # before any data, two zero-mean stationary priors have the same UCB at every arm
    arms = torch.linspace(0, 5, 8, dtype=torch.float64).unsqueeze(-1)
    priors = TabularPriors.from_kernels(arms, [paper_rbf(1.0), paper_rbf(2.0)], noise=0.01)
    model = TabularPriorGP(priors)
    picks = [ucb_prior_argmax(model, [0, 1], 1.0, torch.Generator().manual_seed(s)) for s in range(30)]
    assert len({p for _, p in picks}) == 2 and len({float(x) for x, _ in picks}) >= 5
    again = ucb_prior_argmax(model, [0, 1], 1.0, torch.Generator().manual_seed(7))
    assert torch.equal(again[0], picks[7][0]) and again[1] == picks[7][1]


# --------------------------------------------------------------------------- #
# on a box
# --------------------------------------------------------------------------- #


def test_thompson_on_a_box_is_the_best_of_one_maximised_path_per_prior():
    model = BoxPriors(box_candidates(), BOUNDS, BOX_X, BOX_Y)
    generator = torch.Generator().manual_seed(3)
    replay = replay_of(generator)
    rng = torch.get_rng_state()
    x, local = thompson_prior_argmax(model, [0, 2], generator, **BOX_OPTIONS)
    assert torch.equal(torch.get_rng_state(), rng)
    X_best, values = sample_candidate_maxima(
        model.candidate_gp([0, 2]), BOUNDS, **BOX_OPTIONS, num_features=1024, seed=draw_seed(replay)
    )
    assert local == int(values.argmax()) and torch.equal(x, X_best[local : local + 1])


def test_a_box_batch_copies_its_points_with_the_path_maxima():
    r"""The slots' points as Python floats, copied with their path maxima's values, are the
    batch's points; a slot of one prior is that prior's :func:`thompson_prior_argmax`."""
    model = BoxPriors(box_candidates(), BOUNDS, BOX_X, BOX_Y)
    X, locals_, rows = thompson_prior_batch(model, [[0, 2], [1]], torch.Generator().manual_seed(5), **BOX_OPTIONS)
    assert X.shape == (2, 1) and locals_[1] == 0 and rows == X.tolist()
    x, (local,), one = thompson_prior_batch(model, [[0, 2]], torch.Generator().manual_seed(5), **BOX_OPTIONS)
    x_argmax, local_argmax = thompson_prior_argmax(model, [0, 2], torch.Generator().manual_seed(5), **BOX_OPTIONS)
    assert torch.equal(x, x_argmax) and local == local_argmax and one == x.tolist()
@pytest.mark.parametrize("with_data", [False, True])
def test_thompson_on_a_box_is_seeded_and_inside(with_data):
    model = BoxPriors(box_candidates(), BOUNDS, *((BOX_X, BOX_Y) if with_data else ()))
    rng = torch.get_rng_state()
    x, local = thompson_prior_argmax(model, [0, 1, 2], torch.Generator().manual_seed(1), **BOX_OPTIONS)
    assert torch.equal(torch.get_rng_state(), rng)  # the priors' own paths come from a forked RNG
    assert x.shape == (1, 1) and 0.0 <= float(x) <= 2.0 and local in (0, 1, 2)
    again = thompson_prior_argmax(model, [0, 1, 2], torch.Generator().manual_seed(1), **BOX_OPTIONS)
    assert torch.equal(again[0], x) and again[1] == local


def test_ucb_on_a_box_is_the_joint_maximiser_and_beats_a_grid():
    model = BoxPriors(box_candidates(), BOUNDS, BOX_X, BOX_Y)
    sqrt_beta = 1.5
    options = {"num_restarts": 8, "raw_samples": 128}  # two local maxima 5e-4 apart: enough starts
    generator = torch.Generator().manual_seed(4)
    replay = replay_of(generator)
    x, local = ucb_prior_argmax(model, [0, 2], sqrt_beta, generator, **options)
    best_x, best_local, _ = optimize_ucb_joint(
        model.candidate_gp([0, 2]), sqrt_beta, BOUNDS, **options, seed=draw_seed(replay)
    )
    assert local == best_local and torch.equal(x, best_x.unsqueeze(0))
    grid = torch.linspace(0, 2, 801, dtype=torch.float64).unsqueeze(-1)
    mean, variance = model.mean_variance(grid, [0, 2])
    grid_best = float((mean + sqrt_beta * variance.clamp_min(0).sqrt()).max())
    mean_x, variance_x = model.mean_variance(x, [0, 2])
    assert float(mean_x[local, 0] + sqrt_beta * variance_x[local, 0].sqrt()) >= grid_best - 1e-6


def test_ucb_on_a_box_before_data_maximises_each_priors_own_ucb():
    # prior means x, -2x and 0.5 on the unit cube, one kernel: UCB_k = m_k(x) + sqrt_beta * sqrt(s)
    means = MeanFunctionCandidates(
        box_candidates(), lambda X: torch.stack([X[..., 0], -2 * X[..., 0], 0.5 + 0 * X[..., 0]], dim=-2)
    )
    model = BoxPriors(means, BOUNDS)
    x, local = ucb_prior_argmax(model, [0, 1, 2], 1.0, torch.Generator().manual_seed(0), **BOX_OPTIONS)
    assert local == 0 and float(x) == pytest.approx(2.0, abs=1e-6)  # the top of the box
    x, local = ucb_prior_argmax(model, [1, 2], 1.0, torch.Generator().manual_seed(0), **BOX_OPTIONS)
    assert local == 1  # 0.5 + c beats -2x + c everywhere but ties it nowhere


def test_box_selections_refine_with_the_device_search():
    model = BoxPriors(box_candidates(), BOUNDS, BOX_X, BOX_Y)
    # Thompson: the same paths as SciPy's (the same seeds), maximised on the device
    generator = torch.Generator().manual_seed(3)
    replay = replay_of(generator)
    x, local = thompson_prior_argmax(model, [0, 2], generator, **BOX_OPTIONS, search="torch")
    X_best, values = sample_candidate_maxima(
        model.candidate_gp([0, 2]), BOUNDS, **BOX_OPTIONS, num_features=1024, seed=draw_seed(replay), search="torch"
    )
    assert local == int(values.argmax()) and torch.equal(x, X_best[local : local + 1])
    _, values_s = sample_candidate_maxima(
        model.candidate_gp([0, 2]), BOUNDS, **BOX_OPTIONS, num_features=1024, seed=draw_seed(replay_of(
            torch.Generator().manual_seed(3))),
    )
    torch.testing.assert_close(values, values_s, rtol=0, atol=1e-6)
    # UCB: the joint maximiser, no worse than a grid
    options = {"num_restarts": 8, "raw_samples": 128}
    generator = torch.Generator().manual_seed(4)
    replay = replay_of(generator)
    x, local = ucb_prior_argmax(model, [0, 2], 1.5, generator, **options, search="torch")
    best_x, best_local, _ = optimize_ucb_joint(
        model.candidate_gp([0, 2]), 1.5, BOUNDS, **options, seed=draw_seed(replay), search="torch"
    )
    assert local == best_local and torch.equal(x, best_x.unsqueeze(0))
    grid = torch.linspace(0, 2, 801, dtype=torch.float64).unsqueeze(-1)
    mean, variance = model.mean_variance(grid, [0, 2])
    mean_x, variance_x = model.mean_variance(x, [0, 2])
    grid_best = float((mean + 1.5 * variance.clamp_min(0).sqrt()).max())
    assert float(mean_x[local, 0] + 1.5 * variance_x[local, 0].sqrt()) >= grid_best - 1e-6


def test_box_selections_before_data_refine_with_the_device_search():
    means = MeanFunctionCandidates(
        box_candidates(), lambda X: torch.stack([X[..., 0], -2 * X[..., 0], 0.5 + 0 * X[..., 0]], dim=-2)
    )
    model = BoxPriors(means, BOUNDS)
    x, local = ucb_prior_argmax(model, [0, 1, 2], 1.0, torch.Generator().manual_seed(0), **BOX_OPTIONS, search="torch")
    assert local == 0 and float(x) == pytest.approx(2.0, abs=1e-6)  # the top of the box
    x, local = thompson_prior_argmax(model, [0, 1, 2], torch.Generator().manual_seed(1), **BOX_OPTIONS, search="torch")
    assert x.shape == (1, 1) and 0.0 <= float(x) <= 2.0 and local in (0, 1, 2)


def test_box_selections_refuse_a_bad_search_and_scipy_only_options():
    model = BoxPriors(box_candidates(), BOUNDS, BOX_X, BOX_Y)
    for select in (
        lambda g: thompson_prior_argmax(model, [0, 2], g, **BOX_OPTIONS, search="adam"),
        lambda g: ucb_prior_argmax(model, [0, 2], 1.5, g, **BOX_OPTIONS, search="adam"),
    ):
        g = torch.Generator().manual_seed(0)
        with pytest.raises(ValueError, match="search must be one of"):
            select(g)
        assert torch.equal(g.get_state(), torch.Generator().manual_seed(0).get_state())
    with pytest.raises(ValueError, match=r"search='torch'.*\['disp'\]"):
        sample_candidate_maxima(model.candidate_gp([0, 2]), BOUNDS, options={"disp": True}, seed=0, search="torch")
