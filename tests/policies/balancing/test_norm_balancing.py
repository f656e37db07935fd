import json
import math

import pytest
import torch

from botorch_unknown_hypers.regret_bounds import norm_bound
from botorch_unknown_hypers.loop import AskTellOptimizer, initial_design
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.policies.balancing.norm_balancing import LNBGPUCB, next_norm
from botorch_unknown_hypers.problems import get_problem

FAST = {"num_restarts": 2, "raw_samples": 32}


def test_next_norm_ladder_and_direction():
    # v(m) = N0 e^m enters once it is below N0 b(t+1)
    assert next_norm(1, 2.0, b_next=math.e + 0.01) == pytest.approx(2.0 * math.e)
    assert next_norm(1, 2.0, b_next=math.e - 0.01) is None
    assert next_norm(2, 1.0, b_next=8.0) == pytest.approx(math.e**2)


def test_pairs_grow_as_specified():
    domain = get_problem("berkenkamp").domain  # d = 1
    policy = LNBGPUCB(domain, seed=0, **FAST)
    c = policy.constants
    policy.state.theta0 = 1.0
    policy.state.thetas = [1.0]
    policy.state.norm_values = [1.0]
    source = policy.candidate_round.source
    policy.state.add(*source.pairs(policy.state, [0], [0]))
    # hand-computed schedule for d = 1: g(t) = max(e^{5/6}, sqrt t), b(t) = max(1, sqrt t), r = e^{1/6}
    g = lambda t: max(math.exp(5 / 6), math.sqrt(t))  # noqa: E731
    b = lambda t: max(1.0, math.sqrt(t))  # noqa: E731
    expected_thetas, expected_norms, expected_pairs = [1.0], [1.0], {(0, 0)}
    for t in range(1, 60):
        source.propose(policy.context, policy.state, t)
        # reference
        nxt = expected_thetas[-1] / c.ratio
        if nxt > 1.0 / g(t + 1):
            expected_thetas.append(nxt)
            expected_pairs |= {(len(expected_thetas) - 1, j) for j in range(len(expected_norms))}
        v = math.exp(len(expected_norms))
        if v < b(t + 1):
            expected_norms.append(v)
            expected_pairs |= {(i, len(expected_norms) - 1) for i in range(len(expected_thetas))}
        assert policy.state.thetas == pytest.approx(expected_thetas)
        assert policy.state.norm_values == pytest.approx(expected_norms)
        pairs = list(zip(policy.state.pair_theta, policy.state.pair_norm))
        assert len(pairs) == len(set(pairs)) == len(policy.state.alive)  # each pair once
        assert set(pairs) == expected_pairs
    # v(1) = e enters when sqrt(t + 1) > e, i.e. after round 7; v(2) = e^2 after round 54
    assert len(policy.state.norm_values) == 3
    # every candidate's model length scale and norm bound B(theta, N) = (theta0/theta)^{d/2} N
    theta = torch.tensor([policy.state.thetas[i] for i in policy.state.pair_theta], dtype=torch.float64)
    N = torch.tensor([policy.state.norm_values[j] for j in policy.state.pair_norm], dtype=torch.float64)
    assert policy.state.candidates.lengthscale[:, 0] == pytest.approx(theta)
    assert policy.state.norms == pytest.approx(norm_bound(theta, 1.0, N, 1))


def test_lnb_runs_and_round_trips_state():
    problem = get_problem("berkenkamp")
    policy = make_policy("lnb-gp-ucb", problem.domain, seed=3, **FAST)
    opt = AskTellOptimizer(policy)
    X0 = initial_design(problem.domain, problem.n_init, seed=3)
    opt.tell(X0, problem.evaluate(X0)[0])
    for _ in range(11):
        X = opt.ask()
        opt.tell(X, problem.evaluate(X)[0])
    assert policy.state.round == 11
    assert len(policy.state.norm_values) == 2  # v(1) = e entered after round 7
    saved = opt.state_dict()
    X = opt.ask()
    clone = make_policy("lnb-gp-ucb", problem.domain, seed=3, **FAST)
    clone_opt = AskTellOptimizer(clone)
    clone_opt.load_state_dict(json.loads(json.dumps(saved)))
    assert clone.state.thetas == policy.state.thetas and clone.state.pair_norm == policy.state.pair_norm
    assert torch.equal(clone_opt.ask(), X)
    state = policy.state_dict()
    with pytest.raises(ValueError, match="pairs"):
        clone.load_state_dict({**state, "state": {**state["state"], "pair_norm": [99] * len(policy.state.alive)}})
    assert clone.state.pair_norm == policy.state.pair_norm  # unchanged after the failed load


def test_lnb_validates_options():
    domain = get_problem("berkenkamp").domain
    with pytest.raises(ValueError, match="N0"):
        LNBGPUCB(domain, N0=0.0)
    with pytest.raises(ValueError, match="norm_growth_exponent"):
        LNBGPUCB(domain, norm_growth_exponent=-1.0)
