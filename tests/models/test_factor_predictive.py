import math

import pytest
import torch
from botorch.models.transforms import Normalize, Standardize
from gpytorch.means import ConstantMean

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.candidate_gp import CandidateGP, GPyTorchPredictive
from botorch_unknown_hypers.models.factor_cache import FactorCache
from botorch_unknown_hypers.models.factor_predictive import FactorPredictive

D = torch.float64


def _case(n=30, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 2, generator=g, dtype=D)
    Y = torch.sin(5 * X).sum(-1, keepdim=True)
    spec = KernelCandidates.from_lengthscales(torch.tensor([0.4, 0.2, 0.1], dtype=D), noise=1e-4)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=D)  # unit square: X is the transformed input

    def build(factor=None):
        return CandidateGP(X, Y, spec, input_transform=Normalize(2, bounds=bounds), outcome_transform=Standardize(m=1), factor=factor)

    return g, X, Y, spec, build


def test_the_model_holds_one_predictive_chosen_by_its_factor():
    _, X, _, spec, build = _case()
    factor = FactorCache().factor(spec, X)
    cached, plain = build(factor), build()
    assert isinstance(cached.predictive, FactorPredictive) and cached.factor is factor
    assert isinstance(plain.predictive, GPyTorchPredictive) and plain.factor is None
    assert plain.predictive.fixed_points is None and isinstance(plain.predictive.subset([0]), GPyTorchPredictive)


def test_alpha_and_residual_are_the_solves_they_claim_to_be():
    _, X, _, spec, build = _case()
    model = build(FactorCache().factor(spec, X))
    pred = model.predictive
    y = model.train_targets  # K x n, outcome-transformed
    with torch.no_grad():
        resid = y - model.mean_module(X).reshape(3, -1)
        A = model.covar_module(X).to_dense() + torch.diag_embed(model.likelihood.noise.reshape(3, 1).expand(3, X.shape[0]))
    torch.testing.assert_close(pred.residual, resid, rtol=0, atol=1e-14)
    torch.testing.assert_close(pred.alpha, torch.linalg.solve(A, resid.unsqueeze(-1)).squeeze(-1), rtol=1e-7, atol=1e-9)
    logdet = torch.logdet(A)
    ref = -0.5 * ((resid * torch.linalg.solve(A, resid.unsqueeze(-1)).squeeze(-1)).sum(-1) + logdet + X.shape[0] * math.log(2 * math.pi))
    torch.testing.assert_close(model.log_marginal_likelihood(), ref, rtol=1e-9, atol=1e-9)


def test_views_take_their_rows_bit_for_bit_without_a_read():
    from tests.host_reads import profiled_reads

    g, X, Y, spec, build = _case()
    spec = KernelCandidates(spec.lengthscale, spec.outputscale, spec.noise, mean_constant=torch.tensor([0.3, -0.2, 0.1], dtype=D))
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=D)

    def model_of(cands):  # a model of its own, factorised afresh: what a view must equal
        return CandidateGP(X, Y, cands, input_transform=Normalize(2, bounds=bounds), outcome_transform=Standardize(m=1), factor=FactorCache().factor(cands, X))

    model = model_of(spec)
    P = torch.rand(3, 2, generator=g, dtype=D)
    for make, cands in ((lambda: model.subset([2, 0]), spec.subset([2, 0])), (lambda: model.select(1), spec.subset([1]))):
        assert [r for r in profiled_reads(make) if r == "aten::equal"] == []  # no comparison with the last solve
        view, ref = make(), model_of(cands)
        assert torch.equal(view.predictive.alpha, ref.predictive.alpha) and torch.equal(view.predictive.residual, ref.predictive.residual)
        assert view.predictive.factor.num_candidates == len(cands)
        with torch.no_grad():
            a, b = view.posterior(P.unsqueeze(1)), ref.posterior(P.unsqueeze(1))
        torch.testing.assert_close(a.mean.reshape(-1), b.mean.reshape(-1), rtol=0, atol=1e-13)  # select: no candidate dim
        torch.testing.assert_close(a.variance.reshape(-1), b.variance.reshape(-1), rtol=0, atol=1e-13)
    plain = build()  # GPyTorch's predictive: a view has its own, holding nothing
    assert isinstance(plain.subset([1]).predictive, GPyTorchPredictive) and isinstance(plain.select(0).predictive, GPyTorchPredictive)


def test_conditioning_shares_the_factor_and_never_changes_the_predictive_in_place():
    g, X, _, spec, build = _case()
    model = build(FactorCache().factor(spec, X))
    base = model.predictive
    P = torch.rand(2, 2, generator=g, dtype=D)
    view = model.condition_on_pending(P)
    pred = view.predictive
    assert base.pending is None and base.pending_factor is None  # the model's own predictive is untouched
    assert pred.factor is base.factor and pred.residual is base.residual and pred.alpha is base.alpha
    assert torch.equal(pred.pending, P) and pred.pending_factor.shape == (3, 32, 32)
    torch.testing.assert_close(pred.pending_factor[:, :30, :30], base.factor.L, rtol=0, atol=0)
    assert pred.fixed_points is None  # pending points change the variance
    again = view.condition_on_pending(P[:1]).predictive  # replaces, not adds
    assert again.pending.shape[0] == 1 and again.pending_factor.shape == (3, 31, 31)
    assert pred.without_pending().pending is None and base.without_pending() is base


def test_a_view_shares_the_modules_and_owns_its_registry_and_pending_points():
    g, X, _, spec, build = _case()
    model = build(FactorCache().factor(spec, X))
    view = model.condition_on_pending(torch.rand(2, 2, generator=g, dtype=D))
    assert not view.training and view.covar_module is model.covar_module and view.outcome_transform is model.outcome_transform
    assert all(torch.equal(a, b) for a, b in zip(view.train_inputs, model.train_inputs))
    assert view.X_pending is not None and model.X_pending is None
    view.mean_module = ConstantMean()
    assert model.mean_module is not view.mean_module
    view.train()  # back to the raw inputs, as a BoTorch model in train mode
    torch.testing.assert_close(view.train_inputs[0], X.expand(3, -1, -1), rtol=0, atol=0)


@pytest.mark.parametrize("observation_noise", [False, True])
def test_the_two_predictives_agree(observation_noise):
    g, X, _, spec, build = _case(n=25, seed=1)
    cached, plain = build(FactorCache().factor(spec, X)), build()
    Z = torch.rand(4, 3, 3, 2, generator=g, dtype=D)
    for a, b in zip(cached.marginal_mean_variance(Z, observation_noise), plain.marginal_mean_variance(Z, observation_noise)):
        torch.testing.assert_close(a, b, rtol=1e-8, atol=1e-10)
    pa, pb = cached.posterior(Z[:, 0], observation_noise=observation_noise), plain.posterior(Z[:, 0], observation_noise=observation_noise)
    torch.testing.assert_close(pa.mean, pb.mean, rtol=1e-8, atol=1e-10)
    torch.testing.assert_close(pa.distribution.covariance_matrix, pb.distribution.covariance_matrix, rtol=1e-7, atol=1e-10)
    torch.testing.assert_close(cached.log_marginal_likelihood(), plain.log_marginal_likelihood(), rtol=1e-9, atol=1e-9)


def test_a_subset_solves_on_its_parents_stack_in_place_and_agrees_with_its_own_copy():
    g, X, _, spec, build = _case(n=75)  # a base of 64 rows and 11 appended
    model = build(FactorCache().factor(spec, X))
    sub = model.subset([2, 0])
    copied = build(FactorCache().factor(spec, X)).subset([2, 0])
    copied.factor.L  # its rows copied out of the parent's stack: batched solves on the copy
    Z = torch.rand(4, 3, 2, generator=g, dtype=D)
    with torch.no_grad():
        got, want = sub.posterior(Z), copied.posterior(Z)
        torch.testing.assert_close(got.mean, want.mean, rtol=1e-12, atol=1e-14)
        torch.testing.assert_close(got.variance, want.variance, rtol=1e-10, atol=1e-14)
        rhs = torch.randn(2, 75, 2, generator=g, dtype=D)
        torch.testing.assert_close(sub.factor.solve(rhs), copied.factor.solve(rhs), rtol=1e-12, atol=0)
        pending = sub.condition_on_pending(Z[0, :2]).posterior(Z).variance
        torch.testing.assert_close(pending, copied.condition_on_pending(Z[0, :2]).posterior(Z).variance, rtol=1e-10, atol=1e-14)
    assert sub.factor._stacked is None  # no K' x n x n copy was made for the subset
    torch.testing.assert_close(sub.factor.L, model.factor.L[[2, 0]], rtol=0, atol=0)  # copied when asked for
