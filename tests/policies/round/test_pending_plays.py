import json
import math
import random

import pytest
import torch
from botorch.acquisition import LogExpectedImprovement
from botorch.models.transforms import Normalize

from botorch_unknown_hypers.acquisition.optimize import EXCLUDE_TOL
from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain
from botorch_unknown_hypers.loop import AskTellOptimizer
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.marginal import MarginalModel
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.policies.base import STATE_VERSION
from botorch_unknown_hypers.policies.balancing.hyperparameter_balancing import standardised_candidate_gp
from botorch_unknown_hypers.policies.round.pending_plays import MATCH_TOL, match_pending
from tests.host_reads import record_reads

D = torch.float64
FAST = {"num_restarts": 2, "raw_samples": 64}
BATCH_RULES = ("lb-gp-ucb", "hb-gp-ucb", "lnb-gp-ucb", "he-gp-ucb", "lb-gp-ucb-auto", "he-gp-ucb-auto")
BOX = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=D))


def _f(X):
    return (torch.sin(5 * X[:, 0]) + 0.5 * torch.cos(3 * X[:, 1]) - 0.1 * X[:, 0]).unsqueeze(-1)


def _pool(n=40):
    return FiniteDomain(torch.rand(n, 2, generator=torch.Generator().manual_seed(7), dtype=D))


def _start(kind):
    domain = BOX if kind == "box" else _pool()
    X0 = torch.rand(8, 2, generator=torch.Generator().manual_seed(1), dtype=D) if kind == "box" else domain.points[:8]
    pending = torch.rand(3, 2, generator=torch.Generator().manual_seed(2), dtype=D) if kind == "box" else domain.points[8:11]
    return domain, X0, _f(X0), pending


def _min_distance(A, B):
    return float(torch.cdist(A, B).min()) if A.shape[0] and B.shape[0] else float("inf")


def test_match_pending_by_point_in_any_order():
    points = [[0.1, 0.2], [0.5, 0.5], [0.9, 0.1], [0.5, 0.5]]
    X = torch.tensor([[0.9, 0.1], [0.5, 0.5], [0.3, 0.3], [0.5, 0.5 + 0.5 * MATCH_TOL], [0.5, 0.5]], dtype=D)
    # the duplicated point is matched twice, once per play; a third copy and a far row match nothing
    assert match_pending(points, X, BOX) == [2, 1, None, 3, None]
    assert match_pending([], X, BOX) == [None] * 5
    assert match_pending([None], X[:1], BOX) == [0]  # a play saved without its point takes one row
    assert match_pending([None], X[:2], BOX) == [None, None]
    assert match_pending([[0.5, 0.5]], torch.tensor([[0.5, 0.5 + 2e-9]], dtype=D), BOX) == [None]


def test_match_pending_reads_the_distances_in_one_copy(monkeypatch):
    points = [[0.1, 0.2], [0.5, 0.5], [0.9, 0.1]]
    X = torch.tensor([[0.9, 0.1], [0.5, 0.5], [0.3, 0.3]], dtype=D)
    reads = record_reads(monkeypatch)
    assert match_pending(points, X, BOX) == [2, 1, None]
    assert reads == ["tolist"]


def test_observations_come_with_their_plays_rows_and_values_from_one_copy(monkeypatch):
    from types import SimpleNamespace

    from botorch_unknown_hypers.policies.round.pending_plays import ObservedRow, PendingPlay, take_observations

    plays = [PendingPlay(0, [0.1, 0.2]), PendingPlay(1, [0.5, 0.5]), PendingPlay(2, [0.9, 0.1])]
    X = torch.tensor([[0.9, 0.1], [0.3, 0.3], [0.5, 0.5]], dtype=D)
    Y = torch.tensor([[1.5], [-0.25], [2.0]], dtype=torch.float32)
    state = SimpleNamespace(pending=list(plays))
    rows = X.tolist()
    reads = record_reads(monkeypatch)
    out = take_observations(state, X, Y, BOX)
    assert reads == ["tolist"]
    assert out.rows == [ObservedRow(plays[2], rows[0], 1.5), ObservedRow(None, rows[1], -0.25), ObservedRow(plays[1], rows[2], 2.0)]
    assert list(out.plays()) == [(plays[2], 1.5), (plays[1], 2.0)] and state.pending == [plays[0]]
    assert out.Y.shape == (3, 1) and out.X is X
    unrecorded = SimpleNamespace(pending=[PendingPlay(4, None)])  # a play saved without its point takes a single row
    assert list(take_observations(unrecorded, X[:1], Y[:1], BOX).plays()) == [(PendingPlay(4, None), 1.5)]
    assert reads == ["tolist"] * 2 and unrecorded.pending == []


def test_a_refused_verdict_read_with_the_match_raises_the_named_error_and_takes_no_play(monkeypatch):
    from types import SimpleNamespace

    from botorch_unknown_hypers.domains import observation_checks
    from botorch_unknown_hypers.policies.round.pending_plays import PendingPlay, take_observations

    plays = [PendingPlay(0, [0.1, 0.2]), PendingPlay(1, [0.5, 0.5])]
    X = torch.tensor([[0.5, 0.5], [0.3, 0.3]], dtype=D)
    for Y, message in ((torch.tensor([2.0, float("nan")], dtype=D), "Y must be finite"), (torch.tensor([2.0, 1.0], dtype=D), "X must lie in the box")):
        X_bad = X.clone()
        if message.startswith("X"):
            X_bad[1, 0] = 1.5
        X_checked, Y_checked, verdict = observation_checks(BOX, X_bad, Y, "X", "Y")
        state = SimpleNamespace(pending=list(plays))
        reads = record_reads(monkeypatch)
        with pytest.raises(ValueError, match=message):
            take_observations(state, X_checked, Y_checked, BOX, verdict)
        assert reads[0] == "tolist" and state.pending == plays  # the verdict came with the match's copy
        monkeypatch.undo()
    X_checked, Y_checked, verdict = observation_checks(BOX, X, torch.tensor([2.0, 1.0], dtype=D), "X", "Y")
    state = SimpleNamespace(pending=list(plays))
    reads = record_reads(monkeypatch)
    assert list(take_observations(state, X_checked, Y_checked, BOX, verdict).plays()) == [(plays[1], 2.0)]
    assert reads == ["tolist"] and state.pending == [plays[0]]


@pytest.mark.parametrize("kind", ["box", "pool"])
@pytest.mark.parametrize("name", BATCH_RULES)
def test_a_batch_avoids_pending_points_and_its_own_slots(name, kind):
    domain, X0, Y0, pending = _start(kind)
    policy = make_policy(name, domain, seed=0, **FAST)
    X = policy.suggest(X0, Y0, q=4, X_pending=pending)
    assert X.shape == (4, 2) and len(policy.selected) == 4 and len(policy.state.pending) == 4
    assert _min_distance(X, pending) >= EXCLUDE_TOL
    assert float(torch.pdist(X).min()) >= EXCLUDE_TOL
    if kind == "pool":  # q distinct pool points, none of them pending
        assert len({tuple(x) for x in X.tolist()}) == 4
        assert all(any(torch.equal(x, p) for p in domain.points) for x in X)


def test_a_pool_batch_stops_when_every_unused_point_is_taken():
    domain = _pool(6)
    policy = make_policy("he-gp-ucb", domain, seed=0, **FAST)
    X = policy.suggest(domain.points[:2], _f(domain.points[:2]), q=6)
    assert len({tuple(x) for x in X.tolist()}) == 6  # the whole pool, each point once
    with pytest.raises(ValueError, match="every pool point is pending"):
        policy.suggest(domain.points[:2], _f(domain.points[:2]), q=1, X_pending=domain.points)


def _refit(model, u, slot, points, standardised):
    r"""Brute force: candidate ``u`` refitted with ``slot`` added at its posterior mean.

    Returns the refit's variance at ``points`` and its best target (the Kriging Believer's
    incumbent), both in the raw units of ``model``'s outputs.
    """
    X, Y = model.raw_train_X, model.raw_train_Y
    fantasy = model.select(u).posterior(slot).mean.detach().reshape(-1, 1)
    targets, scale = torch.cat([Y, fantasy]), 1.0
    best = targets.max()
    if standardised:  # the round's standardisation, not a new one
        tf = model.outcome_transform
        targets, scale = (targets - tf.means) / tf.stdvs, float(tf.stdvs) ** 2
    unit = Normalize(2, bounds=model.input_transform.bounds)  # the model's own input scaling
    ref = CandidateGP(torch.cat([X, slot]), targets, model.candidates.subset([u]), input_transform=unit)
    return ref.marginal_mean_variance(points.unsqueeze(0).unsqueeze(0))[1][0, 0, :] * scale, best


def _refit_log_ei(mean, var, best, points):
    r"""BoTorch's LogEI of the refitted GP (frozen mean, refitted variance, its own best target)."""
    return LogExpectedImprovement(MarginalModel(lambda Z: (mean, var)), best_f=best)(points.unsqueeze(-2))


@pytest.mark.parametrize("name", BATCH_RULES)
def test_slot_two_uses_the_variance_of_a_gp_refitted_with_slot_one(name):
    domain = FiniteDomain(torch.rand(60, 2, generator=torch.Generator().manual_seed(3), dtype=D))
    X0 = domain.points[:10]
    Y0 = _f(X0)
    policy = make_policy(name, domain, seed=0, **FAST)
    X = policy.suggest(X0, Y0, q=2)
    plays = policy.state.pending
    points, slot1 = domain.points, X[:1]
    free = torch.cdist(points, slot1)[:, 0] >= EXCLUDE_TOL
    if name.startswith("he"):
        alive = [u for u, a in enumerate(policy.state.alive) if a]
        if name == "he-gp-ucb":
            model = policy._model(X0, Y0, alive)
            betas = torch.tensor(policy.diagnostics["betas"], dtype=D)
        else:
            model = standardised_candidate_gp(domain, X0, Y0, policy.state.candidates.subset(alive))
        mean, _ = model.marginal_mean_variance(points.unsqueeze(0).unsqueeze(0))  # frozen mean
        refits = [_refit(model, u, slot1, points, name.endswith("auto")) for u in range(len(alive))]
        if name == "he-gp-ucb":
            values = torch.stack([mean[0, u, :] + betas[u] * var.sqrt() for u, (var, _) in enumerate(refits)])
        else:  # LogEI, each candidate with its refit's variance and incumbent
            values = torch.stack([_refit_log_ei(mean[0, u, :], var, best, points) for u, (var, best) in enumerate(refits)])
        values[:, ~free] = -torch.inf
        expected_u, expected_i = divmod(int(values.argmax()), points.shape[0])
        assert plays[1].candidate == alive[expected_u]
    else:
        model, _, _ = policy.candidate_round.model(policy.context, policy.state, policy.state.candidates.subset([plays[0].candidate]), X0, Y0)
        mean, _ = model.marginal_mean_variance(points.unsqueeze(0).unsqueeze(0))
        (var, best), mean = _refit(model, 0, slot1, points, True), mean[0, 0, :]
        # the rule's own conditioned variance is the refitted one
        cond = model.condition_on_pending(slot1).marginal_mean_variance(points.unsqueeze(0).unsqueeze(0))[1][0, 0, :]
        torch.testing.assert_close(cond, var, rtol=1e-8, atol=1e-12)
        if name == "lb-gp-ucb-auto":  # LogEI of the refitted GP (frozen mean, its variance and best target)
            values = _refit_log_ei(mean, var, best, points)
        else:
            values = mean + plays[0].beta * var.sqrt()
        values[~free] = -torch.inf
        expected_i = int(values.argmax())
    assert torch.equal(X[1], points[expected_i])


def test_out_of_order_results_lose_and_repeat_nothing_and_survive_save_and_load():
    domain = _pool(50)
    opt = AskTellOptimizer(make_policy("he-gp-ucb", domain, seed=0, **FAST))
    opt.tell(domain.points[:5], _f(domain.points[:5]))
    rng = random.Random(0)
    asked, told = opt.ask(3).tolist(), []
    for step in range(6):
        order = list(range(opt.pending.shape[0]))
        rng.shuffle(order)
        some = opt.pending[order[: 1 + step % 2]]  # one or two of the pending points, shuffled
        opt.tell(some, _f(some))
        told += some.tolist()
        if step == 2:  # save and load in the middle, with points still pending
            state = json.loads(json.dumps(opt.state_dict()))
            assert state["policy"]["version"] == STATE_VERSION and len(state["pending"]) == opt.pending.shape[0]
            clone = AskTellOptimizer(make_policy("he-gp-ucb", domain, seed=99, **FAST))
            clone.load_state_dict(state)
            assert torch.equal(clone.pending, opt.pending)
            assert clone.policy.state.pending == opt.policy.state.pending
            assert torch.equal(clone.ask(2), opt.ask(2))
            asked += opt.pending[-2:].tolist()
        before = opt.pending.clone()
        new = opt.ask(2)
        asked += new.tolist()
        assert _min_distance(new, before) >= EXCLUDE_TOL  # never a point still pending
    rest = opt.pending.clone()
    opt.tell(rest.flip(0), _f(rest.flip(0)))
    told += rest.tolist()
    assert opt.pending.shape[0] == 0 and opt.policy.state.pending == []
    assert sorted(map(tuple, told)) == sorted(map(tuple, asked))  # nothing lost, nothing twice
    assert opt.policy.state.round == len(asked)  # every asked point became exactly one play


def test_elimination_waits_for_the_whole_batch():
    domain = _pool(30)
    policy = make_policy("he-gp-ucb", domain, seed=0, **FAST)
    X = policy.suggest(domain.points[:4], _f(domain.points[:4]), q=3)
    policy.observe(X[2:], 100.0 + _f(X[2:]))  # a huge residual: would fail the test at once
    assert policy.state.untested and "statistic" not in policy.diagnostics
    assert all(policy.state.alive)
    policy.observe(X[:2], _f(X[:2]))
    assert not policy.state.untested and len(policy.state.pending) == 0
    assert "statistic" in policy.diagnostics


def test_a_version_2_state_is_upgraded_with_its_pending_selection():
    domain = _pool(20)
    policy = make_policy("he-gp-ucb-auto", domain, seed=0, **FAST)
    X = policy.suggest(domain.points[:6], _f(domain.points[:6]))
    state = json.loads(json.dumps(policy.state_dict()))
    play = state["state"]["pending"][0]
    legacy = {k: play[k] for k in ("candidate", "mean", "width", "beta")}  # version 2: no point, the scale apart
    old = {**state, "version": 2, "state": {**state["state"], "pending_scale": play["y_std"], "pending": legacy}}
    clone = make_policy("he-gp-ucb-auto", domain, seed=5, **FAST)
    clone.load_state_dict(old)
    assert clone.state.pending[0].y_std == play["y_std"] and clone.state.pending[0].x is None
    clone.observe(X, _f(X))  # the single legacy selection takes the single row
    assert clone.state.round == 1 and clone.state.pending == []
    with pytest.raises(ValueError, match=r"state\['version'\] must be 5 \(or 2, 3, 4, upgraded on load\)"):
        clone.load_state_dict({**state, "version": 1})


def test_rules_without_pending_support_refuse_x_pending():
    policy = make_policy("a-gp-ucb", BOX, seed=0, **FAST)
    X0 = torch.rand(5, 2, generator=torch.Generator().manual_seed(0), dtype=D)
    with pytest.raises(ValueError, match="X_pending: a-gp-ucb does not condition on pending points"):
        policy.suggest(X0, _f(X0), X_pending=X0[:1])
    with pytest.raises(ValueError, match="X_pending"):
        make_policy("he-gp-ucb", BOX, seed=0).suggest(X0, _f(X0), X_pending=torch.full((1, 2), 3.0, dtype=D))


@pytest.mark.parametrize("name", ["pe-gp-ts", "hp-gp-ts"])
@pytest.mark.parametrize("kind", ["box", "pool"])
def test_prior_rules_fill_batches_with_one_sample_per_slot(name, kind):
    # PE/HP-GP-TS slots are independent Thompson samples (no variance to condition): each slot
    # takes its own sample of its prior(s), drawn with the others in one call
    from botorch_unknown_hypers.candidates import KernelCandidates
    from botorch_unknown_hypers.problems.prior_selection_problems import PriorSelectionProblem

    if kind == "pool":
        problem = PriorSelectionProblem("gp-hill", num_arms=40).instance(1)
        domain = problem.domain
        policy = make_policy(name, domain, seed=0)
        policy.bind_task(problem.task_info())
        X0, pending = domain.points[:5], domain.points[5:8]
        Y0 = problem.evaluate(X0)[0].reshape(-1, 1)
    else:
        domain = BOX
        priors = KernelCandidates.from_lengthscales(torch.tensor([0.4, 0.1], dtype=D), noise=1e-2)
        policy = make_policy(name, domain, seed=0, priors=priors, **FAST)
        _, X0, Y0, pending = _start("box")
    X = policy.suggest(X0, Y0, q=4, X_pending=pending)
    assert X.shape == (4, 2 if kind == "box" else domain.dim) and len(policy.state.pending) == 4
    assert _min_distance(X, pending) >= EXCLUDE_TOL and float(torch.pdist(X).min()) >= EXCLUDE_TOL
    if name == "pe-gp-ts":  # what PE records is on the data observed, per slot
        model = policy.model
        alive = [p for p, a in enumerate(policy.state.alive) if a]
        for x, play in zip(X, policy.state.pending):
            mean, variance = model.mean_variance_at(x.unsqueeze(0), alive)
            assert play.mean == pytest.approx(float(mean[alive.index(play.candidate)]), rel=1e-9, abs=1e-12)
    policy.observe(X.flip(0), torch.zeros(4, 1, dtype=D))  # values in another order
    assert policy.state.round == 4 and policy.state.pending == []


@pytest.mark.parametrize("name", ["lb-gp-ucb", "he-gp-ucb", "lb-gp-ucb-auto", "he-gp-ucb-auto"])
def test_observe_checks_the_values_before_the_test_and_a_refused_call_changes_nothing(name, monkeypatch):
    r"""The rules with a test refuse NaN, a point outside the box and a shape mismatch with the
    named errors, the state as it was; the checks of a valid observation cost no read of their
    own: their verdict comes with the round's one copy of the match, the rows and Y."""
    policy = make_policy(name, BOX, seed=0, **FAST)
    X = torch.rand(6, 2, generator=torch.Generator().manual_seed(3), dtype=D)
    x = policy.suggest(X, _f(X))
    before = json.dumps(policy.state_dict(), sort_keys=True, default=str)
    for bad_X, bad_Y, match in (
        (x, [[math.nan]], r"^Y must be finite, got NaN or inf\."),
        (x + 5.0, [[1.0]], r"^X must lie in the box"),
        (x, [[1.0], [2.0]], r"^Y must have shape \(1,\) or \(1, 1\) to match X"),
    ):
        with pytest.raises(ValueError, match=match):
            policy.observe(bad_X, bad_Y)
        assert json.dumps(policy.state_dict(), sort_keys=True, default=str) == before and policy.num_observed == 0
    reads = record_reads(monkeypatch)
    policy.observe(x, _f(x))
    monkeypatch.undo()
    assert reads[0] == "tolist" and reads.count("__bool__") == 0  # the checks in the match's copy
    assert policy.num_observed == 1 and json.dumps(policy.state_dict(), sort_keys=True, default=str) != before
