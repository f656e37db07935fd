import json
import math

import pytest
import torch

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.loop import AskTellOptimizer, initial_design
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.policies.round.candidate_set import elimination_xi
from botorch_unknown_hypers.policies.elimination.he_gp_ucb import HEGPUCB
from botorch_unknown_hypers.policies.round.pending_plays import PendingPlay
from botorch_unknown_hypers.confidence import elimination_statistics
from botorch_unknown_hypers.problems import get_problem
from botorch_unknown_hypers.domains import FiniteDomain

FAST = {"num_restarts": 2, "raw_samples": 32}


def test_xi_uses_pi_squared_and_original_set_size():
    # the note's table: xi_t / R^2 at delta = 0.1: |U| = 5 -> 10.206 (t = 1), 25.854 (t = 50)
    assert elimination_xi(1, 5, 1.0, 0.1) == pytest.approx(10.206, abs=1e-3)
    assert elimination_xi(50, 5, 1.0, 0.1) == pytest.approx(25.854, abs=1e-3)
    assert elimination_xi(100, 11, 1.0, 0.1) == pytest.approx(30.203, abs=1e-3)


def test_elimination_fires_only_when_signed_sum_exceeds_threshold():
    # candidate 0: |0.3 - 0.1 + 0.4| = 0.6; threshold = sqrt(0.01 * 3) + 0.3 = 0.4732 -> fires
    # candidate 1, signed: opposite signs cancel: |0.3 - 0.4 + 0.2| = 0.1 < 0.4732 -> keeps
    played = [0, 1, 0, 1, 0, 1]
    eta = [0.3, 0.3, -0.1, -0.4, 0.4, 0.2]
    stat, th = elimination_statistics(played, eta, [0.1] * 6, 2, 0.01)
    fire = [s > t for s, t in zip(stat, th)]
    assert fire[0] and stat[0] == pytest.approx(0.6) and th[0] == pytest.approx(math.sqrt(0.03) + 0.3)
    assert not fire[1] and stat[1] == pytest.approx(0.1)


def _pool_policy(**kwargs):
    points = torch.linspace(0, 1, 41, dtype=torch.float64).unsqueeze(-1)
    cands = KernelCandidates.from_lengthscales(torch.tensor([0.05, 0.5], dtype=torch.float64), noise=1e-4)
    return HEGPUCB(FiniteDomain(points), candidates=cands, noise_std=0.01, **kwargs), points


def test_uses_widths_stored_at_selection_time(monkeypatch):
    policy, points = _pool_policy(beta=2.0)
    X0 = points[[0, 20, 40]]
    Y0 = torch.zeros(3, 1, dtype=torch.float64)
    X = policy.suggest(X0, Y0)
    stored = policy.state.pending[-1]
    # the stored width is beta * sigma_{t-1}(x_t) of the selected candidate, before y_t enters
    model = policy._model(X0, Y0, [0, 1])
    _, var = model.marginal_mean_variance(X.unsqueeze(0))
    assert stored.width == pytest.approx(2.0 * float(var[stored.candidate, 0].sqrt()), rel=1e-9)
    policy.observe(X, torch.zeros(1, 1, dtype=torch.float64))
    assert policy.state.play_width == [stored.width]  # not recomputed on the updated posterior


@pytest.mark.parametrize(
    "residuals, eliminated_at",
    [
        # thresholds sqrt(xi_t t) + 0.01 t = 0.0389, 0.0672, 0.0919 (R = 0.01, |U| = 2, delta = 0.1)
        ([0.035, -0.035, 0.035], None),  # signed sums 0.035, 0, 0.035: kept (|eta| summed would fire at t = 3)
        ([0.03, 0.0, 0.095], 3),  # 0.03, 0.03, 0.125 > 0.0919: eliminated at t = 3
        ([0.045, 0.0, 0.0], 1),  # 0.045 > 0.0389: eliminated at once
    ],
)
def test_hand_computed_sequence(residuals, eliminated_at):
    policy, points = _pool_policy(beta=1.0)
    for y in residuals:  # candidate 0 plays with stored mean 0 and width 0.01, so eta_t = y_t
        policy.state.pending = [PendingPlay(candidate=0, mean=0.0, width=0.01, beta=1.0)]
        policy.observe(points[:1], torch.tensor([[y]], dtype=torch.float64))
        if not policy.state.alive[0]:
            break
    assert policy.state.eliminated_at.get(0) == eliminated_at
    thresholds = [math.sqrt(elimination_xi(t, 2, 0.01, 0.1) * t) + 0.01 * t for t in (1, 2, 3)]
    assert thresholds == pytest.approx([0.0389, 0.0672, 0.0919], abs=1e-4)


def test_last_survivor_is_kept_and_logged():
    policy, points = _pool_policy(beta=1.0)
    policy.state.alive = [False, True]
    policy.state.pending = [PendingPlay(candidate=1, mean=0.0, width=0.0, beta=1.0)]
    policy.observe(points[:1], torch.tensor([[10.0]], dtype=torch.float64))
    assert policy.state.alive == [False, True] and policy.state.kept_last == [1]
    assert policy.diagnostics["kept_last_survivor"] == [1]


def test_short_lengthscales_selected_on_berkenkamp_and_state_round_trip():
    problem = get_problem("berkenkamp")
    policy = make_policy("he-gp-ucb", problem.domain, seed=0, **FAST)
    opt = AskTellOptimizer(policy)
    X0 = initial_design(problem.domain, 3, seed=0)
    opt.tell(X0, problem.evaluate(X0)[0])
    for _ in range(8):
        X = opt.ask()
        opt.tell(X, problem.evaluate(X)[0])
    assert policy.selected[0] in {"0.3", "0.4"}  # doubly optimistic: short length scales win
    saved = json.loads(json.dumps(opt.state_dict()))
    X = opt.ask()
    clone = AskTellOptimizer(make_policy("he-gp-ucb", problem.domain, seed=7, **FAST))
    clone.load_state_dict(saved)
    assert torch.equal(clone.ask(), X)
    with pytest.raises(ValueError, match=r"state\['state'\].*alive"):
        clone.policy.load_state_dict({**saved["policy"], "state": {**saved["policy"]["state"], "alive": [False] * 5}})


def test_validation():
    domain = get_problem("berkenkamp").domain
    with pytest.raises(ValueError, match="beta"):
        HEGPUCB(domain, beta="nope")
    with pytest.raises(ValueError, match="finite domain"):
        HEGPUCB(domain, beta="bayesian-finite")
    with pytest.raises(ValueError, match="noise_std"):
        HEGPUCB(domain, noise_std=0.0)
    with pytest.raises(ValueError, match="delta"):
        HEGPUCB(domain, delta=1.0)


def test_raw_points_are_drawn_once_per_campaign_on_a_box_and_never_on_a_pool():
    problem = get_problem("berkenkamp")
    policy = make_policy("he-gp-ucb", problem.domain, seed=0, **FAST)
    assert policy.raw_points() is None
    X = initial_design(problem.domain, 3, seed=0)
    Y = problem.evaluate(X)[0]
    for _ in range(3):
        x = policy.suggest(X, Y)
        seed, R = policy.state.raw_seed, policy.raw_points()
        assert isinstance(seed, int) and R.shape == (policy.raw_samples, 1)
        policy.observe(x, problem.evaluate(x)[0])
        X, Y = torch.cat([X, x]), torch.cat([Y, problem.evaluate(x)[0]])
        assert policy.state.raw_seed == seed and policy.raw_points() is R  # drawn once, the same tensor
    assert json.loads(json.dumps(policy.state_dict()))["state"]["raw_seed"] == seed
    from botorch_unknown_hypers.acquisition.optimize import fixed_raw_points

    assert torch.equal(R, fixed_raw_points(problem.domain, policy.raw_samples, seed))
    assert torch.equal(policy.campaign_raw_points(seed + 1), fixed_raw_points(problem.domain, policy.raw_samples, seed + 1))
    assert policy.campaign_raw_points(None) is None
    with pytest.raises(ValueError, match="raw_seed"):
        policy.load_state_dict({**policy.state_dict(), "state": {**policy.state_dict()["state"], "raw_seed": -1}})
    grid = FiniteDomain(torch.linspace(0, 1, 31, dtype=torch.float64).reshape(-1, 1))
    pool = make_policy("he-gp-ucb", grid, seed=0, **FAST)
    P = grid.points[:2]
    pool.suggest(P, torch.zeros(2, 1, dtype=P.dtype))
    assert pool.state.raw_seed is None and pool.raw_points() is None
