"""Acceptance tests for botorch_unknown_hypers.models.tabular.

Every expected value is computed here, independently of the model: posteriors
with the textbook formula per prior (one ``torch.linalg.solve`` each, float64),
evidences with ``torch.distributions.MultivariateNormal``, and samples against
the exact posterior moments with tolerances derived from the sample size. The
priors themselves are tested in test_tabular_priors.py, the paper's kernels and
tasks in tests/problems/test_prior_tasks.py.
"""

from __future__ import annotations

import math

import pytest
import torch
from botorch.posteriors.gpytorch import GPyTorchPosterior

from botorch_unknown_hypers.models import TabularPriorGP, TabularPriors
from botorch_unknown_hypers.problems.prior_tasks import hill_task_priors, kernel_task_priors, lengthscale_task_priors
from tests.models.tabular_helpers import NOISE, small_priors

DEVICES = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
DTYPES = [torch.float32, torch.float64]
TOLERANCE = {
    torch.float64: {"rtol": 1e-8, "atol": 1e-8},
    torch.float32: {"rtol": 1e-3, "atol": 1e-3},
}
# Repeated arms on purpose (2, 5 twice; arm 0 is where the linear prior has zero variance).
OBSERVED_ARMS = [2, 5, 5, 9, 2, 11, 0]
OBSERVED_Y = [0.3, -0.2, -0.1, 0.8, 0.25, -0.5, 0.05]


# --------------------------------------------------------------------------- #
# Fixtures and independent references
# --------------------------------------------------------------------------- #


def observed(dtype=torch.float64, device="cpu"):
    return (
        torch.tensor(OBSERVED_ARMS, dtype=torch.long, device=device),
        torch.tensor(OBSERVED_Y, dtype=dtype, device=device),
    )


def textbook_posterior(priors: TabularPriors, indices, y):
    r"""Per prior, in float64: mean ``m + C[:, S] (C[S, S] + s^2 I)^{-1} (y - m[S])`` and the joint covariance.

    Returns:
        ``(K x N means, K x N x N covariances)``, float64.
    """
    means, covs = [], []
    y = y.double()
    for k in range(len(priors)):
        m = priors.means[k].double()
        C = priors.covariances[k].double()
        if len(indices) == 0:
            means.append(m)
            covs.append(C)
            continue
        gram = C[indices][:, indices] + priors.noise * torch.eye(len(indices), dtype=torch.float64, device=C.device)
        cross = C[:, indices]  # N x n
        means.append(m + cross @ torch.linalg.solve(gram, y - m[indices]))
        covs.append(C - cross @ torch.linalg.solve(gram, cross.T))
    return torch.stack(means), torch.stack(covs)


def textbook_log_evidence(priors: TabularPriors, indices, y):
    r"""``log N(y; m[S], C[S, S] + s^2 I)`` per prior, with torch's MVN, float64."""
    values = []
    for k in range(len(priors)):
        m = priors.means[k].double()[indices]
        C = priors.covariances[k].double()[indices][:, indices]
        C = C + priors.noise * torch.eye(len(indices), dtype=torch.float64, device=C.device)
        values.append(torch.distributions.MultivariateNormal(m, C).log_prob(y.double()))
    return torch.stack(values)


def draw_function(priors: TabularPriors, prior: int, seed: int):
    r"""A function drawn from prior ``prior`` via an eigendecomposition (independent of the model)."""
    gen = torch.Generator().manual_seed(seed)
    C = priors.covariances[prior].double().cpu()
    values, vectors = torch.linalg.eigh(C)
    z = torch.randn(priors.num_arms, generator=gen, dtype=torch.float64)
    f = priors.means[prior].double().cpu() + vectors @ (values.clamp_min(0).sqrt() * z)
    return f, gen


# --------------------------------------------------------------------------- #
# Exact posterior
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_mean_variance_matches_textbook(dtype, device):
    priors = small_priors(dtype, device)
    indices, y = observed(dtype, device)
    model = TabularPriorGP(priors, indices, y)
    mean, variance = model.mean_variance()
    assert mean.shape == (5, 12) and variance.shape == (5, 12)
    assert mean.dtype == dtype and mean.device.type == torch.device(device).type
    exp_mean, exp_cov = textbook_posterior(priors, indices, y)
    torch.testing.assert_close(mean.double(), exp_mean, **TOLERANCE[dtype])
    torch.testing.assert_close(variance.double(), exp_cov.diagonal(dim1=-2, dim2=-1).clamp_min(0), **TOLERANCE[dtype])
    # The linear prior has zero variance at x = 0, before and after data.
    assert variance[3, 0].abs() < 1e-6


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_incremental_equals_batch(dtype, device):
    priors = small_priors(dtype, device)
    indices, y = observed(dtype, device)
    batch = TabularPriorGP(priors, indices, y)
    incremental = TabularPriorGP(priors)
    for index, value in zip(indices.tolist(), y, strict=True):
        incremental.condition(index, value)
    for got, expected in zip(incremental.mean_variance(), batch.mean_variance(), strict=True):
        torch.testing.assert_close(got, expected, **TOLERANCE[dtype])
    for name in ("cholesky", "whitened_cross", "whitened_residual"):
        torch.testing.assert_close(
            getattr(incremental.state, name), getattr(batch.state, name), **TOLERANCE[dtype]
        )
    torch.testing.assert_close(incremental.train_indices, indices)
    torch.testing.assert_close(incremental.train_Y, y)
    # Same random numbers -> the same pathwise samples.
    gen = torch.Generator(device=device)
    s1 = incremental.sample(3, gen.manual_seed(4))
    s2 = batch.sample(3, gen.manual_seed(4))
    torch.testing.assert_close(s1, s2, **TOLERANCE[dtype])


def test_textbook_on_kernel_task_with_many_repeats():
    # The paper's 500 arms, SE(l = 4) (near-singular gram) and repeated arms: float64, 1e-8.
    priors = lengthscale_task_priors()
    gen = torch.Generator().manual_seed(3)
    indices = torch.randint(0, 500, (25,), generator=gen)
    indices[10:15] = indices[0]
    y = torch.randn(25, generator=gen, dtype=torch.float64)
    model = TabularPriorGP(priors)
    for index, value in zip(indices.tolist(), y, strict=True):
        model.condition(index, value)
    mean, variance = model.mean_variance()
    exp_mean, exp_cov = textbook_posterior(priors, indices, y)
    torch.testing.assert_close(mean, exp_mean, rtol=1e-8, atol=1e-8)
    torch.testing.assert_close(variance, exp_cov.diagonal(dim1=-2, dim2=-1).clamp_min(0), rtol=1e-8, atol=1e-8)


def test_no_data_is_the_prior():
    priors = small_priors()
    model = TabularPriorGP(priors)
    mean, variance = model.mean_variance()
    torch.testing.assert_close(mean, priors.means)
    torch.testing.assert_close(variance, priors.covariances.diagonal(dim1=-2, dim2=-1))
    torch.testing.assert_close(model.log_evidence(), torch.zeros(5, dtype=torch.float64))
    assert model.num_observations == 0


# --------------------------------------------------------------------------- #
# Likelihoods
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("builder, true_prior", [
    (kernel_task_priors, 1),
    (kernel_task_priors, 4),
    (lengthscale_task_priors, 0),
    (hill_task_priors, 2),
])
def test_chain_rule_predictive_sums_to_evidence(builder, true_prior):
    priors = builder()
    f, gen = draw_function(priors, true_prior, seed=11)
    model = TabularPriorGP(priors)
    total = torch.zeros(len(priors), dtype=torch.float64)
    indices, ys = [], []
    for t in range(60):
        # Arms repeat (the last 20 rounds revisit earlier ones).
        index = int(torch.randint(0, 500, (1,), generator=gen)) if t < 40 else indices[t - 40]
        y = float(f[index] + 0.25 * torch.randn(1, generator=gen, dtype=torch.float64))
        step = model.predictive_log_likelihood(index, y)
        if t < 3:  # one term, against the textbook predictive at this round
            exp_mean, exp_cov = textbook_posterior(priors, torch.tensor(indices, dtype=torch.long),
                                                   torch.tensor(ys, dtype=torch.float64))
            var = exp_cov[:, index, index] + priors.noise
            expected = -0.5 * ((y - exp_mean[:, index]) ** 2 / var + var.log() + math.log(2 * math.pi))
            torch.testing.assert_close(step, expected, rtol=1e-10, atol=1e-10)
        total = total + step
        model.condition(index, y)
        indices.append(index)
        ys.append(y)
    evidence = model.log_evidence()
    torch.testing.assert_close(total, evidence, rtol=0, atol=1e-8)
    expected = textbook_log_evidence(priors, torch.tensor(indices), torch.tensor(ys, dtype=torch.float64))
    torch.testing.assert_close(evidence, expected, rtol=1e-10, atol=1e-8)


def test_chain_rule_float32():
    priors = small_priors(torch.float32)
    indices, y = observed(torch.float32)
    model = TabularPriorGP(priors)
    total = torch.zeros(5, dtype=torch.float32)
    for index, value in zip(indices.tolist(), y, strict=True):
        total = total + model.predictive_log_likelihood(index, value)
        model.condition(index, value)
    expected = textbook_log_evidence(priors, indices, y)
    torch.testing.assert_close(total.double(), expected, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(model.log_evidence().double(), expected, rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------------- #
# Pathwise sampling
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("num_observed", [0, 4, 7])
def test_sample_moments(num_observed):
    priors = small_priors()
    indices, y = observed()
    indices, y = indices[:num_observed], y[:num_observed]
    model = TabularPriorGP(priors, indices, y)
    num_samples = 20_000
    samples = model.sample(num_samples, generator=torch.Generator().manual_seed(0))
    assert samples.shape == (num_samples, 5, 12)
    exp_mean, exp_cov = textbook_posterior(priors, indices, y)
    exp_var = exp_cov.diagonal(dim1=-2, dim2=-1).clamp_min(0)
    # Five standard errors per entry: mean var/S; covariance (S_ii S_jj + S_ij^2) / S (Gaussian).
    emp_mean = samples.mean(0)
    mean_tol = 5 * (exp_var / num_samples).sqrt() + 1e-10
    assert ((emp_mean - exp_mean).abs() <= mean_tol).all()
    centred = samples - emp_mean
    emp_cov = torch.einsum("ski,skj->kij", centred, centred) / (num_samples - 1)
    cov_se = ((exp_var.unsqueeze(-1) * exp_var.unsqueeze(-2) + exp_cov.square()) / num_samples).sqrt()
    assert ((emp_cov - exp_cov).abs() <= 5 * cov_se + 1e-10).all()
    # Rank-one linear prior: every sample is a line through the origin.
    lines = samples[:, 3]
    assert lines[:, 0].abs().max() < 1e-8
    slopes = lines[:, 1:] / priors.arms[1:, 0]
    torch.testing.assert_close(slopes, slopes[:, :1].expand_as(slopes), rtol=1e-8, atol=1e-10)


def test_prior_factor_is_the_symmetric_root():
    # F_p = C_p^{1/2} against scipy's Schur-based sqrtm, which chooses no eigenbasis; the
    # periodic prior on equidistant arms has pairs of equal eigenvalues.
    scipy_linalg = pytest.importorskip("scipy.linalg")
    priors = kernel_task_priors(num_arms=60)
    factor = TabularPriorGP(priors).prior_factor()
    assert torch.equal(factor, factor.transpose(-1, -2))
    torch.testing.assert_close(factor @ factor, priors.covariances, rtol=0, atol=1e-12)
    periodic = priors.labels().index("periodic")
    reference = torch.as_tensor(scipy_linalg.sqrtm(priors.covariances[periodic].numpy()).real)
    torch.testing.assert_close(factor[periodic], reference, rtol=0, atol=1e-6)


def test_sample_is_stable_to_rounding_of_the_covariance():
    # A symmetric perturbation at rounding level (what another CPU kernel path or thread
    # count makes of a covariance) moves every draw by rounding level too, degenerate
    # eigenspaces included: an eigen-factor V Lambda^{1/2} would rotate the periodic
    # prior's equal-eigenvalue pairs and change its draws by O(1) for the same z.
    priors = kernel_task_priors(num_arms=200)
    noise = torch.randn(priors.covariances.shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    perturbed = TabularPriors(
        arms=priors.arms, means=priors.means, noise=priors.noise, names=priors.names,
        covariances=priors.covariances + 1e-15 * (noise + noise.transpose(-1, -2)),
    )
    draws = [TabularPriorGP(p, torch.tensor([5, 120]), torch.tensor([0.3, -0.2], dtype=torch.float64))
             .sample(8, generator=torch.Generator().manual_seed(0)) for p in (priors, perturbed)]
    assert (draws[0] - draws[1]).abs().max() < 1e-6


def test_sample_prior_indices_generator_and_shapes():
    priors = small_priors()
    indices, y = observed()
    model = TabularPriorGP(priors, indices, y)
    gen = torch.Generator()
    a = model.sample(4, gen.manual_seed(1), prior_indices=[3, 0])
    b = model.sample(4, gen.manual_seed(1), prior_indices=torch.tensor([3, 0]))
    assert a.shape == (4, 2, 12)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert not torch.equal(a, model.sample(4, gen, prior_indices=[3, 0]))  # the generator advanced
    # Independent draws per prior: the same prior twice gets different numbers.
    twice = model.sample(1, gen, prior_indices=[1, 1])
    assert not torch.allclose(twice[0, 0], twice[0, 1])
    assert model.sample().shape == (1, 5, 12)
    with pytest.raises(ValueError, match="prior_indices"):
        model.sample(1, prior_indices=[5])
    with pytest.raises(ValueError, match="num_samples"):
        model.sample(0)


def test_sample_float32_and_paper_scale():
    # 500 arms, 6 kernels (near-singular and rank-one covariances), float32: finite, and the
    # observed arms are pinned to the data up to the noise.
    priors = kernel_task_priors(dtype=torch.float32)
    model = TabularPriorGP(priors)
    for index in (10, 250, 250, 499):
        model.condition(index, 0.5)
    samples = model.sample(200, torch.Generator().manual_seed(0))
    assert samples.shape == (200, 6, 500) and samples.dtype == torch.float32
    assert torch.isfinite(samples).all()
    mean, variance = model.mean_variance()
    emp_mean = samples.mean(0)
    assert ((emp_mean - mean).abs() <= 5 * (variance / 200).sqrt() + 1e-3).all()


# --------------------------------------------------------------------------- #
# BoTorch posterior
# --------------------------------------------------------------------------- #


# The linear prior's variance at x = 0 is exactly 0 (GPyTorch warns and rounds it up), and
# rsample adds jitter to the singular covariances (repeated arms): both are expected here.
@pytest.mark.filterwarnings("ignore::gpytorch.utils.warnings.NumericalWarning")
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_botorch_posterior(dtype, device):
    priors = small_priors(dtype, device)
    indices, y = observed(dtype, device)
    model = TabularPriorGP(priors, indices, y)
    arm_idx = torch.tensor([[0, 3, 3, 7], [11, 5, 1, 2], [4, 4, 4, 4]], device=device)  # batch 3, q 4
    X = priors.arms[arm_idx]  # 3 x 4 x 1
    posterior = model.posterior(X)
    assert isinstance(posterior, GPyTorchPosterior)
    assert posterior.mean.shape == (3, 5, 4, 1)
    assert model.num_outputs == 1 and model.batch_shape == torch.Size([5])
    torch.testing.assert_close(model.arm_indices(X), arm_idx)
    mean, variance = model.mean_variance()
    torch.testing.assert_close(posterior.mean[..., 0], mean[:, arm_idx].transpose(0, 1), **TOLERANCE[dtype])
    torch.testing.assert_close(
        posterior.variance[..., 0], variance[:, arm_idx].transpose(0, 1), **TOLERANCE[dtype]
    )
    _, exp_cov = textbook_posterior(priors, indices, y)
    covariance = posterior.distribution.covariance_matrix
    assert covariance.shape == (3, 5, 4, 4)
    for b in range(3):
        expected = exp_cov[:, arm_idx[b]][:, :, arm_idx[b]]
        torch.testing.assert_close(covariance[b].double(), expected, **TOLERANCE[dtype])
    noisy = model.posterior(X, observation_noise=True)
    torch.testing.assert_close(noisy.variance - posterior.variance,
                               torch.full_like(posterior.variance, NOISE), **TOLERANCE[dtype])
    # Singular covariances (repeated arms, linear prior) still sample.
    assert posterior.rsample(torch.Size([2])).shape == (2, 3, 5, 4, 1)
    unbatched = model.posterior(X[0])
    assert unbatched.mean.shape == (5, 4, 1)


def test_botorch_posterior_errors():
    priors = small_priors()
    model = TabularPriorGP(priors)
    with pytest.raises(ValueError, match="X"):
        model.posterior(torch.tensor([[0.1234]], dtype=torch.float64))
    with pytest.raises(ValueError, match="X"):
        model.posterior(torch.zeros(2, 2, dtype=torch.float64))  # d = 2 for 1-d arms
    with pytest.raises(ValueError, match="X"):
        model.posterior(priors.arms[:2].float())  # dtype
    with pytest.raises(ValueError, match="output_indices"):
        model.posterior(priors.arms[:2], output_indices=[1])


def test_condition_on_observations_and_functional_variants():
    priors = small_priors()
    indices, y = observed()
    model = TabularPriorGP(priors, indices[:3], y[:3])
    new = model.condition_on_observations(priors.arms[indices[3:]], y[3:].unsqueeze(-1))
    full = TabularPriorGP(priors, indices, y)
    for got, expected in zip(new.mean_variance(), full.mean_variance(), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-10)
    assert model.num_observations == 3  # unchanged
    one = model.conditioned(4, 0.7)
    assert one.num_observations == 4 and model.num_observations == 3
    # Subset: same rows, no refactorisation.
    sub = full.subset([4, 1])
    assert sub.labels() == ["rq", "m32"]
    for got, expected in zip(sub.mean_variance(), full.mean_variance(), strict=True):
        torch.testing.assert_close(got, expected[[4, 1]])
    torch.testing.assert_close(sub.log_evidence(), full.log_evidence()[[4, 1]])
    # Moving dtype keeps the state.
    moved = TabularPriorGP(priors, indices, y).to(torch.float32)
    assert moved.priors.means.dtype == torch.float32 and moved.state.mean.dtype == torch.float32
    torch.testing.assert_close(moved.mean_variance()[0].double(), full.mean_variance()[0], rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------- #
# Validation
# --------------------------------------------------------------------------- #


def test_model_validation():
    priors = small_priors()
    with pytest.raises(ValueError, match="train_indices"):
        TabularPriorGP(priors, torch.tensor([0, 12]), torch.zeros(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="train_Y"):
        TabularPriorGP(priors, torch.tensor([0, 1]), torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="train_Y"):
        TabularPriorGP(priors, torch.tensor([0, 1]), torch.tensor([0.0, float("nan")], dtype=torch.float64))
    with pytest.raises(ValueError, match="together"):
        TabularPriorGP(priors, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="train_indices"):
        TabularPriorGP(priors, torch.tensor([0.0, 1.0]), torch.zeros(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="priors"):
        TabularPriorGP("not priors")
    model = TabularPriorGP(priors)
    with pytest.raises(ValueError, match="index"):
        model.condition(12, 0.0)
    with pytest.raises(ValueError, match="y"):
        model.condition(1, float("inf"))
    with pytest.raises(ValueError, match="index"):
        model.predictive_log_likelihood(-1, 0.0)
    # train_Y as n x 1 is accepted.
    ok = TabularPriorGP(priors, torch.tensor([0, 1]), torch.zeros(2, 1, dtype=torch.float64))
    assert ok.num_observations == 2
