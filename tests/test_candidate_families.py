r"""Periodic, additive and mean-function candidate families against brute-force GP formulas."""

import math

import numpy as np
import pytest
import torch

from botorch_unknown_hypers.candidate_families import (
    AdditiveCandidates,
    MeanFunctionCandidates,
    PeriodicCandidates,
)
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.grouped import GroupedCandidateModel

NOISE = 1e-3


def _data():
    gen = torch.Generator().manual_seed(0)
    X = torch.rand(10, 3, generator=gen, dtype=torch.float64)
    Y = torch.randn(10, 1, generator=gen, dtype=torch.float64)
    Xs = torch.rand(4, 3, generator=gen, dtype=torch.float64)
    return X, Y, Xs


def _posterior_ref(k, X, Xs, y, m=None, ms=None):
    m = np.zeros(len(X)) if m is None else m
    ms = np.zeros(len(Xs)) if ms is None else ms
    A = k(X, X) + NOISE * np.eye(len(X))
    Ks = k(Xs, X)
    mu = ms + Ks @ np.linalg.solve(A, y - m)
    var = np.diag(k(Xs, Xs)) - np.einsum("ij,ji->i", Ks, np.linalg.solve(A, Ks.T))
    return mu, var


def _matern52(r):
    s = math.sqrt(5) * r
    return (1 + s + s * s / 3) * np.exp(-s)


def _check(model, kernels, X, Y, Xs, means=None):
    mean, var = model.marginal_mean_variance(Xs.unsqueeze(0).unsqueeze(0))
    for j, k in enumerate(kernels):
        m, ms = (None, None) if means is None else means[j]
        mu, v = _posterior_ref(k, X.numpy(), Xs.numpy(), Y[:, 0].numpy(), m, ms)
        np.testing.assert_allclose(mean[0, j].numpy(), mu, atol=1e-10)
        np.testing.assert_allclose(var[0, j].numpy(), v, atol=1e-10)


PARTITIONS = [[[0], [1], [2]], [[0, 1], [2]], [[0], [1, 2]], [[1], [0, 2]]]


def _additive_kernel(partition, ls):
    def k(A, B):
        total = sum(_matern52(np.sqrt(((A[:, None, g] - B[None, :, g]) ** 2).sum(-1)) / ls) for g in partition)
        return total / len(partition)

    return k


def test_additive_candidates_match_brute_force():
    X, Y, Xs = _data()
    ls = [0.3, 0.4, 0.5, 0.6]
    cands = AdditiveCandidates(PARTITIONS, lengthscale=torch.tensor(ls, dtype=torch.float64), noise=NOISE, kernel="matern52")
    assert cands.labels() == ["(1)(2)(3)", "(1,2)(3)", "(1)(2,3)", "(2)(1,3)"]
    model = CandidateGP(X, Y, cands)
    _check(model, [_additive_kernel(p, v) for p, v in zip(PARTITIONS, ls)], X, Y, Xs)
    # normalised: k(x, x) = 1 whatever the number of groups
    _, var0 = CandidateGP(X[:1], Y[:1], cands).marginal_mean_variance(torch.ones(1, 1, 1, 3, dtype=torch.float64))
    assert var0.max() <= 1.0 + 1e-12


def test_additive_candidates_reject_bad_partitions():
    with pytest.raises(ValueError, match="twice"):
        CandidateGP(torch.rand(3, 3, dtype=torch.float64), torch.rand(3, 1, dtype=torch.float64),
                    AdditiveCandidates([[[0, 1], [1]]]))
    with pytest.raises(ValueError, match="outside"):
        CandidateGP(torch.rand(3, 2, dtype=torch.float64), torch.rand(3, 1, dtype=torch.float64),
                    AdditiveCandidates([[[0], [5]]]))


def test_periodic_candidates_match_brute_force():
    X, Y, Xs = _data()
    X, Xs = X[:, :1], Xs[:, :1]
    spec = [(0.5, 0.7), (1.0, 1.3)]
    cands = PeriodicCandidates(
        period=torch.tensor([p for p, _ in spec], dtype=torch.float64),
        lengthscale=torch.tensor([v for _, v in spec], dtype=torch.float64),
        noise=NOISE,
    )

    def kper(p, v):
        return lambda A, B: np.exp(-2 * np.sin(math.pi * np.abs(A[:, None, 0] - B[None, :, 0]) / p) ** 2 / v)

    _check(CandidateGP(X, Y, cands), [kper(p, v) for p, v in spec], X, Y, Xs)
    # a sample at x and x + period is perfectly correlated under the right period
    assert len(cands.subset([1])) == 1 and cands.cat(cands).labels()[2] == cands.labels()[0]


def test_prior_mean_candidates_give_different_posteriors():
    X, Y, Xs = _data()

    def mean_fn(Z):
        return torch.stack([torch.zeros_like(Z[..., 0]), 2 * torch.sin(6 * Z[..., 0]), Z[..., 0] + 1], -2)

    base = KernelCandidates.from_lengthscales(torch.full((3,), 0.3, dtype=torch.float64), noise=NOISE)
    cands = MeanFunctionCandidates(base, mean_fn, names=["zero", "sine", "ramp"])
    model = CandidateGP(X, Y, cands)

    def k(A, B):
        return _matern52(np.sqrt(((A[:, None] - B[None]) ** 2).sum(-1)) / 0.3)

    means = [(mean_fn(X)[j].numpy(), mean_fn(Xs)[j].numpy()) for j in range(3)]
    _check(model, [k] * 3, X, Y, Xs, means)
    mean, _ = model.marginal_mean_variance(Xs.unsqueeze(0).unsqueeze(0))
    assert (mean[0, 0] - mean[0, 1]).abs().max() > 1e-3  # the means differ
    sub = cands.subset([2, 0])
    assert sub.labels() == ["ramp", "zero"]
    mean_sub, _ = CandidateGP(X, Y, sub).marginal_mean_variance(Xs.unsqueeze(0).unsqueeze(0))
    torch.testing.assert_close(mean_sub[0], mean[0, [2, 0]])
    with pytest.raises(ValueError, match="not serialisable"):
        cands.to_dict()


def test_grouped_model_of_mixed_families_equals_separate_models():
    X, Y, Xs = _data()
    additive = AdditiveCandidates(PARTITIONS[:2], lengthscale=0.4, noise=NOISE, kernel="rbf")
    stationary = KernelCandidates.from_lengthscales(torch.tensor([0.2, 0.5], dtype=torch.float64), noise=NOISE)
    grouped = GroupedCandidateModel([CandidateGP(X, Y, additive), CandidateGP(X, Y, stationary)])
    mean, var = grouped.marginal_mean_variance(Xs.unsqueeze(0).unsqueeze(0))
    singles = [CandidateGP(X, Y, additive.subset([i])) for i in range(2)]
    singles += [CandidateGP(X, Y, stationary.subset([i])) for i in range(2)]
    for j, single in enumerate(singles):
        m, v = single.marginal_mean_variance(Xs.unsqueeze(0).unsqueeze(0))
        torch.testing.assert_close(mean[0, j], m[0, 0])
        torch.testing.assert_close(var[0, j], v[0, 0])
