"""Tests of Thompson samples and their maximisers, and the posterior-mean maximiser
(botorch_unknown_hypers.acquisition.thompson).

References: the model's own posterior moments, brute-force grid maxima of the same sample paths
(replayed from the same seeds), and replays of the caller's generator.
"""

from __future__ import annotations

import pytest
import torch
from botorch.sampling.pathwise import draw_matheron_paths

from botorch_unknown_hypers.acquisition.thompson import (
    PoolJointSampler,
    candidate_set,
    max_posterior_mean_box,
    posterior_mean_argmax_box,
    posterior_mean_maximizer,
    random_point_sampler,
    thompson_maximizers,
)
from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain
from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp
from botorch_unknown_hypers.rng import draw_seed, forked_rng
from tests.acquisition.surrogate_helpers import BOUNDS, SPEC, surrogate_data
from tests.host_reads import record_reads

BOX_1D = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
SPEC_1D = SurrogateSpec(kernel="matern52", lengthscale=(0.15,), outputscale=1.0, noise_variance=1e-4)


def model_1d():
    X = torch.tensor([[0.1], [0.45], [0.8]], dtype=torch.float64)
    Y = torch.tensor([[0.2], [1.0], [-0.4]], dtype=torch.float64)
    return fixed_hyperparameter_gp(X, Y, SPEC_1D), X


def replay_of(generator: torch.Generator) -> torch.Generator:
    replay = torch.Generator()
    replay.set_state(generator.get_state())
    return replay


# --------------------------------------------------------------------------- #
# exact joint samples on a pool
# --------------------------------------------------------------------------- #


def test_pool_joint_sampler_has_the_posterior_moments():
    X, Y = surrogate_data(n=8)
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    points = torch.rand(6, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 4 - 2
    sampler = PoolJointSampler(model, points)
    with torch.no_grad():
        post = model.posterior(points)
    torch.testing.assert_close(sampler.mean, post.mean.squeeze(-1))
    torch.testing.assert_close(sampler.cov, post.mvn.covariance_matrix)
    torch.testing.assert_close(sampler.root @ sampler.root.T, sampler.cov, rtol=1e-8, atol=1e-10)
    num = 20000
    draws = sampler.draw(num, torch.Generator().manual_seed(0))
    assert draws.shape == (6, num) and draws.dtype == torch.float64
    # sample moments within 5 standard errors (Gaussian: se(mean) = sd / sqrt(n), se(var) = var sqrt(2 / n))
    sd = sampler.cov.diagonal().sqrt()
    assert bool(((draws.mean(-1) - sampler.mean).abs() <= 5 * sd / num**0.5).all())
    assert bool(((draws.var(-1) - sd.square()).abs() <= 5 * sd.square() * (2 / num) ** 0.5).all())


def test_pool_joint_sampler_is_seeded_and_leaves_the_global_rng_alone():
    X, Y = surrogate_data(n=8)
    sampler = PoolJointSampler(fixed_hyperparameter_gp(X, Y, SPEC), X[:5])
    rng = torch.get_rng_state()
    a = sampler.draw(4, torch.Generator().manual_seed(3))
    assert torch.equal(torch.get_rng_state(), rng)
    assert torch.equal(a, sampler.draw(4, torch.Generator().manual_seed(3)))
    assert not torch.equal(a, sampler.draw(4, torch.Generator().manual_seed(4)))


def test_pool_joint_sampler_is_stable_for_duplicate_points():
    X, Y = surrogate_data(n=8)
    points = torch.cat([X[:3], X[:3]])  # a singular covariance
    draws = PoolJointSampler(fixed_hyperparameter_gp(X, Y, SPEC), points).draw(10, torch.Generator().manual_seed(0))
    assert torch.isfinite(draws).all()
    torch.testing.assert_close(draws[:3], draws[3:], rtol=0, atol=1e-6)  # one function at one point


def test_thompson_maximizers_on_a_pool_are_the_argmax_of_replayed_joint_draws():
    X, Y = surrogate_data(n=8)
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    domain = FiniteDomain(torch.rand(40, 2, generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 4 - 2)
    generator = torch.Generator().manual_seed(9)
    replay = replay_of(generator)
    rng = torch.get_rng_state()
    points, maxima = thompson_maximizers(model, domain, 7, generator)
    assert torch.equal(torch.get_rng_state(), rng)
    draws = PoolJointSampler(model, domain.points).draw(7, replay)
    best, idx = draws.max(dim=0)
    assert torch.equal(points, domain.points[idx]) and torch.equal(maxima, best)
    assert points.shape == (7, 2) and len(set(idx.tolist())) > 1


# --------------------------------------------------------------------------- #
# pathwise samples on a box
# --------------------------------------------------------------------------- #


def test_thompson_maximizers_on_a_box_maximise_the_replayed_sample_paths():
    model, _ = model_1d()
    domain = BoxDomain(BOX_1D)
    generator = torch.Generator().manual_seed(2)
    replay = replay_of(generator)
    torch.manual_seed(0)
    rng = torch.get_rng_state()
    X, maxima = thompson_maximizers(model, domain, 3, generator, num_restarts=4, raw_samples=64)
    assert torch.equal(torch.get_rng_state(), rng)  # the paths come from a forked, seeded RNG
    assert X.shape == (3, 1) and maxima.shape == (3,) and domain.contains(X).all()
    # the same three paths, from the same seed, on a fine grid
    with forked_rng(draw_seed(replay)):
        paths = draw_matheron_paths(model, sample_shape=torch.Size([3]))
    grid = torch.linspace(0, 1, 2001, dtype=torch.float64).unsqueeze(-1)
    with torch.no_grad():
        on_grid = paths(grid).reshape(3, -1)
        at_X = paths(X.unsqueeze(-2)).reshape(3)  # path i at its own maximiser
    torch.testing.assert_close(maxima, at_X, rtol=1e-8, atol=1e-8)  # each maximum is its path's value
    assert bool((maxima >= on_grid.max(-1).values - 1e-6).all())
    # deterministic given the generator, and the generator matters
    again, _ = thompson_maximizers(model, domain, 3, torch.Generator().manual_seed(2), num_restarts=4, raw_samples=64)
    other, _ = thompson_maximizers(model, domain, 3, torch.Generator().manual_seed(3), num_restarts=4, raw_samples=64)
    assert torch.equal(again, X) and not torch.equal(other, X)


def test_thompson_maximizers_with_the_device_search_maximise_the_same_paths():
    model, _ = model_1d()
    domain = BoxDomain(BOX_1D)
    kw = dict(num_restarts=4, raw_samples=64)
    X_s, maxima_s = thompson_maximizers(model, domain, 3, torch.Generator().manual_seed(2), **kw)
    generator = torch.Generator().manual_seed(2)
    replay = replay_of(generator)
    X, maxima = thompson_maximizers(model, domain, 3, generator, **kw, search="torch")
    assert X.shape == (3, 1) and domain.contains(X).all()
    with forked_rng(draw_seed(replay)):  # the same paths as SciPy's (the same seeds)
        paths = draw_matheron_paths(model, sample_shape=torch.Size([3]))
    grid = torch.linspace(0, 1, 2001, dtype=torch.float64).unsqueeze(-1)
    with torch.no_grad():
        on_grid = paths(grid).reshape(3, -1)
        torch.testing.assert_close(maxima, paths(X.unsqueeze(-2)).reshape(3), rtol=1e-8, atol=1e-8)
    assert bool((maxima >= on_grid.max(-1).values - 1e-6).all())
    torch.testing.assert_close(maxima, maxima_s, rtol=0, atol=1e-6)
    again, _ = thompson_maximizers(model, domain, 3, torch.Generator().manual_seed(2), **kw, search="torch")
    assert torch.equal(again, X)
    for where in (domain, FiniteDomain(grid[::100])):  # refused before anything is drawn, on a pool too
        g = torch.Generator().manual_seed(2)
        with pytest.raises(ValueError, match="search must be one of"):
            thompson_maximizers(model, where, 3, g, **kw, search="adam")
        assert torch.equal(g.get_state(), torch.Generator().manual_seed(2).get_state())

def test_max_posterior_mean_box_and_random_point_sampler():
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    max_mean, x_best = max_posterior_mean_box(model, BOUNDS, X, 5, 128, 0)
    assert x_best.shape == (1, 2)
    assert float(model.posterior(x_best).mean) == pytest.approx(max_mean, abs=1e-9)
    g = torch.Generator().manual_seed(0)
    few = random_point_sampler(model, BOUNDS, 5, x_best, g).draw(300, g).amax(dim=0)
    many = random_point_sampler(model, BOUNDS, 1000, x_best, g).draw(300, g).amax(dim=0)
    assert few.shape == (300,) and few.mean() < many.mean()  # more points, larger maxima


def test_max_posterior_mean_box_is_no_worse_than_a_grid_or_the_data():
    model, X = model_1d()
    value, x = max_posterior_mean_box(model, BOX_1D, X, 4, 32, seed=1)
    grid = torch.linspace(0, 1, 2001, dtype=torch.float64).unsqueeze(-1)
    with torch.no_grad():
        mean = model.posterior(grid).mean.squeeze(-1)
        at_data = model.posterior(X).mean.squeeze(-1)
    assert value >= float(mean.max()) - 1e-9 and value >= float(at_data.max()) - 1e-12
    assert 0.0 <= float(x) <= 1.0


@pytest.mark.parametrize("search_value", [-5.0, 5.0])
def test_posterior_mean_argmax_box_takes_the_better_of_the_search_and_the_data_on_the_device(monkeypatch, search_value):
    import botorch_unknown_hypers.acquisition.thompson as thompson

    model, X = model_1d()
    found = torch.tensor([[0.9]], dtype=torch.float64)
    monkeypatch.setattr(thompson, "maximize_acquisition", lambda *a, **k: (found, torch.tensor([search_value], dtype=torch.float64)))
    with torch.no_grad():
        at_data = model.posterior(X.unsqueeze(-2)).mean.reshape(-1)
    in_model = []
    posterior = model.posterior  # the model's own reads (BoTorch's Standardize) are not the choice's

    def quiet_posterior(*a, **k):
        in_model.append(True)
        try:
            return posterior(*a, **k)
        finally:
            in_model.pop()

    monkeypatch.setattr(model, "posterior", quiet_posterior)
    reads = record_reads(monkeypatch, skip=lambda: bool(in_model))
    value, x = posterior_mean_argmax_box(model, BOX_1D, X, 4, 32, seed=1)
    assert reads == []
    monkeypatch.undo()
    if search_value > at_data.max():  # the search's point
        assert torch.equal(x, found) and float(value) == search_value
    else:  # the best training input
        assert torch.equal(x, X[1:2]) and torch.equal(value, at_data.max())
    monkeypatch.setattr(thompson, "maximize_acquisition", lambda *a, **k: (found, torch.tensor([search_value], dtype=torch.float64)))
    listed, at = max_posterior_mean_box(model, BOX_1D, X, 4, 32, seed=1)  # the same, the value as a float
    assert listed == float(value) and torch.equal(at, x)


def test_random_point_sampler_points_are_uniform_in_the_box_plus_the_given_point():
    X, Y = surrogate_data(n=8)
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    x_best = torch.tensor([[0.5, -0.5]], dtype=torch.float64)
    g = torch.Generator().manual_seed(6)
    replay = replay_of(g)
    sampler = random_point_sampler(model, BOUNDS, 20, x_best, g)
    u = torch.rand(20, 2, generator=replay, dtype=torch.float64)
    points = torch.cat([BOUNDS[0] + (BOUNDS[1] - BOUNDS[0]) * u, x_best])
    with torch.no_grad():
        torch.testing.assert_close(sampler.mean, model.posterior(points).mean.squeeze(-1))


def test_posterior_mean_maximizer_is_none_on_a_pool_and_seeded_on_a_box():
    model, X = model_1d()
    g = torch.Generator().manual_seed(0)
    assert posterior_mean_maximizer(model, FiniteDomain(X), X, g) is None
    assert torch.equal(g.get_state(), torch.Generator().manual_seed(0).get_state())  # nothing drawn
    rng = torch.get_rng_state()
    x = posterior_mean_maximizer(model, BoxDomain(BOX_1D), X, g, num_restarts=4, raw_samples=32)
    assert torch.equal(torch.get_rng_state(), rng)
    assert x.shape == (1, 1)
    value, _ = max_posterior_mean_box(model, BOX_1D, X, 4, 32, seed=0)
    with torch.no_grad():
        assert float(model.posterior(x).mean) == pytest.approx(value, abs=1e-6)


def test_candidate_set_is_the_pool_or_seeded_sobol_points():
    pool = FiniteDomain(torch.rand(9, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64))
    g = torch.Generator().manual_seed(1)
    assert candidate_set(pool, 100, g) is pool.points
    box = BoxDomain(BOUNDS)
    replay = replay_of(g)
    points = candidate_set(box, 16, g)
    assert torch.equal(points, box.discretize(16, draw_seed(replay)))
    assert points.shape == (16, 2) and box.contains(points).all()
    assert not torch.equal(candidate_set(box, 16, g), points)  # the generator advanced


def test_max_posterior_mean_box_needs_no_joint_covariance_at_the_data():
    # 60 points under a long RBF length scale and noise 1e-6: the joint posterior covariance at
    # the data is not numerically positive definite, the means at the data are still defined
    from botorch_unknown_hypers.candidates import KernelCandidates
    from botorch_unknown_hypers.models.candidate_gp import CandidateGP
    from botorch_unknown_hypers.models.factor_cache import FactorCache

    X = torch.rand(60, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    Y = torch.sin(3 * X).sum(-1, keepdim=True)
    spec = KernelCandidates.from_lengthscales(torch.tensor([1.0], dtype=torch.float64), kernel="rbf", noise=1e-6)
    model = CandidateGP(X, Y, spec, squeeze_candidate_dim=True, factor=FactorCache().factor(spec, X))
    with torch.no_grad():
        joint = model.posterior(X).distribution.covariance_matrix  # lazy: unfactorised until asked
        assert torch.linalg.cholesky_ex(joint).info > 0  # the situation this guards against
        at_data = model.posterior(X.unsqueeze(-2)).mean.reshape(-1)
    value, x = max_posterior_mean_box(model, torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64), X, 2, 16, seed=0)
    assert value >= float(at_data.max()) - 1e-12 and x.shape == (1, 2)


def test_the_posterior_mean_at_the_data_compares_no_inputs():
    # Scoring the n training inputs against the n training inputs made GPyTorch compare them
    # (torch.equal, a host read); with the search's point appended the shapes differ. The
    # choice is unchanged: the better of the search and the data.
    from torch.profiler import ProfilerActivity, profile

    from botorch_unknown_hypers.candidates import KernelCandidates
    from botorch_unknown_hypers.models.candidate_gp import CandidateGP
    from botorch_unknown_hypers.models.factor_cache import FactorCache

    X = torch.rand(12, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    Y = torch.sin(3 * X).sum(-1, keepdim=True)
    spec = KernelCandidates.from_lengthscales(torch.tensor([0.3], dtype=torch.float64), noise=1e-4)
    model = CandidateGP(X, Y, spec, squeeze_candidate_dim=True, factor=FactorCache().factor(spec, X))
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        value, x = posterior_mean_argmax_box(model, bounds, X, 2, 16, seed=0, search="torch")
    assert not [e for e in prof.events() if e.name == "aten::equal"]
    with torch.no_grad():
        at_data = model.posterior(X.unsqueeze(-2)).mean.reshape(-1)
        at_x = model.posterior(x.unsqueeze(-2)).mean.reshape(())
    assert float(value) >= float(at_data.max()) - 1e-12
    assert torch.allclose(value, torch.maximum(at_x, at_data.max()), rtol=0, atol=1e-12)


def test_the_posterior_mean_start_checks_later_and_finds_the_same_maximiser(monkeypatch):
    r"""On the device search, the posterior mean's maximiser checks convergence from iteration 20
    (:data:`~botorch_unknown_hypers.acquisition.device_search.LATE_CHECKS`): the same maximiser and value as the default's checks, up to
    rounding, with fewer reads of the search."""
    from botorch.acquisition import PosteriorMean

    from botorch_unknown_hypers.acquisition.multistart import maximize_acquisition
    from botorch_unknown_hypers.acquisition.device_search import LATE_CHECKS

    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    found, counts = [], []
    for options in (None, LATE_CHECKS):
        reads = record_reads(monkeypatch)
        found.append(maximize_acquisition(PosteriorMean(model), BOUNDS, 1, 5, 128, 0, search="torch", search_options=options))
        counts.append(reads.count("tolist"))
        monkeypatch.undo()
    (x_default, v_default), (x_late, v_late) = found
    assert torch.allclose(x_late, x_default, atol=1e-9) and torch.allclose(v_late, v_default, rtol=1e-12)
    assert counts[1] < counts[0]
    reads = record_reads(monkeypatch)
    _, x = posterior_mean_argmax_box(model, BOUNDS, X, 5, 128, 0, search="torch")
    assert reads.count("tolist") == counts[1] and torch.allclose(x, x_late, atol=1e-9)
