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


def test_pools_and_state_saving_are_refused():
    pool = FiniteDomain(torch.rand(5, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="BoxDomain"):
        OptunaGPPolicy(pool)
    with pytest.raises(NotImplementedError):
        OptunaGPPolicy(_box()).state_dict()
