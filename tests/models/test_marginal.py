"""Tests of the model whose marginal posterior is given by a function
(botorch_unknown_hypers.models.marginal), against closed-form acquisition values."""

from __future__ import annotations

import pytest
import torch
from botorch.acquisition import LogExpectedImprovement, PosteriorMean, UpperConfidenceBound
from botorch.acquisition.objective import ScalarizedPosteriorTransform

from botorch_unknown_hypers.models.marginal import MarginalModel


def moments(X: torch.Tensor):
    r"""``batch x 1 x d`` -> mean ``sum(x)`` and variance ``0.1 + x_1^2`` (``batch`` each)."""
    x = X[..., 0, :]
    return x.sum(-1), 0.1 + x[..., 0].square()


def points(n: int = 7) -> torch.Tensor:
    return torch.rand(n, 1, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 2 - 1


def test_posterior_is_the_diagonal_gaussian_of_the_moments():
    model = MarginalModel(moments)
    assert model.num_outputs == 1
    X = points()
    posterior = model.posterior(X)
    mean, variance = moments(X)
    assert posterior.mean.shape == (7, 1, 1) and posterior.variance.shape == (7, 1, 1)
    torch.testing.assert_close(posterior.mean[..., 0, 0], mean, rtol=0, atol=0)
    torch.testing.assert_close(posterior.variance[..., 0, 0], variance, rtol=0, atol=0)
    # more batch dimensions
    assert model.posterior(X.reshape(7, 1, 1, 2)).mean.shape == (7, 1, 1, 1)


def test_analytic_acquisitions_run_on_it_with_their_closed_forms():
    model = MarginalModel(moments)
    X = points()
    mean, variance = moments(X)
    sigma = variance.sqrt()
    with torch.no_grad():
        torch.testing.assert_close(PosteriorMean(model)(X), mean)
        torch.testing.assert_close(UpperConfidenceBound(model, beta=4.0)(X), mean + 2.0 * sigma)  # BoTorch: sqrt(beta)
        best_f = 0.2
        z = (mean - best_f) / sigma
        normal = torch.distributions.Normal(torch.tensor(0.0, dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64))
        ei = sigma * (z * normal.cdf(z) + normal.log_prob(z).exp())
        best = torch.tensor(best_f, dtype=torch.float64)  # a Python float would become a float32 buffer
        torch.testing.assert_close(LogExpectedImprovement(model, best_f=best)(X), ei.log(), rtol=1e-10, atol=1e-12)


def test_gradients_flow_through_the_moments():
    model = MarginalModel(moments)
    X = points(3).requires_grad_(True)
    UpperConfidenceBound(model, beta=1.0)(X).sum().backward()
    x = X.detach()[..., 0, :]
    expected = torch.stack([1 + x[:, 0] / (0.1 + x[:, 0].square()).sqrt(), torch.ones(3, dtype=torch.float64)], -1)
    torch.testing.assert_close(X.grad[:, 0, :], expected)


def test_a_posterior_transform_is_applied():
    model = MarginalModel(moments)
    X = points(4)
    transform = ScalarizedPosteriorTransform(weights=torch.tensor([-2.0], dtype=torch.float64))
    posterior = model.posterior(X, posterior_transform=transform)
    mean, variance = moments(X)
    torch.testing.assert_close(posterior.mean.reshape(-1), -2.0 * mean)
    torch.testing.assert_close(posterior.variance.reshape(-1), 4.0 * variance)


def test_only_one_point_per_batch_and_latent_moments():
    model = MarginalModel(moments)
    with pytest.raises(ValueError, match=r"X must be batch_shape x 1 x d, got shape \(3, 2, 2\)"):
        model.posterior(torch.zeros(3, 2, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"X must be batch_shape x 1 x d, got shape \(2,\)"):
        model.posterior(torch.zeros(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="observation_noise"):
        model.posterior(points(2), observation_noise=True)
