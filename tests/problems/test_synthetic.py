import math

import pytest
import torch
from botorch.test_functions import Ackley, Michalewicz

from botorch_unknown_hypers.problems import Berkenkamp, BoTorchTestProblem, BoxDomain, get_problem
from botorch_unknown_hypers.problems.synthetic import michalewicz5

DTYPES = [torch.float32, torch.float64]


def _berkenkamp_reference(x: torch.Tensor) -> torch.Tensor:
    """0.6 x + N(x; 0.2, 0.08) / 8, written independently of the package."""
    loc = torch.tensor(0.2, dtype=x.dtype)
    scale = torch.tensor(0.08, dtype=x.dtype)
    pdf = torch.distributions.Normal(loc, scale).log_prob(x).exp()
    return 0.6 * x + pdf / 8


# ---------------------------------------------------------------- Berkenkamp


def test_berkenkamp_optimum_matches_note_and_grid():
    p = Berkenkamp()
    x_star = p.metadata["optimizer"][0]
    assert x_star == pytest.approx(0.2062, abs=5e-5)
    assert p.optimal_value == pytest.approx(0.74520, abs=5e-6)
    # dense grid (step 1e-6) in float64: the optimum is at least the grid max, barely
    grid = torch.linspace(0, 1, 1_000_001, dtype=torch.float64)
    vals = _berkenkamp_reference(grid)
    assert p.optimal_value >= vals.max().item()
    assert p.optimal_value - vals.max().item() < 1e-10
    assert abs(grid[vals.argmax()].item() - x_star) <= 1e-6
    # the stored value is f at the stored location, a stationary point
    x = torch.tensor([[x_star]], dtype=torch.float64, requires_grad=True)
    f = p.evaluate_true(x)
    assert f.item() == pytest.approx(p.optimal_value, abs=1e-15)
    (grad,) = torch.autograd.grad(f.sum(), x)
    assert abs(grad.item()) < 1e-8


def test_berkenkamp_boundary_local_max():
    p = Berkenkamp()
    one = torch.tensor([[1.0]], dtype=torch.float64)
    f1 = p.evaluate_true(one).item()
    assert f1 == pytest.approx(0.6, abs=1e-12)
    for h in [1e-6, 1e-3, 0.05, 0.2]:
        assert p.evaluate_true(one - h).item() < f1
    assert f1 < p.optimal_value
    assert p.metadata["local_optimal_value"] == pytest.approx(f1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_berkenkamp_values_shapes_dtype(dtype):
    p = Berkenkamp().to(dtype=dtype)
    assert p.name == "berkenkamp" and p.dim == 1 and p.n_init == 3 and p.noise_std == 0.0
    assert p.domain.bounds.dtype == dtype
    X = torch.rand(4, 3, 1, dtype=dtype, generator=torch.Generator().manual_seed(0))
    f = p.evaluate_true(X)
    assert f.shape == (4, 3) and f.dtype == dtype
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    ref = _berkenkamp_reference(X[..., 0].double())
    assert torch.allclose(f.double(), ref, atol=tol, rtol=0)
    y, f2 = p.evaluate(X)
    assert torch.equal(y, f2)
    assert (f <= p.optimal_value + tol).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_berkenkamp_noisy_reproducible(dtype):
    p = Berkenkamp(noise_std=0.01).to(dtype=dtype)
    X = torch.linspace(0, 1, 11, dtype=dtype).unsqueeze(-1)
    y1, f1 = p.evaluate(X, generator=torch.Generator().manual_seed(3))
    y2, f2 = p.evaluate(X, generator=torch.Generator().manual_seed(3))
    assert torch.equal(y1, y2) and torch.equal(f1, f2)
    assert not torch.equal(y1, f1)
    assert (y1 - f1).abs().max() < 0.06  # 6 sigma


def test_berkenkamp_outside_domain():
    with pytest.raises(ValueError, match="outside"):
        Berkenkamp().evaluate(torch.tensor([[1.5]], dtype=torch.float64))


@pytest.mark.parametrize("dim", [2, 3])
def test_berkenkamp_in_d_dimensions_keeps_the_trend_and_bump_and_its_optimum_is_brute_force(dim):
    p = Berkenkamp(dim=dim)
    assert p.name == f"berkenkamp{dim}" and p.dim == dim and get_problem(f"berkenkamp{dim}").dim == dim
    g = torch.Generator().manual_seed(dim)
    X = torch.rand(64, dim, dtype=torch.float64, generator=g)
    radius = torch.linalg.vector_norm(X - 0.2, dim=-1)
    bump = torch.distributions.Normal(torch.tensor(0.0, dtype=torch.float64), 0.08).log_prob(radius).exp() / 8
    assert torch.allclose(p.evaluate_true(X), 0.6 * X.mean(-1) + bump, atol=1e-12, rtol=0)
    # brute force: a fine grid around the bump (the only place above the boundary's 0.6) in float64
    axes = [torch.linspace(0.15, 0.25, 201 if dim == 2 else 61, dtype=torch.float64)] * dim
    grid = torch.cartesian_prod(*axes)
    vals = p.evaluate_true(grid)
    step = 0.1 / (len(axes[0]) - 1)
    assert p.optimal_value >= vals.max().item() - 1e-15
    assert p.optimal_value - vals.max().item() < 0.5 * dim * step**2 * 200  # f'' of the bump ~ 100 per coordinate
    assert torch.allclose(grid[vals.argmax()], torch.tensor(p.metadata["optimizer"], dtype=torch.float64), atol=step)
    x = torch.tensor([p.metadata["optimizer"]], dtype=torch.float64, requires_grad=True)
    f = p.evaluate_true(x)
    assert f.item() == pytest.approx(p.optimal_value, abs=1e-15)
    (grad,) = torch.autograd.grad(f.sum(), x)
    assert grad.abs().max() < 1e-8  # a stationary point, on the diagonal
    # the boundary's local maximum is the corner, below the bump's
    one = torch.ones(1, dim, dtype=torch.float64)
    assert p.evaluate_true(one).item() == pytest.approx(p.metadata["local_optimal_value"], abs=1e-15)
    assert p.metadata["local_optimal_value"] == pytest.approx(0.6, abs=1e-12)
    assert p.metadata["local_optimal_value"] < p.optimal_value - 0.14
    assert (p.evaluate_true(X) <= p.optimal_value).all()


def test_berkenkamp_refuses_a_bad_dimension_naming_it():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="dim"):
            Berkenkamp(dim=bad)


# -------------------------------------------------------------- Michalewicz


def _michalewicz_coordinate_maxima(upper: float, n: int = 400_001):
    """Michalewicz is separable: maximise sin(x) sin(i x^2 / pi)^20 per coordinate."""
    x = torch.linspace(0, upper, n, dtype=torch.float64)
    xs, vals = [], []
    for i in range(1, 6):
        g = torch.sin(x) * torch.sin(i * x**2 / math.pi) ** 20
        j = int(g.argmax())
        # golden-section polish on the bracketing grid cell pair
        a, b = x[max(j - 1, 0)].item(), x[min(j + 1, n - 1)].item()

        def h(t, i=i):
            return math.sin(t) * math.sin(i * t * t / math.pi) ** 20

        r = (math.sqrt(5) - 1) / 2
        for _ in range(100):
            c, d = b - r * (b - a), a + r * (b - a)
            if h(c) > h(d):
                b = d
            else:
                a = c
        xs.append((a + b) / 2)
        vals.append(h((a + b) / 2))
    return torch.tensor(xs, dtype=torch.float64), sum(vals)


def test_michalewicz5_optimum_brute_force():
    p = michalewicz5()
    assert p.name == "michalewicz5" and p.dim == 5 and p.n_init == 10 and p.noise_std == 0.0
    assert torch.equal(
        p.domain.bounds, torch.tensor([[0.0] * 5, [3.14] * 5], dtype=torch.float64)
    )
    # BoTorch's own optimum (minimisation form) is the negative of ours
    assert p.optimal_value == pytest.approx(-Michalewicz(dim=5).optimal_value, abs=1e-12)
    assert p.optimal_value == pytest.approx(4.687658, abs=1e-12)

    x_star, f_sep = _michalewicz_coordinate_maxima(3.14)
    _, f_sep_pi = _michalewicz_coordinate_maxima(math.pi)
    # the optimum lies strictly inside [0, 3.14]^5 ...
    assert ((x_star > 0) & (x_star < 3.14)).all()
    assert p.domain.contains(x_star.unsqueeze(0)).item()
    # ... so cutting the canonical box [0, pi] to [0, 3.14] does not change it
    assert f_sep == pytest.approx(f_sep_pi, abs=1e-12)
    assert f_sep == pytest.approx(p.optimal_value, abs=1e-5)
    # BoTorch's evaluation at the optimiser: -4.687658 unnegated, +4.687658 here
    botorch_val = Michalewicz(dim=5)(x_star.unsqueeze(0), noise=False).item()
    assert botorch_val == pytest.approx(-4.687658, abs=1e-5)
    ours = p.evaluate_true(x_star.unsqueeze(0)).item()
    assert ours == pytest.approx(-botorch_val, abs=1e-12)
    assert ours == pytest.approx(p.optimal_value, abs=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_michalewicz5_sign_shapes_dtype(dtype):
    p = get_problem("michalewicz5", dtype=dtype)
    X = 3.14 * torch.rand(64, 2, 5, dtype=dtype, generator=torch.Generator().manual_seed(0))
    f = p.evaluate_true(X)
    assert f.shape == (64, 2) and f.dtype == dtype
    # maximisation form: sum of non-negative terms (on [0, pi]), bounded by f*
    Xd = X.double()
    ref = (torch.sin(Xd) * torch.sin(torch.arange(1, 6) * Xd**2 / math.pi) ** 20).sum(-1)
    tol = 1e-4 if dtype == torch.float32 else 1e-12
    assert torch.allclose(f.double(), ref, atol=tol, rtol=0)
    assert (f >= -tol).all() and (f <= p.optimal_value + tol).all()
    # the box's upper corner and (within tolerance) just beyond it evaluate fine
    corner = torch.full((1, 5), 3.14, dtype=torch.float64).to(dtype)
    y, fc = p.evaluate(corner)
    assert fc.dtype == dtype and torch.isfinite(fc).all()
    assert p.test_function.bounds.dtype == dtype


def test_botorch_test_problem_validation_and_to():
    with pytest.raises(ValueError, match="negate=True"):
        BoTorchTestProblem(Michalewicz(dim=2), name="m2", optimal_value=1.8)
    with pytest.raises(ValueError, match="inside"):
        BoTorchTestProblem(
            Michalewicz(dim=2, negate=True),
            name="m2",
            optimal_value=1.8,
            bounds=torch.tensor([[0.0, 0.0], [4.0, 3.0]]),
        )
    with pytest.raises(ValueError, match="shape"):
        BoTorchTestProblem(
            Michalewicz(dim=2, negate=True), name="m2", optimal_value=1.8, bounds=torch.zeros(2, 3)
        )
    # default box = the function's bounds; a sub-box is accepted
    p = BoTorchTestProblem(Ackley(dim=3, negate=True), name="ackley3", optimal_value=0.0)
    assert isinstance(p.domain, BoxDomain)
    assert torch.allclose(p.domain.bounds, Ackley(dim=3).bounds)
    q = BoTorchTestProblem(
        Ackley(dim=3, negate=True),
        name="ackley3s",
        optimal_value=0.0,
        bounds=torch.tensor([[-1.0] * 3, [2.0] * 3]),
    )
    assert q.evaluate_true(torch.zeros(1, 3)).item() == pytest.approx(0.0, abs=1e-5)
    q.to(dtype=torch.float32)
    assert q.domain.bounds.dtype == torch.float32
    assert q.test_function.bounds.dtype == torch.float32
    assert q.metadata["test_function"] == "Ackley"
