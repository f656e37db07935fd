import math

import pytest
import torch
from botorch.models import SingleTaskGP
from gpytorch.mlls import ExactMarginalLogLikelihood

from botorch_unknown_hypers.models.fitted import fit_default_single_task_gp, fit_single_task_gp
from botorch_unknown_hypers.models.laplace import laplace_hyperposterior

BOUNDS = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)


def _data(n, seed=0, noise=0.01):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(3 * X).sum(-1, keepdim=True) + noise * torch.randn(n, 1, generator=g, dtype=torch.float64)
    return X, Y


def _log_joint(model: SingleTaskGP, theta: torch.Tensor) -> float:
    r"""The log joint density at ``theta``, set through GPyTorch's own setters (no functional call)."""
    d = theta.shape[-1] - 1
    with torch.no_grad():
        model.covar_module.lengthscale = theta[:d].exp().reshape(1, d)
        model.likelihood.noise = theta[d:].exp()
        model.train()
        mll = ExactMarginalLogLikelihood(model.likelihood, model)
        out = model(model.train_inputs[0])
        return float(mll(out, model.train_targets)) * model.train_targets.shape[-1]


def _fd_hessian(model, theta, h=1e-3):
    p = theta.shape[-1]
    H = torch.zeros(p, p, dtype=theta.dtype)
    E = torch.eye(p, dtype=theta.dtype) * h
    for i in range(p):
        for j in range(p):
            H[i, j] = (
                _log_joint(model, theta + E[i] + E[j]) - _log_joint(model, theta + E[i] - E[j])
                - _log_joint(model, theta - E[i] + E[j]) + _log_joint(model, theta - E[i] - E[j])
            ) / (4 * h * h)
    return -H


def test_precision_is_the_finite_difference_curvature_of_the_log_joint():
    model = fit_default_single_task_gp(*_data(30), BOUNDS)
    lap = laplace_hyperposterior(model)
    precision = torch.cholesky_inverse(lap.scale_tril)
    reference = _fd_hessian(model, lap.mode.clone())
    assert torch.linalg.eigvalsh(reference).min() > 0  # concave here: the projection changes nothing
    torch.testing.assert_close(precision, reference, rtol=1e-3, atol=1e-3)


def test_mode_is_the_fit_and_the_model_is_left_as_it_was():
    model = fit_default_single_task_gp(*_data(15), BOUNDS)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    lap = laplace_hyperposterior(model)
    torch.testing.assert_close(lap.mode[:2], model.covar_module.lengthscale.detach().reshape(-1).log())
    torch.testing.assert_close(lap.mode[2:], model.likelihood.noise.detach().reshape(-1).log())
    assert not model.training
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_the_approximation_sharpens_as_data_accrue():
    spreads = []
    for n in (10, 40, 160):
        lap = laplace_hyperposterior(fit_default_single_task_gp(*_data(n), BOUNDS))
        spreads.append((lap.scale_tril @ lap.scale_tril.T).diagonal()[:2].sqrt().max().item())
    assert spreads[0] > spreads[1] > spreads[2]


def test_never_wider_than_the_prior():
    # three points: the likelihood's curvature is not positive definite, its projection keeps
    # the covariance inside the prior's (LogNormal scales sqrt(3) on log l, 1 on log noise)
    for seed in range(4):
        lap = laplace_hyperposterior(fit_default_single_task_gp(*_data(3, seed), BOUNDS))
        cov = lap.scale_tril @ lap.scale_tril.T
        prior = torch.diag(torch.tensor([3.0, 3.0, 1.0], dtype=torch.float64))
        assert torch.linalg.eigvalsh(prior - cov).min() > -1e-9


def test_draws_are_seeded_clipped_and_rbf_candidates():
    model = fit_default_single_task_gp(*_data(8), BOUNDS, noise_floor=1e-6)
    lap = laplace_hyperposterior(model)
    a = lap.candidates(64, torch.Generator().manual_seed(3))
    b = lap.candidates(64, torch.Generator().manual_seed(3))
    assert len(a) == 64 and a.kernel == "rbf" and a.mean_constant is None
    assert torch.equal(a.lengthscale, b.lengthscale) and torch.equal(a.noise, b.noise)
    assert a.lengthscale.shape == (64, 2)
    assert a.lengthscale.min() >= 0.025 * (1 - 1e-12) and a.noise.min() >= 1e-6 * (1 - 1e-12)
    torch.testing.assert_close(a.outputscale, torch.ones(64, dtype=torch.float64))
    theta = lap.sample(4000, torch.Generator().manual_seed(4))
    unclipped = (theta > lap.lower).all(-1)
    assert unclipped.float().mean() > 0.5
    # the draws' moments are the approximation's (away from the bounds: compare the means loosely)
    cov = lap.scale_tril @ lap.scale_tril.T
    se = (cov.diagonal() / 4000).sqrt()
    assert ((theta.mean(0) - lap.mode).abs() <= 4 * se + (theta == lap.lower).float().mean(0) * 10).all()


def test_refuses_a_model_of_another_form_naming_it():
    model = fit_single_task_gp(*_data(8), BOUNDS)  # a scaled Matern kernel without priors
    with pytest.raises(ValueError, match="model must be a SingleTaskGP with an RBFKernel"):
        laplace_hyperposterior(model)
    with pytest.raises(ValueError, match="num"):
        laplace_hyperposterior(fit_default_single_task_gp(*_data(8), BOUNDS)).sample(0, torch.Generator())


def test_float32_model():
    X, Y = _data(12)
    model = fit_default_single_task_gp(X.float(), Y.float(), BOUNDS.float())
    lap = laplace_hyperposterior(model)
    assert lap.mode.dtype == torch.float32 and torch.isfinite(lap.scale_tril).all()
    assert math.isfinite(float(lap.candidates(4, torch.Generator().manual_seed(0)).noise.sum()))
