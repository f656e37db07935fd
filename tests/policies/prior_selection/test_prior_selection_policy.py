"""Tests of what every prior-selection rule shares (botorch_unknown_hypers.policies.prior_selection.prior_selection_policy):
binding a task, validation, model rebuilds, state round trips and full runs, on arms and on a box.

The rule-specific tests are in test_prior_elimination.py (PE-GP-TS, PE-GP-UCB, the oracles) and
test_hyperprior.py (HP-GP-TS, MAP-GP-TS); the shared set-up is in tests/prior_helpers.py.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
import torch
from botorch.exceptions.errors import UnsupportedError

from botorch_unknown_hypers.candidate_families import (
    MeanFunctionCandidates,
    PeriodicCandidates,
)
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.confidence import box_num_arms, pe_beta
from botorch_unknown_hypers.loop import RESULT_COLUMNS, AskTellOptimizer, run
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.policies.round.candidate_set import elimination_xi
from botorch_unknown_hypers.policies.round.pending_plays import upgrade_pending
from botorch_unknown_hypers.policies.prior_selection.hyperprior import HPGPTS, MAPGPTS
from botorch_unknown_hypers.policies.prior_selection.prior_elimination import PEGPTS, PEGPUCB
from botorch_unknown_hypers.policies.prior_selection.prior_selection_policy import describe_priors, same_priors
from botorch_unknown_hypers.problems import BoxDomain, FiniteDomain, get_problem
from botorch_unknown_hypers.problems.prior_selection_problems import (
    PriorSelectionProblem,
    task_priors,
)
from tests.contract import CONTRACT_COLUMNS
from tests.prior_helpers import (
    BOX_OPTIONS,
    box_candidates,
    data,
    small_priors,
    textbook_log_evidence,
    textbook_posterior,
)

RULES = ["pe-gp-ts", "pe-gp-ucb", "hp-gp-ts", "map-gp-ts", "oracle-gp-ts", "oracle-gp-ucb"]
TASKS = ["gp-kernel", "gp-lengthscale", "gp-hill"]


# --------------------------------------------------------------------------- #
# fixtures and independent references
# --------------------------------------------------------------------------- #


def started(name: str, problem, seed: int = 0, rounds: int = 3, **options) -> AskTellOptimizer:
    r"""An optimiser bound to ``problem`` (as ``run`` does), no initial design, ``rounds`` rounds played."""
    policy = make_policy(name, problem.domain, seed=seed, **options)
    policy.bind_task(problem.task_info())
    opt = AskTellOptimizer(policy)
    opt.skip_initial_design()
    gen = torch.Generator().manual_seed(100 + seed)
    for _ in range(rounds):
        X = opt.ask()
        opt.tell(X, problem.evaluate(X, generator=gen)[0])
    return opt


# --------------------------------------------------------------------------- #
# binding and validation
# --------------------------------------------------------------------------- #


def test_unbound_rules_raise_clear_errors_at_suggest():
    problem = PriorSelectionProblem("gp-lengthscale", num_arms=20)
    empty = torch.empty(0, 1, dtype=torch.float64)
    oracle = make_policy("oracle-gp-ts", problem.domain, priors=task_priors("gp-lengthscale", num_arms=20))
    with pytest.raises(ValueError, match="true prior.*bind_task"):
        oracle.suggest(empty, empty)
    with pytest.raises(ValueError, match="priors"):
        make_policy("pe-gp-ts", problem.domain).suggest(empty, empty)
    with pytest.raises(ValueError, match="true prior"):
        oracle.bind_task(get_problem("berkenkamp").task_info())
    # a rejected binding leaves the policy unbound
    hp = make_policy("hp-gp-ts", problem.domain, hyperprior=[0.5, 0.3, 0.2])
    with pytest.raises(ValueError, match="hyperprior"):
        hp.bind_task(problem.task_info())
    assert hp.priors is None and hp.model is None and hp.state.true_prior is None
    # a non-oracle rule learns the priors (and p*, for the diagnostics) from the problem
    pe = make_policy("hp-gp-ts", problem.domain)
    pe.bind_task(problem.instance(3).task_info())
    assert pe.model.num_priors == 4 and pe.state.true_prior == problem.instance(3).true_prior


def test_validation():
    priors = small_priors()
    domain = FiniteDomain(priors.arms)
    with pytest.raises(ValueError, match="on a box.*FiniteDomain"):
        PEGPTS(BoxDomain(torch.tensor([[0.0], [20.0]], dtype=torch.float64)), priors=priors)
    with pytest.raises(ValueError, match="priors"):
        PEGPTS(domain, priors="gp-nope")
    with pytest.raises(ValueError, match="priors"):
        PEGPTS(domain, priors=42)
    with pytest.raises(ValueError, match="priors"):
        PEGPTS(FiniteDomain(priors.arms[:10]), priors=priors)  # arms do not match the domain
    with pytest.raises(ValueError, match="delta"):
        PEGPUCB(domain, priors=priors, delta=0.0)
    with pytest.raises(ValueError, match="noise_std"):
        HPGPTS(domain, priors=priors, noise_std=-0.1)
    with pytest.raises(ValueError, match="hyperprior"):
        HPGPTS(domain, priors=priors, hyperprior=[0.5, 0.5])
    with pytest.raises(ValueError, match="hyperprior"):
        MAPGPTS(domain, priors=priors, hyperprior=[0.5, 0.0, 0.5])
    policy = PEGPTS(domain, priors=priors, noise_std=0.5)
    assert policy.model.noise == pytest.approx(0.25) and policy.xi(1) == pytest.approx(elimination_xi(1, 3, 0.5, 0.05))
    with pytest.raises(ValueError, match="q"):
        policy.suggest(torch.empty(0, 1, dtype=torch.float64), torch.empty(0, 1, dtype=torch.float64), q=0)
    with pytest.raises(ValueError, match="q: pe-gp-ucb proposes at most 1"):
        PEGPUCB(domain, priors=priors).suggest(torch.empty(0, 1, dtype=torch.float64), torch.empty(0, 1, dtype=torch.float64), q=2)


def test_prior_fingerprints_match_to_a_relative_1e_6():
    priors = small_priors()
    own = describe_priors(priors, 0.0625, "gp-kernel")
    assert own["num_priors"] == 3 and own["num_arms"] == 15 and own["names"] == ["se4", "m32", "per"]
    assert own["checksum"] == pytest.approx([float(priors.means.sum()), float(priors.covariances.abs().sum())])
    saved = json.loads(json.dumps(own))
    assert same_priors(own, saved)
    assert same_priors(own, {**saved, "task": None})  # the task name is not part of the identity
    assert same_priors(own, {**saved, "noise": 0.0625 * (1 + 1e-8)})
    assert not same_priors(own, {**saved, "noise": 0.0625 * (1 + 1e-4)})
    assert not same_priors(own, {**saved, "checksum": [saved["checksum"][0] + 1e-3, saved["checksum"][1]]})
    assert not same_priors(own, {**saved, "names": ["a", "b", "c"]})
    assert not same_priors(own, {k: v for k, v in saved.items() if k != "checksum"})
    assert not same_priors(own, None)
    assert not same_priors(own, describe_priors(priors.subset([0, 1]), 0.0625, "gp-kernel"))
    on_box = describe_priors(box_candidates(), 0.0025, None)
    assert on_box["spec"] == box_candidates().to_dict() and same_priors(on_box, json.loads(json.dumps(on_box)))


def test_a_version_3_pending_selection_is_upgraded_with_width_sqrt_beta_times_sigma():
    old = {"prior": 0, "x": [1.0], "mean": 0.2, "sigma": 0.5, "sqrt_beta": 3.0}
    assert upgrade_pending(old) == {"candidate": 0, "x": [1.0], "mean": 0.2, "beta": 3.0, "width": 1.5}
    assert upgrade_pending({"prior": 1, "x": [0.5], "mean": None, "sigma": None, "sqrt_beta": None}) == {"candidate": 1, "x": [0.5]}
    assert old == {"prior": 0, "x": [1.0], "mean": 0.2, "sigma": 0.5, "sqrt_beta": 3.0}  # the input is not modified


def test_data_that_are_not_an_extension_rebuild_the_model():
    priors = small_priors()
    policy = HPGPTS(FiniteDomain(priors.arms), priors=priors, seed=0)
    X, Y = data(priors, [3, 4, 9])
    policy.suggest(X, Y)
    X2, Y2 = data(priors, [3, 8], seed=1)  # other data: the model starts again from them
    policy.suggest(X2, Y2)
    mean, _ = textbook_posterior(priors, [3, 8], Y2.reshape(-1))
    torch.testing.assert_close(policy.model.mean_variance()[0], mean, rtol=0, atol=1e-8)
    torch.testing.assert_close(policy.log_evidence, textbook_log_evidence(priors, [3, 8], Y2.reshape(-1)))


# --------------------------------------------------------------------------- #
# state round trip and full runs
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("name", RULES)
def test_state_round_trip_gives_identical_next_suggestions(name):
    problem = PriorSelectionProblem("gp-kernel", num_arms=80).instance(5)
    opt = started(name, problem, seed=2, rounds=6)
    X = opt.ask()  # save mid-round: the pending selection is part of the state
    state = json.loads(json.dumps(opt.state_dict()))
    # a fresh policy with another seed: everything but the priors must come from the state. The
    # library no longer rebuilds a named task's priors from a state, so the task is bound first.
    fresh = make_policy(name, problem.domain, seed=99)
    fresh.bind_task(problem.task_info())
    restored = AskTellOptimizer(fresh)
    restored.load_state_dict(state)
    assert restored.policy.state_dict() == opt.policy.state_dict()
    assert torch.equal(restored.policy.model.state.cholesky, opt.policy.model.state.cholesky)
    gen = torch.Generator().manual_seed(7)
    for _ in range(3):
        y = problem.evaluate(X, generator=gen)[0]
        opt.tell(X, y)
        restored.tell(X, y)
        X = opt.ask()
        assert torch.equal(restored.ask(), X)
        assert restored.policy.selected == opt.policy.selected
        assert restored.policy.diagnostics == opt.policy.diagnostics
    assert restored.policy.state_dict() == opt.policy.state_dict()


def test_load_state_dict_rejects_bad_states_unchanged():
    problem = PriorSelectionProblem("gp-hill", num_arms=40).instance(1)
    opt = started("pe-gp-ts", problem, rounds=3)
    good = json.loads(json.dumps(opt.policy.state_dict()))
    before = json.dumps(opt.policy.state_dict())
    st = good["state"]
    arm = st["train_X"][0]  # a point of the pool
    bad = [
        {**st, "alive": [False] * 5},
        {**st, "alive": [True] * 4},
        {**st, "train_X": st["train_X"][:-1]},
        {**st, "train_X": [[999.0]] * len(st["train_X"])},  # not points of the pool
        {**st, "play_eta": st["play_eta"][:-1]},
        {**st, "prior_ids": [0, 1]},
        {**st, "priors": {**st["priors"], "checksum": [1.0, 2.0]}},
        {**st, "pending": [{"prior": 9, "x": arm}]},
        {**st, "pending": [{"prior": 0, "x": [999.0]}]},  # a pending point outside the pool
        {**st, "pending": [{"prior": 0, "arm": 0}]},  # the old format: no point, an unknown field
        {**st, "pending": [{"prior": 0}]},  # a missing (required) field
        {**st, "pending": {"prior": 0, "x": arm}},  # one selection, not a list (version 3)
        {key: value for key, value in st.items() if key != "round"},
    ]
    for state_bad in bad:
        with pytest.raises(ValueError):
            opt.policy.load_state_dict({**good, "state": state_bad})
        assert json.dumps(opt.policy.state_dict()) == before
    with pytest.raises(ValueError, match="state"):
        make_policy("hp-gp-ts", problem.domain).load_state_dict(good)  # another rule's state


@pytest.mark.parametrize("task", TASKS)
def test_every_rule_runs_on_every_task(task):
    problem = get_problem(task)
    labels = problem.metadata["priors"]
    for name in RULES:
        history = run(problem, make_policy(name, problem.domain, seed=3), iterations=30, seed=3)
        assert list(history.columns) == RESULT_COLUMNS and set(CONTRACT_COLUMNS) <= set(history.columns)
        assert history["iteration"].tolist() == list(range(1, 31))  # no initial design
        assert (history["method"] == name).all() and history["selected"].isin(labels).all()
        assert (history["cumulative_regret"].diff().dropna() >= -1e-12).all()
        diagnostics = [json.loads(d) for d in history["diagnostics"]]
        true_prior = problem.instance(3).true_prior
        assert all(d["true_prior"] == true_prior and labels[d["prior"]] == s
                   for d, s in zip(diagnostics, history["selected"]))
        if name.startswith("pe-"):
            assert (history["n_candidates"] == [d["n_active"] + (d["eliminated"] is not None)
                                                for d in diagnostics]).all()
            assert all({"eta", "threshold", "statistic", "active"} <= set(d) for d in diagnostics)
        elif name.startswith("oracle-"):
            assert (history["selected"] == labels[true_prior]).all() and (history["n_candidates"] == 1).all()
        else:
            assert (history["n_candidates"] == len(labels)).all()
            assert all(abs(sum(d["hyperposterior"]) - 1) < 1e-9 and d["entropy"] >= 0 for d in diagnostics)


# --------------------------------------------------------------------------- #
# on a box: K (mean, kernel) pairs in one CandidateGP, pathwise samples
# --------------------------------------------------------------------------- #

BOX_RULES = ["pe-gp-ts", "pe-gp-ucb", "hp-gp-ts", "map-gp-ts"]


def box_policy(name, problem, seed=0, dtype=torch.float64, device="cpu", **options):
    cands = box_candidates(dtype, device)
    return make_policy(name, problem.domain, seed=seed, dtype=dtype, device=device, priors=cands,
                       **{**BOX_OPTIONS, **options})


def box_history(name, seed, n_init=None, iterations=6):
    problem = get_problem("berkenkamp")
    return run(problem, box_policy(name, problem, seed=seed), iterations=iterations, seed=seed, n_init=n_init)


@pytest.mark.parametrize("name", BOX_RULES)
def test_every_rule_runs_a_seeded_campaign_on_a_box(name):
    rng = torch.get_rng_state()
    history = box_history(name, seed=2)
    assert torch.equal(torch.get_rng_state(), rng)  # the paths come from forked, seeded RNGs
    played = history[history["iteration"] > 0]
    assert list(history.columns) == RESULT_COLUMNS and len(played) == 6
    assert played["selected"].isin(["0.05", "0.15", "0.4"]).all()
    x = played["x"].astype(float)
    assert ((x >= 0) & (x <= 1)).all()
    diagnostics = [json.loads(d) for d in played["diagnostics"]]
    if name.startswith("pe-"):
        assert all({"eta", "threshold", "statistic", "active", "sqrt_beta", "sigma"} <= set(d) for d in diagnostics)
        assert (played["n_candidates"] == [d["n_active"] + (d["eliminated"] is not None) for d in diagnostics]).all()
        # |X| -> Srinivas' |D_t|: the width's multiplier grows with t
        sqrt_betas = [d["sqrt_beta"] for d in diagnostics]
        assert sqrt_betas[0] == pytest.approx(math.sqrt(pe_beta(1, box_num_arms(1, 1, 0.05), 3, 0.05)))
        assert sqrt_betas == sorted(sqrt_betas)
    else:
        assert all(abs(sum(d["hyperposterior"]) - 1) < 1e-9 for d in diagnostics)
    # deterministic given the seed, and the seed matters
    again = box_history(name, seed=2)
    assert history.drop(columns="wall_time_s").equals(again.drop(columns="wall_time_s"))
    assert not history["x"].equals(box_history(name, seed=3)["x"])
    # from no data at all: the priors' own paths / UCBs
    cold = box_history(name, seed=2, n_init=0, iterations=3)
    assert cold["iteration"].tolist() == [1, 2, 3] and cold["selected"].isin(["0.05", "0.15", "0.4"]).all()


@pytest.mark.parametrize("name", [*BOX_RULES, "oracle-gp-ts", "oracle-gp-ucb"])
def test_box_state_round_trip_gives_identical_next_suggestions(name):
    problem = get_problem("berkenkamp")
    policy = box_policy(name, problem, seed=2)
    policy.bind_task(dataclasses.replace(problem.task_info(), true_prior=1))  # p* = 1 for the oracles
    opt = AskTellOptimizer(policy)
    opt.tell(torch.tensor([[0.2], [0.7]], dtype=torch.float64), torch.tensor([[0.3], [0.5]], dtype=torch.float64))
    gen = torch.Generator().manual_seed(7)
    for _ in range(4):
        X = opt.ask()
        opt.tell(X, problem.evaluate(X, generator=gen)[0])
    X = opt.ask()  # save mid-round: the pending selection is part of the state
    state = json.loads(json.dumps(opt.state_dict()))
    # a fresh policy with the same priors and another seed: everything else comes from the state
    restored = AskTellOptimizer(box_policy(name, problem, seed=99))
    restored.load_state_dict(state)
    assert restored.policy.state_dict() == opt.policy.state_dict()
    for _ in range(3):
        y = problem.evaluate(X, generator=gen)[0]
        opt.tell(X, y)
        restored.tell(X, y)
        X = opt.ask()
        assert torch.equal(restored.ask(), X)
        assert restored.policy.selected == opt.policy.selected
        assert restored.policy.diagnostics == opt.policy.diagnostics
    assert restored.policy.state_dict() == opt.policy.state_dict()
    if name.startswith("oracle"):
        assert set(restored.policy.state.prior_ids) == {1}
    # other priors, or points outside the box, are rejected and leave the policy unchanged
    before = json.dumps(restored.policy.state_dict())
    other = make_policy(name, problem.domain, priors=KernelCandidates.from_lengthscales(
        torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64), noise=0.05**2))
    with pytest.raises(ValueError, match="other priors"):
        other.load_state_dict(state["policy"])
    bad = {**state["policy"], "state": {**state["policy"]["state"], "train_X": [[2.0]] * len(opt.train_X)}}
    with pytest.raises(ValueError, match="train_X"):
        restored.policy.load_state_dict(bad)
    assert json.dumps(restored.policy.state_dict()) == before


def test_box_validation():
    domain = BoxDomain(torch.tensor([[0.0], [1.0]], dtype=torch.float64))
    with pytest.raises(ValueError, match="domain.*CandidateSpec"):
        PEGPTS(domain)  # a box needs the (mean, kernel) pairs up front
    with pytest.raises(ValueError, match="on a box.*FiniteDomain"):
        HPGPTS(domain, priors=task_priors("gp-kernel", num_arms=20))  # tabular priors need a pool
    rng = torch.get_rng_state()
    HPGPTS(domain, priors=box_candidates())  # checking the kernel leaves the caller's RNG alone
    assert torch.equal(torch.get_rng_state(), rng)
    periodic = PeriodicCandidates(torch.tensor([0.3, 0.5], dtype=torch.float64), noise=0.01)
    with pytest.raises(UnsupportedError, match="RBF, Matern"):
        HPGPTS(domain, priors=periodic)  # Thompson sampling needs random features
    assert PEGPUCB(domain, priors=periodic).model.num_priors == 2  # the UCB rule does not
    mixed = KernelCandidates.from_lengthscales(torch.tensor([0.1, 0.2], dtype=torch.float64), noise=torch.tensor(
        [0.01, 0.02], dtype=torch.float64))
    with pytest.raises(ValueError, match="noise"):
        PEGPTS(domain, priors=mixed)
    policy = PEGPTS(domain, priors=mixed, noise_std=0.2)  # the known sigma overrides the candidates'
    assert policy.noise_std == pytest.approx(0.2) and policy.model.noise.tolist() == pytest.approx([0.04, 0.04])
    assert policy.xi(1) == pytest.approx(elimination_xi(1, 2, 0.2, 0.05))
    with pytest.raises(ValueError, match="num_arms_equivalent"):
        PEGPTS(domain, priors=mixed, noise_std=0.2, num_arms_equivalent=0.5)
    with pytest.raises(ValueError, match=r"^lipschitz\[0\] must be a finite number > 0"):
        PEGPTS(domain, priors=mixed, noise_std=0.2, lipschitz=(-1.0, 1.0))
    with pytest.raises(ValueError, match="num_features"):
        HPGPTS(domain, priors=mixed, noise_std=0.2, num_features=7)
    # mean functions: any MeanFunctionCandidates over Matern / RBF kernels
    means = MeanFunctionCandidates(
        box_candidates(), lambda X: torch.stack([X[..., 0], -X[..., 0], 0 * X[..., 0]], dim=-2)
    )
    history = run(get_problem("berkenkamp"), HPGPTS(domain, priors=means, seed=0, **BOX_OPTIONS), iterations=3, seed=0)
    assert len(history) == 6 and history["selected"].iloc[-1].startswith("mean")
