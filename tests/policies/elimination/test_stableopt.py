import json

import pytest
import torch

from botorch_unknown_hypers.acquisition.robust import robust_min
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.loop import AskTellOptimizer, initial_design, run
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.policies.round.candidate_set import elimination_xi
from botorch_unknown_hypers.policies.round.pending_plays import PendingPlay
from botorch_unknown_hypers.policies.elimination.stableopt import HEStableOpt
from botorch_unknown_hypers.problems import get_problem
from botorch_unknown_hypers.problems.elimination_tasks import task_candidates
from botorch_unknown_hypers.domains import FiniteDomain


def _policy():
    points = torch.linspace(0, 1, 21, dtype=torch.float64).unsqueeze(-1)
    cands = KernelCandidates.from_lengthscales(torch.tensor([0.05, 0.5], dtype=torch.float64), noise=1e-4)
    return HEStableOpt(FiniteDomain(points), candidates=cands, epsilon=0.1, beta=1.0, noise_std=0.01), points


def test_selection_is_robust_ucb_then_pessimistic_perturbation():
    policy, points = _policy()
    X0, Y0 = points[[0, 10, 20]], torch.tensor([[0.0], [1.0], [0.2]], dtype=torch.float64)
    X = policy.suggest(X0, Y0)
    model = policy._model(X0, Y0, [0, 1])
    mean, var = model.marginal_mean_variance(points.unsqueeze(0).unsqueeze(0))
    ucb, lcb = mean[0] + var[0].sqrt(), mean[0] - var[0].sqrt()
    mask = FiniteDomain(points).neighbourhoods(0.1)
    robust = robust_min(ucb, mask)
    u, i = divmod(int(robust.argmax()), 21)
    nb = mask[i].nonzero().flatten()
    v, j = divmod(int(lcb[:, nb].argmin()), len(nb))
    (play,) = policy.state.pending  # one play of u at the queried point, v's record attached
    assert play.candidate == u and play.pessimistic.candidate == v and play.x == X[0].tolist()
    assert torch.equal(X, points[nb[j]].unsqueeze(0))  # the queried point is x_t + delta_t
    assert torch.equal(policy.robust_point, points[i].unsqueeze(0))
    assert abs(float(X - policy.robust_point)) <= 0.1 + 1e-12


def test_both_tests_apply_and_both_candidates_go():
    policy, points = _policy()
    # u = 0 and v = 1 in the same round, both with large residuals: both tests fire and both
    # candidates go (A4: the second removal does not undo the first).
    policy.candidates = KernelCandidates.from_lengthscales(torch.tensor([0.05, 0.5, 0.2], dtype=torch.float64))
    policy.state.alive = [True, True, True]
    policy.state.pending = [PendingPlay(0, points[0].tolist(), pessimistic=PendingPlay(1))]
    policy.observe(points[:1], torch.tensor([[5.0]], dtype=torch.float64))
    assert policy.state.alive == [False, False, True]
    assert policy.state.eliminated_at == {0: 1, 1: 1}
    xi = elimination_xi(1, 3, 0.01, 0.1)
    assert policy.diagnostics["threshold_u"] == pytest.approx(xi**0.5)


def test_robust_task_runs_records_eps_regret_and_round_trips():
    problem = get_problem("robust-peak")
    policy = make_policy("he-stableopt", problem.domain, seed=0, candidates=task_candidates("robust-peak", noise_std=0.01))
    history = run(problem, policy, iterations=4, seed=0)
    eps = [json.loads(d)["eps_regret"] for d in history["diagnostics"] if d]
    assert len(eps) == 4 and all(e >= -1e-12 for e in eps)
    opt = AskTellOptimizer(policy)
    X0 = initial_design(problem.domain, 5, seed=1)
    opt.tell(X0, problem.evaluate(X0)[0])
    opt.tell(opt.ask(), torch.zeros(1, 1, dtype=torch.float64))
    saved = json.loads(json.dumps(opt.state_dict()))
    X = opt.ask()
    clone = AskTellOptimizer(make_policy("he-stableopt", problem.domain, seed=5, candidates=task_candidates("robust-peak", noise_std=0.01)))
    clone.load_state_dict(saved)
    assert torch.equal(clone.ask(), X)
    mle = make_policy("stableopt-mle", problem.domain, seed=0)
    assert len(run(problem, mle, iterations=2, seed=0)) == 5 + 2


def test_needs_a_pool():
    with pytest.raises(ValueError, match="pool"):
        HEStableOpt(get_problem("berkenkamp").domain)


def test_a_new_suggestion_replaces_an_unanswered_play():
    policy, points = _policy()
    X0, Y0 = points[[0, 10, 20]], torch.tensor([[0.0], [1.0], [0.2]], dtype=torch.float64)
    policy.suggest(X0, Y0)
    X = policy.suggest(X0, Y0)  # one play at a time: the newer one is awaited
    (play,) = policy.state.pending
    assert play.x == X[0].tolist() and play.pessimistic is not None
    assert list(policy.diagnostics) == ["alive", "u", "v", "x_robust", "delta", "robust_ucb"]
