"""Tests of botorch_unknown_hypers.models.quiet_normal: GPyTorch's variance and BoTorch's
``Standardize`` untransform, bit for bit, without host reads."""

from __future__ import annotations

import warnings

import pytest
import torch
from botorch.acquisition import LogExpectedImprovement
from botorch.models.transforms.input import Normalize
from botorch.models.transforms.outcome import ChainedOutcomeTransform, Log, Standardize
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch.distributions import MultivariateNormal
from linear_operator.operators import DiagLinearOperator, to_linear_operator
from torch.profiler import ProfilerActivity, profile

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.factor_cache import FactorCache
from botorch_unknown_hypers.models.quiet_normal import (
    QuietMultivariateNormal,
    is_plain_standardize,
    untransformed_marginals,
    untransformed_posterior,
)

READS = ("aten::_local_scalar_dense", "aten::is_nonzero", "aten::equal")


def host_reads(fn):
    r"""``fn()`` and the number of host reads it made (the ops above, counted by the profiler)."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        out = fn()
    return out, sum(e.name in READS for e in prof.events())


def covariance(batch: int = 3, q: int = 4, seed: int = 0, tiny: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    r"""A ``batch x q`` mean and a positive-definite ``batch x q x q`` covariance; ``tiny``
    puts one variance below ``gpytorch.settings.min_variance`` (a diagonal covariance then)."""
    g = torch.Generator().manual_seed(seed)
    mean = torch.randn(batch, q, generator=g, dtype=torch.float64)
    A = torch.randn(batch, q, q, generator=g, dtype=torch.float64)
    cov = A @ A.transpose(-1, -2) + 0.1 * torch.eye(q, dtype=torch.float64)
    if tiny:
        cov = torch.diag_embed(torch.tensor([0.3, 1e-14, 2.0, 0.7], dtype=torch.float64)[:q].expand(batch, q))
    return mean, cov


@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("tiny", [False, True])
def test_the_variance_is_gpytorchs_bit_for_bit_with_its_gradient_and_no_host_read(lazy, tiny):
    mean, cov = covariance(tiny=tiny)
    cov = cov.requires_grad_(True)
    wrap = to_linear_operator if lazy else (lambda c: c)
    ours, theirs = QuietMultivariateNormal(mean, wrap(cov)), MultivariateNormal(mean, wrap(cov))
    v, reads = host_reads(lambda: ours.variance)
    assert reads == 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        expected = theirs.variance
    assert any("Negative variance" in str(w.message) for w in caught) == tiny  # the clamp applies
    assert torch.equal(v, expected) and v.shape == expected.shape
    (g_ours,) = torch.autograd.grad(v.sum(), cov)
    (g_theirs,) = torch.autograd.grad(expected.sum(), cov)
    assert torch.equal(g_ours, g_theirs)


def test_a_diagonal_covariance_keeps_its_batch_and_event_shapes():
    variance = torch.tensor([0.3, 1e-14, 2.0], dtype=torch.float64).expand(4, 3).unsqueeze(-1)
    mean = torch.randn(4, 3, 1, dtype=torch.float64)
    ours = QuietMultivariateNormal(mean, DiagLinearOperator(variance))
    with pytest.warns(Warning, match="Negative variance"):
        expected = MultivariateNormal(mean, DiagLinearOperator(variance)).variance
    assert torch.equal(ours.variance, expected) and ours.variance.shape == (4, 3, 1)


def trained_standardize(seed: int = 0) -> Standardize:
    g = torch.Generator().manual_seed(seed)
    tf = Standardize(m=1)
    tf(3.0 + 2.0 * torch.randn(9, 1, generator=g, dtype=torch.float64))
    tf.eval()
    return tf


@pytest.mark.parametrize("lazy", [True, False])
def test_the_standardize_untransform_is_botorchs_bit_for_bit_without_a_host_read(lazy):
    mean, cov = covariance()
    tf = trained_standardize()
    mvn = QuietMultivariateNormal(mean, to_linear_operator(cov) if lazy else cov)
    ours, reads = host_reads(lambda: untransformed_posterior(mvn, tf, None))
    assert reads == 0
    theirs = tf.untransform_posterior(GPyTorchPosterior(MultivariateNormal(mean, to_linear_operator(cov) if lazy else cov)))
    assert type(ours.distribution) is QuietMultivariateNormal
    assert ours.distribution.islazy and theirs.distribution.islazy
    assert type(ours.distribution.lazy_covariance_matrix) is type(theirs.distribution.lazy_covariance_matrix)
    for a, b in [
        (ours.mean, theirs.mean),
        (ours.variance, theirs.variance),
        (ours.distribution.covariance_matrix, theirs.distribution.covariance_matrix),
    ]:
        assert torch.equal(a, b) and a.shape == b.shape
    base = torch.randn(ours.base_sample_shape[:0] + torch.Size([5]) + ours.base_sample_shape, dtype=torch.float64)
    assert torch.equal(
        ours.rsample_from_base_samples(torch.Size([5]), base), theirs.rsample_from_base_samples(torch.Size([5]), base)
    )


def test_other_transforms_go_through_botorch():
    mean, cov = covariance()
    mvn = QuietMultivariateNormal(mean, to_linear_operator(cov))
    assert untransformed_posterior(mvn, None, None).distribution is mvn
    chained = ChainedOutcomeTransform(log=Log(), standardize=Standardize(m=1))
    chained(torch.rand(6, 1, dtype=torch.float64) + 1.0)
    chained.eval()
    assert not is_plain_standardize(chained) and not is_plain_standardize(None)
    assert not is_plain_standardize(Standardize(m=2))
    X = torch.rand(3, 4, 2, dtype=torch.float64)
    ours = untransformed_posterior(mvn, chained, X)
    theirs = chained.untransform_posterior(GPyTorchPosterior(mvn), X=X)
    assert type(ours) is type(theirs)
    torch.testing.assert_close(ours.mean, theirs.mean, rtol=0, atol=0)


def test_the_marginal_untransform_is_botorchs_bit_for_bit_without_a_host_read():
    g = torch.Generator().manual_seed(3)
    mean = torch.randn(2, 4, 5, generator=g, dtype=torch.float64)  # batch x K x q
    variance = torch.rand(2, 4, 5, generator=g, dtype=torch.float64) + 0.1
    tf = trained_standardize()
    (m, v), reads = host_reads(lambda: untransformed_marginals(mean, variance, tf, None))
    assert reads == 0
    tm, tv = tf.untransform(mean.unsqueeze(-1), variance.unsqueeze(-1))
    assert torch.equal(m, tm.squeeze(-1)) and torch.equal(v, tv.squeeze(-1)) and m.shape == mean.shape
    assert untransformed_marginals(mean, variance, None, None) == (mean, variance)
    chained = ChainedOutcomeTransform(log=Log(), standardize=Standardize(m=1))
    chained(torch.rand(6, 1, generator=g, dtype=torch.float64) + 1.0)
    chained.eval()
    cm, cv = untransformed_marginals(mean, variance, chained, None)  # through BoTorch's own untransform
    em, ev = chained.untransform(mean.unsqueeze(-1), variance.unsqueeze(-1))
    assert torch.equal(cm, em.squeeze(-1)) and torch.equal(cv, ev.squeeze(-1))


class SubclassedStandardize(Standardize):
    r"""BoTorch's ``Standardize`` under another type, so its own ``untransform_posterior`` runs."""


@pytest.mark.parametrize("factors", [False, True])
def test_a_candidate_models_acquisition_reads_nothing_on_the_host(factors):
    # A single-candidate view scored by LogEI, on GPyTorch's exact path and on the cached factors:
    # no host read, and the posterior is the one BoTorch's own untransform gives, bit for bit.
    g = torch.Generator().manual_seed(4)
    X = torch.rand(25, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(5 * X).sum(-1, keepdim=True)
    spec = KernelCandidates.from_lengthscales(torch.tensor([0.4, 0.15], dtype=torch.float64), noise=1e-4)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)

    def build(outcome_transform):
        factor = FactorCache().factor(spec, X) if factors else None
        return CandidateGP(X, Y, spec, input_transform=Normalize(2, bounds=bounds), outcome_transform=outcome_transform, factor=factor)

    view, reference = build(Standardize(m=1)).select(1), build(SubclassedStandardize(m=1)).select(1)
    Z = torch.rand(7, 1, 2, generator=g, dtype=torch.float64)
    acqf = LogExpectedImprovement(view, best_f=Y.max())
    acqf(Z)  # the first call builds GPyTorch's prediction caches
    values, reads = host_reads(lambda: acqf(Z))
    assert reads == 0
    assert torch.equal(values, LogExpectedImprovement(reference, best_f=Y.max())(Z))
    for Zq in (Z, Z.reshape(1, 7, 2)):  # q = 1 and a joint q = 7 posterior
        ours, theirs = view.posterior(Zq), reference.posterior(Zq)
        assert type(ours.distribution) is QuietMultivariateNormal
        assert torch.equal(ours.mean, theirs.mean) and torch.equal(ours.variance, theirs.variance)
        assert torch.equal(ours.distribution.covariance_matrix, theirs.distribution.covariance_matrix)


def test_quiet_paths_give_botorchs_path_values_and_gradients_without_host_reads():
    from botorch.models import SingleTaskGP
    from botorch.sampling.pathwise import draw_matheron_paths

    from botorch_unknown_hypers.models.quiet_normal import StandardizeUntransformer, quiet_paths

    g = torch.Generator().manual_seed(2)
    X = torch.rand(12, 2, generator=g, dtype=torch.float64)
    from botorch_unknown_hypers.kernels import scale_kernel

    # BoTorch's default Standardize; the package's kernel (GPyTorch's compares its inputs on the host)
    model = SingleTaskGP(X, 5.0 + torch.sin(4 * X).sum(-1, keepdim=True), covar_module=scale_kernel("matern52").to(X))
    model.eval()
    torch.manual_seed(0)
    paths = draw_matheron_paths(model, sample_shape=torch.Size([3]))
    Z = torch.rand(6, 2, generator=g, dtype=torch.float64, requires_grad=True)
    before = paths(Z)
    (grad_before,) = torch.autograd.grad(before.sum(), Z)
    assert quiet_paths(paths, model.num_outputs) is paths
    assert type(paths.output_transform) is StandardizeUntransformer
    after, reads = host_reads(lambda: paths(Z))
    (grad_after,) = torch.autograd.grad(after.sum(), Z)
    assert reads == 0
    assert torch.equal(after, before) and torch.equal(grad_after, grad_before)


def test_quiet_paths_leave_other_output_transforms_alone():
    from botorch.models import SingleTaskGP
    from botorch.sampling.pathwise import draw_matheron_paths
    from botorch.sampling.pathwise.utils import OutcomeUntransformer

    from botorch_unknown_hypers.models.quiet_normal import quiet_paths

    X = torch.rand(8, 2, dtype=torch.float64)
    Y = torch.rand(8, 1, dtype=torch.float64) + 1.0
    for tf in (ChainedOutcomeTransform(log=Log(), standardize=Standardize(m=1)), SubclassedStandardize(m=1)):
        model = SingleTaskGP(X, Y, outcome_transform=tf)
        model.eval()
        paths = quiet_paths(draw_matheron_paths(model, sample_shape=torch.Size([2])), model.num_outputs)
        assert type(paths.output_transform) is OutcomeUntransformer
    model = SingleTaskGP(X, Y)
    model.eval()
    paths = quiet_paths(draw_matheron_paths(model, sample_shape=torch.Size([2])), 2)  # not one output
    assert type(paths.output_transform) is OutcomeUntransformer
