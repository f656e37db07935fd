"""Tests for botorch_unknown_hypers.acquisition.optimize."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.acquisition import UpperConfidenceBound
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf

from botorch_unknown_hypers.acquisition.optimize import optimize_ucb_per_candidate, random_argmax
from botorch_unknown_hypers.acquisition.ucb import candidate_ucb_at
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from tests.host_reads import profiled_reads, record_reads

DTYPES = [torch.float32, torch.float64]
NUM_RESTARTS, RAW_SAMPLES = 8, 256


def make_problem(dtype=torch.float64, lower=(-1.0, 0.5), upper=(2.0, 3.0)):
    r"""d = 2, n = 30, K = 5 length scales in [0.1, 0.6], a smooth target on a non-unit box."""
    generator = torch.Generator().manual_seed(0)
    bounds = torch.tensor([lower, upper], dtype=torch.float64)
    unit_X = torch.rand(30, 2, generator=generator, dtype=torch.float64)
    train_X = bounds[0] + (bounds[1] - bounds[0]) * unit_X
    train_Y = (
        torch.sin(3.0 * unit_X[:, :1]) * torch.cos(2.0 * unit_X[:, 1:])
        - 0.5 * (unit_X[:, :1] - 0.6) ** 2
    )
    width = (bounds[1] - bounds[0]).mean()
    cands = KernelCandidates(
        lengthscale=width * torch.tensor([0.1, 0.2, 0.3, 0.45, 0.6], dtype=torch.float64),
        outputscale=1.0,
        noise=1e-4,
        kernel="matern52",
    )
    model = CandidateGP(train_X.to(dtype), train_Y.to(dtype), cands)
    beta = torch.tensor([2.0, 1.0, 3.0, 0.5, 2.5], dtype=dtype)
    return model, beta, bounds.to(dtype)


@pytest.fixture(scope="module")
def problem():
    model, beta, bounds = make_problem()
    X_best, values = optimize_ucb_per_candidate(
        model, beta, bounds, num_restarts=NUM_RESTARTS, raw_samples=RAW_SAMPLES, seed=0
    )
    return model, beta, bounds, X_best, values


def ucb_of_selected(model, k, beta_k, X):
    r"""BoTorch's UCB of candidate ``k`` at ``n x d`` points (beta squared, see ucb.py)."""
    return UpperConfidenceBound(model.select(k), beta=beta_k**2)(X.unsqueeze(-2))


# --------------------------------------------------------------------------- #
# optimize_ucb_per_candidate
# --------------------------------------------------------------------------- #


class TestOptimizeUCBPerCandidate:
    def test_shapes_and_bounds(self, problem):
        model, _, bounds, X_best, values = problem
        assert X_best.shape == (5, 2) and values.shape == (5,)
        assert not X_best.requires_grad and not values.requires_grad
        assert (X_best >= bounds[0]).all() and (X_best <= bounds[1]).all()

    def test_values_are_ucb_at_points(self, problem):
        model, beta, _, X_best, values = problem
        for k in range(5):
            recomputed = ucb_of_selected(model, k, float(beta[k]), X_best[k : k + 1])
            torch.testing.assert_close(values[k : k + 1], recomputed, rtol=1e-9, atol=1e-12)
        direct = candidate_ucb_at(model, beta, X_best.unsqueeze(-2)).squeeze(-1)
        torch.testing.assert_close(values, direct, rtol=1e-9, atol=1e-12)

    def test_at_least_as_good_as_optimize_acqf(self, problem):
        model, beta, bounds, _, values = problem
        for k in range(5):
            acqf = UpperConfidenceBound(model.select(k), beta=float(beta[k]) ** 2)
            torch.manual_seed(k)
            _, reference = optimize_acqf(
                acqf, bounds, q=1, num_restarts=NUM_RESTARTS, raw_samples=RAW_SAMPLES
            )
            reference = reference.reshape(())
            assert values[k] >= reference - 1e-6 * reference.abs(), (k, values[k], reference)

    def test_deterministic_with_seed(self, problem):
        model, beta, bounds, X_best, values = problem
        X_again, values_again = optimize_ucb_per_candidate(
            model, beta, bounds, num_restarts=NUM_RESTARTS, raw_samples=RAW_SAMPLES, seed=0
        )
        assert torch.equal(X_again, X_best)
        assert torch.equal(values_again, values)

    def test_scalar_beta_and_single_restart(self):
        model, _, bounds = make_problem()
        X_best, values = optimize_ucb_per_candidate(
            model, 2.0, bounds, num_restarts=1, raw_samples=16, seed=1, options={"maxiter": 20}
        )
        assert X_best.shape == (5, 2)
        direct = candidate_ucb_at(model, torch.full((5,), 2.0, dtype=torch.float64), X_best.unsqueeze(-2))
        torch.testing.assert_close(values, direct.squeeze(-1), rtol=1e-9, atol=1e-12)

    def test_subset_model_single_candidate(self):
        model, beta, bounds = make_problem()
        sub = model.subset([3])
        X_best, values = optimize_ucb_per_candidate(
            sub, beta[3:4], bounds, num_restarts=2, raw_samples=32, seed=0
        )
        assert X_best.shape == (1, 2) and values.shape == (1,)
        torch.testing.assert_close(
            values, ucb_of_selected(model, 3, float(beta[3]), X_best), rtol=1e-9, atol=1e-12
        )

    def test_float32(self):
        model, beta, bounds = make_problem(dtype=torch.float32)
        X_best, values = optimize_ucb_per_candidate(
            model, beta, bounds, num_restarts=2, raw_samples=32, seed=0
        )
        assert X_best.dtype == torch.float32 and values.dtype == torch.float32
        assert (X_best >= bounds[0]).all() and (X_best <= bounds[1]).all()
        direct = candidate_ucb_at(model, beta, X_best.unsqueeze(-2)).squeeze(-1)
        torch.testing.assert_close(values, direct, rtol=1e-4, atol=1e-4)

    @pytest.mark.parametrize(
        "kwargs, match",
        [
            (dict(num_restarts=8, raw_samples=4), "raw_samples"),
            (dict(num_restarts=0, raw_samples=4), "num_restarts"),
            (dict(bounds=torch.tensor([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])), "bounds"),
            (dict(bounds=torch.tensor([0.0, 1.0])), "bounds"),
            (dict(bounds=torch.tensor([[1.0, 0.0], [0.0, 1.0]])), "bounds"),
            (dict(bounds=torch.tensor([[0.0, 0.0], [0.0, 1.0]])), "bounds"),
            (dict(beta=torch.ones(3)), "beta"),
            (dict(beta=torch.ones(6)), "beta"),
            (dict(beta=-1.0), "beta"),
        ],
    )
    def test_invalid_arguments(self, kwargs, match):
        model, beta, bounds = make_problem()
        full = dict(beta=beta, bounds=bounds, num_restarts=2, raw_samples=8)
        full.update(kwargs)
        with pytest.raises(ValueError, match=match):
            optimize_ucb_per_candidate(model, **full)


def test_eta_option():
    model, beta, bounds = make_problem(dtype=torch.float32)
    X_best, values = optimize_ucb_per_candidate(
        model, beta, bounds, num_restarts=3, raw_samples=64, seed=0, options={"eta": 200.0}
    )
    assert torch.isfinite(values).all() and X_best.shape == (5, 2)


def test_candidate_ucb_at():
    model, beta, bounds = make_problem()
    X = bounds[0] + (bounds[1] - bounds[0]) * torch.rand(
        5, 3, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64
    )
    values = candidate_ucb_at(model, beta, X)
    assert values.shape == (5, 3)
    for k in range(5):
        torch.testing.assert_close(
            values[k], ucb_of_selected(model, k, float(beta[k]), X[k]), rtol=1e-9, atol=1e-12
        )


def test_optimize_ucb_joint_finds_the_best_candidate_and_point():
    from botorch_unknown_hypers.acquisition.optimize import optimize_ucb_joint

    torch.manual_seed(0)
    X = torch.rand(8, 1, dtype=torch.float64)
    Y = torch.sin(6 * X)
    cands = KernelCandidates.from_lengthscales(torch.tensor([0.05, 0.2, 0.8], dtype=torch.float64), noise=1e-4)
    model = CandidateGP(X, Y, cands)
    beta = torch.tensor([0.5, 2.0, 1.0], dtype=torch.float64)
    x, k, value = optimize_ucb_joint(model, beta, torch.tensor([[0.0], [1.0]], dtype=torch.float64), seed=0)
    grid = torch.linspace(0, 1, 2001, dtype=torch.float64).reshape(-1, 1)
    mean, var = model.marginal_mean_variance(grid.unsqueeze(0).unsqueeze(0))
    ucb = mean[0] + beta.unsqueeze(-1) * var[0].sqrt()  # K x N
    best = ucb.max()
    assert k == int(ucb.max(dim=-1).values.argmax())
    assert float(value) == pytest.approx(float(best), abs=1e-4)
    assert float(value) >= float(best) - 1e-4 and 0 <= float(x) <= 1


def test_random_argmax_breaks_exact_ties_with_the_generator():
    values = torch.tensor([[0.0, 2.0, 1.0], [2.0, -1.0, 2.0]])
    picks = {random_argmax(values, torch.Generator().manual_seed(s)) for s in range(40)}
    assert picks == {1, 3, 5}
    assert random_argmax(values, torch.Generator().manual_seed(3)) == random_argmax(values, torch.Generator().manual_seed(3))
    assert random_argmax(torch.tensor([0.0, 3.0, 1.0]), torch.Generator()) == 1


def test_random_argmax_of_host_values_reads_nothing_and_draws_as_the_tensor_does(monkeypatch):
    from tests.host_reads import record_reads

    values = torch.tensor([[0.0, 2.0, 1.0], [2.0, -1.0, 2.0]])
    host = values.reshape(-1).tolist()
    reads = record_reads(monkeypatch)
    assert random_argmax([0.0, 3.0, 1.0], torch.Generator()) == 1 and reads == []  # no tie: nothing drawn or read
    picks = [random_argmax(host, torch.Generator().manual_seed(s)) for s in range(40)]
    assert reads == ["__int__"] * 40  # a tie: the generator's draw (a CPU tensor) only
    monkeypatch.undo()
    assert picks == [random_argmax(values, torch.Generator().manual_seed(s)) for s in range(40)]
    assert random_argmax([0.0, 3.0, -math.inf], torch.Generator()) == 1
    for bad in ([], [0.0, math.nan]):
        with pytest.raises(ValueError, match="values must be a non-empty sequence"):
            random_argmax(bad, torch.Generator())


# --------------------------------------------------------------------------- #
# maximize_slot / joint_ucb_restarts: later slots of a batch warm-started
# --------------------------------------------------------------------------- #


def _slot_problem(lengthscales):
    r"""d = 1, n = 12 points of a wiggly target, candidates of the given length scales."""
    X = torch.rand(12, 1, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    Y = torch.sin(9 * X) + 0.3 * torch.cos(23 * X)
    cands = KernelCandidates.from_lengthscales(torch.tensor(lengthscales, dtype=torch.float64), noise=1e-4)
    return CandidateGP(X, Y, cands)


def _grid_ucb(model, beta):
    r"""``K x 4001`` UCB values of ``model`` on a grid of [0, 1] and the grid."""
    grid = torch.linspace(0, 1, 4001, dtype=torch.float64).reshape(-1, 1)
    with torch.no_grad():
        mean, var = model.marginal_mean_variance(grid.unsqueeze(0).unsqueeze(0))
    return mean[0] + beta.reshape(-1, 1) * var[0].sqrt(), grid


def test_maximize_slot_cold_is_maximize_and_returns_every_restart():
    from botorch_unknown_hypers.acquisition.optimize import maximize, maximize_slot
    from botorch_unknown_hypers.acquisition.ucb import CandidateUCB
    from botorch_unknown_hypers.domains import BoxDomain

    model = _slot_problem([0.1])
    domain = BoxDomain(torch.tensor([[0.0], [1.0]], dtype=torch.float64))
    acqf = CandidateUCB(model, beta=2.0, reduction="select", index=0)
    x_ref, _ = maximize(acqf, domain, torch.Generator().manual_seed(3), num_restarts=6, raw_samples=64)
    x, restarts = maximize_slot(acqf, domain, torch.Generator().manual_seed(3), num_restarts=6, raw_samples=64)
    assert torch.equal(x, x_ref)
    assert restarts.X.shape == (6, 1) and restarts.values.shape == (6,)
    with torch.no_grad():
        torch.testing.assert_close(restarts.values, acqf(restarts.X.unsqueeze(-2)), rtol=1e-10, atol=1e-12)
    assert float(restarts.values.max()) == pytest.approx(float(acqf(x.unsqueeze(-2))), abs=1e-12)


def test_warm_slot_finds_the_maximum_of_the_conditioned_ucb():
    r"""Slot 2 started only from slot 1's optima reaches the grid maximum of the UCB whose
    variance is conditioned on slot 1, away from slot 1."""
    from botorch_unknown_hypers.acquisition.optimize import EXCLUDE_TOL, distinct_restarts, maximize_slot
    from botorch_unknown_hypers.acquisition.ucb import CandidateUCB
    from botorch_unknown_hypers.domains import BoxDomain

    model = _slot_problem([0.08])
    domain = BoxDomain(torch.tensor([[0.0], [1.0]], dtype=torch.float64))
    beta = torch.tensor([3.0], dtype=torch.float64)
    generator = torch.Generator().manual_seed(0)
    x1, warm = maximize_slot(CandidateUCB(model, beta=3.0, reduction="select", index=0), domain, generator)
    view = model.condition_on_pending(x1)
    acqf = CandidateUCB(view, beta=3.0, reduction="select", index=0)
    x2, restarts = maximize_slot(acqf, domain, generator, exclude=x1, warm=warm)
    distinct = distinct_restarts(warm)
    assert 1 <= distinct.numel() < warm.X.shape[0]  # restarts that converged together count once
    assert restarts.X.shape == (distinct.numel() + 1, 1)  # the best raw point beat them all: one new start
    assert float((x2 - x1).abs().max()) > EXCLUDE_TOL
    ucb, _ = _grid_ucb(view, beta)
    with torch.no_grad():
        assert float(acqf(x2.unsqueeze(-2))) >= float(ucb.max()) - 1e-5


def test_joint_warm_restarts_keep_their_candidates_and_find_the_joint_maximum():
    from botorch_unknown_hypers.acquisition.optimize import EXCLUDE_TOL, distinct_restarts, joint_ucb_restarts, optimize_ucb_joint

    model = _slot_problem([0.05, 0.1, 0.3])
    beta = torch.tensor([1.0, 2.5, 1.5], dtype=torch.float64)
    bounds = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
    cold = joint_ucb_restarts(model, beta, bounds, seed=0)
    x1, k1, _ = optimize_ucb_joint(model, beta, bounds, seed=0)
    assert cold.candidates.shape == (10,) and int(cold.candidates[int(cold.values.argmax())]) == k1
    view = model.condition_on_pending(x1.reshape(1, 1))
    warm = joint_ucb_restarts(view, beta, bounds, warm=cold)
    assert torch.equal(warm.candidates[:-1], cold.candidates[distinct_restarts(cold)])
    x2, k2, value = optimize_ucb_joint(view, beta, bounds, exclude=x1.reshape(1, 1), warm=cold)
    assert float((x2 - x1).abs().max()) > EXCLUDE_TOL
    ucb, grid = _grid_ucb(view, beta)
    assert float(value) >= float(ucb.max()) - 1e-5


def test_new_basin_adds_the_best_raw_point_only_when_it_beats_every_warm_start():
    from botorch_unknown_hypers.acquisition.optimize import new_basin

    warm = torch.tensor([1.0, 3.0, 2.0])
    assert new_basin(warm, torch.tensor([0.5, 2.9, 1.0])) is None
    assert new_basin(warm, torch.tensor([0.5, 3.0, 1.0])) is None  # a tie is no new basin
    assert new_basin(warm, torch.tensor([0.5, 3.5, 4.0])) == 2


def test_fixed_raw_points_score_from_the_kept_solves_as_from_the_model():
    from botorch_unknown_hypers.acquisition.optimize import draw_raw_seed, fixed_raw_points, joint_ucb_restarts
    from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain
    from botorch_unknown_hypers.models.factor_cache import FactorCache

    bounds = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
    domain = BoxDomain(bounds)
    R = fixed_raw_points(domain, 64, seed=3)
    assert R.shape == (64, 1) and torch.equal(R, fixed_raw_points(domain, 64, seed=3))
    plain = _slot_problem([0.05, 0.1, 0.3])
    cache = FactorCache()
    cache.set_points(R)  # unit interval: raw and transformed points coincide
    kept = CandidateGP(plain.raw_train_X, plain.raw_train_Y, plain.candidates, factor=cache.factor(plain.candidates, plain.raw_train_X))
    beta = torch.tensor([1.0, 2.5, 1.5], dtype=torch.float64)
    a = joint_ucb_restarts(kept, beta, bounds, raw_samples=64, seed=0, raw_points=R)
    b = joint_ucb_restarts(plain, beta, bounds, raw_samples=64, seed=0, raw_points=R)  # scored through the model
    assert torch.equal(a.candidates, b.candidates)
    torch.testing.assert_close(a.X, b.X, rtol=0, atol=1e-6)
    ucb, _ = _grid_ucb(plain, beta)
    assert float(a.values.max()) >= float(ucb.max()) - 1e-5
    with pytest.raises(ValueError, match="raw_points must hold at least one point"):
        joint_ucb_restarts(kept, beta, bounds, raw_points=R[:0])
    with pytest.raises(ValueError, match="raw_points must lie in the box"):
        joint_ucb_restarts(kept, beta, bounds, raw_points=R + 2)
    with pytest.raises(ValueError, match="raw_points must be finite"):
        joint_ucb_restarts(kept, beta, bounds, raw_points=torch.full_like(R, float("nan")))
    # on a pool: no raw points, and the generator is not drawn from
    pool = FiniteDomain(torch.rand(20, 1, dtype=torch.float64))
    g = torch.Generator().manual_seed(4)
    state = g.get_state()
    assert draw_raw_seed(pool, g) is None and torch.equal(g.get_state(), state)
    assert fixed_raw_points(pool, 64, seed=3) is None
    assert isinstance(draw_raw_seed(domain, g), int) and not torch.equal(g.get_state(), state)


@pytest.mark.parametrize("beta", [-1.0, float("nan"), torch.ones(4)])
def test_joint_argmax_refuses_a_bad_beta_on_a_box_and_on_a_pool(beta):
    from botorch_unknown_hypers.acquisition.optimize import joint_ucb_argmax
    from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain

    model, _, bounds = make_problem()
    pool = FiniteDomain(bounds[0] + (bounds[1] - bounds[0]) * torch.rand(7, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64))
    for domain in (BoxDomain(bounds), pool):
        with pytest.raises(ValueError, match="beta"):
            joint_ucb_argmax(model, beta, domain, torch.Generator().manual_seed(0), num_restarts=2, raw_samples=16)


def test_joint_argmax_on_a_box_checks_beta_once(monkeypatch):
    import botorch_unknown_hypers.acquisition.optimize as optimize
    from botorch_unknown_hypers.domains import BoxDomain

    model, beta, bounds = make_problem()
    calls = []
    original = optimize.beta_checks
    monkeypatch.setattr(optimize, "beta_checks", lambda *a, **k: calls.append(1) or original(*a, **k))
    X, k, _, _, _ = optimize.joint_ucb_argmax(model, beta, BoxDomain(bounds), torch.Generator().manual_seed(0), num_restarts=2, raw_samples=16)
    assert len(calls) == 1 and X.shape == (1, 2) and 0 <= k < 5


def test_joint_argmax_leaves_the_mean_and_sigma_on_the_device(monkeypatch):
    import botorch_unknown_hypers.acquisition.optimize as optimize
    from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain

    model, beta, bounds = make_problem()
    pool = FiniteDomain(bounds[0] + (bounds[1] - bounds[0]) * torch.rand(7, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64))
    for domain in (BoxDomain(bounds), pool):
        reads = record_reads(monkeypatch)
        monkeypatch.setattr(optimize, "_best_pair", lambda *a, _f=optimize._best_pair: reads.append("pair") or _f(*a))
        X, k, mean, sigma, _ = optimize.joint_ucb_argmax(model, beta, domain, torch.Generator().manual_seed(0), num_restarts=2, raw_samples=16)
        monkeypatch.undo()
        if isinstance(domain, BoxDomain):  # the best pair's read is the last: none for the mean and sigma
            assert reads[-2:] == ["pair", "tolist"]
        assert isinstance(mean, torch.Tensor) and mean.shape == () and sigma.shape == ()
        with torch.no_grad():
            m, v = model.marginal_mean_variance(X.unsqueeze(0))
        assert torch.equal(mean, m[k, 0]) and torch.equal(sigma, v[k, 0].clamp_min(0).sqrt())


@pytest.mark.parametrize("joint", [True, False])
def test_the_box_and_the_widths_are_checked_in_one_read(joint, monkeypatch):
    import botorch_unknown_hypers.acquisition.optimize as optimize

    model, beta, bounds = make_problem()
    beta = torch.as_tensor(beta, dtype=torch.float64).expand(model.num_candidates).clone()
    checked, original = [], optimize._box_and_beta

    def spy(*args):
        with pytest.MonkeyPatch.context() as reading:
            reads = record_reads(reading)
            out = original(*args)
        checked.append(len(reads))
        return out

    run = optimize.joint_ucb_restarts if joint else optimize.optimize_ucb_per_candidate
    with monkeypatch.context() as m:
        m.setattr(optimize, "_box_and_beta", spy)
        run(model, beta, bounds, 2, 16, seed=0)
    assert checked == [1]
    for bad_bounds, bad_beta, match in ((bounds.flip(0), beta, "bounds must be 2 x 2 with upper > lower"),
                                        (bounds, -beta, "beta must be finite and non-negative"),
                                        (bounds[:, :1], beta, "bounds must be 2 x 2")):
        with pytest.raises(ValueError, match=match):
            run(model, bad_beta, bad_bounds, 2, 16, seed=0)


def test_best_outside_chooses_on_the_device_and_falls_back_to_the_given_point(monkeypatch):
    from botorch_unknown_hypers.acquisition.optimize import EXCLUDE_TOL, best_outside

    X = torch.tensor([[0.1, 0.1], [0.5, 0.5], [0.9, 0.2]], dtype=torch.float64)
    values = torch.tensor([1.0, 3.0, 2.0], dtype=torch.float64)
    fallback = torch.tensor([[0.25, 0.75]], dtype=torch.float64)
    reads = record_reads(monkeypatch)
    x, top, found = best_outside(X, values, None, fallback)
    assert reads == []
    monkeypatch.undo()
    assert torch.equal(x, X[1:2]) and top.tolist() == [3.0] and bool(found)
    x, top, found = best_outside(X, values, X[1:2] + EXCLUDE_TOL / 4, fallback)  # the best is excluded
    assert torch.equal(x, X[2:3]) and top.tolist() == [2.0] and bool(found)
    assert profiled_reads(lambda: best_outside(X, values, X[1:2], fallback)) == []  # no 0-d index read in C++
    x, top, found = best_outside(X, values, X, fallback)  # every optimum excluded: the fallback
    assert torch.equal(x, fallback) and top.tolist() == [-math.inf] and not bool(found)


def test_a_slot_whose_restarts_are_all_excluded_takes_a_uniform_point_of_its_own_seed():
    # maximize with exclude covering every refined restart: the uniform fallback drawn from a
    # generator seeded by the search's seed (so the rule's generator moves as without exclude),
    # valued by the acquisition.
    from botorch.acquisition import PosteriorMean

    from botorch_unknown_hypers.acquisition.optimize import maximize
    from botorch_unknown_hypers.domains import BoxDomain
    from botorch_unknown_hypers.rng import draw_seeds

    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    train_X = torch.tensor([[0.2, 0.3], [0.7, 0.6], [0.4, 0.9]], dtype=torch.float64)
    model = SingleTaskGP(train_X, torch.tensor([[0.1], [1.0], [0.4]], dtype=torch.float64))
    acqf = PosteriorMean(model)
    free, _ = maximize(acqf, domain, torch.Generator().manual_seed(4), num_restarts=1, raw_samples=16)
    g = torch.Generator().manual_seed(4)
    X, value = maximize(acqf, domain, g, num_restarts=1, raw_samples=16, exclude=free)  # its one restart
    after = torch.Generator().manual_seed(4)
    _, seed = draw_seeds(after, 2)
    assert torch.equal(g.get_state(), after.get_state())
    expected = domain.sample_uniform(1, torch.Generator().manual_seed(seed))
    assert torch.equal(X, expected) and torch.cdist(X, free).min() > 1e-3
    with torch.no_grad():
        assert torch.equal(value, acqf(expected.unsqueeze(-2)).reshape(1))


def test_the_best_pair_is_read_in_one_copy_with_no_index_read():
    from botorch_unknown_hypers.acquisition.optimize import EXCLUDE_TOL, Restarts, _best_pair

    X = torch.tensor([[0.1, 0.1], [0.5, 0.5], [0.9, 0.2]], dtype=torch.float64)
    restarts = Restarts(X, torch.tensor([1.0, 3.0, 2.0], dtype=torch.float64), torch.tensor([2, 0, 1]))
    assert profiled_reads(lambda: _best_pair(restarts, None)) == []  # the one copy is a tolist
    x, k, value, finite = _best_pair(restarts, None)
    assert torch.equal(x, X[1]) and k == 0 and float(value) == 3.0 and finite
    x, k, value, finite = _best_pair(restarts, X[1:2] + EXCLUDE_TOL / 4)
    assert torch.equal(x, X[2]) and k == 1 and float(value) == 2.0 and finite
    assert not _best_pair(restarts, X)[3]  # every pair excluded


def test_raw_points_against_the_callers_box_are_checked_with_the_box_and_widths_in_one_read(monkeypatch):
    r"""With the caller's ``BoxDomain`` (whose bounds are the ``bounds`` given), the raw points'
    check joins the box's and the widths' one read: the same restarts, two reads fewer, the same
    errors for bad raw points."""
    from botorch_unknown_hypers.acquisition.optimize import fixed_raw_points, joint_ucb_restarts
    from botorch_unknown_hypers.domains import BoxDomain

    model, beta, bounds = make_problem()
    domain = BoxDomain(bounds)
    R = fixed_raw_points(domain, 32, seed=3)
    counts, out = [], []
    joint_ucb_restarts(model, beta, domain.bounds, 2, 32, seed=0, raw_points=R)  # warm: the model's first posterior reads more
    for box in (None, domain):
        reads = record_reads(monkeypatch)
        out.append(joint_ucb_restarts(model, beta, domain.bounds, 2, 32, seed=0, raw_points=R, box=box))
        monkeypatch.undo()
        counts.append(len(reads))
    assert counts[1] == counts[0] - 2
    assert torch.equal(out[0].X, out[1].X) and torch.equal(out[0].values, out[1].values) and torch.equal(out[0].candidates, out[1].candidates)
    for bad, match in ((R[:0], "raw_points must hold at least one point"), (R + 10, "raw_points must lie in the box"),
                       (torch.full_like(R, float("nan")), "raw_points must be finite")):
        with pytest.raises(ValueError, match=match):
            joint_ucb_restarts(model, beta, domain.bounds, 2, 32, seed=0, raw_points=bad, box=domain)
    with pytest.raises(ValueError, match="beta must be finite and non-negative"):  # the widths' error first
        joint_ucb_restarts(model, -1.0, domain.bounds, 2, 32, seed=0, raw_points=R + 10, box=domain)


def test_joint_argmax_with_values_checked_by_the_caller_reads_once_less_and_still_checks_shapes(monkeypatch):
    r"""``check_values=False`` (a caller that checks ``beta``'s values with its own later copy and
    draws ``raw_points`` in the box): the same pair, point and restarts as the checked call, with
    one host read fewer; shapes are refused either way, and ``joint_ucb_restarts`` refuses the
    flag without the box whose bounds it is given."""
    import botorch_unknown_hypers.acquisition.optimize as optimize
    from botorch_unknown_hypers.domains import BoxDomain

    model, beta, bounds = make_problem()
    beta = torch.as_tensor(beta, dtype=torch.float64).expand(model.num_candidates).clone()
    domain = BoxDomain(bounds)
    raw = optimize.fixed_raw_points(domain, 16, seed=3)
    out, counts = [], []
    for check in (True, False):
        model = make_problem()[0]  # a fresh model each: GPyTorch's first prediction builds caches with reads
        reads = record_reads(monkeypatch)
        out.append(optimize.joint_ucb_argmax(
            model, beta, domain, torch.Generator().manual_seed(0), num_restarts=2, raw_samples=16, raw_points=raw, check_values=check,
        ))
        monkeypatch.undo()
        counts.append(len(reads))
    assert counts[1] == counts[0] - 1
    (x, k, mean, sigma, restarts), (x2, k2, mean2, sigma2, restarts2) = out
    assert torch.equal(x, x2) and k == k2 and torch.equal(mean, mean2) and torch.equal(sigma, sigma2)
    assert torch.equal(restarts.X, restarts2.X) and torch.equal(restarts.values, restarts2.values)
    for bad_beta, bad_raw, match in ((torch.ones(4, dtype=torch.float64), raw, r"^beta must be a scalar or have shape \(5,\)"), (beta, raw[:, :1], r"^raw_points must be q x d")):
        with pytest.raises(ValueError, match=match):
            optimize.joint_ucb_argmax(model, bad_beta, domain, torch.Generator(), num_restarts=2, raw_samples=16, raw_points=bad_raw, check_values=False)
    with pytest.raises(ValueError, match=r"^check_values: False needs box"):
        optimize.joint_ucb_restarts(model, beta, bounds, 2, 16, seed=0, check_values=False)
    for run in (lambda: optimize.joint_ucb_restarts(model, beta, bounds, 2, 16, seed=0, check_values=1),
                lambda: optimize.joint_ucb_argmax(model, beta, domain, torch.Generator(), 2, 16, check_values="no")):
        with pytest.raises(ValueError, match=r"^check_values must be a bool"):
            run()
