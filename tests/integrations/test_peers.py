import pytest
import torch

from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain
from botorch_unknown_hypers.integrations.peers import OptunaGPPolicy
from botorch_unknown_hypers.loop import AskTellOptimizer

optuna = pytest.importorskip("optuna")
optuna.logging.set_verbosity(optuna.logging.WARNING)


def _box(d=2):
    return BoxDomain(torch.tensor([[-1.0] * d, [2.0] * d], dtype=torch.float64))


def _objective(X):
    return -((X - 0.5) ** 2).sum(-1)


def _campaign(seed, rounds=4):
    domain = _box()
    policy = OptunaGPPolicy(domain, seed=seed)
    opt = AskTellOptimizer(policy)
    X0 = domain.sample(4, seed=0)
    opt.tell(X0, _objective(X0))
    for _ in range(rounds):
        X = opt.ask()
        opt.tell(X, _objective(X))
    return policy, opt


def test_study_holds_every_observation_once_with_its_value():
    policy, opt = _campaign(seed=0)
    trials = policy.study.get_trials(deepcopy=False)
    assert len(trials) == opt.train_X.shape[0] == 8
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in trials)
    X = torch.tensor([[t.params[f"x{i}"] for i in range(2)] for t in trials], dtype=torch.float64)
    values = torch.tensor([t.value for t in trials], dtype=torch.float64)
    order = [next(j for j in range(8) if torch.equal(X[j], x)) for x in opt.train_X]  # same points, any order
    torch.testing.assert_close(values[order], opt.train_Y.reshape(-1))
    assert policy.study.direction == optuna.study.StudyDirection.MAXIMIZE
    assert policy.domain.contains(opt.train_X).all()


def test_gp_sampler_with_the_seed_is_deterministic_and_seeds_differ():
    _, a = _campaign(seed=3)
    _, b = _campaign(seed=3)
    _, c = _campaign(seed=4)
    torch.testing.assert_close(a.train_X, b.train_X)
    assert not torch.equal(a.train_X[4:], c.train_X[4:])


def test_points_not_proposed_join_the_study_as_completed_trials():
    domain = _box()
    policy = OptunaGPPolicy(domain, seed=0)
    X = policy.suggest(domain.sample(3, seed=1), _objective(domain.sample(3, seed=1)).unsqueeze(-1))
    other = domain.sample(1, seed=5)
    policy.observe(other, _objective(other))  # not the asked point: added; the asked trial stays running
    states = [t.state for t in policy.study.get_trials(deepcopy=False)]
    assert states.count(optuna.trial.TrialState.COMPLETE) == 4 and states.count(optuna.trial.TrialState.RUNNING) == 1
    policy.observe(X, _objective(X))
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in policy.study.get_trials(deepcopy=False))


def _nearest_unobserved(pool, asked, observed):
    r"""Brute force: the pool row nearest ``asked`` in units of the pool's box widths, among rows not
    in ``observed`` (all rows once every one is)."""
    lo, hi = pool.min(0).values, pool.max(0).values
    free = [j for j in range(pool.shape[0]) if not any(torch.equal(pool[j], o) for o in observed)] or list(range(pool.shape[0]))
    return pool[min(free, key=lambda j: (sum(((pool[j][i] - asked[i]) / (hi[i] - lo[i])) ** 2 for i in range(pool.shape[1])), j))]


def test_on_a_pool_each_asked_point_is_played_as_its_nearest_unobserved_pool_point():
    pool = torch.rand(12, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * torch.tensor([1.0, 100.0], dtype=torch.float64)
    domain = FiniteDomain(pool)
    policy = OptunaGPPolicy(domain, seed=0)
    opt = AskTellOptimizer(policy)
    X0 = domain.sample(3, seed=1)
    opt.tell(X0, _objective(X0 / torch.tensor([1.0, 100.0], dtype=torch.float64)))
    for _ in range(12):  # past the 9 unobserved points: then the nearest of all
        observed = list(opt.train_X)
        X = opt.ask()
        asked = policy.study.get_trials(deepcopy=False)[-1]
        assert asked.state == optuna.trial.TrialState.RUNNING
        expected = _nearest_unobserved(pool, [asked.params["x0"], asked.params["x1"]], observed)
        torch.testing.assert_close(X[0], expected, rtol=0, atol=0)
        opt.tell(X, _objective(X / torch.tensor([1.0, 100.0], dtype=torch.float64)))
        assert policy.study.get_trials(deepcopy=False)[asked.number].state == optuna.trial.TrialState.FAIL
    assert len({tuple(x.tolist()) for x in opt.train_X[:12]}) == 12  # every pool point once before any repeat
    trials = policy.study.get_trials(deepcopy=False)
    done = [t for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(done) == opt.train_X.shape[0] == 15 and len(trials) == 15 + 12  # each asked trial failed, its point added
    torch.testing.assert_close(torch.tensor([[t.params["x0"], t.params["x1"]] for t in done], dtype=torch.float64), opt.train_X)
    torch.testing.assert_close(torch.tensor([t.value for t in done], dtype=torch.float64), opt.train_Y.reshape(-1))


def test_a_batch_on_a_pool_plays_distinct_points():
    pool = FiniteDomain(torch.rand(8, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2)))
    policy = OptunaGPPolicy(pool, seed=1)
    X0 = pool.sample(2, seed=0)
    X = policy.suggest(X0, _objective(X0).unsqueeze(-1), q=6)
    assert pool.contains(X).all() and len({tuple(x.tolist()) for x in torch.cat([X0, X])}) == 8


def test_other_domains_and_state_saving_are_refused():
    with pytest.raises(ValueError, match="BoxDomain.*FiniteDomain.*str"):
        OptunaGPPolicy("box")
    with pytest.raises(NotImplementedError):
        OptunaGPPolicy(_box()).state_dict()
