import math

import pytest
import torch
from botorch.acquisition import qLogNoisyExpectedImprovement
from botorch.models.transforms import Normalize, Standardize
from botorch.sampling import SobolQMCNormalSampler
from botorch.utils.sampling import manual_seed

from botorch_unknown_hypers.acquisition.lognei import LOGNEI_SAMPLES, CandidateLogNEI
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.factor_cache import FactorCache

SEED = 11


def _model():
    r"""Noisy observations on a box (not the unit cube), three candidates on cached factors, as the presets build them."""
    g = torch.Generator().manual_seed(0)
    bounds = torch.tensor([[-1.0, 0.0], [2.0, 3.0]], dtype=torch.float64)
    X = bounds[0] + (bounds[1] - bounds[0]) * torch.rand(15, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(2 * X).sum(-1, keepdim=True) + 0.2 * torch.randn(15, 1, generator=g, dtype=torch.float64)
    spec = KernelCandidates.from_lengthscales(torch.tensor([0.4, 0.2, 0.1], dtype=torch.float64), noise=0.05)
    factor = FactorCache().factor(spec, (X - bounds[0]) / (bounds[1] - bounds[0]))
    model = CandidateGP(X, Y, spec, input_transform=Normalize(2, bounds=bounds), outcome_transform=Standardize(m=1), factor=factor)
    Z = bounds[0] + (bounds[1] - bounds[0]) * torch.rand(6, 2, generator=g, dtype=torch.float64)
    return model, X, Z, bounds


def _reference(model, X, u, X_pending=None):
    r"""BoTorch's qLogNEI built directly on candidate ``u``, the global RNG seeded as the class seeds it."""
    with manual_seed(SEED):
        sampler = SobolQMCNormalSampler(sample_shape=torch.Size([LOGNEI_SAMPLES]), seed=SEED)
        return qLogNoisyExpectedImprovement(model.select(u, factors=False), X, sampler=sampler, X_pending=X_pending)


@pytest.mark.parametrize("pending", [False, True])
def test_each_candidate_equals_botorch_qlognei_of_that_candidate(pending):
    model, X, Z, _ = _model()
    P = Z[:2] if pending else None
    acqf = CandidateLogNEI(model, X, SEED, X_pending=P)
    values = acqf.candidate_values(Z)
    assert values.shape == (6, 3)
    for u in range(3):
        ref = _reference(model, X, u, P)
        # BoTorch's raw-scale value, computed on the standardised scale (the class's docstring):
        # equal up to rounding at q = 1, except at the pending points themselves, where the joint
        # covariance is singular and the jitter BoTorch adds acts on each scale differently; at
        # q = 2 the joint samples of the two points differ by about 1e-8 between the scales
        rows = slice(2, None) if pending else slice(None)
        torch.testing.assert_close(values[rows, u], ref(Z.unsqueeze(-2))[rows], rtol=1e-12, atol=1e-12)
        pair = Z[2:].reshape(2, 2, 2)  # q = 2 batches
        assert torch.allclose(acqf.q_values(pair)[:, u], ref(pair), rtol=1e-7, atol=1e-7)
        if pending:  # BoTorch's incremental improvement: the pending points join the pruned baseline
            torch.testing.assert_close(acqf.acqfs[u].X_baseline[-2:], P)
    torch.testing.assert_close(acqf(Z.unsqueeze(-2)), values.max(-1).values)
    assert acqf(Z[2:].reshape(2, 2, 2)).shape == (2,)
    select = CandidateLogNEI(model, X, SEED, reduction="select", index=2, X_pending=P)
    torch.testing.assert_close(select(Z.unsqueeze(-2)), values[:, 2])
    assert select.candidate_values(Z).shape == (6, 1)


def test_deterministic_given_the_seed_and_the_callers_rng_untouched():
    model, X, Z, _ = _model()
    state = torch.get_rng_state()
    a = CandidateLogNEI(model, X, SEED).candidate_values(Z)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(CandidateLogNEI(model, X, SEED).candidate_values(Z), a)
    assert not torch.equal(CandidateLogNEI(model, X, SEED + 1).candidate_values(Z), a)  # other Sobol samples


def test_finite_with_gradients_at_an_observed_point_and_low_at_a_pending_one():
    model, X, Z, _ = _model()
    acqf = CandidateLogNEI(model, X, SEED)
    at = X.clone().unsqueeze(-2).requires_grad_(True)  # every observed point, the incumbents among them
    values = acqf(at)
    values.sum().backward()
    assert torch.isfinite(values).all() and torch.isfinite(at.grad).all()
    best = Z[int(acqf(Z.unsqueeze(-2)).argmax())].unsqueeze(0)
    pending = CandidateLogNEI(model, X, SEED, X_pending=best)
    # a second evaluation at a pending point improves on it by (almost) nothing
    assert float(pending(best.unsqueeze(0))) < float(acqf(best.unsqueeze(0))) - 5.0


def test_an_objective_on_a_huge_scale_gives_its_unit_scale_values_shifted_and_finite_gradients():
    # Targets spread over 1e9 (as BBOB's Bent Cigar): computed on the standardised scale, the
    # values are the unit-scale model's plus log(1e9) and the gradients finite, at observed points
    # too. (The NaN gradients the raw scale gave are reproduced by the policy test of
    # acquisition="lognei" on Bent Cigar, tests/policies/presets/test_auto.py.)
    g = torch.Generator().manual_seed(1)
    X = torch.rand(12, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(4 * X).sum(-1, keepdim=True)
    spec = KernelCandidates.from_lengthscales(torch.tensor([0.3, 0.15], dtype=torch.float64), noise=1e-6)
    unit = CandidateGP(X, Y, spec, outcome_transform=Standardize(m=1))
    huge = CandidateGP(X, 1e9 * Y + 5e9, spec, outcome_transform=Standardize(m=1))
    batch = torch.cat([X[:3], torch.rand(5, 2, generator=g, dtype=torch.float64)]).unsqueeze(-2)
    batch = batch.clone().requires_grad_(True)
    values = CandidateLogNEI(huge, X, SEED)(batch)
    values.sum().backward()
    assert torch.isfinite(values).all() and torch.isfinite(batch.grad).all()
    # away from the data the improvement is far above BoTorch's smoothing temperatures (absolute,
    # in the targets' units), and the value is the unit-scale one plus log(1e9); at the observed
    # points it is set by those temperatures, so the two scales differ there
    expected = CandidateLogNEI(unit, X, SEED)(batch.detach()[3:]) + math.log(1e9)
    torch.testing.assert_close(values.detach()[3:], expected, rtol=1e-6, atol=1e-6)


def test_pending_view_and_bad_arguments_are_named():
    model, X, Z, _ = _model()
    with pytest.raises(ValueError, match="reduction"):
        CandidateLogNEI(model, X, SEED, reduction="weighted")
    with pytest.raises(ValueError, match="index must be given"):
        CandidateLogNEI(model, X, SEED, reduction="select", index=3)
    with pytest.raises(ValueError, match="X_baseline must be n x 2"):
        CandidateLogNEI(model, X[:0], SEED)
    with pytest.raises(ValueError, match="X_pending must be p x 2"):
        CandidateLogNEI(model, X, SEED, X_pending=Z[:, :1])
    with pytest.raises(ValueError, match="factors=False needs a model without pending points"):
        CandidateLogNEI(model.condition_on_pending(Z[:1]), X, SEED)  # the caller hands the model on the data observed
    empty = CandidateLogNEI(model, X, SEED, X_pending=Z[:0])  # no pending rows: as without
    torch.testing.assert_close(empty.candidate_values(Z), CandidateLogNEI(model, X, SEED).candidate_values(Z))


@pytest.mark.parametrize("pending", [False, True])
def test_average_is_the_model_average_of_the_candidates_qlognei(pending):
    # BoTorch's ensemble averaging: log (1/K) sum_k NEI_k, each draw with its own noisy incumbent;
    # against the log-mean-exp of the candidates' own qLogNEI (separate samples: Monte Carlo error)
    model, X, Z, _ = _model()
    P = Z[:2] if pending else None
    rows = slice(2, None) if pending else slice(None)
    average = CandidateLogNEI(model, X, SEED, reduction="average", X_pending=P, num_samples=4096)
    each = CandidateLogNEI(model, X, SEED, X_pending=P, num_samples=4096).candidate_values(Z)
    reference = torch.logsumexp(each, dim=-1) - math.log(3)
    values = average(Z.unsqueeze(-2))
    assert values.shape == (6,) and len(average.acqfs) == 1
    torch.testing.assert_close(values[rows], reference[rows], rtol=0, atol=0.02)
    assert average.candidate_values(Z).shape == (6, 1)
    assert average(Z[2:].reshape(2, 2, 2)).shape == (2,)
    # identical candidates average to the one candidate's value
    same = CandidateGP(
        model.raw_train_X, model.raw_train_Y, model.candidates.subset([1, 1, 1]),
        input_transform=Normalize(2, bounds=_model()[3]), outcome_transform=Standardize(m=1),
    )
    one = CandidateLogNEI(model, X, SEED, reduction="select", index=1, X_pending=P, num_samples=4096)
    torch.testing.assert_close(
        CandidateLogNEI(same, X, SEED, reduction="average", X_pending=P, num_samples=4096)(Z.unsqueeze(-2))[rows],
        one(Z.unsqueeze(-2))[rows], rtol=0, atol=0.02,
    )


def test_average_has_gradients_and_refuses_a_model_without_standardize():
    model, X, Z, bounds = _model()
    Zg = Z.unsqueeze(-2).clone().requires_grad_(True)
    CandidateLogNEI(model, X, SEED, reduction="average")(Zg).sum().backward()
    assert torch.isfinite(Zg.grad).all() and Zg.grad.abs().sum() > 0
    raw = CandidateGP(model.raw_train_X, model.raw_train_Y, model.candidates, input_transform=Normalize(2, bounds=bounds))
    with pytest.raises(ValueError, match="reduction='average' needs a model whose outcome transform is Standardize"):
        CandidateLogNEI(raw, X, SEED, reduction="average")
    with pytest.raises(ValueError, match=r"reduction must be one of \('max', 'select', 'average'\), got 'mean'"):
        CandidateLogNEI(model, X, SEED, reduction="mean")
