import math

import pytest
import torch

from botorch_unknown_hypers.problems import BoxDomain, FiniteDomain, Problem

DTYPES = [torch.float32, torch.float64]


class _Sphere(Problem):
    """f(x) = -||x||^2 on a box; a minimal concrete Problem."""

    def evaluate_true(self, X):
        return -(X**2).sum(dim=-1)


def _sphere(noise_std=0.0, dtype=torch.float64):
    bounds = torch.tensor([[-1.0, -1.0], [1.0, 1.0]], dtype=dtype)
    return _Sphere(name="sphere", domain=BoxDomain(bounds), optimal_value=0.0, noise_std=noise_std)


# ----------------------------------------------------------------- BoxDomain


@pytest.mark.parametrize(
    "bounds",
    [
        torch.zeros(3),  # 1-d
        torch.zeros(3, 2),  # 3 x d
        torch.zeros(2, 2, 2),  # 3-d
    ],
)
def test_box_bad_shape(bounds):
    with pytest.raises(ValueError, match="2 x d"):
        BoxDomain(bounds)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_box_non_finite(bad):
    with pytest.raises(ValueError, match="finite"):
        BoxDomain(torch.tensor([[0.0, 0.0], [1.0, bad]]))


@pytest.mark.parametrize("upper", [0.5, 0.2])
def test_box_upper_not_above_lower(upper):
    with pytest.raises(ValueError, match="upper"):
        BoxDomain(torch.tensor([[0.0, 0.5], [1.0, upper]]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_box_contains(dtype):
    box = BoxDomain(torch.tensor([[0.0, -1.0], [1.0, 2.0]], dtype=torch.float64))
    assert box.dim == 2
    X = torch.tensor(
        [
            [0.5, 0.0],  # inside
            [0.0, -1.0],  # corner
            [1.0, 2.0],  # corner
            [1.0 + 1e-12, 2.0],  # within atol
            [1.1, 0.0],  # outside
            [0.5, -1.5],  # outside
        ],
        dtype=dtype,
    )
    expected = torch.tensor([True, True, True, True, False, False])
    assert torch.equal(box.contains(X), expected)
    # batch shapes are kept
    assert box.contains(X.reshape(2, 3, 2)).shape == (2, 3)
    assert torch.equal(box.contains(X.reshape(2, 3, 2)).reshape(-1), expected)


def test_box_to():
    box = BoxDomain(torch.tensor([[0.0], [1.0]], dtype=torch.float64)).to(dtype=torch.float32)
    assert box.bounds.dtype == torch.float32


# -------------------------------------------------------------- FiniteDomain


@pytest.mark.parametrize("points", [torch.zeros(0, 2), torch.zeros(3), torch.zeros(2, 2, 2)])
def test_finite_bad_shape(points):
    with pytest.raises(ValueError, match="non-empty"):
        FiniteDomain(points)


def test_finite_non_finite():
    with pytest.raises(ValueError, match="finite"):
        FiniteDomain(torch.tensor([[0.0, 1.0], [math.nan, 0.0]]))
    with pytest.raises(ValueError, match="finite"):
        FiniteDomain(torch.tensor([[0.0, 1.0], [math.inf, 0.0]]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [5, 200])
def test_finite_index_of_matches_brute_force(dtype, n):
    # n = 200 exceeds the size above which torch.cdist switches by default to the
    # inexact matrix-product formula; exact pool points must still be found.
    g = torch.Generator().manual_seed(0)
    points = torch.rand(n, 3, generator=g, dtype=dtype)
    dom = FiniteDomain(points)
    assert dom.dim == 3
    perm = torch.randperm(n, generator=g)
    assert torch.equal(dom.index_of(points[perm]), perm)
    assert torch.equal(dom.index_of(points), torch.arange(n))
    # a single query, and a few queries
    assert dom.index_of(points[n - 1 :]).tolist() == [n - 1]
    assert torch.equal(dom.index_of(points[perm[:7]]), perm[:7])


@pytest.mark.parametrize("dtype", DTYPES)
def test_finite_index_of_and_contains(dtype):
    points = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.5, 1.0]], dtype=dtype)
    dom = FiniteDomain(points)
    X = torch.tensor([[0.5, 1.0], [0.5, 0.5], [0.0, 0.0], [1.0, 1e-3]], dtype=dtype)
    assert dom.index_of(X).tolist() == [2, -1, 0, -1]
    assert dom.contains(X).tolist() == [True, False, True, False]
    assert dom.contains(X.reshape(2, 2, 2)).shape == (2, 2)
    assert torch.equal(dom.bounds, torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=dtype))


def test_finite_to():
    dom = FiniteDomain(torch.eye(3, dtype=torch.float64)).to(dtype=torch.float32)
    assert dom.points.dtype == torch.float32


# ------------------------------------------------------------------- Problem


def test_problem_basic():
    p = _sphere()
    assert p.dim == 2 and not p.is_finite
    X = torch.tensor([[0.5, 0.5]], dtype=torch.float64)
    y, f = p.evaluate(X)
    assert torch.equal(y, f) and y is not f
    assert f.item() == pytest.approx(-0.5)


def test_problem_evaluate_validates():
    p = _sphere()
    with pytest.raises(ValueError, match="columns"):
        p.evaluate(torch.zeros(1, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="outside"):
        p.evaluate(torch.tensor([[2.0, 0.0]], dtype=torch.float64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_problem_noise_reproducible(dtype):
    p = _sphere(noise_std=0.1, dtype=dtype)
    X = torch.rand(4, 3, 2, dtype=dtype, generator=torch.Generator().manual_seed(1)) * 2 - 1
    y1, f1 = p.evaluate(X, generator=torch.Generator().manual_seed(7))
    y2, f2 = p.evaluate(X, generator=torch.Generator().manual_seed(7))
    y3, _ = p.evaluate(X, generator=torch.Generator().manual_seed(8))
    assert y1.shape == f1.shape == (4, 3) and y1.dtype == dtype
    assert torch.equal(y1, y2) and torch.equal(f1, f2)
    assert not torch.equal(y1, y3)
    assert not torch.equal(y1, f1)
