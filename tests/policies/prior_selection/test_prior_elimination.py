"""Tests of the prior-elimination rules PE-GP-TS, PE-GP-UCB and the oracles
(botorch_unknown_hypers.policies.prior_selection.prior_elimination).

Expected values are computed independently of TabularPriorGP (tests/prior_helpers.py),
and the elimination thresholds by hand from the Theorem 4.1 formulas.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
import torch

from botorch_unknown_hypers.acquisition.optimize import optimize_ucb_joint
from botorch_unknown_hypers.acquisition.prior_sampling import sample_candidate_maxima
from botorch_unknown_hypers.confidence import box_num_arms, pe_beta
from botorch_unknown_hypers.loop import run
from botorch_unknown_hypers.models.tabular_priors import TabularPriors
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.policies.round.candidate_set import elimination_xi
from botorch_unknown_hypers.policies.prior_selection.prior_elimination import PEGPTS, PEGPUCB, OracleGPTS
from botorch_unknown_hypers.policies.round.pending_plays import PendingPlay
from botorch_unknown_hypers.problems import BoxDomain, FiniteDomain
from botorch_unknown_hypers.problems.prior_selection_problems import PriorSelectionProblem, task_priors
from tests.prior_helpers import (
    BOX_OPTIONS,
    DEVICES,
    NOISE,
    TOLERANCE,
    box_candidates,
    box_model,
    data,
    small_priors,
    textbook_posterior,
)


# --------------------------------------------------------------------------- #
# on arms
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("cls", [PEGPTS, PEGPUCB])
def test_selection_and_recorded_values_match_the_textbook_posterior(cls, dtype, device):
    priors = small_priors(dtype, device)
    policy = cls(FiniteDomain(priors.arms), priors=priors, seed=1, dtype=dtype, device=device)
    observed = [2, 5, 5, 11]
    X, Y = data(priors, observed)
    generator_before = policy.generator.get_state()
    x = policy.suggest(X, Y)  # four rows of data the rule did not play: t = 1
    pending = dataclasses.replace(policy.state.pending[-1])
    mean, variance = textbook_posterior(priors, observed, Y.reshape(-1))
    # the pending selection stores the point; its arm is the point's index in the pool
    prior, arm = pending.candidate, int(FiniteDomain(priors.arms).index_of(x.new_tensor([pending.x])))
    tol = TOLERANCE[dtype]
    assert arm >= 0 and torch.equal(x, priors.arms[arm].unsqueeze(0))
    assert pending.mean == pytest.approx(float(mean[prior, arm]), abs=tol)
    sqrt_beta = math.sqrt(pe_beta(1, 15, 3, 0.05))
    sigma = math.sqrt(float(variance[prior, arm]))  # latent, no noise
    assert pending.beta == pytest.approx(sqrt_beta) and pending.width == pytest.approx(sqrt_beta * sigma, abs=2 * sqrt_beta * tol)
    assert policy.selected == [["se4", "m32", "per"][prior]] and policy.n_candidates == 3
    if cls is PEGPUCB:  # the doubly optimistic argmax over (prior, arm)
        ucb = mean + sqrt_beta * variance.clamp_min(0).sqrt()
        assert (prior, arm) == divmod(int(ucb.argmax()), 15)
    else:  # the joint argmax of one batched sample per prior, with the policy's random numbers
        if device == "cpu":  # on CUDA the sample comes from a device generator seeded from it
            replay = torch.Generator().manual_seed(0)
            replay.set_state(generator_before)
            sample = policy.model.sample(1, generator=replay, prior_indices=[0, 1, 2])[0]
            assert (prior, arm) == divmod(int(sample.argmax()), 15)
    # y_t: eta_t = y_t - mu_{t, p_t}(x_t); the stored width is not recomputed after conditioning
    y = torch.tensor([[0.7]], dtype=dtype, device=device)
    policy.observe(x, y)
    assert policy.state.play_prior == [prior]
    assert policy.state.play_eta[0] == pytest.approx(0.7 - pending.mean, abs=tol)
    assert policy.state.play_width == [pending.width]
    assert policy.model.num_observations == 5  # every prior saw every observation
    mean5, _ = textbook_posterior(priors, observed + [arm], torch.cat([Y.reshape(-1), y.reshape(-1)]))
    torch.testing.assert_close(policy.model.mean_variance()[0].double().cpu(), mean5, rtol=0, atol=10 * tol)


def hand_policy() -> PEGPTS:
    priors = small_priors(num_arms=5)
    return PEGPTS(FiniteDomain(priors.arms), priors=priors.subset([0, 1]))


def play(policy: PEGPTS, prior: int, y: float, width: float) -> None:
    r"""One round of ``prior`` with a stored mean 0 and a stored width (so eta_t = y_t)."""
    policy.state.pending = [PendingPlay(prior, policy.domain.points[0].tolist(), mean=0.0, width=width, beta=1.0)]
    policy.observe(policy.domain.points[:1], torch.tensor([[y]], dtype=torch.float64))


@pytest.mark.parametrize(
    "residuals, eliminated_at",
    [
        # thresholds sqrt(xi_t t) + 0.1 t = 0.881, 1.451, 1.929 (sigma = 0.25, |P| = 2, delta = 0.05)
        ([0.85, -0.85, 0.85], None),  # signed sums 0.85, 0, 0.85: kept (|eta| summed would fire at t = 3)
        ([0.8, 0.0, 1.2], 3),  # 0.8, 0.8, 2.0 > 1.929: eliminated at t = 3
        ([0.9, 0.0, 0.0], 1),  # 0.9 > 0.881: eliminated at once
    ],
)
def test_elimination_fires_only_when_the_signed_sum_exceeds_the_threshold(residuals, eliminated_at):
    thresholds = [math.sqrt(2 * NOISE * math.log(2 * math.pi**2 * t**2 / (3 * 0.05)) * t) + 0.1 * t for t in (1, 2, 3)]
    assert thresholds == pytest.approx([0.881, 1.451, 1.929], abs=1e-3)
    policy = hand_policy()
    for t, y in enumerate(residuals, start=1):
        play(policy, 0, y, width=0.1)  # stored widths 0.1, far below the model's sqrt(beta) sigma (> 5)
        assert policy.diagnostics["threshold"] == pytest.approx(thresholds[t - 1])
        assert policy.diagnostics["statistic"] == pytest.approx(abs(sum(residuals[:t])))
        if not policy.state.alive[0]:
            break
    assert policy.state.eliminated_at.get(0) == eliminated_at
    assert policy.state.alive == [eliminated_at is None, True]
    if eliminated_at is not None:
        assert policy.diagnostics["eliminated"] == 0 and policy.diagnostics["n_active"] == 1
        assert policy.statistics()["statistic"][0] > policy.statistics()["threshold"][0]


def test_only_the_played_prior_is_tested_and_each_keeps_its_own_record():
    policy = hand_policy()
    play(policy, 1, 0.85, width=0.1)  # prior 1: 0.85 < 0.881
    play(policy, 0, 0.0, width=0.1)  # prior 0 at t = 2 with |S_0| = 1: 0 < threshold
    play(policy, 1, 0.7, width=0.1)  # prior 1 at t = 3, |S_1| = 2: 1.55 > sqrt(2 xi_3) + 0.2 = 1.530
    assert math.sqrt(2 * elimination_xi(3, 2, 0.25, 0.05)) + 0.2 == pytest.approx(1.530, abs=1e-3)
    assert policy.state.alive == [True, False] and policy.state.eliminated_at == {1: 3}
    # the threshold sums the widths stored at selection time: the same residuals 0.85, 0.7 at
    # t = 1, 2 fire with widths 0.1, 0.1 (1.55 > 1.452) and not with widths 0.1, 0.4 (1.55 < 1.752)
    for widths, alive in (((0.1, 0.1), False), ((0.1, 0.4), True)):
        policy = hand_policy()
        for y, width in zip((0.85, 0.7), widths):
            play(policy, 1, y, width=width)
        threshold = math.sqrt(2 * elimination_xi(2, 2, 0.25, 0.05)) + sum(widths)
        assert policy.diagnostics["threshold"] == pytest.approx(threshold)
        assert policy.state.alive[1] is alive and abs(threshold - 1.55) > 0.09


def test_the_last_active_prior_is_never_eliminated():
    policy = hand_policy()
    policy.state.alive = [False, True]
    play(policy, 1, 50.0, width=0.0)
    assert policy.state.alive == [False, True] and policy.state.kept_last == [1] and policy.state.eliminated_at == {}
    assert policy.diagnostics["kept_last"] is True and policy.diagnostics["eliminated"] is None
    # the oracle (|P| = 1) keeps its only prior too
    problem = PriorSelectionProblem("gp-lengthscale", seed=2, num_arms=30)
    oracle = OracleGPTS(problem.domain)
    oracle.bind_task(problem.task_info())
    play(oracle, 0, 50.0, width=0.0)
    assert oracle.state.alive == [True] and oracle.state.kept_last == [1]
    assert oracle.xi(1) == pytest.approx(elimination_xi(1, 1, 0.25, 0.05))


@pytest.mark.parametrize("cls", [PEGPTS, PEGPUCB])
def test_eliminated_priors_are_never_selected_again(cls):
    base = small_priors()
    shifted = base.means.clone()
    shifted[1] += 100.0  # prior 1 would win every joint argmax if it were still active
    priors = TabularPriors(arms=base.arms, means=shifted, covariances=base.covariances, noise=NOISE)
    policy = cls(FiniteDomain(priors.arms), priors=priors, seed=0)
    X, Y = data(priors, [3, 9])
    policy.suggest(X, Y)
    assert policy.state.pending[-1].candidate == 1
    policy.state.alive = [True, False, True]
    chosen = set()
    for _ in range(20):
        policy.suggest(X, Y)
        chosen.add(policy.state.pending[-1].candidate)
    assert chosen <= {0, 2} and policy.n_candidates == 2


def test_pe_ucb_breaks_the_first_round_tie_at_random():
    # at t = 1 every stationary zero-mean prior has the same UCB at every arm
    problem = PriorSelectionProblem("gp-lengthscale", num_arms=40)
    picks = set()
    for seed in range(12):
        policy = PEGPUCB(problem.domain, priors=task_priors("gp-lengthscale", num_arms=40), seed=seed)
        x = policy.suggest(torch.empty(0, 1, dtype=torch.float64), torch.empty(0, 1, dtype=torch.float64))
        picks.add((policy.state.pending[-1].candidate, float(x)))
    assert len({p for p, _ in picks}) >= 3 and len({x for _, x in picks}) >= 6


# --------------------------------------------------------------------------- #
# oracles
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("name", ["oracle-gp-ts", "oracle-gp-ucb"])
def test_oracle_receives_the_true_prior_through_run(name):
    base = PriorSelectionProblem("gp-kernel", num_arms=60)
    for seed in (1, 3):
        true_prior = base.instance(seed).true_prior
        history = run(base, make_policy(name, base.domain, seed=seed), iterations=6, seed=seed)
        label = base.metadata["priors"][true_prior]
        assert (history["selected"] == label).all() and (history["n_candidates"] == 1).all()
        diagnostics = [json.loads(d) for d in history["diagnostics"]]
        assert all(d["prior"] == d["true_prior"] == true_prior for d in diagnostics)
    # the oracle's beta uses |P| = 1
    assert diagnostics[0]["sqrt_beta"] == pytest.approx(math.sqrt(pe_beta(1, 60, 1, 0.05)))


# --------------------------------------------------------------------------- #
# on a box: K (mean, kernel) pairs in one CandidateGP, pathwise samples
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("cls", [PEGPTS, PEGPUCB])
def test_box_selection_is_the_joint_argmax_and_records_the_candidate_gp_posterior(cls, dtype):
    bounds = torch.tensor([[0.0], [1.0]], dtype=dtype)
    cands = box_candidates(dtype)
    policy = cls(BoxDomain(bounds), priors=cands, seed=1, dtype=dtype, **BOX_OPTIONS)
    X = torch.tensor([[0.1], [0.35], [0.8]], dtype=dtype)
    Y = torch.tensor([[0.2], [0.9], [-0.3]], dtype=dtype)
    policy.state.alive = [True, False, True]  # an eliminated prior is neither sampled nor selected
    replay = torch.Generator().manual_seed(0)
    replay.set_state(policy.generator.get_state())
    x = policy.suggest(X, Y)
    pending = dataclasses.replace(policy.state.pending[-1])
    model = box_model(X, Y, cands, bounds, [0, 2])
    sqrt_beta = math.sqrt(pe_beta(1, box_num_arms(1, 1, 0.05), 3, 0.05))
    seed = int(torch.randint(0, 2**31 - 1, (1,), generator=replay))  # the policy's next_seed()
    if cls is PEGPUCB:  # the doubly optimistic joint maximiser over (x, active prior)
        best_x, local, _ = optimize_ucb_joint(model, sqrt_beta, bounds, **BOX_OPTIONS, seed=seed)
    else:  # one independent path per active prior, each maximised; the best (x, prior) pair
        X_best, values = sample_candidate_maxima(model, bounds, **BOX_OPTIONS, seed=seed)
        local = int(values.argmax())
        best_x = X_best[local]
    assert torch.equal(x, best_x.unsqueeze(0)) and pending.candidate == [0, 2][local]
    assert pending.x == x[0].tolist()
    assert policy.selected == [["0.05", "0.15", "0.4"][pending.candidate]] and policy.n_candidates == 2
    # Alg. 1 lines 7-8 at selection time: the CandidateGP posterior on D_{t-1} at x_t
    mean, variance = model.marginal_mean_variance(x.unsqueeze(0))
    tol = TOLERANCE[dtype]
    assert pending.mean == pytest.approx(float(mean[local, 0]), abs=tol)
    assert pending.beta == pytest.approx(sqrt_beta)
    assert pending.width == pytest.approx(sqrt_beta * math.sqrt(float(variance[local, 0])), abs=2 * sqrt_beta * tol)
    policy.observe(x, torch.tensor([[0.5]], dtype=dtype))
    assert policy.state.play_prior == [pending.candidate] and policy.state.round == 1
    assert policy.state.play_eta[0] == pytest.approx(0.5 - pending.mean, abs=tol)
    assert policy.model.num_observations == 4


def test_box_num_arms_equivalent_replaces_the_discretisation():
    domain = BoxDomain(torch.tensor([[0.0], [1.0]], dtype=torch.float64))
    policy = PEGPTS(domain, priors=box_candidates(), num_arms_equivalent=1000)
    assert policy.sqrt_beta(5) == pytest.approx(math.sqrt(pe_beta(5, 1000, 3, 0.05)))
    policy = PEGPTS(domain, priors=box_candidates(), lipschitz=(2.0, 3.0), delta=0.1)
    assert policy.num_arms(4) == pytest.approx(box_num_arms(4, 1, 0.1, 2.0, 3.0))
