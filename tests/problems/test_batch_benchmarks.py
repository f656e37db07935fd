"""Tests of the TS-RSR benchmarks (botorch_unknown_hypers.problems.batch_benchmarks).

Optima are checked against independent computations (formulas written here, a
dense 1-d grid for the separable Michalewicz); the GP draws against GPyTorch's
RBF kernel, both exactly (the Kronecker factors) and statistically (moments).
"""

from __future__ import annotations

import math

import pytest
import torch
from botorch.test_functions.synthetic import SyntheticTestFunction
from gpytorch.kernels import RBFKernel

from botorch_unknown_hypers.problems import BoTorchTestProblem, BoxDomain, get_problem
from botorch_unknown_hypers.problems.batch_benchmarks import (
    SYNTHETIC_BENCHMARKS,
    Bird,
    GPPriorGridProblem,
    gp_rbf2,
    gp_rbf3,
    kronecker_rbf_factors,
    sample_kronecker_rbf,
    synthetic_benchmark,
)

DTYPES = [torch.float32, torch.float64]
LN2 = math.log(2.0)
PI = math.pi

# name -> (box, optimal value (max form), m, T, kernel, lengthscale, outputscale), from the report's table
PAPER = {
    "ackley2": ([(-5, 5)] * 2, 0.0, 5, 50, "matern52", LN2, LN2),
    "rosenbrock2": ([(-2, 2), (-1, 3)], 0.0, 5, 50, "matern52", LN2, LN2),
    "bird2": ([(-2 * PI, 2 * PI)] * 2, 106.764537, 5, 50, "matern52", LN2, LN2),
    "ackley3": ([(-5, 5)] * 3, 0.0, 20, 15, "matern52", LN2, LN2),
    "hartmann6": ([(0, 1)] * 6, 3.32237, 5, 30, "matern52", [0.2] * 6, LN2),
    "griewank8": ([(-1, 4)] * 8, 0.0, 10, 30, "matern52", LN2, LN2),
    "michalewicz10": ([(0, PI)] * 10, 9.66015, 5, 30, "matern52", LN2, LN2),
    "gp-rbf2": ([(-5, 5)] * 2, None, 20, 20, "rbf", 0.25, 1.0),
    "gp-rbf3": ([(0, 1)] * 3, None, 5, 50, "rbf", 0.15, 10.0),
}
SYNTHETIC = [name for name in PAPER if not name.startswith("gp-")]


def _bird_reference(X: torch.Tensor) -> torch.Tensor:
    x1, x2 = X[..., 0], X[..., 1]
    return (
        torch.sin(x1) * torch.exp((1 - torch.cos(x2)) ** 2)
        + torch.cos(x2) * torch.exp((1 - torch.sin(x1)) ** 2)
        + (x1 - x2) ** 2
    )


def _uniform(bounds: torch.Tensor, n: int, seed: int = 0) -> torch.Tensor:
    lo, hi = bounds
    g = torch.Generator().manual_seed(seed)
    return lo + (hi - lo) * torch.rand(n, bounds.shape[-1], dtype=bounds.dtype, generator=g)


# ---------------------------------------------------------------- closed-form problems


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", SYNTHETIC)
def test_synthetic_domain_optimum_and_settings(name, dtype):
    box, f_star, m, T, kernel, lengthscale, outputscale = PAPER[name]
    p = get_problem(name, dtype=dtype)
    assert isinstance(p, BoTorchTestProblem) and isinstance(p.domain, BoxDomain)
    assert p.name == name and p.n_init == 15 and p.noise_std == 0.0
    assert p.dim == len(box) and p.domain.bounds.dtype == dtype
    torch.testing.assert_close(p.domain.bounds, torch.tensor(box, dtype=dtype).T)
    assert p.optimal_value == pytest.approx(f_star, abs=2e-6)
    assert p.test_function.negate and not p.test_function.is_minimization_problem
    # the paper's settings, readable by a policy
    meta = p.metadata
    assert meta["paper_batch_size"] == m and meta["paper_iterations"] == T
    assert meta["paper_surrogate"] == {
        "kernel": kernel,
        "lengthscale": lengthscale,
        "outputscale": outputscale,
        "noise_variance": 1e-6,
    }
    assert "TS-RSR" in meta["reference"]
    # the stored maximiser lies in the box and attains the optimum ...
    x_star = torch.tensor([meta["optimizer"]], dtype=dtype)
    assert p.domain.contains(x_star).all()
    tol = 1e-5 if dtype == torch.float64 else 1e-3 * max(1.0, abs(f_star))
    assert p.evaluate_true(x_star).item() == pytest.approx(p.optimal_value, abs=tol)
    # ... which uniform points and points near the maximiser never exceed
    X = torch.cat([_uniform(p.domain.bounds, 4000), x_star + 1e-3 * torch.randn(200, p.dim, dtype=dtype)])
    X = X.clamp(*p.domain.bounds)
    f = p.evaluate_true(X)
    assert f.shape == (X.shape[0],) and f.dtype == dtype
    assert (f <= p.optimal_value + tol).all()
    y, f0 = p.evaluate(x_star)
    assert torch.equal(y, f0)  # deterministic objective


def test_synthetic_values_are_negated_paper_formulas():
    X = _uniform(torch.tensor([[-5.0, -1.0], [4.0, 3.0]], dtype=torch.float64), 50)
    x1, x2 = X[:, 0], X[:, 1]
    ackley = -20 * torch.exp(-0.2 * torch.sqrt(0.5 * (x1**2 + x2**2))) - torch.exp(
        0.5 * (torch.cos(2 * PI * x1) + torch.cos(2 * PI * x2))
    ) + math.e + 20
    torch.testing.assert_close(synthetic_benchmark("ackley2").evaluate_true(X.clamp(-5, 5)), -ackley)
    rosenbrock = (1 - x1) ** 2 + 100 * (x2 - x1**2) ** 2
    inside = (x1.abs() <= 2)
    torch.testing.assert_close(synthetic_benchmark("rosenbrock2").evaluate_true(X[inside]), -rosenbrock[inside])
    torch.testing.assert_close(synthetic_benchmark("bird2").evaluate_true(X), -_bird_reference(X))


def test_bird_function():
    bird = Bird()
    assert isinstance(bird, SyntheticTestFunction) and bird.dim == 2
    torch.testing.assert_close(bird.bounds, torch.tensor([[-2 * PI] * 2, [2 * PI] * 2], dtype=torch.float64))
    # both global minimisers give the literature value
    values = bird.evaluate_true(bird.optimizers)
    torch.testing.assert_close(values, torch.full((2,), -106.764537, dtype=torch.float64), atol=1e-6, rtol=0)
    # a 1001^2 grid never goes below it
    g = torch.linspace(-2 * PI, 2 * PI, 1001, dtype=torch.float64)
    grid = torch.stack(torch.meshgrid(g, g, indexing="ij"), dim=-1).reshape(-1, 2)
    assert _bird_reference(grid).min().item() >= -106.764537
    assert bird.optimal_value == -106.764537 and Bird(negate=True).optimal_value == 106.764537


def test_michalewicz10_optimum_is_the_sum_of_separable_1d_maxima():
    def term(x: torch.Tensor, i: int) -> torch.Tensor:
        return torch.sin(x) * torch.sin(i * x**2 / PI) ** 20

    total = 0.0
    for i in range(1, 11):
        coarse = torch.linspace(0, PI, 100_001, dtype=torch.float64)
        x0 = coarse[term(coarse, i).argmax()].item()
        fine = torch.linspace(max(x0 - 1e-4, 0.0), min(x0 + 1e-4, PI), 200_001, dtype=torch.float64)
        total += term(fine, i).max().item()  # grid step 1e-9 around the 1-d maximiser
    p = synthetic_benchmark("michalewicz10")
    assert p.optimal_value == pytest.approx(total, abs=1e-8)
    assert p.optimal_value >= 9.66015  # the paper's rounded value lies below the maximum
    assert p.metadata["paper_optimal_value"] == 9.66015


def test_synthetic_benchmark_errors():
    assert set(SYNTHETIC_BENCHMARKS) == set(SYNTHETIC)
    with pytest.raises(ValueError, match="name"):
        synthetic_benchmark("ackley7")
    with pytest.raises(ValueError, match="noise_std"):
        synthetic_benchmark("ackley2", noise_std=-0.1)
    assert synthetic_benchmark("ackley2", noise_std=0.1).noise_std == 0.1


# ---------------------------------------------------------------- GP-prior draws


def _gpytorch_rbf(points: torch.Tensor, lengthscale: float, outputscale: float) -> torch.Tensor:
    """s exp(-r^2 / (2 l^2)) with exact distances, checked against GPyTorch's RBFKernel (the convention)."""
    points = points.double()
    r = torch.cdist(points, points, compute_mode="donot_use_mm_for_euclid_dist")
    exact = outputscale * torch.exp(-0.5 * r**2 / lengthscale**2)
    kernel = RBFKernel().double()
    kernel.lengthscale = lengthscale
    with torch.no_grad():  # GPyTorch's distances go through a matrix product (~1e-8 round-off)
        torch.testing.assert_close(outputscale * kernel(points).to_dense(), exact, atol=1e-6, rtol=0)
    return exact


def _grid(nodes: list[torch.Tensor]) -> torch.Tensor:
    return torch.stack(torch.meshgrid(*nodes, indexing="ij"), dim=-1).reshape(-1, len(nodes))


def test_kronecker_factors_give_the_exact_kernel_matrix():
    nodes = [torch.linspace(0, 1, 26, dtype=torch.float64), torch.linspace(-1, 1, 31, dtype=torch.float64)]
    factors = kronecker_rbf_factors(nodes, 0.15)
    for g, A in zip(nodes, factors):
        torch.testing.assert_close(A, A.T)  # symmetric square root
        torch.testing.assert_close(A @ A.T, _gpytorch_rbf(g.unsqueeze(-1), 0.15, 1.0), atol=1e-12, rtol=0)
    full = torch.kron(factors[0], factors[1])
    torch.testing.assert_close(full @ full.T, _gpytorch_rbf(_grid(nodes), 0.15, 1.0), atol=1e-11, rtol=0)


def _assert_covariance(samples: torch.Tensor, expected: torch.Tensor, sds: float = 6.0) -> None:
    """Empirical covariance within ``sds`` standard errors of each entry (Gaussian, known zero mean)."""
    n = samples.shape[0]
    empirical = samples.T @ samples / n
    diag = expected.diagonal()
    std_err = ((expected**2 + diag.unsqueeze(0) * diag.unsqueeze(1)) / n).sqrt()
    assert ((empirical - expected).abs() <= sds * std_err).all()
    assert samples.mean(0).abs().max() <= sds * (diag.max() / n).sqrt()


def test_sample_kronecker_rbf_moments():
    nodes = [torch.linspace(0, 1, 4, dtype=torch.float64), torch.linspace(0, 1.5, 5, dtype=torch.float64)]
    gen = torch.Generator().manual_seed(0)
    samples = sample_kronecker_rbf(nodes, 0.4, 2.5, (20_000,), generator=gen)
    assert samples.shape == (20_000, 4, 5)
    _assert_covariance(samples.reshape(20_000, -1), _gpytorch_rbf(_grid(nodes), 0.4, 2.5))


def test_problem_draws_have_the_prior_covariance():
    bounds = torch.tensor([[0.0, 0.0], [0.6, 0.4]], dtype=torch.float64)
    base = GPPriorGridProblem(bounds, grid_size=(3, 2), lengthscale=0.3, outputscale=4.0)
    points = base.grid_points()
    samples = torch.stack([base.instance(seed).evaluate_true(points) for seed in range(1500)])
    _assert_covariance(samples, _gpytorch_rbf(points, 0.3, 4.0))


def test_problem_function_is_the_seeded_kronecker_draw():
    p = gp_rbf3(seed=7, grid_size=6)
    nodes = [torch.linspace(0, 1, 6, dtype=torch.float64)] * 3
    gen = torch.Generator().manual_seed(p.seed_offset + 7)
    expected = sample_kronecker_rbf(nodes, 0.15, 10.0, generator=gen).reshape(-1)
    torch.testing.assert_close(p.evaluate_true(p.grid_points()), expected)


@pytest.mark.parametrize("name", ["gp-rbf2", "gp-rbf3"])
def test_gp_problem_settings(name):
    box, _, m, T, kernel, lengthscale, outputscale = PAPER[name]
    p = get_problem(name)
    assert isinstance(p, GPPriorGridProblem) and p.name == name
    assert p.n_init == 15 and p.noise_std == 0.0
    torch.testing.assert_close(p.domain.bounds, torch.tensor(box, dtype=torch.float64).T)
    size, step = (201, 0.05) if name == "gp-rbf2" else (26, 0.04)
    assert p.grid_size == (size,) * p.dim
    torch.testing.assert_close(p.grid_step, torch.full((p.dim,), step, dtype=torch.float64))
    assert p.lengthscale == lengthscale and p.outputscale == outputscale
    assert p.metadata["paper_batch_size"] == m and p.metadata["paper_iterations"] == T
    assert p.metadata["paper_surrogate"] == {
        "kernel": kernel,
        "lengthscale": lengthscale,
        "outputscale": outputscale,
        "noise_variance": 1e-6,
    }
    # the optimum is the grid maximum, attained at metadata["optimizer"]
    values = p.evaluate_true(p.grid_points())
    assert values.shape == (size**p.dim,)
    assert p.optimal_value == values.max().item()
    x_star = torch.tensor([p.metadata["optimizer"]], dtype=torch.float64)
    assert p.evaluate_true(x_star).item() == p.optimal_value
    assert (p.evaluate_true(_uniform(p.domain.bounds, 2000)) <= p.optimal_value).all()
    # the function is a plausible prior draw: mean ~ 0, variance ~ outputscale
    assert abs(values.mean().item()) < 3 * math.sqrt(outputscale)
    assert 0.1 * outputscale < values.var().item() < 5 * outputscale


def test_gp_problem_same_function_per_seed_and_different_across_seeds():
    base = get_problem("gp-rbf3")
    a, b, c = base.instance(4), base.instance(4), base.instance(5)
    grid = a.grid_points()
    fa, fb, fc = (p.evaluate_true(grid) for p in (a, b, c))
    assert torch.equal(fa, fb) and a.optimal_value == b.optimal_value
    assert not torch.allclose(fa, fc)
    assert torch.equal(gp_rbf3(seed=4).evaluate_true(grid), fa)
    assert a.metadata["seed"] == 4 and c.metadata["seed"] == 5
    assert a.metadata["paper_batch_size"] == 5  # paper settings survive instance()
    # the 2-d and 3-d problems draw independently; the 2-d one also differs across seeds
    small2 = gp_rbf2(grid_size=21)
    assert not torch.allclose(small2.instance(0).evaluate_true(small2.grid_points()),
                              small2.instance(1).evaluate_true(small2.grid_points()))


def test_gp_problem_dtype_and_instance_keep_dtype():
    p = get_problem("gp-rbf3", dtype=torch.float32)
    assert p.domain.bounds.dtype == torch.float32
    q = p.instance(3)
    assert q.domain.bounds.dtype == torch.float32
    f = q.evaluate_true(q.grid_points())
    assert f.dtype == torch.float32
    torch.testing.assert_close(f.double(), gp_rbf3(seed=3).evaluate_true(gp_rbf3(seed=3).grid_points()))


def test_queries_snap_to_the_nearest_node():
    bounds = torch.tensor([[0.0, -1.0], [1.0, 1.0]], dtype=torch.float64)
    p = GPPriorGridProblem(bounds, grid_size=(11, 5), lengthscale=0.3, seed=2)  # steps 0.1 and 0.5
    nodes = p.grid_points()
    values = p.evaluate_true(nodes)
    node = torch.tensor([0.3, 0.0], dtype=torch.float64)
    index = 3 * 5 + 2
    torch.testing.assert_close(nodes[index], node)
    near = node + torch.tensor([[0.049, 0.24], [-0.049, -0.24], [0.0, 0.0], [0.02, -0.1]], dtype=torch.float64)
    assert (p.evaluate_true(near) == values[index]).all()
    torch.testing.assert_close(p.snap(near), node.expand(4, 2))
    # past the midpoint: the neighbouring node
    across = node + torch.tensor([[0.051, 0.0], [0.0, -0.26]], dtype=torch.float64)
    assert p.evaluate_true(across).tolist() == [values[4 * 5 + 2].item(), values[3 * 5 + 1].item()]
    # just outside the box: the boundary node
    corner = torch.tensor([[1.0 + 1e-10, -1.0 - 1e-10]], dtype=torch.float64)
    assert p.evaluate_true(corner).item() == values[10 * 5 + 0].item()
    # batch shapes
    assert p.evaluate_true(near.reshape(2, 2, 2)).shape == (2, 2)


def test_gp_problem_errors():
    bounds = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
    with pytest.raises(ValueError, match="grid_size"):
        GPPriorGridProblem(bounds, grid_size=1, lengthscale=0.2)
    with pytest.raises(ValueError, match="grid_size"):
        GPPriorGridProblem(bounds, grid_size=(5, 5), lengthscale=0.2)
    with pytest.raises(ValueError, match="lengthscale"):
        GPPriorGridProblem(bounds, grid_size=5, lengthscale=0.0)
    with pytest.raises(ValueError, match="outputscale"):
        GPPriorGridProblem(bounds, grid_size=5, lengthscale=0.2, outputscale=float("nan"))
    with pytest.raises(ValueError, match="seed"):
        GPPriorGridProblem(bounds, grid_size=5, lengthscale=0.2, seed=1.5)
    with pytest.raises(ValueError, match="noise_std"):
        GPPriorGridProblem(bounds, grid_size=5, lengthscale=0.2, noise_std=-1.0)
    with pytest.raises(ValueError, match="bounds"):
        GPPriorGridProblem(torch.tensor([[1.0], [0.0]]), grid_size=5, lengthscale=0.2)
