"""Tests of the acquisitions on the posterior mean and the variance conditioned on pending points
(botorch_unknown_hypers.acquisition.pending).

References: a GP that also observed the pending points, and Ren & Li's eq. (2) written out with
an explicit Matérn-5/2 kernel.
"""

from __future__ import annotations

import math

import pytest
import torch
from botorch.acquisition import LogExpectedImprovement
from botorch.models import SingleTaskGP
from gpytorch.kernels import MaternKernel, ScaleKernel
from gpytorch.means import ZeroMean

from botorch_unknown_hypers.acquisition.pending import (
    ConditionalLogEI,
    ConditionalUCB,
    ConditionalVariance,
    condition_on_pending,
    conditional_posterior_variance,
    observation_noise_variance,
)
from botorch_unknown_hypers.models.cached_predictive import CachedExactPredictive
from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp
from tests.acquisition.surrogate_helpers import SPEC, conditioned_on_three_pending, surrogate_data

NOISE = 1e-4
LENGTHSCALE = 0.6


def gp_without_transform(X, Y, noise):
    covar = ScaleKernel(MaternKernel(nu=2.5))
    model = SingleTaskGP(X, Y, covar_module=covar, mean_module=ZeroMean(), outcome_transform=None)
    covar.base_kernel.lengthscale = torch.tensor(LENGTHSCALE, dtype=torch.float64)  # not via float32
    covar.outputscale = 1.0
    model.likelihood.noise = noise
    return model.eval()


def matern52(A, B):
    r = torch.cdist(A, B) * math.sqrt(5) / LENGTHSCALE
    return (1 + r + r.square() / 3) * torch.exp(-r)


def eq2_variance(model, train_X, pending, X):
    r"""Ren & Li eq. (2) from scratch: the variance at ``X`` (``m x d``) of a unit-scale Matérn-5/2
    GP after observing ``train_X`` and the pending points, with ``model``'s noise on both (read back:
    GPyTorch stores it through a constraint)."""
    noise = float(model.likelihood.noise)
    S = torch.cat([train_X, pending])
    gram = matern52(S, S) + noise * torch.eye(len(S), dtype=S.dtype)
    cross = matern52(S, X)
    return 1.0 - (cross * torch.linalg.solve(gram, cross)).sum(0)


# --------------------------------------------------------------------------- #
# the conditioned variance
# --------------------------------------------------------------------------- #


def test_conditional_variance_equals_gp_that_observed_pending_points():
    X, Y = surrogate_data()
    Q = torch.tensor([[0.1, 0.2], [0.5, -0.3], [0.1, 0.25]], dtype=torch.float64)
    Xs = torch.rand(20, 1, 2, dtype=torch.float64) * 4 - 2
    # Without an outcome transform: a brute-force GP on X u Q (values irrelevant).
    model = gp_without_transform(X, Y, 1e-4)
    mean, var = conditional_posterior_variance(model, Xs, Q)
    brute = gp_without_transform(torch.cat([X, Q]), torch.cat([Y, torch.zeros(3, 1, dtype=X.dtype)]), 1e-4)
    assert torch.allclose(var, brute.posterior(Xs).variance[..., 0, 0], atol=1e-8)
    assert torch.allclose(mean, model.posterior(Xs).mean[..., 0, 0], atol=1e-12)  # mean not conditioned
    # With Standardize (the paper surrogate): the same in standardised units times sd(y)^2.
    fixed = fixed_hyperparameter_gp(X, Y, SPEC)
    _, var_f = conditional_posterior_variance(fixed, Xs, Q)
    assert torch.allclose(var_f, Y.std() ** 2 * brute.posterior(Xs).variance[..., 0, 0], atol=1e-8)
    noise = observation_noise_variance(fixed, Q)
    assert torch.allclose(noise, Y.std() ** 2 * 1e-4 * torch.ones(3, dtype=X.dtype), rtol=1e-8)


def test_repeated_pending_point_keeps_variance_positive():
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    x = torch.tensor([[[0.3, 0.3]]], dtype=torch.float64)
    _, var = conditional_posterior_variance(model, x, x[0].expand(2, 2))
    assert float(var) > 0


def test_rank_one_conditioned_model_gives_the_conditional_variance():
    X, model, Q, cond = conditioned_on_three_pending()
    Xs = torch.rand(20, 1, 2, dtype=torch.float64) * 4 - 2
    _, var = conditional_posterior_variance(model, Xs, Q)
    assert torch.allclose(cond.posterior(Xs).variance[..., 0, 0], var, atol=1e-8)


def test_conditioned_model_keeps_the_mean_frozen():
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    model.posterior(X[:1])
    cond = condition_on_pending(condition_on_pending(model, X[:1] * 0.5), X[1:2] * 0.5)
    Xs = torch.rand(30, 1, 2, dtype=torch.float64) * 4 - 2
    assert torch.allclose(cond.posterior(Xs).mean, model.posterior(Xs).mean, atol=1e-8)


def test_conditional_posterior_variance_is_eq2_written_out():
    X, Y = surrogate_data()
    model = gp_without_transform(X, Y, NOISE)
    Q = torch.tensor([[0.0, 0.0], [1.0, -1.0]], dtype=torch.float64)
    Xs = torch.rand(12, 1, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64) * 4 - 2
    mean, var = conditional_posterior_variance(model, Xs, Q)
    assert mean.shape == var.shape == (12,)
    torch.testing.assert_close(var, eq2_variance(model, X, Q, Xs[:, 0]), rtol=1e-8, atol=1e-10)
    # the noise at the pending points may be passed instead of computed
    _, var_given = conditional_posterior_variance(model, Xs, Q, noise=model.likelihood.noise.detach().expand(2))
    torch.testing.assert_close(var_given, var, rtol=1e-10, atol=1e-12)
    # no pending points (None or 0 x d): the plain posterior variance, eq. (2) with Q empty
    plain = eq2_variance(model, X, X[:0], Xs[:, 0])
    for empty in (None, torch.empty(0, 2, dtype=torch.float64)):
        mean0, var0 = conditional_posterior_variance(model, Xs, empty)
        torch.testing.assert_close(var0, plain, rtol=1e-8, atol=1e-10)
        torch.testing.assert_close(mean0, mean)
    assert bool((var < var0).all())  # pending points only ever shrink the variance


def test_conditional_posterior_variance_needs_one_point_per_batch():
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    with pytest.raises(ValueError, match="batch_shape x 1 x d"):
        conditional_posterior_variance(model, X.unsqueeze(0), None)


def test_observation_noise_variance_is_the_likelihood_noise_in_posterior_units():
    X, Y = surrogate_data()
    points = X[:4].reshape(2, 2, 2)  # batch_shape x p x d
    plain = observation_noise_variance(gp_without_transform(X, Y, NOISE), points)
    assert plain.shape == (2, 2)
    torch.testing.assert_close(plain, torch.full((2, 2), NOISE, dtype=torch.float64), rtol=1e-6, atol=0)
    # an outcome transform scales it by the variance of the targets
    scaled = observation_noise_variance(fixed_hyperparameter_gp(X, Y, SPEC), X[:3])
    torch.testing.assert_close(scaled, Y.var() * torch.full((3,), NOISE, dtype=torch.float64), rtol=1e-6, atol=0)


# --------------------------------------------------------------------------- #
# the acquisitions
# --------------------------------------------------------------------------- #


def test_conditional_log_ei_equals_log_ei_of_the_kriging_believer():
    g = torch.Generator().manual_seed(4)
    X = torch.rand(12, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(5 * X).sum(-1, keepdim=True)
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec(kernel="matern52", lengthscale=(0.3,), noise_variance=1e-4))
    Q = torch.rand(3, 2, generator=g, dtype=torch.float64)
    believer = model
    for j in range(3):
        believer.posterior(Q[j : j + 1])
        believer = believer.condition_on_observations(Q[j : j + 1], believer.posterior(Q[j : j + 1]).mean.detach())
    Xs = torch.rand(50, 1, 2, generator=g, dtype=torch.float64)
    best_f = float(Y.max()) + 0.1
    fast = ConditionalLogEI(model, best_f, X_pending=Q)
    assert fast.uses_cached_predictive
    # The believer's low-rank cache update is itself accurate to ~1e-7 relative (log EI ~ -8 here).
    torch.testing.assert_close(fast(Xs), LogExpectedImprovement(believer, best_f=best_f)(Xs), rtol=1e-5, atol=1e-6)
    slow = ConditionalLogEI(model, best_f, X_pending=Q, predictive=False)
    torch.testing.assert_close(fast(Xs), slow(Xs), rtol=1e-8, atol=1e-8)


def test_conditional_ucb_and_variance_are_eq2_moments():
    X, Y = surrogate_data()
    model = gp_without_transform(X, Y, NOISE)
    Q = torch.tensor([[0.3, -0.2], [-1.0, 1.5]], dtype=torch.float64)
    Xs = torch.rand(9, 1, 2, generator=torch.Generator().manual_seed(3), dtype=torch.float64) * 4 - 2
    with torch.no_grad():
        mu = model.posterior(Xs).mean[..., 0, 0]
    var = eq2_variance(model, X, Q, Xs[:, 0])
    with torch.no_grad():
        torch.testing.assert_close(ConditionalUCB(model, 2.0, X_pending=Q)(Xs), mu + 2.0 * var.sqrt(), rtol=1e-8, atol=1e-10)
        torch.testing.assert_close(  # the UCB-PE authors' variance bonus
            ConditionalUCB(model, 2.0, X_pending=Q, variance_bonus=True)(Xs), mu + 2.0 * var, rtol=1e-8, atol=1e-10
        )
        torch.testing.assert_close(ConditionalVariance(model, X_pending=Q)(Xs), var, rtol=1e-8, atol=1e-10)
        # without pending points: the plain UCB
        plain = eq2_variance(model, X, X[:0], Xs[:, 0])
        torch.testing.assert_close(ConditionalUCB(model, 0.5)(Xs), mu + 0.5 * plain.sqrt(), rtol=1e-8, atol=1e-10)


def test_the_three_evaluation_paths_agree_and_set_X_pending_resets_them():
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    Q = torch.tensor([[0.1, 0.2], [0.5, -0.3]], dtype=torch.float64)
    Xs = torch.rand(15, 1, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64) * 4 - 2
    cond = condition_on_pending(condition_on_pending(model, Q[:1]), Q[1:])
    cached = ConditionalVariance(model, X_pending=Q)
    joint = ConditionalVariance(model, X_pending=Q, predictive=False)
    fantasy = ConditionalVariance(model, X_pending=Q, predictive=None)
    fantasy.conditioned_model = cond
    assert cached.uses_cached_predictive and not joint.uses_cached_predictive
    with torch.no_grad():
        reference = joint(Xs)
        torch.testing.assert_close(cached(Xs), reference, rtol=1e-8, atol=1e-10)
        torch.testing.assert_close(fantasy(Xs), reference, rtol=1e-6, atol=1e-8)
        # a shared predictive gives the same values
        shared = ConditionalVariance(model, X_pending=Q, predictive=CachedExactPredictive.from_model(model))
        torch.testing.assert_close(shared(Xs), reference, rtol=1e-8, atol=1e-10)
        # new pending points: the cached factor is rebuilt
        cached.set_X_pending(None)
        torch.testing.assert_close(cached(Xs), model.posterior(Xs).variance[..., 0, 0], rtol=1e-8, atol=1e-10)


def test_predictive_argument_is_checked():
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    other = fixed_hyperparameter_gp(X, Y, SurrogateSpec(kernel="rbf", lengthscale=(0.3,), noise_variance=1e-4))
    with pytest.raises(ValueError, match="predictive must be a bool"):
        ConditionalUCB(model, 1.0, predictive="yes")
    with pytest.raises(ValueError, match="predictive must wrap the same model"):
        ConditionalUCB(model, 1.0, predictive=CachedExactPredictive.from_model(other))
