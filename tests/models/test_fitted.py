"""Tests of the GPs fitted by maximum marginal likelihood (botorch_unknown_hypers.models.fitted):
which hyperparameters are trained, the transforms, and that the fit is a maximum of the exact
marginal likelihood (computed here from the kernel matrix)."""

from __future__ import annotations

import math

import pytest
import torch
from gpytorch.priors import GammaPrior
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize, Standardize
from gpytorch.kernels import MaternKernel, RBFKernel
from gpytorch.means import ZeroMean
from gpytorch.mlls import ExactMarginalLogLikelihood

from botorch_unknown_hypers.models.fitted import (
    NOISE_PRIORS,
    default_likelihood,
    fit_default_single_task_gp,
    fit_single_task_gp,
)
from botorch_unknown_hypers.models.inverse_square_prior import InverseSquaredLengthscalePrior

BOUNDS = torch.tensor([[0.0, -1.0], [2.0, 1.0]], dtype=torch.float64)


def data(n: int = 12, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    X = BOUNDS[0] + (BOUNDS[1] - BOUNDS[0]) * torch.rand(n, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(3 * X[:, :1]) + 0.5 * X[:, 1:] + 0.05 * torch.randn(n, 1, generator=g, dtype=torch.float64)
    return X, Y


def log_evidence(model: SingleTaskGP, lengthscale: torch.Tensor | None = None) -> float:
    r"""Exact log marginal likelihood of the standardised targets under the model's kernel (on unit-cube
    inputs), with ``lengthscale`` in place of the model's when given, from the kernel matrix."""
    X, y = model.train_inputs[0], model.train_targets  # transformed inputs and standardised targets
    covar = model.covar_module
    ls = covar.base_kernel.lengthscale.detach() if lengthscale is None else lengthscale
    r2 = ((X.unsqueeze(-2) - X.unsqueeze(-3)) / ls).square().sum(-1)
    if isinstance(covar.base_kernel, MaternKernel):
        r = math.sqrt(5) * r2.clamp_min(1e-30).sqrt()
        corr = (1 + r + r.square() / 3) * torch.exp(-r)
    else:
        corr = torch.exp(-0.5 * r2)
    K = covar.outputscale.detach() * corr + model.likelihood.noise.detach() * torch.eye(len(y), dtype=y.dtype)
    return float(torch.distributions.MultivariateNormal(torch.zeros_like(y), K).log_prob(y))


@pytest.mark.parametrize("kernel, base", [("matern52", MaternKernel), ("rbf", RBFKernel)])
def test_only_the_lengthscale_is_trained_by_default(kernel, base):
    X, Y = data()
    model = fit_single_task_gp(X, Y, BOUNDS, kernel=kernel)
    assert isinstance(model, SingleTaskGP) and not model.training
    assert isinstance(model.covar_module.base_kernel, base) and isinstance(model.mean_module, ZeroMean)
    assert float(model.covar_module.outputscale) == pytest.approx(1.0, rel=1e-6)
    assert float(model.likelihood.noise) == pytest.approx(1e-4, rel=1e-6)
    ls = model.covar_module.base_kernel.lengthscale.detach()
    assert ls.shape == (1, 1) and abs(float(ls) - math.log(2)) > 1e-3  # moved from GPyTorch's initial value
    # the transforms: inputs to the unit cube of the bounds, targets standardised
    assert isinstance(model.input_transform, Normalize) and isinstance(model.outcome_transform, Standardize)
    torch.testing.assert_close(model.train_inputs[0], (X - BOUNDS[0]) / (BOUNDS[1] - BOUNDS[0]))
    torch.testing.assert_close(model.train_targets, ((Y - Y.mean()) / Y.std()).squeeze(-1))


@pytest.mark.parametrize("kernel", ["matern52", "rbf"])
def test_the_fitted_lengthscale_maximises_the_marginal_likelihood(kernel):
    X, Y = data()
    model = fit_single_task_gp(X, Y, BOUNDS, kernel=kernel)
    ls = model.covar_module.base_kernel.lengthscale.detach()
    best = log_evidence(model)
    for factor in (0.8, 0.95, 1.05, 1.25):  # a local maximum along the only trained direction
        assert log_evidence(model, ls * factor) < best
    assert log_evidence(model, torch.full_like(ls, math.log(2))) < best  # better than where it started


def test_ard_noise_and_outputscale_options():
    X, Y = data(n=16)
    model = fit_single_task_gp(X, Y, BOUNDS, ard=True, noise=1e-3, fit_outputscale=True, fit_noise=True)
    assert model.covar_module.base_kernel.lengthscale.shape == (1, 2)
    assert abs(float(model.covar_module.outputscale) - 1.0) > 1e-3
    assert abs(float(model.likelihood.noise) - 1e-3) > 1e-6
    fixed = fit_single_task_gp(X, Y, BOUNDS, noise=1e-3)
    assert float(fixed.likelihood.noise) == pytest.approx(1e-3, rel=1e-6)


def test_the_fit_is_deterministic_and_keeps_the_data_dtype():
    X, Y = data()
    a = fit_single_task_gp(X, Y, BOUNDS).covar_module.base_kernel.lengthscale
    b = fit_single_task_gp(X, Y, BOUNDS).covar_module.base_kernel.lengthscale
    assert torch.equal(a, b) and a.dtype == torch.float64


def test_the_default_single_task_gp_is_botorchs_fitted_on_normalised_inputs():
    X, Y = data(n=16)
    model = fit_default_single_task_gp(X, Y, BOUNDS)
    assert isinstance(model, SingleTaskGP) and not model.training
    assert isinstance(model.input_transform, Normalize) and isinstance(model.outcome_transform, Standardize)
    torch.testing.assert_close(model.train_inputs[0], (X - BOUNDS[0]) / (BOUNDS[1] - BOUNDS[0]))
    ls = model.covar_module.lengthscale.detach()
    assert ls.shape == (1, 2)  # BoTorch's default: ARD length scales
    unfitted = SingleTaskGP(X, Y, input_transform=Normalize(d=2, bounds=BOUNDS), outcome_transform=Standardize(m=1))
    assert not torch.allclose(ls, unfitted.covar_module.lengthscale.detach())
    with torch.no_grad():
        posterior = model.posterior(X)
    # a fitted GP on smooth, nearly noise-free data interpolates them closely
    assert float((posterior.mean - Y).abs().max()) < 0.2


def test_a_lower_noise_floor_lets_the_map_noise_of_deterministic_data_fall_below_botorchs_bound():
    g = torch.Generator().manual_seed(3)
    X = BOUNDS[0] + (BOUNDS[1] - BOUNDS[0]) * torch.rand(30, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(3 * X[:, :1]) + 0.5 * X[:, 1:]  # noise-free
    default = fit_default_single_task_gp(X, Y, BOUNDS)
    floored = fit_default_single_task_gp(X, Y, BOUNDS, noise_floor=1e-6)
    assert float(default.likelihood.noise) >= 1e-4 * (1 - 1e-6)  # BoTorch's bound holds (stored in float32)
    assert 1e-6 * (1 - 1e-6) <= float(floored.likelihood.noise) < 1e-4  # the data say noise-free, and may now
    prior = floored.likelihood.noise_covar.noise_prior
    assert float(prior.loc) == -4.0 and float(prior.scale) == 1.0  # BoTorch's prior unchanged
    noisy = Y + 0.3 * torch.randn(Y.shape, generator=g, dtype=torch.float64)  # noisy data: the bound is not binding
    a, b = fit_default_single_task_gp(X, noisy, BOUNDS), fit_default_single_task_gp(X, noisy, BOUNDS, noise_floor=1e-6)
    torch.testing.assert_close(a.likelihood.noise, b.likelihood.noise, rtol=1e-3, atol=0.0)


@pytest.mark.parametrize("ard", [True, False])
def test_the_gamma_length_scale_prior_keeps_an_irrelevant_input_short(ard):
    g = torch.Generator().manual_seed(4)
    X = BOUNDS[0] + (BOUNDS[1] - BOUNDS[0]) * torch.rand(25, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(3 * X[:, :1])  # the second input has no effect
    dim_scaled = fit_default_single_task_gp(X, Y, BOUNDS, ard=ard)
    gamma = fit_default_single_task_gp(X, Y, BOUNDS, ard=ard, lengthscale_prior="gamma")
    prior = gamma.covar_module.lengthscale_prior
    assert isinstance(prior, GammaPrior) and float(prior.concentration) == 3.0 and float(prior.rate) == 6.0
    ls_default, ls_gamma = (m.covar_module.lengthscale.detach().reshape(-1) for m in (dim_scaled, gamma))
    assert ls_gamma.shape == ls_default.shape == ((2,) if ard else (1,))
    if ard:  # the prior's pull: shorter where the data are silent (one shared scale follows the first input)
        assert float(ls_gamma[-1]) < 0.5 * float(ls_default[-1])
    assert bool((ls_gamma >= 2.5e-2).all())  # BoTorch's lower bound kept
    with pytest.raises(ValueError, match="lengthscale_prior must be one of"):
        fit_default_single_task_gp(X, Y, BOUNDS, lengthscale_prior="wide")


def test_optunas_length_scale_prior_is_a_map_term_of_the_fit():
    g = torch.Generator().manual_seed(4)
    X = BOUNDS[0] + (BOUNDS[1] - BOUNDS[0]) * torch.rand(25, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(3 * X[:, :1])  # the second input has no effect
    dim_scaled = fit_default_single_task_gp(X, Y, BOUNDS)
    optuna = fit_default_single_task_gp(X, Y, BOUNDS, lengthscale_prior="optuna")
    assert isinstance(optuna.covar_module.lengthscale_prior, InverseSquaredLengthscalePrior)
    ls_default, ls_optuna = (m.covar_module.lengthscale.detach().reshape(-1) for m in (dim_scaled, optuna))
    assert float(ls_optuna[-1]) < 0.5 * float(ls_default[-1])  # 0.1 l^2 nats charged where the data are silent
    assert bool((ls_optuna >= 2.5e-2).all())
    # on the silent input the fit balances the marginal likelihood's pull against Optuna's term
    # -0.1 (l^2 + l^-2): the objective's gradient there is a small part of the prior's alone
    mll = ExactMarginalLogLikelihood(optuna.likelihood, optuna)
    optuna.train()
    loss = -mll(optuna(*optuna.train_inputs), optuna.train_targets)  # per datum, priors included
    (grad,) = torch.autograd.grad(loss, optuna.covar_module.raw_lengthscale)  # raw == l (no transform)
    ell = float(ls_optuna[-1])
    prior_grad = (0.2 * ell - 0.2 / ell**3) / X.shape[0]  # d/dl of -log prior, per datum
    assert abs(float(grad.reshape(-1)[-1])) < 0.05 * prior_grad
    optuna.eval()


def test_default_likelihood_refuses_a_bad_floor():
    with pytest.raises(ValueError, match="noise_floor must be a finite number > 0, got 0"):
        default_likelihood(0.0)


def test_optunas_noise_prior_lets_a_deterministic_fit_interpolate():
    g = torch.Generator().manual_seed(5)
    X = BOUNDS[0] + (BOUNDS[1] - BOUNDS[0]) * torch.rand(20, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(3 * X[:, :1]) + 0.5 * X[:, 1:]  # smooth and noise-free
    lognormal = fit_default_single_task_gp(X, Y, BOUNDS, noise_floor=1e-6)
    optuna = fit_default_single_task_gp(X, Y, BOUNDS, noise_floor=1e-6, noise_prior="optuna")
    prior = optuna.likelihood.noise_covar.noise_prior
    assert isinstance(prior, GammaPrior) and float(prior.concentration) == 1.1 and float(prior.rate) == 30.0
    noise_lognormal, noise_optuna = (float(m.likelihood.noise.reshape(-1)[0]) for m in (lognormal, optuna))
    # log N(-4, 1) charges (log s2 + 4)^2 / 2 nats (48 at 1e-6); Gamma(1.1, 30) at most 30 s2 + 0.1 |log s2|
    assert noise_lognormal > 1e-4 and 1e-6 * (1 - 1e-6) <= noise_optuna < 1e-4  # L-BFGS-B may land at the floor
    # the fit is a stationary point of the marginal likelihood plus the Gamma log density in the
    # noise variance (raw == s2, no transform), unless it sits at the floor
    mll = ExactMarginalLogLikelihood(optuna.likelihood, optuna)
    optuna.train()
    loss = -mll(optuna(*optuna.train_inputs), optuna.train_targets)
    (grad,) = torch.autograd.grad(loss, optuna.likelihood.noise_covar.raw_noise)
    optuna.eval()
    at_floor = noise_optuna < 1.01e-6
    assert at_floor and float(grad.reshape(-1)[0]) > 0 or abs(float(grad.reshape(-1)[0])) < 1e-2
    # BoTorch's floor where none is given; a refused name names the argument and the choices
    floored = fit_default_single_task_gp(X, Y, BOUNDS, noise_prior="optuna")
    assert float(floored.likelihood.noise.reshape(-1)[0]) >= 1e-4 * (1 - 1e-6)  # the bound is stored in float32
    assert NOISE_PRIORS == ("lognormal", "optuna")
    for call in (lambda: fit_default_single_task_gp(X, Y, BOUNDS, noise_prior="flat"), lambda: default_likelihood(1e-6, "flat")):
        with pytest.raises(ValueError, match=r"noise_prior must be one of \('lognormal', 'optuna'\), got 'flat'"):
            call()


@pytest.mark.parametrize("lengthscale_prior", ["dim-scaled", "optuna"])
def test_a_matern_fit_keeps_the_prior_bound_and_start_and_is_a_stationary_point(lengthscale_prior):
    X, Y = data(n=16, seed=6)
    model = fit_default_single_task_gp(X, Y, BOUNDS, lengthscale_prior=lengthscale_prior, kernel="matern52")
    covar = model.covar_module
    assert isinstance(covar, MaternKernel) and covar.nu == 2.5 and covar.lengthscale.shape == (1, 2)
    rbf = fit_default_single_task_gp(X, Y, BOUNDS, lengthscale_prior=lengthscale_prior)
    assert type(covar.lengthscale_prior) is type(rbf.covar_module.lengthscale_prior)
    assert float(covar.raw_lengthscale_constraint.lower_bound) == pytest.approx(2.5e-2)
    # interior length scales are where the MAP objective's gradient vanishes (raw == l, no transform)
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    model.train()
    loss = -mll(model(*model.train_inputs), model.train_targets)
    (grad,) = torch.autograd.grad(loss, covar.raw_lengthscale)
    model.eval()
    interior = covar.lengthscale.detach().reshape(-1) > 2.6e-2
    assert bool(interior.any()) and float(grad.reshape(-1)[interior].abs().max()) < 1e-3
    with pytest.raises(ValueError, match="kernel must be one of .*got 'cubic'"):
        fit_default_single_task_gp(X, Y, BOUNDS, kernel="cubic")
