"""Acceptance tests for botorch_unknown_hypers.models.candidate_gp.

Every expected value is computed here, independently of the model, either with
an explicit float64 GP formula (kernel matrices written by hand, one
``torch.linalg.solve``) or with K separate BoTorch ``SingleTaskGP``s that carry
the same fixed hyperparameters.
"""

from __future__ import annotations

import math

import pytest
import torch
from botorch.acquisition import UpperConfidenceBound
from botorch.models import SingleTaskGP
from botorch.models.transforms.input import Normalize
from botorch.models.transforms.outcome import Standardize
from botorch.optim import optimize_acqf
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch.constraints import GreaterThan
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.means import ConstantMean, ZeroMean

from botorch_unknown_hypers.candidates import CandidateSpec, KernelCandidates
from botorch_unknown_hypers.models.candidate_gp import CANDIDATE_DIM, CandidateGP

KERNEL_NAMES = ["matern12", "matern32", "matern52", "rbf"]
EXACT = dict(rtol=1e-8, atol=1e-12)
DEVICES = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])


# --------------------------------------------------------------------------- #
# Independent reference computations
# --------------------------------------------------------------------------- #


def correlation(kernel: str, r: torch.Tensor) -> torch.Tensor:
    r"""Matern / RBF correlation of the scaled distance ``r`` (GPyTorch's convention)."""
    if kernel == "matern12":
        return torch.exp(-r)
    if kernel == "matern32":
        s = math.sqrt(3.0) * r
        return (1.0 + s) * torch.exp(-s)
    if kernel == "matern52":
        s = math.sqrt(5.0) * r
        return (1.0 + s + 5.0 * r**2 / 3.0) * torch.exp(-s)
    if kernel == "rbf":
        return torch.exp(-0.5 * r**2)
    raise AssertionError(kernel)


def kernel_matrix(kernel, X1, X2, lengthscale, outputscale):
    r"""``outputscale * kappa(||(x - x') / l||)`` for ``n1 x d`` and ``n2 x d`` inputs."""
    diff = (X1.unsqueeze(-2) - X2.unsqueeze(-3)) / lengthscale
    r = diff.pow(2).sum(-1).sqrt()
    return outputscale * correlation(kernel, r)


def brute_force_posterior(kernel, train_X, train_y, X, lengthscale, outputscale, noise, mean=0.0):
    r"""Exact GP posterior mean and variance (R&W Eq. 2.25-2.26) in float64.

    Args:
        train_X: ``n x d``; train_y: ``n``; X: ``m x d``; lengthscale: ``d`` or ``1``.

    Returns:
        ``(mean, variance)``, each ``m``-dim, float64.
    """
    train_X, train_y, X = train_X.double(), train_y.double().reshape(-1), X.double()
    lengthscale = torch.as_tensor(lengthscale, dtype=torch.float64).reshape(-1)
    outputscale, noise, mean = float(outputscale), float(noise), float(mean)
    K_train = kernel_matrix(kernel, train_X, train_X, lengthscale, outputscale)
    K_train = K_train + noise * torch.eye(train_X.shape[0], dtype=torch.float64)
    K_cross = kernel_matrix(kernel, train_X, X, lengthscale, outputscale)  # n x m
    alpha = torch.linalg.solve(K_train, train_y - mean)
    post_mean = mean + K_cross.transpose(0, 1) @ alpha
    reduction = torch.linalg.solve(K_train, K_cross)
    post_var = outputscale - (K_cross * reduction).sum(0)
    return post_mean, post_var


def brute_force_candidates(cands, train_X, train_y, X):
    r"""Brute force for every candidate of ``cands`` at ``m x d`` points ``X`` -> ``K x m``."""
    means, variances = [], []
    for k in range(len(cands)):
        mean_k = 0.0 if cands.mean_constant is None else cands.mean_constant[k]
        mu, var = brute_force_posterior(
            cands.kernel,
            train_X,
            train_y,
            X,
            cands.lengthscale[k],
            cands.outputscale[k],
            cands.noise[k],
            mean_k,
        )
        means.append(mu)
        variances.append(var)
    return torch.stack(means), torch.stack(variances)


def single_task_gp(cands, k, train_X, train_Y, input_transform=None, outcome_transform=None):
    r"""A BoTorch ``SingleTaskGP`` with candidate ``k``'s hyperparameters fixed."""
    dim = train_X.shape[-1]
    ard = cands.lengthscale.shape[-1] > 1
    if cands.kernel == "rbf":
        base = RBFKernel(ard_num_dims=dim if ard else None)
    else:
        base = MaternKernel(nu=cands.nu, ard_num_dims=dim if ard else None)
    covar = ScaleKernel(base)
    likelihood = GaussianLikelihood(noise_constraint=GreaterThan(1e-12))
    mean = ZeroMean() if cands.mean_constant is None else ConstantMean()
    model = SingleTaskGP(
        train_X,
        train_Y,
        likelihood=likelihood,
        covar_module=covar,
        mean_module=mean,
        input_transform=input_transform,
        outcome_transform=outcome_transform,
    )
    model.to(train_X)
    covar.base_kernel.lengthscale = cands.lengthscale[k].reshape(1, -1).to(train_X)
    covar.outputscale = cands.outputscale[k].to(train_X)
    likelihood.noise = cands.noise[k].reshape(1).to(train_X)
    if cands.mean_constant is not None:
        mean.constant = cands.mean_constant[k].to(train_X)
    return model


def single_task_gp_predictive(model, X):
    r"""Exact (non-LOVE) predictive mean and variance of a ``SingleTaskGP``, original scale."""
    model.eval()
    with torch.no_grad():
        mvn = model(model.transform_inputs(X))
        mean, variance = mvn.mean, mvn.variance
        if hasattr(model, "outcome_transform"):
            mean, variance = model.outcome_transform.untransform(
                mean.unsqueeze(-1), variance.unsqueeze(-1)
            )
            mean, variance = mean.squeeze(-1), variance.squeeze(-1)
    return mean, variance


# --------------------------------------------------------------------------- #
# Fixtures
# --------------------------------------------------------------------------- #


def make_data(n=12, d=2, seed=0, dtype=torch.float64, device="cpu", shift=0.0, scale=1.0):
    generator = torch.Generator().manual_seed(seed)
    train_X = torch.rand(n, d, generator=generator, dtype=torch.float64)
    train_Y = torch.sin(5.0 * train_X).sum(-1, keepdim=True) + 0.3 * train_X[:, :1] ** 2
    train_X = shift + scale * train_X
    return train_X.to(device=device, dtype=dtype), train_Y.to(device=device, dtype=dtype)


def make_candidates(kernel="matern52", ard=False, d=2, mean_constant=None, dtype=torch.float64):
    lengthscale = torch.tensor(
        [[0.15, 0.4], [0.3, 0.2], [0.6, 1.1], [1.2, 0.5]], dtype=torch.float64
    )[:, :d]
    if not ard:
        lengthscale = lengthscale[:, 0]
    return KernelCandidates(
        lengthscale=lengthscale.to(dtype),
        outputscale=torch.tensor([1.0, 0.5, 2.0, 3.5], dtype=dtype),
        noise=torch.tensor([1e-4, 1e-3, 1e-2, 0.2], dtype=dtype),
        kernel=kernel,
        mean_constant=None if mean_constant is None else torch.tensor(mean_constant, dtype=dtype),
    )


def sample_points(*shape, d=2, seed=1, dtype=torch.float64, device="cpu", shift=0.0, scale=1.0):
    generator = torch.Generator().manual_seed(seed)
    X = torch.rand(*shape, d, generator=generator, dtype=torch.float64)
    return (shift + scale * X).to(device=device, dtype=dtype)


# --------------------------------------------------------------------------- #
# Brute-force acceptance
# --------------------------------------------------------------------------- #


CASES = [(kernel, ard, None) for kernel in KERNEL_NAMES for ard in (False, True)] + [
    ("matern52", True, [0.5, -1.0, 2.0, 0.0]),
    ("rbf", False, [1.5, 1.5, -0.25, 3.0]),
]


@pytest.mark.parametrize("kernel, ard, mean_constant", CASES)
class TestBruteForce:
    def _setup(self, kernel, ard, mean_constant):
        train_X, train_Y = make_data()
        cands = make_candidates(kernel, ard, mean_constant=mean_constant)
        model = CandidateGP(train_X, train_Y, cands)
        return train_X, train_Y, cands, model

    def test_posterior(self, kernel, ard, mean_constant):
        train_X, train_Y, cands, model = self._setup(kernel, ard, mean_constant)
        X = sample_points(3, 5)  # batch 3, q 5
        posterior = model.posterior(X)
        assert isinstance(posterior, GPyTorchPosterior)
        assert posterior.mean.shape == (3, 4, 5, 1)
        assert posterior.variance.shape == (3, 4, 5, 1)
        for b in range(3):
            mean, var = brute_force_candidates(cands, train_X, train_Y, X[b])
            torch.testing.assert_close(posterior.mean[b, ..., 0], mean, **EXACT)
            torch.testing.assert_close(posterior.variance[b, ..., 0], var, **EXACT)

    def test_posterior_unbatched(self, kernel, ard, mean_constant):
        train_X, train_Y, cands, model = self._setup(kernel, ard, mean_constant)
        X = sample_points(6)
        posterior = model.posterior(X)
        assert posterior.mean.shape == (4, 6, 1)
        mean, var = brute_force_candidates(cands, train_X, train_Y, X)
        torch.testing.assert_close(posterior.mean[..., 0], mean, **EXACT)
        torch.testing.assert_close(posterior.variance[..., 0], var, **EXACT)
        # The joint covariance is exact too (diagonal checked above, off-diagonal here).
        covariance = posterior.distribution.covariance_matrix
        assert covariance.shape == (4, 6, 6)
        torch.testing.assert_close(covariance, covariance.transpose(-1, -2), **EXACT)

    def test_marginal_mean_variance_shared_points(self, kernel, ard, mean_constant):
        train_X, train_Y, cands, model = self._setup(kernel, ard, mean_constant)
        X = sample_points(2, 1, 7)  # batch 2, shared across candidates, q 7
        mean, var = model.marginal_mean_variance(X)
        assert mean.shape == (2, 4, 7) and var.shape == (2, 4, 7)
        for b in range(2):
            exp_mean, exp_var = brute_force_candidates(cands, train_X, train_Y, X[b, 0])
            torch.testing.assert_close(mean[b], exp_mean, **EXACT)
            torch.testing.assert_close(var[b], exp_var, **EXACT)

    def test_own_points(self, kernel, ard, mean_constant):
        train_X, train_Y, cands, model = self._setup(kernel, ard, mean_constant)
        X = sample_points(2, 4, 3, seed=5)  # batch 2, K = 4, q = 3: candidate k at X[:, k]
        mean, var = model.marginal_mean_variance(X)
        posterior = model.candidate_posterior(X)
        assert mean.shape == (2, 4, 3)
        assert posterior.mean.shape == (2, 4, 3, 1)
        for b in range(2):
            for k in range(4):
                exp_mean, exp_var = brute_force_posterior(
                    cands.kernel,
                    train_X,
                    train_Y,
                    X[b, k],
                    cands.lengthscale[k],
                    cands.outputscale[k],
                    cands.noise[k],
                    0.0 if cands.mean_constant is None else cands.mean_constant[k],
                )
                torch.testing.assert_close(mean[b, k], exp_mean, **EXACT)
                torch.testing.assert_close(var[b, k], exp_var, **EXACT)
                torch.testing.assert_close(posterior.mean[b, k, :, 0], exp_mean, **EXACT)
                torch.testing.assert_close(posterior.variance[b, k, :, 0], exp_var, **EXACT)


def test_tiny_lengthscale_and_small_noise():
    # Length scales as small as 0.004 (the balancing paper's ladder bottom) and noise 1e-4.
    train_X, train_Y = make_data(n=15)
    cands = KernelCandidates(
        lengthscale=torch.tensor([0.004, 0.05, 0.5], dtype=torch.float64),
        outputscale=1.0,
        noise=1e-4,
        kernel="matern52",
    )
    model = CandidateGP(train_X, train_Y, cands)
    X = torch.cat([sample_points(5), train_X[:3] + 1e-3])
    mean, var = model.marginal_mean_variance(X.unsqueeze(0))
    exp_mean, exp_var = brute_force_candidates(cands, train_X, train_Y, X)
    torch.testing.assert_close(mean, exp_mean, **EXACT)
    torch.testing.assert_close(var, exp_var, **EXACT)


def test_matches_single_task_gp_without_transforms():
    train_X, train_Y = make_data()
    for kernel in KERNEL_NAMES:
        for ard in (False, True):
            cands = make_candidates(kernel, ard)
            model = CandidateGP(train_X, train_Y, cands)
            X = sample_points(2, 5)
            posterior = model.posterior(X)
            for k in range(len(cands)):
                gp = single_task_gp(cands, k, train_X, train_Y)
                exp_mean, exp_var = single_task_gp_predictive(gp, X)
                torch.testing.assert_close(posterior.mean[:, k, :, 0], exp_mean, **EXACT)
                torch.testing.assert_close(posterior.variance[:, k, :, 0], exp_var, **EXACT)


@pytest.mark.parametrize("use_input_transform", [False, True])
@pytest.mark.parametrize("use_outcome_transform", [False, True])
@pytest.mark.parametrize("kernel, ard, mean_constant", [
    ("matern52", False, None),
    ("matern32", True, None),
    ("rbf", True, [0.25, -0.5, 1.0, 0.0]),
])
def test_matches_single_task_gp_with_transforms(
    kernel, ard, mean_constant, use_input_transform, use_outcome_transform
):
    # Non-unit box [-3, 5]^2 and targets shifted far from zero.
    train_X, train_Y = make_data(n=14, shift=-3.0, scale=8.0)
    train_Y = 40.0 + 6.0 * train_Y
    if not use_input_transform:
        # Length scales are on the raw input scale then; widen them to the box.
        base = make_candidates(kernel, ard, mean_constant=mean_constant)
        cands = KernelCandidates(
            base.lengthscale * 8.0, base.outputscale, base.noise, kernel, base.mean_constant
        )
    else:
        cands = make_candidates(kernel, ard, mean_constant=mean_constant)

    def transforms():
        tf_in = Normalize(d=2) if use_input_transform else None
        tf_out = Standardize(m=1) if use_outcome_transform else None
        return tf_in, tf_out

    tf_in, tf_out = transforms()
    model = CandidateGP(train_X, train_Y, cands, input_transform=tf_in, outcome_transform=tf_out)
    X = sample_points(3, 4, shift=-3.0, scale=8.0, seed=7)
    posterior = model.posterior(X)
    mean_mv, var_mv = model.marginal_mean_variance(X.unsqueeze(CANDIDATE_DIM))
    assert posterior.mean.shape == (3, 4, 4, 1)
    for k in range(len(cands)):
        tf_in, tf_out = transforms()
        gp = single_task_gp(cands, k, train_X, train_Y, tf_in, tf_out)
        exp_mean, exp_var = single_task_gp_predictive(gp, X)
        torch.testing.assert_close(posterior.mean[:, k, :, 0], exp_mean, **EXACT)
        torch.testing.assert_close(posterior.variance[:, k, :, 0], exp_var, **EXACT)
        torch.testing.assert_close(mean_mv[:, k], exp_mean, **EXACT)
        torch.testing.assert_close(var_mv[:, k], exp_var, **EXACT)
        # And the selected single-candidate view agrees as well.
        selected = model.select(k).posterior(X)
        torch.testing.assert_close(selected.mean[..., 0], exp_mean, **EXACT)
        torch.testing.assert_close(selected.variance[..., 0], exp_var, **EXACT)


def test_transforms_brute_force():
    # Normalize + Standardize by hand: the GP lives on [0, 1]^d and standardised targets.
    train_X, train_Y = make_data(n=10, shift=2.0, scale=5.0)
    train_Y = train_Y - 20.0
    cands = make_candidates("matern32", ard=True)
    model = CandidateGP(
        train_X, train_Y, cands, input_transform=Normalize(d=2), outcome_transform=Standardize(m=1)
    )
    lo, hi = train_X.min(0).values, train_X.max(0).values
    y_mean, y_std = train_Y.mean(), train_Y.std()
    X = sample_points(6, shift=2.0, scale=5.0)
    mean, var = brute_force_candidates(
        cands, (train_X - lo) / (hi - lo), (train_Y - y_mean) / y_std, (X - lo) / (hi - lo)
    )
    posterior = model.posterior(X)
    torch.testing.assert_close(posterior.mean[..., 0], y_mean + y_std * mean, **EXACT)
    torch.testing.assert_close(posterior.variance[..., 0], y_std**2 * var, **EXACT)


# --------------------------------------------------------------------------- #
# Observation noise
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("use_outcome_transform", [False, True])
def test_observation_noise(use_outcome_transform):
    train_X, train_Y = make_data()
    cands = make_candidates("matern52", ard=True)
    tf_out = Standardize(m=1) if use_outcome_transform else None
    model = CandidateGP(train_X, train_Y, cands, outcome_transform=tf_out)
    scale = train_Y.var() if use_outcome_transform else torch.tensor(1.0, dtype=torch.float64)
    X = sample_points(2, 3)
    noiseless = model.posterior(X)
    noisy = model.posterior(X, observation_noise=True)
    expected_noise = (cands.noise * scale).reshape(1, 4, 1, 1).expand_as(noisy.variance)
    torch.testing.assert_close(noisy.mean, noiseless.mean, **EXACT)
    torch.testing.assert_close(noisy.variance - noiseless.variance, expected_noise, **EXACT)
    _, var_noiseless = model.marginal_mean_variance(X.unsqueeze(-3))
    _, var_noisy = model.marginal_mean_variance(X.unsqueeze(-3), observation_noise=True)
    torch.testing.assert_close(var_noisy - var_noiseless, expected_noise[..., 0], **EXACT)
    own = model.candidate_posterior(X.unsqueeze(-3).expand(2, 4, 3, 2), observation_noise=True)
    torch.testing.assert_close(own.variance, noisy.variance, **EXACT)
    for k in range(4):
        sel = model.select(k).posterior(X, observation_noise=True)
        torch.testing.assert_close(sel.variance, noisy.variance[:, k], **EXACT)


# --------------------------------------------------------------------------- #
# Views: select / subset / add_candidates / condition_on_observations
# --------------------------------------------------------------------------- #


class TestViews:
    def _model(self, **kwargs):
        train_X, train_Y = make_data()
        cands = make_candidates("matern52", ard=True)
        return CandidateGP(train_X, train_Y, cands, **kwargs), cands

    @pytest.mark.parametrize("index", [0, 2, -1])
    def test_select(self, index):
        model, _ = self._model(outcome_transform=Standardize(m=1))
        X = sample_points(5, 3)
        selected = model.select(index)
        assert selected.num_candidates == 1
        assert selected.batch_shape == torch.Size([])
        posterior = selected.posterior(X)
        assert posterior.mean.shape == (5, 3, 1)
        full = model.posterior(X)
        torch.testing.assert_close(posterior.mean, full.mean[:, index], **EXACT)
        torch.testing.assert_close(posterior.variance, full.variance[:, index], **EXACT)
        assert selected.posterior(X[0]).mean.shape == (3, 1)

    def test_select_with_botorch_ucb_and_optimize_acqf(self):
        model, _ = self._model()
        selected = model.select(1)
        ucb = UpperConfidenceBound(selected, beta=4.0)
        X = sample_points(7, 1)
        values = ucb(X)
        assert values.shape == (7,)
        post = model.posterior(X)
        expected = post.mean[:, 1, 0, 0] + 2.0 * post.variance[:, 1, 0, 0].sqrt()
        torch.testing.assert_close(values, expected, **EXACT)
        bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
        torch.manual_seed(0)
        x_best, value = optimize_acqf(ucb, bounds, q=1, num_restarts=2, raw_samples=32)
        assert x_best.shape == (1, 2)
        assert (x_best >= 0).all() and (x_best <= 1).all()
        torch.testing.assert_close(value.reshape(()), ucb(x_best).reshape(()), **EXACT)

    def test_select_invalid(self):
        model, _ = self._model()
        for index in (4, -5):
            with pytest.raises(ValueError, match="index"):
                model.select(index)

    def test_subset_reorders(self):
        model, cands = self._model(outcome_transform=Standardize(m=1))
        sub = model.subset([2, 0])
        assert sub.num_candidates == 2
        assert sub.labels() == [cands.labels()[2], cands.labels()[0]]
        X = sample_points(2, 4)
        full, part = model.posterior(X), sub.posterior(X)
        torch.testing.assert_close(part.mean[:, 0], full.mean[:, 2], **EXACT)
        torch.testing.assert_close(part.mean[:, 1], full.mean[:, 0], **EXACT)
        torch.testing.assert_close(part.variance[:, 0], full.variance[:, 2], **EXACT)
        torch.testing.assert_close(part.variance[:, 1], full.variance[:, 0], **EXACT)

    def test_add_candidates(self):
        model, cands = self._model(input_transform=Normalize(d=2), outcome_transform=Standardize(m=1))
        extra = KernelCandidates(
            lengthscale=torch.tensor([[0.05, 0.08], [2.0, 3.0]], dtype=torch.float64),
            outputscale=torch.tensor([0.7, 1.3], dtype=torch.float64),
            noise=torch.tensor([1e-4, 0.05], dtype=torch.float64),
            kernel="matern52",
        )
        bigger = model.add_candidates(extra)
        assert bigger.num_candidates == 6
        assert bigger.labels() == cands.labels() + extra.labels()
        X = sample_points(3, 4)
        before, after = model.posterior(X), bigger.posterior(X)
        torch.testing.assert_close(after.mean[:, :4], before.mean, **EXACT)
        torch.testing.assert_close(after.variance[:, :4], before.variance, **EXACT)
        alone = CandidateGP(
            model.raw_train_X,
            model.raw_train_Y,
            extra,
            input_transform=Normalize(d=2),
            outcome_transform=Standardize(m=1),
        ).posterior(X)
        torch.testing.assert_close(after.mean[:, 4:], alone.mean, **EXACT)
        torch.testing.assert_close(after.variance[:, 4:], alone.variance, **EXACT)
        # The original model is unchanged.
        assert model.num_candidates == 4

    @pytest.mark.parametrize("use_outcome_transform", [False, True])
    def test_condition_on_observations(self, use_outcome_transform):
        train_X, train_Y = make_data(n=16)
        cands = make_candidates("matern32", ard=False)

        def tf():
            return Standardize(m=1) if use_outcome_transform else None

        model = CandidateGP(train_X[:10], train_Y[:10], cands, outcome_transform=tf())
        X = sample_points(2, 5)
        before = model.posterior(X)
        conditioned = model.condition_on_observations(train_X[10:], train_Y[10:])
        reference = CandidateGP(train_X, train_Y, cands, outcome_transform=tf())
        assert conditioned.raw_train_X.shape == (16, 2)
        got, expected = conditioned.posterior(X), reference.posterior(X)
        torch.testing.assert_close(got.mean, expected.mean, **EXACT)
        torch.testing.assert_close(got.variance, expected.variance, **EXACT)
        exp_mean, exp_var = brute_force_candidates(cands, train_X, train_Y, X[0])
        if not use_outcome_transform:
            torch.testing.assert_close(got.mean[0, ..., 0], exp_mean, **EXACT)
            torch.testing.assert_close(got.variance[0, ..., 0], exp_var, **EXACT)
        # The original model still predicts from its 10 points.
        torch.testing.assert_close(model.posterior(X).mean, before.mean, **EXACT)

    def test_condition_on_observations_selected_view(self):
        train_X, train_Y = make_data(n=14)
        model = CandidateGP(train_X[:10], train_Y[:10], make_candidates()).select(1)
        conditioned = model.condition_on_observations(train_X[10:], train_Y[10:].squeeze(-1))
        X = sample_points(4)
        assert conditioned.posterior(X).mean.shape == (4, 1)
        reference = CandidateGP(train_X, train_Y, make_candidates()).posterior(X)
        torch.testing.assert_close(conditioned.posterior(X).mean, reference.mean[1], **EXACT)

    def test_labels_and_attributes(self):
        model, cands = self._model()
        assert model.labels() == cands.labels()
        assert model.num_outputs == 1
        assert model.batch_shape == torch.Size([4])
        assert model.raw_train_Y.shape == (12, 1)

    def test_one_dimensional_targets_accepted(self):
        train_X, train_Y = make_data()
        a = CandidateGP(train_X, train_Y.squeeze(-1), make_candidates())
        b = CandidateGP(train_X, train_Y, make_candidates())
        X = sample_points(3)
        torch.testing.assert_close(a.posterior(X).mean, b.posterior(X).mean, **EXACT)


# --------------------------------------------------------------------------- #
# Bad input
# --------------------------------------------------------------------------- #


class _EmptySpec(CandidateSpec):
    r"""A CandidateSpec with no candidates (``KernelCandidates`` refuses to be empty)."""

    def to(self, device=None, dtype=None):
        return self

    def __len__(self):
        return 0

    def subset(self, indices):
        return self

    def cat(self, other):
        return other

    def labels(self):
        return []

    def build(self, dim, constraints=None):
        raise AssertionError("build must not be reached for an empty spec")

    def to_dict(self):
        return {}


class TestBadInput:
    def test_nonfinite_targets(self):
        train_X, train_Y = make_data()
        for bad in (math.nan, math.inf, -math.inf):
            Y = train_Y.clone()
            Y[3, 0] = bad
            with pytest.raises(ValueError, match="train_Y"):
                CandidateGP(train_X, Y, make_candidates())

    def test_nonfinite_inputs(self):
        train_X, train_Y = make_data()
        for bad in (math.nan, math.inf):
            X = train_X.clone()
            X[1, 1] = bad
            with pytest.raises(ValueError, match="train_X"):
                CandidateGP(X, train_Y, make_candidates())

    def test_mismatched_rows(self):
        train_X, train_Y = make_data()
        with pytest.raises(ValueError, match="rows"):
            CandidateGP(train_X, train_Y[:-1], make_candidates())

    def test_two_column_targets(self):
        train_X, train_Y = make_data()
        with pytest.raises(ValueError, match="train_Y"):
            CandidateGP(train_X, train_Y.repeat(1, 2), make_candidates())

    def test_bad_train_shapes(self):
        train_X, train_Y = make_data()
        with pytest.raises(ValueError, match="train_X"):
            CandidateGP(train_X.unsqueeze(0), train_Y, make_candidates())
        with pytest.raises(ValueError, match="empty"):
            CandidateGP(train_X[:0], train_Y[:0], make_candidates())
        with pytest.raises(ValueError, match="dtype"):
            CandidateGP(train_X, train_Y.float(), make_candidates())
        with pytest.raises(ValueError, match="tensors"):
            CandidateGP(train_X.tolist(), train_Y, make_candidates())

    def test_posterior_wrong_dim(self):
        train_X, train_Y = make_data()
        model = CandidateGP(train_X, train_Y, make_candidates())
        with pytest.raises(ValueError, match="d = 2"):
            model.posterior(torch.rand(4, 3, dtype=torch.float64))
        with pytest.raises(ValueError, match="d = 2"):
            model.marginal_mean_variance(torch.rand(1, 4, 3, dtype=torch.float64))
        with pytest.raises(ValueError, match="d = 2"):
            model.candidate_posterior(torch.rand(4, 4, 1, dtype=torch.float64))

    def test_wrong_candidate_dimension(self):
        train_X, train_Y = make_data()
        model = CandidateGP(train_X, train_Y, make_candidates())
        with pytest.raises(ValueError, match="K in"):
            model.marginal_mean_variance(torch.rand(3, 5, 2, dtype=torch.float64))
        with pytest.raises(ValueError, match="K in"):
            model.candidate_posterior(torch.rand(2, 5, 2, dtype=torch.float64))
        with pytest.raises(ValueError, match="K in"):
            model.marginal_mean_variance(torch.rand(5, 2, dtype=torch.float64))

    def test_posterior_options(self):
        train_X, train_Y = make_data()
        model = CandidateGP(train_X, train_Y, make_candidates())
        X = sample_points(3)
        with pytest.raises(ValueError, match="output_indices"):
            model.posterior(X, output_indices=[1])
        with pytest.raises(ValueError, match="observation_noise"):
            model.posterior(X, observation_noise=torch.ones(3, 1, dtype=torch.float64))
        assert model.posterior(X, output_indices=[0]).mean.shape == (4, 3, 1)

    def test_empty_candidate_set(self):
        train_X, train_Y = make_data()
        with pytest.raises(ValueError, match="empty"):
            KernelCandidates.from_lengthscales(torch.empty(0, dtype=torch.float64))
        with pytest.raises(ValueError, match="empty"):
            CandidateGP(train_X, train_Y, _EmptySpec())

    def test_not_a_candidate_spec(self):
        train_X, train_Y = make_data()
        with pytest.raises(ValueError, match="CandidateSpec"):
            CandidateGP(train_X, train_Y, [0.1, 0.2])

    @pytest.mark.parametrize(
        "kwargs, match",
        [
            (dict(lengthscale=torch.tensor([0.5, 0.0])), "lengthscale"),
            (dict(lengthscale=torch.tensor([0.5, -1.0])), "lengthscale"),
            (dict(noise=torch.tensor([1e-4, 0.0])), "noise"),
            (dict(noise=-1e-3), "noise"),
            (dict(outputscale=0.0), "outputscale"),
        ],
    )
    def test_nonpositive_hyperparameters(self, kwargs, match):
        full = dict(lengthscale=torch.tensor([0.5, 0.2]), outputscale=1.0, noise=1e-4)
        full.update(kwargs)
        with pytest.raises(ValueError, match=match):
            KernelCandidates(**full)

    def test_ard_dim_mismatch(self):
        train_X, train_Y = make_data(d=3)
        with pytest.raises(ValueError, match="lengthscale"):
            CandidateGP(train_X, train_Y, make_candidates(ard=True, d=2))

    def test_squeeze_needs_single_candidate(self):
        train_X, train_Y = make_data()
        with pytest.raises(ValueError, match="squeeze_candidate_dim"):
            CandidateGP(train_X, train_Y, make_candidates(), squeeze_candidate_dim=True)


# --------------------------------------------------------------------------- #
# dtype and device
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kernel", ["matern12", "rbf"])
def test_float32(kernel, device):
    train_X, train_Y = make_data(dtype=torch.float32, device=device)
    # Candidates given in float64 on the CPU follow the data's dtype and device.
    cands = make_candidates(kernel, ard=True)
    model = CandidateGP(train_X, train_Y, cands)
    assert model.covar_module.outputscale.dtype == torch.float32
    assert model.covar_module.outputscale.device.type == device.type
    X = sample_points(2, 5, dtype=torch.float32, device=device)
    posterior = model.posterior(X)
    assert posterior.mean.dtype == torch.float32
    assert posterior.mean.device.type == device.type
    mean, var = model.marginal_mean_variance(X.unsqueeze(-3))
    assert mean.dtype == torch.float32 and mean.device.type == device.type
    for b in range(2):
        exp_mean, exp_var = brute_force_candidates(cands, train_X.cpu(), train_Y.cpu(), X[b].cpu())
        tol = dict(rtol=2e-3, atol=2e-3)
        torch.testing.assert_close(posterior.mean[b, ..., 0].cpu().double(), exp_mean, **tol)
        torch.testing.assert_close(posterior.variance[b, ..., 0].cpu().double(), exp_var, **tol)
        torch.testing.assert_close(mean[b].cpu().double(), exp_mean, **tol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_views_follow_data(dtype, device):
    train_X, train_Y = make_data(dtype=dtype, device=device)
    model = CandidateGP(train_X, train_Y, make_candidates(), outcome_transform=Standardize(m=1))
    X = sample_points(3, dtype=dtype, device=device)
    for view in (model.select(0), model.subset([3, 1]), model.add_candidates(make_candidates())):
        posterior = view.posterior(X)
        assert posterior.mean.dtype == dtype
        assert posterior.mean.device.type == device.type


def test_log_marginal_likelihood_matches_brute_force():
    import numpy as np

    gen = torch.Generator().manual_seed(0)
    X = torch.rand(15, 2, generator=gen, dtype=torch.float64) * 4
    Y = torch.randn(15, 1, generator=gen, dtype=torch.float64)
    bounds = torch.tensor([[0.0, 0.0], [4.0, 4.0]], dtype=torch.float64)
    spec = [(0.2, 1.0, 1e-2, 0.0), (0.5, 2.0, 1e-1, 0.5)]
    cands = KernelCandidates(
        lengthscale=torch.tensor([[s[0]] for s in spec], dtype=torch.float64),
        outputscale=torch.tensor([s[1] for s in spec], dtype=torch.float64),
        noise=torch.tensor([s[2] for s in spec], dtype=torch.float64),
        mean_constant=torch.tensor([s[3] for s in spec], dtype=torch.float64),
    )
    model = CandidateGP(X, Y, cands, input_transform=Normalize(2, bounds=bounds))
    got = model.log_marginal_likelihood()
    Z, y = (X / 4).numpy(), Y[:, 0].numpy()
    for k, (ls, scale, noise, mean) in enumerate(spec):
        s = math.sqrt(5) * np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1)) / ls
        K = scale * (1 + s + s * s / 3) * np.exp(-s) + noise * np.eye(15)
        r = y - mean
        ref = -0.5 * r @ np.linalg.solve(K, r) - 0.5 * np.linalg.slogdet(K)[1] - 7.5 * math.log(2 * math.pi)
        assert float(got[k]) == pytest.approx(ref, rel=1e-10)


def _unit_square_case(seed, n, lengthscales):
    r"""Data on the unit square, Matern-5/2 candidates and a builder of their model (``Normalize``
    with the unit bounds, ``Standardize``; optional cached factors); the generator goes on."""
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(5 * X).sum(-1, keepdim=True)
    spec = KernelCandidates.from_lengthscales(torch.tensor(lengthscales, dtype=torch.float64), noise=1e-4)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)

    def build(factor=None):
        return CandidateGP(X, Y, spec, input_transform=Normalize(2, bounds=bounds), outcome_transform=Standardize(m=1), factor=factor)

    return g, X, Y, spec, bounds, build


def test_pending_points_condition_the_variance_and_freeze_the_mean():
    # brute force: each candidate refitted with the pending points added at its posterior mean
    g, X, Y, spec, bounds, build = _unit_square_case(3, 30, [0.3, 0.1])
    model = build()
    P = torch.rand(3, 2, generator=g, dtype=torch.float64)
    cond = model.condition_on_pending(P)
    Z = torch.rand(6, 1, 1, 2, generator=g, dtype=torch.float64)
    mean, var = cond.marginal_mean_variance(Z)
    mean0, _ = model.marginal_mean_variance(Z)
    torch.testing.assert_close(mean, mean0, rtol=1e-10, atol=1e-10)
    tf = model.outcome_transform
    for u in range(2):
        fantasy = model.select(u).posterior(P).mean.detach()
        targets = (torch.cat([Y, fantasy]) - tf.means) / tf.stdvs  # the model's standardisation
        ref = CandidateGP(torch.cat([X, P]), targets, spec.subset([u]), input_transform=Normalize(2, bounds=bounds))
        _, ref_var = ref.marginal_mean_variance(Z)
        torch.testing.assert_close(var[..., u, :], ref_var[..., 0, :] * tf.stdvs.squeeze() ** 2, rtol=1e-8, atol=1e-12)
    at_pending = cond.marginal_mean_variance(P.unsqueeze(-2).unsqueeze(-3))[1]
    assert float(at_pending.max()) < 2e-4 * float(tf.stdvs) ** 2  # down to the noise level
    assert cond.select(1).X_pending is not None and cond.subset([1]).X_pending is not None
    assert model.condition_on_pending(None).X_pending is None
    with pytest.raises(ValueError, match="X_pending must be p x 2"):
        model.condition_on_pending(torch.rand(2, 3, dtype=torch.float64))


def test_a_pending_view_of_a_cached_model_matches_a_rebuilt_one_and_leaves_the_model_alone():
    from botorch_unknown_hypers.models.factor_cache import FactorCache

    g, X, _, spec, _, build = _unit_square_case(4, 25, [0.4, 0.15])
    cached, plain = build(FactorCache().factor(spec, X)), build()  # unit square: X is the transformed input
    P, Z = torch.rand(3, 2, generator=g, dtype=torch.float64), torch.rand(5, 1, 1, 2, generator=g, dtype=torch.float64)
    before = cached.marginal_mean_variance(Z)
    view = cached.condition_on_pending(P)
    for a, b in zip(view.marginal_mean_variance(Z), plain.condition_on_pending(P).marginal_mean_variance(Z)):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-12)
    # the view's pending points replace, not add to, earlier ones; the model keeps none
    for a, b in zip(view.condition_on_pending(P[:1]).marginal_mean_variance(Z), cached.condition_on_pending(P[:1]).marginal_mean_variance(Z)):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert view.X_pending is not None and cached.X_pending is None
    view.mean_module = ConstantMean()  # a module set on the view stays on the view
    assert cached.mean_module is not view.mean_module
    for a, b in zip(cached.marginal_mean_variance(Z), before):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_fixed_point_moments_only_at_the_cached_points_and_without_pending_points():
    from botorch_unknown_hypers.models.factor_cache import FactorCache

    g, X, _, spec, _, build = _unit_square_case(6, 40, [0.4, 0.15])
    R = torch.rand(30, 2, generator=g, dtype=torch.float64)
    cache = FactorCache()
    cache.set_points(R)  # unit square: raw and transformed points coincide
    model = build(cache.factor(spec, X))
    mean, var = model.fixed_point_moments(R)
    ref_mean, ref_var = model.marginal_mean_variance(R.expand(1, 1, -1, -1))
    torch.testing.assert_close(mean, ref_mean[0], rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(var, ref_var[0], rtol=1e-10, atol=1e-12)
    assert model.fixed_point_moments(R[:29]) is None  # other points: the caller computes them
    assert model.fixed_point_moments(R + 1e-9) is None
    assert model.condition_on_pending(R[:2]).fixed_point_moments(R) is None  # pending points change sigma
    assert build(FactorCache().factor(spec, X)).fixed_point_moments(R) is None  # no points cached
    assert build().fixed_point_moments(R) is None  # no factors



def test_fixed_raw_points_named_by_the_cache_are_recognised_by_identity_with_no_read(monkeypatch):
    r"""Raw points named with the fixed points (``set_points(points, raw=R)``) give the moments of
    the comparison by value, bit for bit, with no host read; an equal copy of them is still
    compared by value (one read), and pending points still turn the fast path off."""
    from botorch_unknown_hypers.models.factor_cache import FactorCache
    from tests.host_reads import profiled_reads, record_reads

    g, X, _, spec, _, build = _unit_square_case(6, 40, [0.4, 0.15])
    R = torch.rand(30, 2, generator=g, dtype=torch.float64)
    by_value, named = FactorCache(), FactorCache()
    by_value.set_points(R)
    named.set_points(R, raw=R)
    model, plain = build(named.factor(spec, X)), build(by_value.factor(spec, X))
    reads = record_reads(monkeypatch)
    assert profiled_reads(lambda: model.fixed_point_moments(R)) == []
    monkeypatch.undo()
    assert reads == []
    for a, b in zip(model.fixed_point_moments(R), plain.fixed_point_moments(R)):
        assert torch.equal(a, b)
    assert profiled_reads(lambda: model.fixed_point_moments(R.clone())) == ["aten::equal"]
    assert model.subset([1]).fixed_point_moments(R) is not None  # a view keeps the name
    assert model.condition_on_pending(R[:2]).fixed_point_moments(R) is None
    with pytest.raises(ValueError, match="points must be finite"):  # a refused call changes nothing
        named.set_points(torch.full_like(R, float("nan")), raw=R.clone())
    assert named.factor(spec, X).raw_points is R


def test_select_without_factors_is_the_same_candidate_on_gpytorchs_lazy_predictive():
    from linear_operator.operators import LinearOperator

    from botorch_unknown_hypers.models.factor_cache import FactorCache

    g, X, _, spec, _, build = _unit_square_case(7, 20, [0.4, 0.15])
    cached = build(FactorCache().factor(spec, X))
    Z = torch.cat([X[:2], torch.rand(3, 2, generator=g, dtype=torch.float64)])  # two observed points among them
    for u in range(2):
        plain, factored = cached.select(u, factors=False), cached.select(u)
        assert plain.factor is None and factored.factor is not None
        a, b = plain.posterior(Z), factored.posterior(Z)
        torch.testing.assert_close(a.mean, b.mean, rtol=1e-9, atol=1e-12)
        torch.testing.assert_close(a.covariance_matrix, b.covariance_matrix, rtol=1e-7, atol=1e-10)
        # the joint covariance at an observed point and at a copy of it stays lazy (no eager Cholesky)
        twice = plain.posterior(torch.cat([X[:1], X[:1]]))
        assert isinstance(twice.distribution.lazy_covariance_matrix, LinearOperator)
    with pytest.raises(ValueError, match="factors=False needs a model without pending points"):
        cached.condition_on_pending(Z[:1]).select(0, factors=False)


def test_marginals_untransform_as_botorchs_standardize_bit_for_bit():
    from torch.profiler import profile

    train_X, train_Y = make_data(n=10, shift=2.0, scale=5.0)
    cands = make_candidates("matern32", ard=True)
    model = CandidateGP(train_X, train_Y - 20.0, cands, input_transform=Normalize(d=2), outcome_transform=Standardize(m=1))
    X = sample_points(6, shift=2.0, scale=5.0).unsqueeze(0).expand(model.num_candidates, -1, -1)  # K x q x d
    mean, var = model.marginal_mean_variance(X)
    Xt = model.transform_inputs(X)
    raw_mean, raw_var = model.predictive.marginals(model, Xt, False)
    want_mean, want_var = model.outcome_transform.untransform(raw_mean.unsqueeze(-1), raw_var.unsqueeze(-1))
    assert torch.equal(mean, want_mean.squeeze(-1)) and torch.equal(var, want_var.squeeze(-1))
    with profile() as prof:
        model._untransformed(raw_mean, raw_var, Xt)
    assert not any(e.key in ("aten::is_nonzero", "aten::_local_scalar_dense") for e in prof.key_averages())


def _moments(model, X):
    posterior = model.posterior(X)
    return posterior.mean, posterior.variance


def test_prebuilt_modules_are_shared_and_give_the_same_posterior(monkeypatch):
    train_X, train_Y = make_data()
    cands = make_candidates("matern52", ard=True)
    modules = cands.build(dim=2)
    built = []
    monkeypatch.setattr(KernelCandidates, "build", lambda self, dim, *rest: built.append(dim) or CandidateSpec.build(self, dim))
    model = CandidateGP(train_X, train_Y, cands, modules=modules, outcome_transform=Standardize(m=1))
    assert built == [] and model.covar_module is modules[1] and model.likelihood is modules[2]
    monkeypatch.undo()
    fresh = CandidateGP(train_X, train_Y, cands, outcome_transform=Standardize(m=1))
    X = sample_points(5, 3)
    for a, b in zip(_moments(model, X), _moments(fresh, X)):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_a_subset_shares_the_models_constraints_and_builds_its_modules_without_a_read(monkeypatch):
    from gpytorch.constraints import Interval

    from botorch_unknown_hypers.shared_constraints import module_constraints

    train_X, train_Y = make_data()
    cands = make_candidates("matern52", ard=True)
    model = CandidateGP(train_X, train_Y, cands, outcome_transform=Standardize(m=1))
    parent = module_constraints(model.covar_module, model.likelihood)
    assert parent is not None
    built, original = [], Interval.__init__
    monkeypatch.setattr(Interval, "__init__", lambda self, *a, **k: built.append(type(self).__name__) or original(self, *a, **k))
    sub = model.subset([3, 1])
    monkeypatch.undo()
    assert built == []  # no GPyTorch constraint built (each checks its bounds in one host read)
    mine = module_constraints(sub.covar_module, sub.likelihood)
    assert mine.positive is parent.positive and mine.noise is parent.noise
    fresh = CandidateGP(train_X, train_Y, cands.subset([3, 1]), outcome_transform=Standardize(m=1))
    assert module_constraints(fresh.covar_module, fresh.likelihood).positive is not parent.positive
    X = sample_points(5, 3)
    for a, b in zip(_moments(sub, X), _moments(fresh, X)):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_prebuilt_modules_for_another_number_of_candidates_are_refused():
    train_X, train_Y = make_data()
    cands = make_candidates("matern52", ard=True)
    with pytest.raises(ValueError, match=r"modules must hold 4 candidates, got a kernel of batch shape \(2,\)"):
        CandidateGP(train_X, train_Y, cands, modules=cands.subset([0, 1]).build(dim=2))


def test_views_of_the_same_candidates_share_the_modules_and_build_none(monkeypatch):
    train_X, train_Y = make_data()
    one = CandidateGP(train_X, train_Y, make_candidates("matern52", ard=True).subset([2]))
    wide = CandidateGP(train_X, train_Y, make_candidates("matern52", ard=True))
    X, P = sample_points(5, 3), sample_points(2, d=2, seed=3)
    expected = [_moments(m, X) for m in (one.select(0), one.condition_on_pending(P), wide.select(2))]
    built = []
    original = KernelCandidates.build
    monkeypatch.setattr(KernelCandidates, "build", lambda self, dim, *rest: built.append(len(self)) or original(self, dim, *rest))
    views = [one.select(0)]
    assert built == []
    views.append(one.condition_on_pending(P))
    assert built == [1]  # the factorisation of a model without factors; the view builds none
    views.append(wide.select(2))
    assert built == [1, 1]  # the view of one of four candidates builds its own
    assert views[0].covar_module is one.covar_module and views[1].likelihood is one.likelihood
    assert views[2].covar_module is not wide.covar_module
    for view, moments in zip(views, expected):
        for a, b in zip(_moments(view, X), moments):
            torch.testing.assert_close(a, b, rtol=0, atol=0)
