"""Tests of the prior-selection rules (botorch_unknown_hypers.policies.prior_selection).

Expected values are computed here, independently of TabularPriorGP: posteriors
with one ``torch.linalg.solve`` per prior, evidences with
``torch.distributions.MultivariateNormal``, and the elimination thresholds by
hand from the Theorem 4.1 formulas.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
import torch
from botorch.exceptions.errors import UnsupportedError
from botorch.models.transforms import Normalize

from botorch_unknown_hypers.acquisition.optimize import (
    optimize_ucb_joint,
    random_argmax,
)
from botorch_unknown_hypers.acquisition.prior_sampling import sample_candidate_maxima
from botorch_unknown_hypers.candidate_families import (
    MeanFunctionCandidates,
    PeriodicCandidates,
)
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.confidence import (
    bayesian_beta_continuous,
    bayesian_beta_finite,
    box_num_arms,
    pe_beta,
)
from botorch_unknown_hypers.loop import RESULT_COLUMNS, AskTellOptimizer, run
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.tabular_priors import TabularPriors
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.policies.elimination import elimination_xi
from botorch_unknown_hypers.policies.hyperprior import HPGPTS, MAPGPTS
from botorch_unknown_hypers.policies.prior_elimination import (
    PEGPTS,
    PEGPUCB,
    OracleGPTS,
)
from botorch_unknown_hypers.policies.prior_selection import PendingPrior
from botorch_unknown_hypers.problems import BoxDomain, FiniteDomain, get_problem
from botorch_unknown_hypers.problems.prior_selection import (
    PriorSelectionProblem,
    task_priors,
)
from botorch_unknown_hypers.problems.prior_tasks import (
    paper_matern,
    paper_periodic,
    paper_rbf,
)
from tests.contract import CONTRACT_COLUMNS

RULES = ["pe-gp-ts", "pe-gp-ucb", "hp-gp-ts", "map-gp-ts", "oracle-gp-ts", "oracle-gp-ucb"]
TASKS = ["gp-kernel", "gp-lengthscale", "gp-hill"]
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
TOLERANCE = {torch.float64: 1e-8, torch.float32: 1e-3}
NOISE = 0.25**2


# --------------------------------------------------------------------------- #
# fixtures and independent references
# --------------------------------------------------------------------------- #


def small_priors(dtype=torch.float64, device="cpu", num_arms=15) -> TabularPriors:
    r"""Three priors on ``num_arms`` arms of [0, 20], with different kernels and means."""
    arms = torch.linspace(0, 20, num_arms, dtype=dtype, device=device).unsqueeze(-1)
    return TabularPriors.from_kernels(
        arms,
        [paper_rbf(4.0), paper_matern(1.5, 2.0), paper_periodic(5.0, 1.0)],
        [
            lambda X: torch.zeros_like(X[:, 0]),
            lambda X: 0.5 * torch.sin(X[:, 0]),
            lambda X: torch.full_like(X[:, 0], 0.3),
        ],
        noise=NOISE,
        names=["se4", "m32", "per"],
    )


def textbook_posterior(priors: TabularPriors, indices: list[int], y: torch.Tensor):
    r"""Per prior, float64: ``m + C[:, S] (C[S, S] + s^2 I)^{-1} (y - m[S])`` and the latent variances."""
    means, variances = [], []
    for k in range(len(priors)):
        m, C = priors.means[k].double().cpu(), priors.covariances[k].double().cpu()
        gram = C[indices][:, indices] + priors.noise * torch.eye(len(indices), dtype=torch.float64)
        cross = C[:, indices]
        means.append(m + cross @ torch.linalg.solve(gram, y.double().cpu() - m[indices]))
        variances.append(C.diagonal() - (cross * torch.linalg.solve(gram, cross.T).T).sum(-1))
    return torch.stack(means), torch.stack(variances)


def textbook_log_evidence(priors: TabularPriors, indices: list[int], y: torch.Tensor) -> torch.Tensor:
    values = []
    for k in range(len(priors)):
        m = priors.means[k].double().cpu()[indices]
        C = priors.covariances[k].double().cpu()[indices][:, indices] + priors.noise * torch.eye(len(indices), dtype=torch.float64)
        values.append(torch.distributions.MultivariateNormal(m, C).log_prob(y.double().cpu()))
    return torch.stack(values)


def data(priors: TabularPriors, indices: list[int], seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    y = torch.randn(len(indices), generator=gen, dtype=torch.float64)
    X = priors.arms[indices]
    return X, y.to(X).unsqueeze(-1)


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
# constants
# --------------------------------------------------------------------------- #


def test_theorem_4_1_constants():
    # the implementer's note's table (delta = 0.05, sigma = 0.25)
    assert pe_beta(1, 500, 6, 0.05) == pytest.approx(25.8, abs=0.05)
    assert pe_beta(500, 500, 6, 0.05) == pytest.approx(50.6, abs=0.05)
    assert pe_beta(500, 500, 4, 0.05) == pytest.approx(49.8, abs=0.05)
    # the oracles (|P| = 1): 47.05, which the note rounds to "47.1"
    assert pe_beta(500, 500, 1, 0.05) == pytest.approx(47.05, abs=0.005)
    assert elimination_xi(1, 6, 0.25, 0.05) == pytest.approx(0.75, abs=0.005)
    assert elimination_xi(500, 6, 0.25, 0.05) == pytest.approx(2.30, abs=0.005)
    # the delta-split reading: sqrt(beta_t) is Srinivas' finite-domain multiplier at delta / 4
    for t in (1, 7, 500):
        assert math.sqrt(pe_beta(t, 500, 5, 0.05)) == pytest.approx(float(bayesian_beta_finite(t, 2500, 0.0125)))
    with pytest.raises(ValueError, match="delta"):
        pe_beta(1, 500, 6, 1.5)


def test_random_argmax_breaks_exact_ties_with_the_generator():
    values = torch.tensor([[0.0, 2.0, 1.0], [2.0, -1.0, 2.0]])
    picks = {random_argmax(values, torch.Generator().manual_seed(s)) for s in range(40)}
    assert picks == {1, 3, 5}
    assert random_argmax(values, torch.Generator().manual_seed(3)) == random_argmax(values, torch.Generator().manual_seed(3))
    assert random_argmax(torch.tensor([0.0, 3.0, 1.0]), torch.Generator()) == 1


# --------------------------------------------------------------------------- #
# PE-GP-TS / PE-GP-UCB
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
    pending = dataclasses.replace(policy.state.pending)
    mean, variance = textbook_posterior(priors, observed, Y.reshape(-1))
    # the pending selection stores the point; its arm is the point's index in the pool
    prior, arm = pending.prior, int(FiniteDomain(priors.arms).index_of(x.new_tensor([pending.x])))
    tol = TOLERANCE[dtype]
    assert arm >= 0 and torch.equal(x, priors.arms[arm].unsqueeze(0))
    assert pending.mean == pytest.approx(float(mean[prior, arm]), abs=tol)
    assert pending.sigma == pytest.approx(math.sqrt(float(variance[prior, arm])), abs=tol)  # latent, no noise
    sqrt_beta = math.sqrt(pe_beta(1, 15, 3, 0.05))
    assert pending.sqrt_beta == pytest.approx(sqrt_beta) and pending.width == pytest.approx(sqrt_beta * pending.sigma)
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
    # the width is the property sqrt_beta * sigma: sqrt_beta = 1 stores exactly ``width``
    policy.state.pending = PendingPrior(prior, policy.domain.points[0].tolist(), mean=0.0, sigma=width, sqrt_beta=1.0)
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
        if not policy.state.survivors.alive[0]:
            break
    assert policy.state.survivors.eliminated_at.get(0) == eliminated_at
    assert policy.state.survivors.alive == [eliminated_at is None, True]
    if eliminated_at is not None:
        assert policy.diagnostics["eliminated"] == 0 and policy.diagnostics["n_active"] == 1
        assert policy.statistics()["statistic"][0] > policy.statistics()["threshold"][0]


def test_only_the_played_prior_is_tested_and_each_keeps_its_own_record():
    policy = hand_policy()
    play(policy, 1, 0.85, width=0.1)  # prior 1: 0.85 < 0.881
    play(policy, 0, 0.0, width=0.1)  # prior 0 at t = 2 with |S_0| = 1: 0 < threshold
    play(policy, 1, 0.7, width=0.1)  # prior 1 at t = 3, |S_1| = 2: 1.55 > sqrt(2 xi_3) + 0.2 = 1.530
    assert math.sqrt(2 * elimination_xi(3, 2, 0.25, 0.05)) + 0.2 == pytest.approx(1.530, abs=1e-3)
    assert policy.state.survivors.alive == [True, False] and policy.state.survivors.eliminated_at == {1: 3}
    # the threshold sums the widths stored at selection time: the same residuals 0.85, 0.7 at
    # t = 1, 2 fire with widths 0.1, 0.1 (1.55 > 1.452) and not with widths 0.1, 0.4 (1.55 < 1.752)
    for widths, alive in (((0.1, 0.1), False), ((0.1, 0.4), True)):
        policy = hand_policy()
        for y, width in zip((0.85, 0.7), widths):
            play(policy, 1, y, width=width)
        threshold = math.sqrt(2 * elimination_xi(2, 2, 0.25, 0.05)) + sum(widths)
        assert policy.diagnostics["threshold"] == pytest.approx(threshold)
        assert policy.state.survivors.alive[1] is alive and abs(threshold - 1.55) > 0.09


def test_the_last_active_prior_is_never_eliminated():
    policy = hand_policy()
    policy.state.survivors.alive = [False, True]
    play(policy, 1, 50.0, width=0.0)
    assert policy.state.survivors.alive == [False, True] and policy.state.survivors.kept_last == [1] and policy.state.survivors.eliminated_at == {}
    assert policy.diagnostics["kept_last"] is True and policy.diagnostics["eliminated"] is None
    # the oracle (|P| = 1) keeps its only prior too
    problem = PriorSelectionProblem("gp-lengthscale", seed=2, num_arms=30)
    oracle = OracleGPTS(problem.domain)
    oracle.bind_task(problem.task_info())
    play(oracle, 0, 50.0, width=0.0)
    assert oracle.state.survivors.alive == [True] and oracle.state.survivors.kept_last == [1]
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
    assert policy.state.pending.prior == 1
    policy.state.survivors.alive = [True, False, True]
    chosen = set()
    for _ in range(20):
        policy.suggest(X, Y)
        chosen.add(policy.state.pending.prior)
    assert chosen <= {0, 2} and policy.n_candidates == 2


def test_pe_ucb_breaks_the_first_round_tie_at_random():
    # at t = 1 every stationary zero-mean prior has the same UCB at every arm
    problem = PriorSelectionProblem("gp-lengthscale", num_arms=40)
    picks = set()
    for seed in range(12):
        policy = PEGPUCB(problem.domain, priors=task_priors("gp-lengthscale", num_arms=40), seed=seed)
        x = policy.suggest(torch.empty(0, 1, dtype=torch.float64), torch.empty(0, 1, dtype=torch.float64))
        picks.add((policy.state.pending.prior, float(x)))
    assert len({p for p, _ in picks}) >= 3 and len({x for _, x in picks}) >= 6


# --------------------------------------------------------------------------- #
# HP-GP-TS / MAP-GP-TS
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


# --------------------------------------------------------------------------- #
# oracles, binding and validation
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
        policy.suggest(torch.empty(0, 1, dtype=torch.float64), torch.empty(0, 1, dtype=torch.float64), q=2)


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
    survivors, arm = st["survivors"], st["train_X"][0]  # arm: a point of the pool
    bad = [
        {**st, "survivors": {**survivors, "alive": [False] * 5}},
        {**st, "survivors": {**survivors, "alive": [True] * 4}},
        {**st, "train_X": st["train_X"][:-1]},
        {**st, "train_X": [[999.0]] * len(st["train_X"])},  # not points of the pool
        {**st, "play_eta": st["play_eta"][:-1]},
        {**st, "prior_ids": [0, 1]},
        {**st, "priors": {**st["priors"], "checksum": [1.0, 2.0]}},
        {**st, "pending": {"prior": 9, "x": arm}},
        {**st, "pending": {"prior": 0, "x": [999.0]}},  # a pending point outside the pool
        {**st, "pending": {"prior": 0, "arm": 0}},  # the old format: no point, an unknown field
        {**st, "pending": {"prior": 0}},  # a missing (required) field
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
# on a box: K (mean, kernel) pairs in one CandidateGP, pathwise samples
# --------------------------------------------------------------------------- #

BOX_RULES = ["pe-gp-ts", "pe-gp-ucb", "hp-gp-ts", "map-gp-ts"]
BOX_OPTIONS = {"num_restarts": 4, "raw_samples": 64}  # small, fast multi-start (1-d box)


def box_candidates(dtype=torch.float64, device="cpu") -> KernelCandidates:
    r"""Three Matern-5/2 priors (length scales in unit-cube units), noise 0.05^2."""
    ls = torch.tensor([0.05, 0.15, 0.4], dtype=dtype, device=device)
    return KernelCandidates.from_lengthscales(ls, kernel="matern52", noise=0.05**2)


def box_model(train_X, train_Y, cands, bounds, indices=None) -> CandidateGP:
    r"""The reference CandidateGP of the priors ``indices`` over all data (as the rules must build)."""
    cands = cands if indices is None else cands.subset(indices)
    return CandidateGP(train_X, train_Y, cands, input_transform=Normalize(bounds.shape[-1], bounds=bounds))


def box_policy(name, problem, seed=0, dtype=torch.float64, device="cpu", **options):
    cands = box_candidates(dtype, device)
    return make_policy(name, problem.domain, seed=seed, dtype=dtype, device=device, priors=cands,
                       **{**BOX_OPTIONS, **options})


def box_history(name, seed, n_init=None, iterations=6):
    problem = get_problem("berkenkamp")
    return run(problem, box_policy(name, problem, seed=seed), iterations=iterations, seed=seed, n_init=n_init)


def test_box_beta_is_srinivas_continuous_beta_for_one_prior():
    for t, d in [(1, 1), (7, 1), (100, 2)]:
        num = box_num_arms(t, d, 0.05)
        assert pe_beta(t, num, 1, 0.05) == pytest.approx(float(bayesian_beta_continuous(t, d, 0.05, 1.0, 1.0, 1.0)) ** 2)
    assert box_num_arms(3, 1, 0.05, a=2.0, b=0.5) == pytest.approx(9 * 0.5 * math.sqrt(math.log(160.0)))
    assert box_num_arms(1, 1, 0.05, b=1e-3) == 1.0  # max(tau, 1)
    with pytest.raises(ValueError, match="a, b"):
        box_num_arms(1, 1, 0.05, a=0.0)


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


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("cls", [PEGPTS, PEGPUCB])
def test_box_selection_is_the_joint_argmax_and_records_the_candidate_gp_posterior(cls, dtype):
    bounds = torch.tensor([[0.0], [1.0]], dtype=dtype)
    cands = box_candidates(dtype)
    policy = cls(BoxDomain(bounds), priors=cands, seed=1, dtype=dtype, **BOX_OPTIONS)
    X = torch.tensor([[0.1], [0.35], [0.8]], dtype=dtype)
    Y = torch.tensor([[0.2], [0.9], [-0.3]], dtype=dtype)
    policy.state.survivors.alive = [True, False, True]  # an eliminated prior is neither sampled nor selected
    replay = torch.Generator().manual_seed(0)
    replay.set_state(policy.generator.get_state())
    x = policy.suggest(X, Y)
    pending = dataclasses.replace(policy.state.pending)
    model = box_model(X, Y, cands, bounds, [0, 2])
    sqrt_beta = math.sqrt(pe_beta(1, box_num_arms(1, 1, 0.05), 3, 0.05))
    seed = int(torch.randint(0, 2**31 - 1, (1,), generator=replay))  # the policy's next_seed()
    if cls is PEGPUCB:  # the doubly optimistic joint maximiser over (x, active prior)
        best_x, local, _ = optimize_ucb_joint(model, sqrt_beta, bounds, **BOX_OPTIONS, seed=seed)
    else:  # one independent path per active prior, each maximised; the best (x, prior) pair
        X_best, values = sample_candidate_maxima(model, bounds, **BOX_OPTIONS, seed=seed)
        local = int(values.argmax())
        best_x = X_best[local]
    assert torch.equal(x, best_x.unsqueeze(0)) and pending.prior == [0, 2][local]
    assert pending.x == x[0].tolist()
    assert policy.selected == [["0.05", "0.15", "0.4"][pending.prior]] and policy.n_candidates == 2
    # Alg. 1 lines 7-8 at selection time: the CandidateGP posterior on D_{t-1} at x_t
    mean, variance = model.marginal_mean_variance(x.unsqueeze(0))
    tol = TOLERANCE[dtype]
    assert pending.mean == pytest.approx(float(mean[local, 0]), abs=tol)
    assert pending.sigma == pytest.approx(math.sqrt(float(variance[local, 0])), abs=tol)
    assert pending.width == pytest.approx(sqrt_beta * pending.sigma)
    policy.observe(x, torch.tensor([[0.5]], dtype=dtype))
    assert policy.state.play_prior == [pending.prior] and policy.state.round == 1
    assert policy.state.play_eta[0] == pytest.approx(0.5 - pending.mean, abs=tol)
    assert policy.model.num_observations == 4


def test_box_num_arms_equivalent_replaces_the_discretisation():
    domain = BoxDomain(torch.tensor([[0.0], [1.0]], dtype=torch.float64))
    policy = PEGPTS(domain, priors=box_candidates(), num_arms_equivalent=1000)
    assert policy.sqrt_beta(5) == pytest.approx(math.sqrt(pe_beta(5, 1000, 3, 0.05)))
    policy = PEGPTS(domain, priors=box_candidates(), lipschitz=(2.0, 3.0), delta=0.1)
    assert policy.num_arms(4) == pytest.approx(box_num_arms(4, 1, 0.1, 2.0, 3.0))


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
    torch.testing.assert_close(policy.model.log_marginal_likelihood().double(), evidence.double())


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
    with pytest.raises(ValueError, match="a, b"):
        PEGPTS(domain, priors=mixed, noise_std=0.2, lipschitz=(-1.0, 1.0))
    with pytest.raises(ValueError, match="num_features"):
        HPGPTS(domain, priors=mixed, noise_std=0.2, num_features=7)
    # mean functions: any MeanFunctionCandidates over Matern / RBF kernels
    means = MeanFunctionCandidates(
        box_candidates(), lambda X: torch.stack([X[..., 0], -X[..., 0], 0 * X[..., 0]], dim=-2)
    )
    history = run(get_problem("berkenkamp"), HPGPTS(domain, priors=means, seed=0, **BOX_OPTIONS), iterations=3, seed=0)
    assert len(history) == 6 and history["selected"].iloc[-1].startswith("mean")
