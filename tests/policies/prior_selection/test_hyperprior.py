"""Tests of the hyperprior rules HP-GP-TS and MAP-GP-TS (botorch_unknown_hypers.policies.prior_selection.hyperprior).

Evidences are computed independently of TabularPriorGP and CandidateGP's caches
(tests/prior_helpers.py).
"""

from __future__ import annotations

import json

import pytest
import torch

from botorch_unknown_hypers.loop import AskTellOptimizer, run
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.policies.prior_selection.hyperprior import HPGPTS, MAPGPTS
from botorch_unknown_hypers.problems import FiniteDomain, get_problem
from botorch_unknown_hypers.problems.prior_selection_problems import PriorSelectionProblem, task_priors
from tests.prior_helpers import (
    BOX_OPTIONS,
    DEVICES,
    TOLERANCE,
    box_candidates,
    box_model,
    data,
    small_priors,
    textbook_log_evidence,
)


# --------------------------------------------------------------------------- #
# on arms
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("cls", [HPGPTS, MAPGPTS])
def test_hyperposterior_is_hyperprior_times_evidence(cls, dtype, device):
    priors = small_priors(dtype, device)
    hyperprior = [0.5, 0.3, 0.2]
    policy = cls(FiniteDomain(priors.arms), priors=priors, hyperprior=hyperprior, seed=4, dtype=dtype, device=device)
    opt = AskTellOptimizer(policy)
    X0, Y0 = data(priors, [1, 7], seed=5)
    opt.tell(X0, Y0)  # an initial design: conditioned on and counted in the evidence, not a play
    gen = torch.Generator().manual_seed(6)
    for _ in range(8):
        X = opt.ask()
        opt.tell(X, torch.randn(1, 1, generator=gen, dtype=torch.float64).to(X) + 0.5)
    indices = FiniteDomain(priors.arms).index_of(opt.train_X).tolist()
    evidence = textbook_log_evidence(priors, indices, opt.train_Y.reshape(-1))
    expected = torch.softmax(torch.tensor(hyperprior, dtype=torch.float64).log() + evidence, dim=0)
    tol = TOLERANCE[dtype]
    torch.testing.assert_close(policy.hyperposterior, expected, rtol=0, atol=tol)
    torch.testing.assert_close(policy.log_evidence, evidence, rtol=0, atol=tol if dtype == torch.float64 else 1e-3)
    assert policy.state.round == 8 and policy.model.num_observations == 10
    diag = policy.diagnostics
    assert diag["hyperposterior"] == pytest.approx(expected.tolist(), abs=tol)
    assert diag["entropy"] == pytest.approx(float(-(expected * expected.log()).sum()), abs=10 * tol)
    assert policy.n_candidates == 3 and policy.selected[0] in ("se4", "m32", "per")


def test_hp_samples_its_prior_from_the_hyperposterior_and_never_zeroes_one():
    priors = small_priors()
    policy = HPGPTS(FiniteDomain(priors.arms), priors=priors, seed=0)
    empty = torch.empty(0, 1, dtype=torch.float64)

    def drawn(times: int) -> set[str]:
        labels = set()
        for _ in range(times):
            policy.suggest(empty, empty)
            labels.add(policy.selected[0])
        return labels

    assert drawn(40) == {"se4", "m32", "per"}  # uniform hyperprior: each prior is drawn
    log_p = torch.tensor([-60.0, 0.0, -60.0], dtype=torch.float64)
    policy.state.log_hyperposterior = (log_p - torch.logsumexp(log_p, 0)).tolist()
    assert drawn(20) == {"m32"}
    # a wildly wrong observation leaves every prior a positive (log-)probability
    x = policy.suggest(empty, empty)
    policy.observe(x, torch.tensor([[1e3]], dtype=torch.float64))
    assert torch.isfinite(policy.log_hyperposterior).all()
    assert float(policy.log_hyperposterior.exp().sum()) == pytest.approx(1.0, abs=1e-12)


def test_map_ties_are_random_but_seeded():
    problem = PriorSelectionProblem("gp-kernel", num_arms=30)
    empty = torch.empty(0, 1, dtype=torch.float64)

    def first_prior(seed: int) -> str:
        policy = MAPGPTS(problem.domain, priors=task_priors("gp-kernel", num_arms=30), seed=seed)
        policy.suggest(empty, empty)  # uniform hyperposterior: a six-way tie
        return policy.selected[0]

    firsts = [first_prior(s) for s in range(24)]
    assert len(set(firsts)) >= 4  # not the first index every time
    assert firsts == [first_prior(s) for s in range(24)]  # but seeded
    # without a tie MAP takes the most probable prior
    policy = MAPGPTS(problem.domain, priors=task_priors("gp-kernel", num_arms=30), seed=0)
    policy.state.log_hyperposterior = torch.log(torch.tensor([0.1, 0.1, 0.1, 0.4, 0.2, 0.1], dtype=torch.float64)).tolist()
    policy.suggest(empty, empty)
    assert policy.selected == ["periodic"]


def test_hp_gp_ts_concentrates_on_the_true_length_scale():
    r"""Measured once over 40 seeds (T = 100): the true prior ends with > 0.5 of the mass in 36
    of 40 seeds (median 0.92; uniform would give 0.25). We require 6 of the first 8 seeds, which
    a rule with success rate 0.9 fails with probability 0.04; these eight score 7 of 8."""
    problem = get_problem("gp-lengthscale")
    masses = []
    for seed in range(8):
        history = run(problem, make_policy("hp-gp-ts", problem.domain, seed=seed), iterations=100, seed=seed)
        final = json.loads(history["diagnostics"].iloc[-1])
        masses.append(final["hyperposterior"][final["true_prior"]])
    assert sum(m > 0.5 for m in masses) >= 6, masses


# --------------------------------------------------------------------------- #
# on a box: the CandidateGP evidence
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("cls", [HPGPTS, MAPGPTS])
def test_box_hyperposterior_is_hyperprior_times_candidate_gp_evidence(cls, dtype):
    problem = get_problem("berkenkamp")
    hyperprior = [0.5, 0.3, 0.2]
    cands = box_candidates(dtype)
    policy = cls(problem.domain, priors=cands, hyperprior=hyperprior, seed=4, dtype=dtype, **BOX_OPTIONS)
    opt = AskTellOptimizer(policy)
    opt.tell(torch.tensor([[0.3], [0.9]], dtype=dtype), torch.tensor([[0.25], [0.5]], dtype=dtype))
    gen = torch.Generator().manual_seed(6)
    for _ in range(6):
        X = opt.ask()
        opt.tell(X, problem.evaluate(X, generator=gen)[0])
    opt.tell(torch.tensor([[0.55]], dtype=dtype), torch.tensor([[0.4]], dtype=dtype))  # data, not a play
    # the chain of one-step predictives = the exact evidence of all data under each prior
    evidence = box_model(opt.train_X, opt.train_Y, cands, problem.domain.bounds.to(dtype)).log_marginal_likelihood()
    expected = torch.softmax(torch.tensor(hyperprior, dtype=torch.float64).log() + evidence.double(), dim=0)
    tol = 1e-8 if dtype == torch.float64 else 2e-3
    torch.testing.assert_close(policy.hyperposterior, expected, rtol=0, atol=tol)
    torch.testing.assert_close(policy.log_evidence, evidence.double(), rtol=0, atol=tol)
    assert policy.state.round == 6 and policy.model.num_observations == 9
    # the model's factors grow row by row: float32 rounds otherwise than one factorisation does
    torch.testing.assert_close(policy.model.log_marginal_likelihood().double(), evidence.double(), rtol=0, atol=tol)


def test_a_sampled_prior_is_torch_multinomial_draw_for_draw():
    r"""HP-GP-TS's draw of :math:`p_t \sim P_{t-1}` (the exponential race on the host's log
    posterior) gives ``torch.multinomial``'s prior and leaves the generator in its state, on
    every one of many seeded posteriors, including zero-probability priors."""
    from botorch_unknown_hypers.policies.prior_selection.prior_pieces import SampledPrior

    draw = SampledPrior()
    for seed in range(400):
        g = torch.Generator().manual_seed(seed)
        log_p = (3 * torch.randn(1 + seed % 6, generator=g, dtype=torch.float64)).tolist()
        if seed % 5 == 0 and len(log_p) > 1:
            log_p[0] = float("-inf")
        mine, theirs = torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
        chosen = draw(log_p, mine)
        assert chosen == int(torch.multinomial(torch.tensor(log_p, dtype=torch.float64).exp(), 1, generator=theirs))
        assert torch.equal(mine.get_state(), theirs.get_state())


@pytest.mark.parametrize("log_p", [[], [float("nan"), 0.0], [float("inf")], [float("-inf"), float("-inf")]])
def test_a_sampled_prior_refuses_what_is_not_a_log_distribution(log_p):
    from botorch_unknown_hypers.policies.prior_selection.prior_pieces import SampledPrior

    generator = torch.Generator().manual_seed(0)
    state = generator.get_state()
    with pytest.raises(ValueError, match="^log_posterior must be log probabilities"):
        SampledPrior()(log_p, generator)
    assert torch.equal(generator.get_state(), state)
