"""Tests of the benchmark problem interface (botorch_unknown_hypers.problems.problem); the domains
are tested in tests/test_domains.py."""

import pytest
import torch

from botorch_unknown_hypers.problems import BoxDomain, Problem

DTYPES = [torch.float32, torch.float64]


class _Sphere(Problem):
    """f(x) = -||x||^2 on a box; a minimal concrete Problem."""

    def evaluate_true(self, X):
        return -(X**2).sum(dim=-1)


def _sphere(noise_std=0.0, dtype=torch.float64):
    bounds = torch.tensor([[-1.0, -1.0], [1.0, 1.0]], dtype=dtype)
    return _Sphere(name="sphere", domain=BoxDomain(bounds), optimal_value=0.0, noise_std=noise_std)


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
