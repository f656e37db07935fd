import pytest
import torch
from botorch.acquisition import LogExpectedImprovement
from botorch.models.transforms import Standardize

from botorch_unknown_hypers.acquisition.logei import CandidateLogEI, believer_best_f, plugin_best_f
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.candidate_gp import CandidateGP


def _model():
    g = torch.Generator().manual_seed(0)
    X = torch.rand(15, 2, generator=g, dtype=torch.float64)
    Y = 30 * torch.sin(6 * X).sum(-1, keepdim=True)
    cands = KernelCandidates.from_lengthscales(torch.tensor([0.4, 0.2, 0.1], dtype=torch.float64), kernel="rbf", noise=1e-4)
    return CandidateGP(X, Y, cands, outcome_transform=Standardize(m=1)), float(Y.max())


def test_each_candidate_equals_botorch_logei_of_that_candidate():
    model, best = _model()
    Z = torch.rand(7, 1, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    acqf = CandidateLogEI(model, best)
    values = acqf.candidate_values(Z.squeeze(-2))
    assert values.shape == (7, 3)
    for k in range(3):
        ref = LogExpectedImprovement(model.select(k), best_f=torch.tensor(best, dtype=torch.float64))(Z)
        torch.testing.assert_close(values[:, k], ref, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(acqf(Z), values.max(-1).values)
    torch.testing.assert_close(CandidateLogEI(model, best, reduction="select", index=2)(Z), values[:, 2])


def test_gradients_flow_and_bad_arguments_are_named():
    model, best = _model()
    Z = torch.rand(4, 1, 2, dtype=torch.float64, requires_grad=True)
    CandidateLogEI(model, best)(Z).sum().backward()
    assert torch.isfinite(Z.grad).all() and Z.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="reduction"):
        CandidateLogEI(model, best, reduction="mean")
    with pytest.raises(ValueError, match="index"):
        CandidateLogEI(model, best, reduction="select", index=3)
    with pytest.raises(ValueError, match="best_f must be a finite scalar or 3 values"):
        CandidateLogEI(model, torch.zeros(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="best_f"):
        CandidateLogEI(model, float("nan"))


def test_one_incumbent_per_candidate_equals_botorch_logei_with_that_incumbent():
    model, best = _model()
    Z = torch.rand(6, 1, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    per = torch.tensor([best, best + 5.0, best - 3.0], dtype=torch.float64)
    values = CandidateLogEI(model, per).candidate_values(Z.squeeze(-2))
    for k in range(3):
        ref = LogExpectedImprovement(model.select(k), best_f=per[k])(Z)
        torch.testing.assert_close(values[:, k], ref, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(CandidateLogEI(model, per, reduction="select", index=1)(Z), values[:, 1])


def test_an_incumbent_vouched_for_is_not_read(monkeypatch):
    from tests.host_reads import record_reads

    model, best = _model()
    per = torch.tensor([best, best + 5.0, best - 3.0], dtype=torch.float64)
    Z = torch.rand(5, 1, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    reads = record_reads(monkeypatch)
    checked = CandidateLogEI(model, per)
    assert reads == ["__bool__"]  # the finiteness check
    reads.clear()
    vouched = CandidateLogEI(model, per, check_best_f=False)
    assert reads == []
    monkeypatch.undo()
    assert torch.equal(vouched(Z), checked(Z))
    with pytest.raises(ValueError, match="best_f must be a finite scalar or 3 values"):  # the shape is still checked
        CandidateLogEI(model, torch.zeros(2, dtype=torch.float64), check_best_f=False)
    with pytest.raises(ValueError, match=r"^check_best_f must be a bool, got 0\.$"):
        CandidateLogEI(model, per, check_best_f=0)


def test_believer_incumbent_is_the_best_target_of_the_fantasy_data():
    model, best = _model()
    fixed = torch.tensor([[0.25, 0.25], [0.9, 0.1]], dtype=torch.float64)  # sin(6x) sums near its peak, and low
    got = believer_best_f(model, best, fixed)
    assert got.shape == (3,)
    for k in range(3):  # each candidate's fantasy data: the observations plus its posterior means at fixed
        fantasy = model.select(k).posterior(fixed).mean.detach().reshape(-1)
        torch.testing.assert_close(got[k], torch.cat([torch.tensor([best], dtype=torch.float64), fantasy]).max())
    assert bool((got > best).any())  # the first point's believed value beats the observations
    torch.testing.assert_close(believer_best_f(model, best, None), torch.full((3,), best, dtype=torch.float64))
    torch.testing.assert_close(believer_best_f(model, best, fixed[:0]), torch.full((3,), best, dtype=torch.float64))


def test_plugin_incumbent_is_each_candidates_best_posterior_mean_at_the_observed_points():
    g = torch.Generator().manual_seed(4)
    X = torch.rand(12, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(6 * X).sum(-1, keepdim=True) + 0.3 * torch.randn(12, 1, generator=g, dtype=torch.float64)
    cands = KernelCandidates.from_lengthscales(torch.tensor([0.4, 0.2, 0.1], dtype=torch.float64), kernel="rbf", noise=0.09)
    model = CandidateGP(X, Y, cands, outcome_transform=Standardize(m=1))
    got = plugin_best_f(model)
    assert got.shape == (3,) and not got.requires_grad
    for k in range(3):  # brute force: BoTorch's posterior of that candidate at every observed point
        torch.testing.assert_close(got[k], model.select(k).posterior(X).mean.detach().max())
    assert bool((got < Y.max()).all())  # with noise the model does not believe the luckiest observation
    fixed = torch.tensor([[0.25, 0.25]], dtype=torch.float64)
    believed = believer_best_f(model, got, fixed)  # one incumbent per candidate, raised to the believed values
    for k in range(3):
        torch.testing.assert_close(believed[k], torch.maximum(got[k], model.select(k).posterior(fixed).mean.detach().max()))
    with pytest.raises(ValueError, match=r"best_observed must be a scalar or 3 values, got shape \(2,\)"):
        believer_best_f(model, got[:2], fixed)
