"""Tests for botorch_unknown_hypers.acquisition.prior_sampling.

The moment tests draw many *independent* paths (one call each, the global RNG
forked and seeded once) and compare their sample moments with the exact
``CandidateGP`` posterior (or prior). The tolerance is a z-score of 4.5 on the
sample size's standard error: for the mean ``sqrt(C_ii / S)``, for a covariance
entry the Gaussian value ``sqrt((C_ii C_jj + C_ij^2) / S)``. With about a hundred
entries compared, a correct sampler fails with probability below 1e-3 (and the
seeds are fixed); a path without the data update, with another candidate's
kernel, or with BoTorch's default (Sobol, anti-correlated) weights across
candidates misses by tens of standard errors.
"""

from __future__ import annotations

import botorch.generation.gen
import pytest
import torch
from botorch.exceptions.errors import UnsupportedError
from botorch.models.transforms import Normalize

from botorch_unknown_hypers.acquisition.device_search import LATE_CHECKS
from botorch_unknown_hypers.acquisition.multistart import maximize_per_candidate
from botorch_unknown_hypers.acquisition.prior_sampling import (
    draw_candidate_paths,
    draw_candidate_prior_paths,
    sample_candidate_maxima,
)
from botorch_unknown_hypers.candidate_families import PeriodicCandidates
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.rng import forked_rng
from tests.host_reads import record_reads

DTYPES = [torch.float32, torch.float64]
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
Z_SCORE = 4.5
NUM_PATHS = 800


def candidates(dtype=torch.float64, device="cpu") -> KernelCandidates:
    r"""Three Matern-5/2 priors: 0 and 1 share the kernel (different means), 2 is smoother and larger."""
    tkwargs = {"dtype": dtype, "device": device}
    return KernelCandidates(
        lengthscale=torch.tensor([0.2, 0.2, 0.4], **tkwargs),
        outputscale=torch.tensor([1.0, 1.0, 2.0], **tkwargs),
        noise=0.01,
        kernel="matern52",
        mean_constant=torch.tensor([0.0, 0.5, -0.3], **tkwargs),
    )


def model_on_box(dtype=torch.float64, device="cpu") -> tuple[CandidateGP, torch.Tensor]:
    r"""A K = 3 CandidateGP on four points of the box [-1, 2] (inputs normalised by it)."""
    tkwargs = {"dtype": dtype, "device": device}
    bounds = torch.tensor([[-1.0], [2.0]], **tkwargs)
    train_X = torch.tensor([[-0.5], [0.2], [0.4], [1.5]], **tkwargs)
    train_Y = torch.tensor([[0.3], [-0.2], [0.1], [0.8]], **tkwargs)
    model = CandidateGP(train_X, train_Y, candidates(dtype, device), input_transform=Normalize(1, bounds=bounds))
    return model, bounds


def draws(make_paths, points: torch.Tensor, num: int, seed: int) -> torch.Tensor:
    r"""``num x K x m`` values at ``points`` of ``num`` independent draws (float64)."""
    with forked_rng(seed, points.device):
        return torch.stack([make_paths()(points) for _ in range(num)]).double()


def assert_moments(values: torch.Tensor, mean: torch.Tensor, covariance: torch.Tensor) -> None:
    r"""Sample mean and covariance (within and across candidates) of ``S x K x m`` values
    against ``K x m`` means and ``K x m x m`` covariances (independent candidates)."""
    num = values.shape[0]
    variance = covariance.diagonal(dim1=-2, dim2=-1)  # K x m
    z_mean = (values.mean(0) - mean) / (variance / num).sqrt()
    assert z_mean.abs().max() < Z_SCORE, z_mean
    flat = (values - values.mean(0)).reshape(num, -1)  # S x (K m)
    sample_cov = flat.T @ flat / (num - 1)
    exact = torch.block_diag(*covariance)  # candidates are independent: zero cross blocks
    var = variance.reshape(-1)
    std_error = ((var.unsqueeze(-1) * var.unsqueeze(-2) + exact.square()) / num).sqrt()
    z_cov = (sample_cov - exact) / std_error
    assert z_cov.abs().max() < Z_SCORE, z_cov


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_posterior_paths_have_each_candidates_posterior_moments(dtype, device):
    model, _ = model_on_box(dtype, device)
    # near the data (tiny variance), between data and far from them
    points = torch.tensor([[-0.9], [0.3], [0.35], [1.0]], dtype=dtype, device=device)
    values = draws(lambda: draw_candidate_paths(model), points, NUM_PATHS, seed=0)
    assert values.shape == (NUM_PATHS, 3, 4)
    posterior = model.posterior(points)
    assert_moments(values, posterior.mean[..., 0].double(), posterior.covariance_matrix.double())


def test_a_model_on_cached_factors_hands_them_to_the_update_and_draws_the_same_paths(monkeypatch):
    from botorch.sampling.pathwise import update_strategies

    from botorch_unknown_hypers.models.factor_cache import FactorCache

    model, bounds = model_on_box()
    transform = Normalize(1, bounds=bounds)
    transform.eval()
    factor = FactorCache().factor(candidates(), transform(model.raw_train_X))
    cached = CandidateGP(model.raw_train_X, model.raw_train_Y, candidates(), input_transform=transform, factor=factor)
    points = torch.tensor([[-0.9], [0.3], [1.0]], dtype=torch.float64)
    given = []
    update = update_strategies._gaussian_update_exact
    monkeypatch.setattr(update_strategies, "_gaussian_update_exact", lambda *a, **k: given.append(k["scale_tril"]) or update(*a, **k))
    with forked_rng(3, points.device):
        ours = draw_candidate_paths(cached)(points)
    with forked_rng(3, points.device):
        fresh = draw_candidate_paths(model)(points)
    assert given[0] is factor.L and given[1] is None  # the cached factor, not a new factorisation
    torch.testing.assert_close(ours, fresh, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_prior_paths_have_each_candidates_prior_moments(dtype):
    bounds = torch.tensor([[-1.0], [2.0]], dtype=dtype)
    points = torch.tensor([[-0.9], [0.3], [0.35], [1.0]], dtype=dtype)
    cands = candidates(dtype)
    transform = Normalize(1, bounds=bounds)
    values = draws(lambda: draw_candidate_prior_paths(cands, 1, bounds, transform), points, NUM_PATHS, seed=1)
    mean_module, covar_module, _ = cands.build(1)
    unit = transform(points)
    with torch.no_grad():
        mean = mean_module(unit.expand(3, -1, -1)).double()
        covariance = covar_module(unit.expand(3, -1, -1)).to_dense().double()
    assert_moments(values, mean, covariance)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_paths_evaluate_per_candidate_points_and_shared_points_alike(dtype, device):
    model, _ = model_on_box(dtype, device)
    with forked_rng(3, torch.device(device)):
        paths = draw_candidate_paths(model)
    grid = torch.linspace(-1, 2, 7, dtype=dtype, device=device).unsqueeze(-1)
    shared = paths(grid)  # K x 7
    own = paths(torch.stack([grid, grid.flip(0), grid]))  # candidate k at its own points
    tol = {"rtol": 1e-10, "atol": 1e-10} if dtype == torch.float64 else {"rtol": 1e-4, "atol": 1e-4}
    torch.testing.assert_close(own[0], shared[0], **tol)
    torch.testing.assert_close(own[1], shared[1].flip(0), **tol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_joint_maximiser_finds_every_paths_grid_maximum(dtype, device):
    model, bounds = model_on_box(dtype, device)
    grid = torch.linspace(-1, 2, 3001, dtype=dtype, device=device).unsqueeze(-1)
    tol = 1e-6 if dtype == torch.float64 else 1e-3
    for seed in range(3):
        X_best, values = sample_candidate_maxima(model, bounds, num_restarts=6, raw_samples=128, seed=seed)
        assert X_best.shape == (3, 1) and values.shape == (3,)
        assert ((X_best >= bounds[0]) & (X_best <= bounds[1])).all()
        with forked_rng(seed, torch.device(device)):  # the same paths again
            paths = draw_candidate_paths(model)
        with torch.no_grad():
            on_grid = paths(grid)  # K x G
            at_best = paths(X_best.unsqueeze(-2)).squeeze(-1)  # candidate k at its maximiser
        torch.testing.assert_close(at_best, values, rtol=0, atol=tol)
        # at least the grid maximum (grid spacing 1e-3), at the same maximiser
        assert (values >= on_grid.max(-1).values - tol).all()
        grid_argmax = grid[on_grid.argmax(-1)]
        assert ((X_best - grid_argmax).abs() < 5e-3).all(), (X_best, grid_argmax)


def test_maximiser_is_deterministic_given_the_seed_and_leaves_the_global_rng_alone():
    model, bounds = model_on_box()
    rng = torch.get_rng_state()
    first = sample_candidate_maxima(model, bounds, num_restarts=4, raw_samples=64, seed=11)
    second = sample_candidate_maxima(model, bounds, num_restarts=4, raw_samples=64, seed=11)
    assert torch.equal(torch.get_rng_state(), rng)
    assert torch.equal(first[0], second[0]) and torch.equal(first[1], second[1])
    other = sample_candidate_maxima(model, bounds, num_restarts=4, raw_samples=64, seed=12)
    assert not torch.equal(first[1], other[1])


def test_path_maxima_check_later_and_find_the_same_maximisers(monkeypatch):
    r"""On the device search, the path maxima check convergence from iteration 20
    (:data:`~botorch_unknown_hypers.acquisition.device_search.LATE_CHECKS`): the same maximisers and values as the default's checks, up to
    rounding, with fewer reads of the search."""
    model, bounds = model_on_box()
    found, counts = [], []
    for seed in range(3):
        for options in (None, LATE_CHECKS):
            reads = record_reads(monkeypatch)
            found.append(sample_candidate_maxima(model, bounds, 6, 128, options=options, seed=seed, search="torch"))
            counts.append(reads.count("tolist"))
            monkeypatch.undo()
    for (x_default, v_default), (x_late, v_late) in zip(found[::2], found[1::2]):
        torch.testing.assert_close(x_late, x_default, rtol=0, atol=1e-9)
        torch.testing.assert_close(v_late, v_default, rtol=1e-12, atol=0)
    assert sum(counts[1::2]) < sum(counts[::2])


def test_serial_fallback_finds_the_same_path_maxima(monkeypatch):
    model, bounds = model_on_box()
    with forked_rng(5, torch.device("cpu")):
        paths = draw_candidate_paths(model)
    X_par, v_par = maximize_per_candidate(paths, 3, bounds, num_restarts=4, raw_samples=64, seed=2)
    monkeypatch.setattr(botorch.generation.gen, "get_reasons_against_fast_path", lambda **kwargs: ["forced by test"])
    with pytest.warns(RuntimeWarning, match="forced by test"):
        X_ser, v_ser = maximize_per_candidate(paths, 3, bounds, num_restarts=4, raw_samples=64, seed=2)
    torch.testing.assert_close(v_ser, v_par, rtol=0, atol=1e-6)
    torch.testing.assert_close(X_ser, X_par, rtol=0, atol=1e-3)


def test_unsupported_kernels_and_models_raise():
    bounds = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
    periodic = PeriodicCandidates(torch.tensor([0.3, 0.5], dtype=torch.float64))
    with pytest.raises(UnsupportedError, match="RBF, Matern"):
        draw_candidate_prior_paths(periodic, 1, bounds)
    train_X = torch.tensor([[0.2], [0.7]], dtype=torch.float64)
    with pytest.raises(UnsupportedError, match="PeriodicKernel"):
        draw_candidate_paths(CandidateGP(train_X, train_X.sin(), periodic))
    model, _ = model_on_box()
    with pytest.raises(ValueError, match="K-wide"):
        draw_candidate_paths(model.select(0))
    with pytest.raises(ValueError, match="bounds"):
        sample_candidate_maxima(model, torch.tensor([[1.0], [0.0]], dtype=torch.float64))
