"""Tests of the known-kernel ridge regression posterior and the greedy information gain."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_unknown_hypers.models.kernel_ridge import (
    KernelRidge,
    collapse_replicates,
    greedy_information_gain,
    known_kernel_gp,
    make_known_kernel,
)

DTYPES = (torch.float64, torch.float32)


def matern52(A, B, lengthscale):
    s = math.sqrt(5.0) * torch.cdist(A, B) / lengthscale
    return (1 + s + s**2 / 3) * torch.exp(-s)


def data(n=10, d=2, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, d, generator=g, dtype=torch.float64)
    X = torch.cat([X, X[:3]])  # replicates
    Y = torch.sin(4 * X.sum(-1, keepdim=True)) + 0.1 * torch.randn(len(X), 1, generator=g, dtype=torch.float64)
    return X.to(dtype), Y.to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_mean_variance_and_log_det_match_brute_force(dtype):
    X, Y = data(dtype=dtype)
    kernel = make_known_kernel("matern52", 0.4, 0.8, 2, dtype=dtype)
    lam = 0.3
    model = KernelRidge.from_observations(kernel, lam, X, Y)
    Xte = torch.rand(6, 2, generator=torch.Generator().manual_seed(5), dtype=torch.float64).to(dtype)
    X64, Y64, T64 = X.double(), Y.double(), Xte.double()
    K = 0.8 * matern52(X64, X64, 0.4)
    k = 0.8 * matern52(X64, T64, 0.4)
    A = K + lam * torch.eye(len(X64), dtype=torch.float64)
    mean = k.T @ torch.linalg.solve(A, Y64).squeeze(-1)  # mu = k^T (K + lam I)^-1 y
    var = 0.8 - (k * torch.linalg.solve(A, k)).sum(0)
    log_det = torch.logdet(torch.eye(len(X64), dtype=torch.float64) + K / lam)
    m, v = model.mean_variance(Xte)
    tol = 1e-10 if dtype == torch.float64 else 2e-4
    assert torch.allclose(m.double(), mean, atol=tol) and torch.allclose(v.double(), var, atol=tol)
    assert model.log_det == pytest.approx(float(log_det), rel=1e-10 if dtype == torch.float64 else 1e-4)
    assert model.num_observations == len(X) and model.counts.shape[0] == len(X) - 3
    gp = known_kernel_gp(X, Y, kernel, lam, torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=dtype))
    post = gp.posterior(Xte)
    assert torch.allclose(post.mean.squeeze(-1).double(), mean, atol=tol)
    assert torch.allclose(post.variance.squeeze(-1).double(), var, atol=tol)


def test_prior_without_data():
    kernel = make_known_kernel("rbf", 0.2, 0.5, 1)
    model = KernelRidge.from_observations(kernel, 1.0, torch.empty(0, 1, dtype=torch.float64), torch.empty(0, 1))
    m, v = model.mean_variance(torch.rand(4, 1, dtype=torch.float64))
    assert torch.equal(m, torch.zeros(4, dtype=torch.float64)) and torch.allclose(v, torch.full((4,), 0.5, dtype=torch.float64))
    assert model.log_det == 0.0 and model.num_observations == 0


def test_collapse_replicates_counts_and_sums():
    X = torch.tensor([[1.0], [0.0], [1.0], [1.0]])
    Y = torch.tensor([1.0, 2.0, 3.0, 5.0])
    U, counts, sums = collapse_replicates(X, Y)
    assert U.tolist() == [[0.0], [1.0]] and counts.tolist() == [1, 3] and sums.tolist() == [2, 9]


def test_greedy_information_gain_is_the_log_det_of_its_picks():
    points = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
    kernel = make_known_kernel("rbf", 0.1, 1.0, 1)
    gain, picks = greedy_information_gain(kernel, points, 0.5, 20)
    K = kernel(points[picks]).to_dense()
    assert gain == pytest.approx(0.5 * float(torch.logdet(torch.eye(20, dtype=torch.float64) + K / 0.5)), rel=1e-9)
    assert picks[0] == 0  # constant prior variance: lowest index
    # greedy beats an arbitrary design of the same size
    K_rand = kernel(points[torch.arange(20)]).to_dense()
    assert gain >= 0.5 * float(torch.logdet(torch.eye(20, dtype=torch.float64) + K_rand / 0.5))


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(kernel="cosine"), "kernel"),
        (dict(lengthscale=-1.0), "lengthscale"),
        (dict(lengthscale=[0.1, 0.2, 0.3]), "lengthscale"),
        (dict(outputscale=1.2), "outputscale"),
        (dict(outputscale=0.0), "outputscale"),
    ],
)
def test_bad_kernel_options(kwargs, name):
    options = dict(kernel="rbf", lengthscale=0.2, outputscale=1.0, dim=2) | kwargs
    with pytest.raises(ValueError, match=name):
        make_known_kernel(**options)


def test_an_unhashable_kernel_is_refused_with_the_kernel_names_not_a_type_error():
    with pytest.raises(ValueError, match=r"^kernel must be one of \['matern12', 'matern32', 'matern52', 'rbf'\], got \['rbf'\]\."):
        make_known_kernel(["rbf"], 0.2, 1.0, 1)
