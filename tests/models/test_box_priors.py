"""Tests of K candidate GP priors on a box and the data they all see
(botorch_unknown_hypers.models.box_priors), against the textbook GP posterior and evidence of
each prior (Matérn-5/2 on unit-cube inputs, written out here)."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_unknown_hypers.candidate_families import MeanFunctionCandidates
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.box_priors import BoxPriors

BOUNDS = torch.tensor([[0.0, -1.0], [2.0, 1.0]], dtype=torch.float64)
LENGTHSCALES = [0.2, 0.5, 1.0]
OUTPUTSCALES = [1.0, 2.0, 0.5]
NOISE = 0.05**2


def candidates() -> KernelCandidates:
    return KernelCandidates.from_lengthscales(
        torch.tensor(LENGTHSCALES, dtype=torch.float64),
        outputscale=torch.tensor(OUTPUTSCALES, dtype=torch.float64),
        noise=NOISE,
    )


def data(n: int = 6, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    X = BOUNDS[0] + (BOUNDS[1] - BOUNDS[0]) * torch.rand(n, 2, generator=g, dtype=torch.float64)
    return X, torch.sin(2 * X[:, 0]) + X[:, 1]


def unit(X: torch.Tensor) -> torch.Tensor:
    return (X - BOUNDS[0]) / (BOUNDS[1] - BOUNDS[0])


def kernel(k: int, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    r = math.sqrt(5) * torch.cdist(unit(A), unit(B)) / LENGTHSCALES[k]
    return OUTPUTSCALES[k] * (1 + r + r.square() / 3) * torch.exp(-r)


def textbook(k: int, X: torch.Tensor, y: torch.Tensor, Xs: torch.Tensor):
    r"""Posterior mean and latent variance of prior ``k`` at ``Xs`` after ``(X, y)``, zero mean."""
    gram = kernel(k, X, X) + NOISE * torch.eye(len(X), dtype=X.dtype)
    cross = kernel(k, X, Xs)
    return cross.T @ torch.linalg.solve(gram, y), OUTPUTSCALES[k] - (cross * torch.linalg.solve(gram, cross)).sum(0)


def textbook_evidence(k: int, X: torch.Tensor, y: torch.Tensor) -> float:
    gram = kernel(k, X, X) + NOISE * torch.eye(len(X), dtype=X.dtype)
    return float(torch.distributions.MultivariateNormal(torch.zeros_like(y), gram).log_prob(y))


def test_before_any_data_the_moments_are_the_priors_own():
    model = BoxPriors(candidates(), BOUNDS)
    assert model.num_priors == 3 and model.dim == 2 and model.num_observations == 0
    assert model.candidate_gp() is None and model.labels() == ["0.2", "0.5", "1"]
    Xs = data(5, seed=1)[0]
    mean, variance = model.mean_variance(Xs)
    assert mean.shape == variance.shape == (3, 5)
    assert (mean == 0).all()
    torch.testing.assert_close(variance, torch.tensor(OUTPUTSCALES, dtype=torch.float64).unsqueeze(-1).expand(3, 5))
    sub_mean, sub_variance = model.mean_variance(Xs, [2, 0])
    torch.testing.assert_close(sub_variance, variance[[2, 0]])
    assert model.log_marginal_likelihood().tolist() == [0.0, 0.0, 0.0]
    torch.testing.assert_close(model.noise, torch.full((3,), NOISE, dtype=torch.float64))


def test_posterior_moments_match_the_textbook_posterior_of_each_prior():
    X, y = data()
    model = BoxPriors(candidates(), BOUNDS, X, y.unsqueeze(-1))  # n x 1 targets are accepted
    Xs = data(7, seed=2)[0]
    mean, variance = model.mean_variance(Xs)
    for k in range(3):
        ref_mean, ref_variance = textbook(k, X, y, Xs)
        torch.testing.assert_close(mean[k], ref_mean, rtol=1e-8, atol=1e-10)
        torch.testing.assert_close(variance[k], ref_variance, rtol=1e-8, atol=1e-10)
    mean_at, variance_at = model.mean_variance_at(Xs[3], [1, 2])
    torch.testing.assert_close(mean_at, mean[[1, 2], 3])
    torch.testing.assert_close(variance_at, variance[[1, 2], 3])


def test_log_marginal_likelihood_and_the_predictive_chain():
    X, y = data(5)
    model = BoxPriors(candidates(), BOUNDS)
    chain = torch.zeros(3, dtype=torch.float64)
    for i in range(5):
        step = model.predictive_log_likelihood_at(X[i], y[i])
        mean, variance = model.mean_variance(X[i : i + 1])
        by_hand = -0.5 * ((y[i] - mean[:, 0]).square() / (variance[:, 0] + NOISE) + (variance[:, 0] + NOISE).log() + math.log(2 * math.pi))
        torch.testing.assert_close(step, by_hand)
        chain += step
        model.condition_at(X[i], y[i])
    expected = torch.tensor([textbook_evidence(k, X, y) for k in range(3)], dtype=torch.float64)
    torch.testing.assert_close(model.log_marginal_likelihood(), expected, rtol=1e-8, atol=1e-10)
    torch.testing.assert_close(chain, expected, rtol=1e-8, atol=1e-10)  # the chain rule of the evidence
    assert torch.equal(model.observed_X, X) and torch.equal(model.observed_Y, y)


def test_the_candidate_gp_is_cached_until_the_next_observation():
    X, y = data()
    model = BoxPriors(candidates(), BOUNDS, X, y)
    gp = model.candidate_gp()
    assert model.candidate_gp() is gp and model.candidate_gp([0, 1, 2]) is gp
    sub = model.candidate_gp([2, 0])
    assert sub is not gp and sub.num_candidates == 2 and model.candidate_gp([2, 0]) is sub
    model.condition(torch.tensor([1.0, 0.0], dtype=torch.float64), 0.5)
    assert model.num_observations == 7 and model.candidate_gp() is not gp
    fresh = model.without_data()
    assert fresh.num_observations == 0 and fresh.candidates is model.candidates and model.num_observations == 7


def test_prior_moments_of_mean_function_priors_per_candidate_points_and_gradients():
    means = MeanFunctionCandidates(candidates(), lambda Z: torch.stack([Z[..., 0], -Z[..., 1], 0 * Z[..., 0]], dim=-2))
    model = BoxPriors(means, BOUNDS)
    X = data(4, seed=3)[0].expand(3, 4, 2).clone().requires_grad_(True)  # candidate k at X[k]
    mean, variance = model.prior_mean_variance(X)
    Z = unit(X.detach()[0])
    torch.testing.assert_close(mean.detach(), torch.stack([Z[:, 0], -Z[:, 1], torch.zeros(4, dtype=torch.float64)]))
    torch.testing.assert_close(variance.detach(), torch.tensor(OUTPUTSCALES, dtype=torch.float64).unsqueeze(-1).expand(3, 4))
    mean.sum().backward()
    # d/dx of x_1 / 2 (unit cube of [0, 2]) and of -(x_2 + 1) / 2
    torch.testing.assert_close(X.grad[0, :, 0], torch.full((4,), 0.5, dtype=torch.float64))
    torch.testing.assert_close(X.grad[1, :, 1], torch.full((4,), -0.5, dtype=torch.float64))
    mean_module, covar_module = model.prior_modules([1])  # prior 1 alone, on unit-cube inputs
    with torch.no_grad():
        torch.testing.assert_close(mean_module(Z).reshape(-1), -Z[:, 1])
        torch.testing.assert_close(covar_module(Z, diag=True).reshape(-1), torch.full((4,), OUTPUTSCALES[1], dtype=torch.float64))


def test_rows_of_inputs_and_targets_must_match():
    X, y = data()
    with pytest.raises(ValueError, match="train_X and train_Y must have as many rows"):
        BoxPriors(candidates(), BOUNDS, X, y[:-1])


def test_observations_extend_cached_factors_and_the_posterior_stays_the_textbook_one(monkeypatch):
    from tests.host_reads import record_reads

    X, y = data(8)
    model = BoxPriors(candidates(), BOUNDS, X[:5], y[:5])
    first = model.candidate_gp()
    assert first.factor is not None and first.factor.X.shape[0] == 5  # on the cache's factors
    Xs = data(4, seed=5)[0]
    for i in range(5, 8):  # one row at a time, the model rebuilt on the extended factors
        model.condition_at(X[i], y[i])
        reads = record_reads(monkeypatch)
        gp = model.candidate_gp()
        monkeypatch.undo()
        assert len(reads) <= 1 and gp.factor.X.shape[0] == i + 1  # only the appended row's test
    mean, variance = model.mean_variance(Xs)
    for k in range(3):
        ref_mean, ref_variance = textbook(k, X, y, Xs)
        torch.testing.assert_close(mean[k], ref_mean, rtol=1e-8, atol=1e-10)
        torch.testing.assert_close(variance[k], ref_variance, rtol=1e-8, atol=1e-10)
    expected = torch.tensor([textbook_evidence(k, X, y) for k in range(3)], dtype=torch.float64)
    torch.testing.assert_close(model.log_marginal_likelihood(), expected, rtol=1e-8, atol=1e-10)
    sub = model.candidate_gp([2, 0])  # a view of the K-wide model's factors
    torch.testing.assert_close(sub.marginal_mean_variance(Xs.unsqueeze(0))[0], mean[[2, 0]])


def test_priors_without_a_json_identity_are_factorised_afresh():
    means = MeanFunctionCandidates(candidates(), lambda Z: torch.stack([Z[..., 0], -Z[..., 1], 0 * Z[..., 0]], dim=-2))
    X, y = data()
    model = BoxPriors(means, BOUNDS, X, y)
    gp = model.candidate_gp()
    assert gp.factor is None  # GPyTorch's predictive factorises
    Xs = data(3, seed=4)[0]
    mean, _ = model.mean_variance(Xs)
    assert mean.shape == (3, 3) and torch.isfinite(mean).all()
