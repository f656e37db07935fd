"""Tests of the prior-selection paper's kernels and synthetic prior sets
(botorch_unknown_hypers.problems.prior_tasks): the kernels against their closed forms, SciPy's
Bessel-function Matérn and GPyTorch's kernels (with the convention conversions the module
documents), and the task builders."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import scipy.special
import torch
from gpytorch.kernels import MaternKernel, PeriodicKernel, RBFKernel, RQKernel

from botorch_unknown_hypers.problems.prior_tasks import (
    NUM_HILLS,
    TALL_HILLS,
    hill_means,
    hill_task_priors,
    kernel_task_priors,
    lengthscale_task_priors,
    paper_arms,
    paper_linear,
    paper_matern,
    paper_periodic,
    paper_rbf,
    paper_rq,
)

NOISE = 0.25**2


# --------------------------------------------------------------------------- #
# Kernels in the paper's conventions
# --------------------------------------------------------------------------- #


def _x(*values):
    return torch.tensor(values, dtype=torch.float64).unsqueeze(-1)


def _d(value):
    r"""A float64 hyperparameter (a Python float would pass through float32 in GPyTorch's setter)."""
    return torch.tensor(value, dtype=torch.float64)


def test_rbf_convention():
    assert paper_rbf(1.0)(_x(0.0), _x(1.0)).item() == pytest.approx(math.exp(-1.0), rel=1e-15)
    assert paper_rbf(2.0)(_x(0.0), _x(3.0)).item() == pytest.approx(math.exp(-9 / 4), rel=1e-15)
    X = torch.rand(7, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 3
    gp = RBFKernel().double()
    gp.lengthscale = _d(1.5 / math.sqrt(2))  # paper l = sqrt(2) * GPyTorch l
    torch.testing.assert_close(paper_rbf(1.5)(X, X[:4]), gp(X, X[:4]).to_dense(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_matern_closed_forms(nu):
    r = torch.linspace(0.01, 5, 40, dtype=torch.float64)
    lengthscale = 1.3
    values = paper_matern(nu, lengthscale)(_x(0.0), r.unsqueeze(-1))[0]
    s = (math.sqrt(2 * nu) * r / lengthscale).numpy()
    bessel = 2 ** (1 - nu) / math.gamma(nu) * s**nu * scipy.special.kv(nu, s)
    torch.testing.assert_close(values, torch.as_tensor(bessel), rtol=1e-10, atol=1e-12)
    gp = MaternKernel(nu=nu).double()
    gp.lengthscale = _d(lengthscale)
    X = torch.rand(6, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1)) * 4
    torch.testing.assert_close(paper_matern(nu, lengthscale)(X, X), gp(X, X).to_dense(), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="nu"):
        paper_matern(3.5, 1.0)


def test_periodic_convention():
    grid = torch.linspace(0, 10, 2001, dtype=torch.float64).unsqueeze(-1)
    values = paper_periodic(5.0, 1.0)(_x(0.0), grid)[0]
    assert values.min().item() == pytest.approx(math.exp(-0.5), rel=1e-12)  # at x = 2.5, 7.5
    assert values[1000].item() == pytest.approx(1.0)  # x = 5, one period
    gp = PeriodicKernel().double()
    gp.period_length = _d(5.0)
    gp.lengthscale = _d(4.0 * 0.7)  # paper l = GPyTorch l / 4
    X = torch.rand(6, 1, dtype=torch.float64, generator=torch.Generator().manual_seed(2)) * 20
    torch.testing.assert_close(paper_periodic(5.0, 0.7)(X, X), gp(X, X).to_dense(), rtol=1e-10, atol=1e-12)


def test_linear_and_rq_conventions():
    arms = paper_arms()
    linear = paper_linear(0.05**2)(arms, arms)
    assert linear.max().item() == pytest.approx(1.0, rel=1e-14)
    assert linear.argmax().item() == 500 * 500 - 1  # at x = x' = 20
    assert torch.linalg.matrix_rank(linear).item() == 1
    assert paper_rq(0.5, 1.0)(_x(0.0), _x(2.0)).item() == pytest.approx((1 + 4.0) ** -0.5)
    gp = RQKernel().double()
    gp.alpha, gp.lengthscale = _d(0.5), _d(1.7)
    X = torch.rand(6, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(3)) * 4
    torch.testing.assert_close(paper_rq(0.5, 1.7)(X, X), gp(X, X).to_dense(), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="lengthscale"):
        paper_rbf(0.0)


@pytest.mark.parametrize(
    "build, name",
    [
        (lambda: paper_rbf(-1.0), "lengthscale"),
        (lambda: paper_matern(2.5, 0.0), "lengthscale"),
        (lambda: paper_periodic(0.0, 1.0), "period"),
        (lambda: paper_periodic(5.0, float("nan")), "lengthscale"),
        (lambda: paper_linear(-0.1), "variance"),
        (lambda: paper_rq(0.0, 1.0), "alpha"),
        (lambda: paper_rq(0.5, float("inf")), "lengthscale"),
    ],
)
def test_kernel_parameters_are_checked_by_name(build, name):
    with pytest.raises(ValueError, match=rf"^{name} must be a finite number > 0"):
        build()


@pytest.mark.parametrize(
    "kernel", [paper_rbf(1.3), paper_matern(0.5, 0.7), paper_matern(2.5, 2.0), paper_periodic(3.0, 0.8), paper_rq(2.0, 1.1)]
)
def test_stationary_kernels_are_one_on_the_diagonal_symmetric_and_positive_semidefinite(kernel):
    X = torch.rand(30, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(4)) * 5
    K = kernel(X, X)
    assert K.shape == (30, 30)
    torch.testing.assert_close(K.diagonal(), torch.ones(30, dtype=torch.float64), rtol=0, atol=1e-12)
    torch.testing.assert_close(K, K.T, rtol=0, atol=0)
    assert float(torch.linalg.eigvalsh(K).min()) > -1e-10
    # batch inputs: ... x N x d and ... x M x d
    assert kernel(X.reshape(3, 10, 2), X[:4]).shape == (3, 10, 4)


# --------------------------------------------------------------------------- #
# Task builders
# --------------------------------------------------------------------------- #


def test_task_builders_sizes_and_scale():
    arms = paper_arms()
    for builder, size in ((kernel_task_priors, 6), (lengthscale_task_priors, 4), (hill_task_priors, 5)):
        priors = builder()
        assert len(priors) == size and priors.num_arms == 500 and priors.noise == NOISE
        assert torch.equal(priors.arms, arms)
        assert priors.covariances.max() <= 1 + 1e-12  # "scaled s.t. k <= 1"
        assert len(set(priors.labels())) == size
    kernel = kernel_task_priors()
    assert (kernel.means == 0).all()
    diag = kernel.covariances.diagonal(dim1=-2, dim2=-1)
    torch.testing.assert_close(diag[[0, 1, 2, 3, 5]], torch.ones(5, 500, dtype=torch.float64))
    torch.testing.assert_close(diag[4], 0.05**2 * arms[:, 0] ** 2)
    # SE, l = 1 from the lengthscale set equals the kernel task's SE.
    torch.testing.assert_close(lengthscale_task_priors().covariances[2], kernel.covariances[0])
    f32 = kernel_task_priors(dtype=torch.float32)
    assert f32.covariances.dtype == torch.float32


def test_hill_means_reconstruction():
    priors = hill_task_priors()
    x = priors.arms[:, 0]
    means = priors.means
    base = means[0]
    assert (base[x > 10] == 0).all()
    assert (base >= 0).all() and base.max() <= 1.0
    # Ten hills on [0, 10]: ten strict local maxima, one per unit interval, of height ~1.
    interior = (base[1:-1] > base[:-2]) & (base[1:-1] > base[2:])
    peaks = x[1:-1][interior]
    assert peaks.shape == (NUM_HILLS,)
    torch.testing.assert_close(peaks.floor(), torch.arange(NUM_HILLS, dtype=torch.float64))
    assert (base[1:-1][interior] > 0.99).all()
    # Means 1..4: exactly one hill doubled, all other points identical.
    for row, hill in enumerate(TALL_HILLS, start=1):
        diff = means[row] - base
        on_hill = (x >= hill - 1) & (x <= hill)
        assert (diff[~on_hill] == 0).all()
        torch.testing.assert_close(diff[on_hill], base[on_hill])  # the same bump again: height doubled
    # All five share the SE(l = 1) covariance.
    torch.testing.assert_close(priors.covariances, paper_rbf(1.0)(priors.arms, priors.arms).expand(5, -1, -1))
    custom = hill_means(priors.arms, hill_height=0.5, tall_hills=[1, 10])
    assert custom.shape == (3, 500) and custom[0].max() <= 0.5
    with pytest.raises(ValueError, match="tall_hills"):
        hill_means(priors.arms, tall_hills=[11])


def test_paper_arms():
    arms = paper_arms()
    assert arms.shape == (500, 1) and arms.dtype == torch.float64
    assert float(arms[0]) == 0.0 and float(arms[-1]) == 20.0
    torch.testing.assert_close(arms.diff(dim=0), torch.full((499, 1), 20 / 499, dtype=torch.float64))
    assert paper_arms(11, dtype=torch.float32)[:, 0].tolist() == pytest.approx([2.0 * i for i in range(11)])
    # Every arm is the float64 nearest to 20 i / 499 (one rounding): the same numbers on every
    # CPU kernel path, which torch.linspace's fused multiply-add is not.
    assert arms[:, 0].tolist() == [float(Fraction(20 * i, 499)) for i in range(500)]
    assert torch.equal(paper_arms(40, dtype=torch.float32), paper_arms(40).float())


def test_kernel_and_lengthscale_tasks_are_the_documented_kernels():
    arms = paper_arms(40)
    kernel = kernel_task_priors(num_arms=40)
    assert kernel.labels() == ["se", "matern52", "matern32", "periodic", "linear", "rq"]
    expected = [paper_rbf(1.0), paper_matern(2.5, 1.0), paper_matern(1.5, 1.0), paper_periodic(5.0, 1.0),
                paper_linear(0.05**2), paper_rq(0.5, 1.0)]
    for k, function in enumerate(expected):
        torch.testing.assert_close(kernel.covariances[k], function(arms, arms))
    lengthscale = lengthscale_task_priors(noise=0.01, num_arms=40)
    assert lengthscale.labels() == ["se_l4", "se_l2", "se_l1", "se_l0.5"] and lengthscale.noise == 0.01
    for k, ell in enumerate((4.0, 2.0, 1.0, 0.5)):
        r2 = (arms - arms.T).square()
        torch.testing.assert_close(lengthscale.covariances[k], torch.exp(-r2 / ell**2))
    assert (lengthscale.means == 0).all()


def test_hill_means_by_the_formula_and_their_checks():
    arms = torch.tensor([[0.25], [0.5], [1.5], [2.5], [9.75], [10.0], [15.0]], dtype=torch.float64)
    means = hill_means(arms, hill_height=0.5, tall_hills=[3])
    bump = [0.5 * math.sin(math.pi * (x % 1.0)) ** 2 if x <= 10 else 0.0 for x in arms[:, 0].tolist()]
    assert means[0].tolist() == pytest.approx(bump, abs=1e-15)
    doubled = [b * (2.0 if 2.0 <= x <= 3.0 else 1.0) for b, x in zip(bump, arms[:, 0].tolist())]
    assert means[1].tolist() == pytest.approx(doubled, abs=1e-15)
    assert hill_task_priors(num_arms=50, tall_hills=[1]).labels() == ["hills", "tall_hill1"]
    with pytest.raises(ValueError, match="arms must be N x 1"):
        hill_means(torch.zeros(5, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="hill_height must be a finite number > 0"):
        hill_means(arms, hill_height=0.0)
    with pytest.raises(ValueError, match=r"tall_hills must lie in \[1, 10\]"):
        hill_means(arms, tall_hills=[0])
