import math
from dataclasses import asdict

import numpy as np
import pytest
import torch

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.loop import AskTellOptimizer, initial_design
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.policies.balancing.hyperparameter_balancing import HyperparameterBalancing
from botorch_unknown_hypers.problems import get_problem

FAST = {"num_restarts": 2, "raw_samples": 32}


def _matern52(X: np.ndarray, ls: float) -> np.ndarray:
    r = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)) / ls
    s = math.sqrt(5) * r
    return (1 + s + s**2 / 3) * np.exp(-s)


def _start(policy, problem, seed=0):
    opt = AskTellOptimizer(policy)
    X0 = initial_design(problem.domain, problem.n_init, seed=seed)
    opt.tell(X0, problem.evaluate(X0)[0])
    return opt


def test_elimination_and_beta_match_brute_force():
    problem = get_problem("berkenkamp")
    ls = torch.tensor([0.5, 0.2, 0.05], dtype=torch.float64)
    cands = KernelCandidates.from_lengthscales(ls, noise=1e-2)
    policy = HyperparameterBalancing(
        problem.domain, seed=1, candidates=cands, norms=[1.0, 2.0, 3.0], noise_std=0.1, width_factor=2.0, **FAST
    )
    opt = _start(policy, problem, seed=1)
    delta = policy.delta
    for t in range(1, 13):
        X_train = opt.train_X.numpy().copy()
        X = opt.ask()
        p = asdict(policy.state.pending[-1])  # a PendingPlay dataclass, copied as a dict
        k = p["candidate"]
        # beta^u = B^u + sigma_N sqrt(2 (I + 1 + ln(2/delta))), I = 1/2 logdet(I + K / noise)
        K = _matern52(X_train, float(ls[k]))
        info = 0.5 * np.linalg.slogdet(np.eye(len(K)) + K / 1e-2)[1]
        beta = [1.0, 2.0, 3.0][k] + 0.1 * math.sqrt(2 * (info + 1 + math.log(2 / delta)))
        assert p["beta"] == pytest.approx(beta, rel=1e-9)
        active_before = list(policy.state.alive)
        opt.tell(X, problem.evaluate(X)[0])
        # brute-force elimination test (proof-supported sign, c = 2, |A| = 3, delta_B = delta / 2)
        counts = [policy.state.play_candidate.count(i) for i in range(3)]
        if all(counts[i] > 0 for i in range(3) if active_before[i]):
            xi_t = 2 * 0.1**2 * math.log(3 * math.pi**2 * t**2 / (6 * delta / 2))
            act = [i for i in range(3) if active_before[i]]
            ys = {i: [(y - p["y_mean"]) / p["y_std"] for y, c in zip(policy.state.play_y, policy.state.play_candidate) if c == i] for i in act}
            ws = {i: [w for w, c in zip(policy.state.play_width, policy.state.play_candidate) if c == i] for i in act}
            lower = {i: np.mean(ys[i]) - math.sqrt(xi_t / counts[i]) for i in act}
            best = max(lower.values())
            for i in act:
                upper = np.mean(ys[i]) + math.sqrt(xi_t / counts[i]) + 2 * np.mean(ws[i])
                assert policy.state.alive[i] == (upper >= best)
                if not policy.state.alive[i]:
                    assert policy.state.eliminated_at[i] == t
        else:
            assert policy.state.alive == active_before
    assert policy.state.eliminated_at  # the test ran through at least one elimination


def test_fresh_candidates_first_and_proposals_enter():
    problem = get_problem("berkenkamp")
    extra = KernelCandidates.from_lengthscales(torch.tensor([0.01], dtype=torch.float64), noise=1e-4)

    def propose(t, policy):
        return (extra, 1.0) if t == 4 else None

    policy = make_policy("hb-gp-ucb", problem.domain, seed=0, propose=propose, **FAST)
    opt = _start(policy, problem)
    played = []
    for _ in range(10):
        X = opt.ask()
        played.append(policy.state.pending[-1].candidate)
        opt.tell(X, problem.evaluate(X)[0])
    # default a(0): eight length scales 2^{-i/2}; R(1) = 0 -> each fresh candidate is played
    # once, first index first; the candidate proposed after round 4 gets index 8.
    assert played[:9] == list(range(9))
    assert len(policy.state.alive) == 9
    assert policy.state.candidates.labels()[8] == "0.01"


def test_diagnostics_norms_follow_the_set_and_are_copied_once_per_set(monkeypatch):
    from botorch_unknown_hypers.policies.balancing.balancing_policy import BalancingState
    from tests.host_reads import record_reads

    problem = get_problem("berkenkamp")
    extra = KernelCandidates.from_lengthscales(torch.tensor([0.01], dtype=torch.float64), noise=1e-4)
    policy = make_policy("hb-gp-ucb", problem.domain, seed=0, propose=lambda t, p: (extra, 3.5) if t == 2 else None, **FAST)
    opt = _start(policy, problem)
    for t in range(1, 4):
        X = opt.ask()
        assert policy.diagnostics["norms"] == policy.state.norms.tolist()  # 8, then 9 after round 2's proposal
        opt.tell(X, problem.evaluate(X)[0])
    assert policy.diagnostics["norms"][-1] == 3.5 and len(policy.diagnostics["norms"]) == 9

    state = BalancingState()
    state.add(extra, torch.tensor([2.0], dtype=torch.float64))
    assert state.norm_bounds() == [2.0]
    reads = record_reads(monkeypatch)
    assert state.norm_bounds() == [2.0] and reads == []  # the same tensor: no second copy
    state.add(extra, torch.tensor([5.0], dtype=torch.float64))  # a new tensor: copied again
    assert state.norm_bounds() == [2.0, 5.0] and reads == ["tolist"]


def test_custom_bound_drives_selection():
    problem = get_problem("berkenkamp")
    cands = KernelCandidates(
        lengthscale=torch.full((2, 1), 0.2, dtype=torch.float64),
        outputscale=torch.tensor([1.0, 4.0], dtype=torch.float64),
        noise=torch.tensor([1e-4, 1e-4], dtype=torch.float64),
    )
    # R^u(T) = w_u (T - 1): candidate 1 grows 3x faster, so it is played a quarter of the time
    w = torch.tensor([1.0, 3.0], dtype=torch.float64)
    policy = HyperparameterBalancing(
        problem.domain, seed=0, candidates=cands, bound=lambda T, p: w * (T - 1), width_factor=1e6, **FAST
    )
    opt = _start(policy, problem)
    for _ in range(12):
        X = opt.ask()
        opt.tell(X, problem.evaluate(X)[0])
    counts = policy.counts().tolist()
    assert policy.state.alive == [True, True]  # a huge width factor never eliminates
    assert counts == [9.0, 3.0]


def test_validation_leaves_no_state():
    domain = get_problem("berkenkamp").domain
    cands = KernelCandidates.from_lengthscales(torch.tensor([0.5, 0.2], dtype=torch.float64))
    with pytest.raises(ValueError, match="norms"):
        HyperparameterBalancing(domain, candidates=cands, norms=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="norms"):
        HyperparameterBalancing(domain, candidates=cands, norms=-1.0)
    with pytest.raises(ValueError, match="propose"):
        HyperparameterBalancing(domain, candidates=cands, propose=3)
    with pytest.raises(ValueError, match="delta"):
        HyperparameterBalancing(domain, candidates=cands, delta=1.5)
    with pytest.raises(ValueError, match="width_factor"):
        HyperparameterBalancing(domain, candidates=cands, width_factor=0.0)
    policy = HyperparameterBalancing(domain, candidates=cands, bound=lambda T, p: T[:1])
    problem = get_problem("berkenkamp")
    X0 = initial_design(domain, 3, seed=0)
    with pytest.raises(ValueError, match="bound must return"):
        policy.suggest(X0, problem.evaluate(X0)[0])
    with pytest.raises(ValueError, match="q"):
        policy.suggest(X0, problem.evaluate(X0)[0], q=0)
