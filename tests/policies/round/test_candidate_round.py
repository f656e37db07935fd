"""The candidate-set round (botorch_unknown_hypers.policies.round.candidate_round and .pieces).

A rule is a configuration of pieces: HE-GP-UCB configured by hand from the pieces is HE-GP-UCB,
suggestion for suggestion (batches and pending points included), and the new rule written in
docs/architecture.md runs as written. The prior-elimination rules run the same round with a
model of every prior and unconditioned slots, each slot recorded on the data observed.
"""

from __future__ import annotations

import math
import sys
import types
from dataclasses import dataclass

import pytest
import torch

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.domains import FiniteDomain
from botorch_unknown_hypers.policies import registry
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.elimination.he_gp_ucb import HEGPUCB, EliminationState
from botorch_unknown_hypers.checks import check_probability
from botorch_unknown_hypers.policies.round.candidate_round import CandidateSetRound
from botorch_unknown_hypers.policies.prior_selection.prior_elimination import PEGPTS, PEGPUCB
from botorch_unknown_hypers.policies.prior_selection.prior_pieces import PriorEliminationTest, PriorEliminationBetas
from botorch_unknown_hypers.policies.round.slots import fill_slots
from botorch_unknown_hypers.policies.round.candidate_set import CandidateSetBetas
from botorch_unknown_hypers.policies.round.shared_pieces import (
    DoublyOptimisticUCB,
    FixedCandidates,
    FrequentistBetas,
    PrequentialElimination,
    UnitCubeModel,
)
from tests.prior_helpers import data, small_priors, textbook_posterior
from tests.test_docs import DOCS, python_blocks

D = torch.float64


class HandMadeHE(HEGPUCB):
    r"""HE-GP-UCB with its round rebuilt piece by piece (what its module configures)."""

    def __init__(self, domain, **kwargs):
        super().__init__(domain, **kwargs)
        self.candidate_round = CandidateSetRound(
            FixedCandidates(self.candidates), UnitCubeModel(fixed_raw_points=True),
            CandidateSetBetas(self.beta, self.B, self.noise_std, self.delta, self.lipschitz), DoublyOptimisticUCB(),
            PrequentialElimination(self.noise_std, self.delta),
        )


def _f(X):
    return (torch.sin(6 * X[:, :1]) + X[:, 1:].cos()).reshape(-1, 1)


def test_a_configuration_of_the_pieces_is_the_rule():
    points = torch.quasirandom.SobolEngine(2, scramble=True, seed=3).draw(40, dtype=D)
    candidates = KernelCandidates.from_lengthscales(torch.tensor([0.5, 0.2, 0.05], dtype=D), noise=1e-4)
    policies = [cls(FiniteDomain(points), seed=2, candidates=candidates) for cls in (HEGPUCB, HandMadeHE)]
    X, Y = points[:4], _f(points[:4])
    for _ in range(3):
        batches = [p.suggest(X, Y, q=2, X_pending=points[30:31]) for p in policies]
        assert torch.equal(*batches)
        for p, batch in zip(policies, batches):
            p.observe(batch.flip(0), _f(batch.flip(0)))  # values in another order
        X, Y = torch.cat([X, batches[0]]), torch.cat([Y, _f(batches[0])])
    assert policies[0].state == policies[1].state and policies[0].diagnostics == policies[1].diagnostics
    assert policies[0].state.round == 6 and not policies[0].state.pending


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, float("nan"), True, "0.1"])
def test_delta_is_checked_once_by_the_pieces_that_use_it(delta):
    with pytest.raises(ValueError, match="delta must be"):
        check_probability("delta", delta)
    with pytest.raises(ValueError, match="delta must be"):
        PrequentialElimination(0.1, delta)
    with pytest.raises(ValueError, match="delta must be"):
        FrequentistBetas(1.0, 0.1, delta)


def test_the_rule_written_as_a_configuration_in_the_docs_runs(monkeypatch):
    blocks = [b for b in python_blocks(DOCS / "architecture.md") if "class StandardisedHE" in b or "standardised-he" in b]
    assert len(blocks) == 2
    rule = next(b for b in blocks if "class StandardisedHE" in b)
    assert len(rule.strip().splitlines()) <= 30  # a new rule in at most 30 lines
    module = types.ModuleType("docs_engine")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(registry, "METHODS", dict(registry.METHODS))
    for block in blocks:
        exec(compile(block, "docs/architecture.md", "exec"), module.__dict__)
    policy = module.policy
    assert isinstance(policy, Policy) and isinstance(policy.state, EliminationState)
    restored = registry.make_policy("standardised-he", policy.domain, candidates=policy.candidates)
    restored.load_state_dict(policy.state_dict())
    assert restored.state == policy.state


# ------------------------------------------------------------------ prior elimination on the round
@pytest.mark.parametrize("delta", [0.0, 1.0, float("nan")])
def test_the_prior_elimination_pieces_check_delta(delta):
    with pytest.raises(ValueError, match="delta must be"):
        PriorEliminationBetas(delta)
    with pytest.raises(ValueError, match="delta must be"):
        PriorEliminationTest(delta, None)


def test_unconditioned_slots_see_the_round_model_and_the_points_to_exclude():
    model, seen = object(), []  # no condition_on_pending: an unconditioned slot never asks for it

    def maximise(view, fixed, warm):
        seen.append((view is model, fixed.shape[0]))
        return torch.full((1, 2), float(len(seen)), dtype=D), warm

    X = fill_slots(model, torch.zeros(1, 2, dtype=D), 3, maximise, condition=None)
    assert seen == [(True, 1), (True, 2), (True, 3)] and X[:, 0].tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("cls", [PEGPTS, PEGPUCB])
def test_prior_elimination_records_every_slot_on_the_data_observed(cls):
    priors = small_priors(D, "cpu")
    domain = FiniteDomain(priors.arms)
    policy = cls(domain, priors=priors, seed=1)
    assert isinstance(policy.candidate_round, CandidateSetRound) and policy.candidate_round.selector == policy.selection()
    observed = [2, 5, 11]
    X, Y = data(priors, observed)
    q, pending = (3, priors.arms[3:4]) if cls is PEGPTS else (1, None)
    batch = policy.suggest(X, Y, q=q, X_pending=pending)
    arms = domain.index_of(batch).tolist()
    assert len(set(arms)) == q and 3 not in arms[: q if pending is not None else 0]
    mean, variance = textbook_posterior(priors, observed, Y.reshape(-1))
    for play, arm in zip(policy.state.pending, arms):  # on the data observed, not on earlier slots
        assert play.mean == pytest.approx(float(mean[play.candidate, arm]), abs=1e-8)
        assert play.width == pytest.approx(play.beta * math.sqrt(float(variance[play.candidate, arm])), abs=1e-8)
    assert list(policy.diagnostics) == ["prior", "true_prior", "sigma", "sqrt_beta"]
    assert policy.diagnostics["sqrt_beta"] == policy.sqrt_beta(1) == policy.state.pending[0].beta
    played = [p.candidate for p in policy.state.pending]
    policy.observe(batch.flip(0), torch.linspace(0.0, 1.0, q, dtype=D).reshape(-1, 1))  # values in another order
    assert policy.state.round == q and not policy.state.pending and policy.state.play_prior == played[::-1]
    assert list(policy.diagnostics)[-2:] == ["active", "n_active"] and policy.diagnostics["n_active"] >= 1


@dataclass(frozen=True)
class SignedBetas(CandidateSetBetas):
    r"""HE's widths times ``sign`` (a piece that returns negative widths when ``sign < 0``)."""

    sign: float = 1.0

    def __call__(self, ctx, state, model, info, t, candidates):
        return self.sign * super().__call__(ctx, state, model, info, t, candidates)


class SignedHE(HEGPUCB):
    def __init__(self, domain, sign=1.0, **kwargs):
        super().__init__(domain, **kwargs)
        self.candidate_round = CandidateSetRound(
            FixedCandidates(self.candidates), UnitCubeModel(fixed_raw_points=True),
            SignedBetas(self.beta, self.B, self.noise_std, self.delta, self.lipschitz, sign=sign), DoublyOptimisticUCB(),
            PrequentialElimination(self.noise_std, self.delta),
        )


def test_the_round_checks_the_widths_a_piece_returns_and_refuses_negative_ones():
    points = torch.quasirandom.SobolEngine(2, scramble=True, seed=3).draw(40, dtype=D)
    candidates = KernelCandidates.from_lengthscales(torch.tensor([0.5, 0.2, 0.05], dtype=D), noise=1e-4)
    X = points[:5]
    plain, signed = HEGPUCB(FiniteDomain(points), seed=2, candidates=candidates), SignedHE(FiniteDomain(points), seed=2, candidates=candidates)
    assert torch.equal(plain.suggest(X, _f(X)), signed.suggest(X, _f(X)))
    refused = SignedHE(FiniteDomain(points), sign=-1.0, seed=2, candidates=candidates)
    before = refused.state_dict()
    with pytest.raises(ValueError, match=r"^betas: .* must be finite and >= 0, got \[-"):
        refused.suggest(X, _f(X))
    assert refused.state_dict() == before


def test_an_he_slot_on_a_box_records_its_mean_and_sigma_as_numbers_from_the_ledgers_copy(monkeypatch):
    from botorch_unknown_hypers.domains import BoxDomain

    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=D))
    candidates = KernelCandidates.from_lengthscales(torch.tensor([0.5, 0.2, 0.05], dtype=D), noise=1e-4)
    policy = HEGPUCB(domain, seed=2, candidates=candidates, num_restarts=2, raw_samples=16)
    X = torch.quasirandom.SobolEngine(2, scramble=True, seed=3).draw(5, dtype=D)
    x = policy.suggest(X, _f(X))
    play = policy.state.pending[-1]
    assert type(play.mean) is float and type(play.width) is float and type(policy.diagnostics["sigma"]) is float
    assert play.width == play.beta * policy.diagnostics["sigma"]
    model = policy.candidate_round.model(policy.context, policy.state, candidates, X, _f(X))[0]
    with torch.no_grad():
        mean, variance = model.marginal_mean_variance(x.unsqueeze(0))
    k = policy.diagnostics["played"]
    assert play.mean == float(mean[k, 0]) and policy.diagnostics["sigma"] == float(variance[k, 0].clamp_min(0).sqrt())


def test_the_widths_are_read_with_the_rounds_first_decision_and_a_failed_check_leaves_the_rule_as_it_was():
    r"""HE's widths and its scaler's values reach the host with the ledger's copy (no read of
    their own), the widths checked there; a check that fails there raises its named error after the
    search has drawn from the rule's generator, and the generator, the pending plays and the
    saved state are as they were before the call."""
    import json
    from dataclasses import replace

    from botorch_unknown_hypers.confidence import frequentist_beta
    from botorch_unknown_hypers.domains import BoxDomain
    from botorch_unknown_hypers.policies import make_policy
    from botorch_unknown_hypers.policies.round.candidate_round import PredictionLedger, RoundData, Betas
    from tests.host_reads import record_reads

    class NaNBetas(Betas):
        def __call__(self, ctx, state, model, info, t, candidates):
            gains = torch.full((model.num_candidates,), math.nan, dtype=torch.float64)
            return frequentist_beta(gains, B=1.0, R=0.1, delta=0.05, checked=False)

    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    X = torch.rand(8, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    Y = (X - 0.3).square().sum(-1, keepdim=True).neg()
    policy = make_policy("he-gp-ucb", box, seed=0, num_restarts=2, raw_samples=16)
    policy.observe(policy.suggest(X, Y), torch.tensor([[0.0]], dtype=torch.float64))
    engine = policy.candidate_round

    class FailingLedger(PredictionLedger):  # a prediction ledger, as the elimination test reads
        def record(self, data, slots):
            data.y_std  # the round's values are read
            raise ValueError("the ledger failed")

    drawn, saved = policy.generator.get_state(), json.dumps(policy.state_dict(), sort_keys=True)
    for pieces, match in (({"betas": NaNBetas()}, r"^betas: .*nan"), ({"ledger": FailingLedger()}, r"^the ledger failed$")):
        policy.candidate_round = replace(engine, **pieces)
        with pytest.raises(ValueError, match=match):
            policy.suggest(X, Y)
        assert torch.equal(policy.generator.get_state(), drawn)
        assert json.dumps(policy.state_dict(), sort_keys=True) == saved and policy.state.pending == []
    lb = make_policy("lb-gp-ucb", box, seed=0, num_restarts=2, raw_samples=16)
    lb.observe(lb.suggest(X, Y), torch.tensor([[0.0]], dtype=torch.float64))
    lb.candidate_round = replace(lb.candidate_round, betas=NaNBetas())
    lb_drawn, lb_saved = lb.generator.get_state(), json.dumps(lb.state_dict(), sort_keys=True)
    with pytest.raises(ValueError, match=r"^betas: .*nan"):  # LB's search fails on the NaN width first
        lb.suggest(X, Y)
    assert torch.equal(lb.generator.get_state(), lb_drawn) and json.dumps(lb.state_dict(), sort_keys=True) == lb_saved
    policy.candidate_round = engine  # the stream as it was: the point a rule resumed from the saved state proposes
    twin = make_policy("he-gp-ucb", box, seed=0, num_restarts=2, raw_samples=16)
    twin.load_state_dict(json.loads(saved))
    assert torch.equal(policy.suggest(X, Y), twin.suggest(X, Y))

    class Scaler:
        stdvs, means = torch.tensor([2.0], dtype=torch.float64), torch.tensor([0.5], dtype=torch.float64)

    betas = frequentist_beta(torch.tensor([0.5, 1.5], dtype=torch.float64), B=1.0, R=0.1, delta=0.05, checked=False)
    data = RoundData(X, Y, 1, [0, 1], None, None, None, betas, None, Scaler())
    reads = []
    with pytest.MonkeyPatch.context() as patch:
        reads = record_reads(patch)
        (first,) = data.host(torch.tensor([3.0, 4.0], dtype=torch.float64))
        values = (data.y_std, data.y_mean, data.host_betas())
    assert reads == ["tolist"] and first == [3.0, 4.0]  # one copy for the round's values and the decision
    assert values == (2.0, 0.5, betas.tolist())


def test_the_prediction_ledger_reads_a_slot_position_left_on_the_device_with_its_values():
    r"""A slot whose played position is a ``0-d`` tensor (the ``auto`` preset's doubly optimistic
    pair) is recorded as the same slot with the position as an ``int``, in the one copy of the
    point, width and moments."""
    from botorch_unknown_hypers.candidates import KernelCandidates
    from botorch_unknown_hypers.domains import BoxDomain
    from botorch_unknown_hypers.models.candidate_gp import CandidateGP
    from botorch_unknown_hypers.policies import make_policy
    from botorch_unknown_hypers.policies.round.candidate_round import PredictionLedger, RoundData, Slot
    from tests.host_reads import record_reads

    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    X = torch.rand(10, 2, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    Y = torch.sin(4 * X).sum(-1, keepdim=True)
    spec = KernelCandidates.from_lengthscales(torch.tensor([0.1, 0.3, 0.6], dtype=torch.float64), noise=1e-4)
    model = CandidateGP(X, Y, spec)
    x = torch.tensor([[0.4, 0.7]], dtype=torch.float64)
    model.marginal_mean_variance(x.unsqueeze(0))  # the model's one-off checks and caches
    betas = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    recorded = []
    for local in (2, torch.tensor(2)):
        rule = make_policy("he-gp-ucb", box, seed=0)
        data = RoundData(X, Y, 1, [4, 5, 6], model, None, None, betas, rule.state)
        with pytest.MonkeyPatch.context() as patch:
            reads = record_reads(patch)
            (slot,) = PredictionLedger().record(data, [Slot(x, local)])
        assert reads == ["tolist"] and type(slot.local) is int and slot.local == 2
        recorded.append((slot, rule.state.pending))
    assert recorded[0] == recorded[1] and recorded[0][1][0].candidate == 6


def test_a_test_and_a_ledger_that_do_not_pair_are_refused_by_name():
    r"""A prequential test reads :math:`\mu` and :math:`w` (the prediction ledger's records);
    balancing's test reads the play ledger's: the round refuses a pairing that would run without
    an error and test the wrong numbers."""
    from botorch_unknown_hypers.policies.balancing.balancing_pieces import BalancingElimination, CountRounds, NoRecord, PlayLedger
    from botorch_unknown_hypers.policies.round.candidate_round import CandidateSetRound, PredictionLedger
    from botorch_unknown_hypers.policies.round.shared_pieces import (
        DoublyOptimisticUCB, FixedCandidates, FrequentistBetas, PrequentialElimination, UnitCubeModel)

    fixed = FixedCandidates(KernelCandidates.from_lengthscales(torch.tensor([0.5], dtype=D)))
    parts = dict(source=fixed, model=UnitCubeModel(), betas=FrequentistBetas(1.0, 0.1, 0.01, noise=0.01),
                 selector=DoublyOptimisticUCB())
    CandidateSetRound(**parts, test=PrequentialElimination(0.1, 0.01))  # the default ledger pairs with it
    with pytest.raises(ValueError, match="ledger: PrequentialElimination reads the records of PredictionLedger, got PlayLedger"):
        CandidateSetRound(**parts, test=PrequentialElimination(0.1, 0.01), ledger=PlayLedger())
    balancing = BalancingElimination(0.1, 0.01, 2.0, "introduced", 2.0, fixed)
    with pytest.raises(ValueError, match="reads the records of PlayLedger, got PredictionLedger"):
        CandidateSetRound(**parts, test=balancing, ledger=PredictionLedger())
    CandidateSetRound(**parts, test=balancing, ledger=PlayLedger())
    CandidateSetRound(**parts, test=CountRounds(), ledger=NoRecord())  # a test that reads nothing takes any ledger


def test_a_selector_that_conditions_on_pending_points_needs_a_model_that_gives_them():
    r"""A BUCB-style selector chooses each slot on the model conditioned on the pending points; the
    priors' model does not condition, so the round refuses that pairing by name at configuration
    instead of failing in a later round's second slot."""
    from botorch_unknown_hypers.policies.prior_selection.prior_pieces import (
        ActivePriors, JointThompson, PriorsOnData, SelectedPrior)

    models = None  # never called: the pairing is refused before any round
    parts = dict(source=ActivePriors(models), model=PriorsOnData(models), betas=PriorEliminationBetas(0.05),
                 test=PriorEliminationTest(0.05, models), subset=SelectedPrior())
    CandidateSetRound(**parts, selector=JointThompson())  # independent draws: no conditioned view needed
    with pytest.raises(ValueError, match="selector: DoublyOptimisticUCB chooses each slot on the model conditioned "
                                         "on the pending points, which PriorsOnData does not give"):
        CandidateSetRound(**parts, selector=DoublyOptimisticUCB())
    assert UnitCubeModel.conditions_on_pending and not PriorsOnData.conditions_on_pending


def test_the_unit_cube_model_hands_the_slots_its_pending_conditioned_view():
    r"""``pending_view`` is the candidate GP's own ``condition_on_pending``: the mean stays, the
    variance at a pending point falls to the noise level."""
    from botorch_unknown_hypers.models.candidate_gp import CandidateGP

    X = torch.tensor([[0.1], [0.9]], dtype=D)
    gp = CandidateGP(X, torch.tensor([[0.0], [1.0]], dtype=D), KernelCandidates.from_lengthscales(torch.tensor([0.3], dtype=D)))
    x = torch.tensor([[0.5]], dtype=D)
    view = UnitCubeModel().pending_view(gp, x)
    mean, variance = gp.marginal_mean_variance(x.unsqueeze(0))
    mean_v, variance_v = view.marginal_mean_variance(x.unsqueeze(0))
    assert torch.allclose(mean, mean_v) and float(variance_v) < 0.5 * float(variance)
