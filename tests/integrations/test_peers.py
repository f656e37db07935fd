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


# ------------------------------------------------------------------- mixed domains
def _mixed():
    from botorch_unknown_hypers.domains import CategoricalParameter, FloatParameter, IntParameter, MixedDomain

    return MixedDomain(
        (
            FloatParameter("lr", 1e-4, 1e-1, log=True),
            IntParameter("layers", 1, 5),
            CategoricalParameter("act", ("relu", "tanh", "gelu")),
            FloatParameter("dropout", 0.0, 0.5, step=0.1),
        )
    )


def _mixed_objective(domain, X):
    values = [domain.to_values(x) for x in X]
    penalty = {"relu": 0.0, "tanh": 0.5, "gelu": 0.2}
    return -torch.tensor(
        [(torch.log10(torch.tensor(v["lr"])) + 2) ** 2 + 0.3 * (v["layers"] - 3) ** 2 + penalty[v["act"]] + (v["dropout"] - 0.1) ** 2
         for v in values],
        dtype=torch.float64,
    )


@pytest.mark.parametrize("peer", ["optuna-gp", "optuna-tpe"])
def test_optuna_peers_model_each_mixed_parameter_as_its_own_distribution(peer):
    from botorch_unknown_hypers.integrations.peers import PEERS

    domain = _mixed()
    policy = PEERS[peer](domain, seed=0)
    assert policy.sampler_name == {"optuna-gp": "GPSampler", "optuna-tpe": "TPESampler"}[peer]
    dists = policy.distributions
    assert dists["lr"].log and dists["layers"].step == 1 and dists["dropout"].step == 0.1
    assert list(dists["act"].choices) == ["relu", "tanh", "gelu"]
    opt = AskTellOptimizer(policy)
    X0 = domain.sample(10, seed=0)
    opt.tell(X0, _mixed_objective(domain, X0))
    for _ in range(3):
        X = opt.ask()
        assert domain.contains(X).all()
        opt.tell(X, _mixed_objective(domain, X))
    trials = policy.study.get_trials(deepcopy=False)
    assert len(trials) == 13 and all(t.state == optuna.trial.TrialState.COMPLETE for t in trials)
    for t, x in zip(trials, opt.train_X):  # the study's values are the points played, exactly
        assert isinstance(t.params["layers"], int) and t.params["act"] in ("relu", "tanh", "gelu")
        assert domain.to_row(t.params) == x.tolist()


def test_mixed_qlognei_models_codes_with_botorch_mixed_gp():
    from botorch.models import MixedSingleTaskGP, SingleTaskGP
    from gpytorch.kernels import ScaleKernel

    from botorch_unknown_hypers.domains import FloatParameter, IntParameter, MixedDomain
    from botorch_unknown_hypers.integrations.peers import MixedQLogNEI

    domain = _mixed()
    X = domain.sample(8, seed=0)
    policy = MixedQLogNEI(domain, seed=0)
    model = policy.build_model(domain.to_codes(X), _mixed_objective(domain, X).unsqueeze(-1))
    assert isinstance(model, MixedSingleTaskGP)
    kinds = {type(m).__name__ for m in model.covar_module.modules()}
    assert "CategoricalKernel" in kinds and isinstance(model.covar_module.kernels[0], ScaleKernel)
    ints = MixedDomain((IntParameter("a", 0, 3), FloatParameter("b", 0.0, 1.0)))
    Xi = ints.sample(6, seed=0)
    plain = MixedQLogNEI(ints, seed=0).build_model(ints.to_codes(Xi), Xi.sum(-1, keepdim=True))
    assert type(plain) is SingleTaskGP  # no categorical: BoTorch's default GP on the codes
    with pytest.raises(ValueError, match="domain: mixed-qlognei searches a MixedDomain, got BoxDomain"):
        MixedQLogNEI(_box())


def test_mixed_qlognei_proposes_the_brute_force_maximiser_on_an_enumerable_space():
    from botorch.acquisition.logei import qLogNoisyExpectedImprovement

    from botorch_unknown_hypers.domains import CategoricalParameter, IntParameter, MixedDomain
    from botorch_unknown_hypers.integrations.peers import MixedQLogNEI

    domain = MixedDomain((IntParameter("n", 0, 4), CategoricalParameter("c", ("a", "b", "c"))))
    every = domain.from_codes(torch.cartesian_prod(torch.arange(5.0), torch.arange(3.0)).double())  # all 15 points
    X = every[[0, 4, 7, 11, 13]]
    Y = (-(domain.to_codes(X)[:, :1] - 2.0) ** 2 + domain.to_codes(X)[:, 1:]).reshape(-1, 1)
    policy = MixedQLogNEI(domain, seed=0)
    x = policy.suggest(X, Y)
    assert domain.contains(x).all()
    with policy.seeded():  # the same model and QMC base samples as the proposal
        model = policy.build_model(domain.to_codes(X), Y)
        acqf = qLogNoisyExpectedImprovement(model, X_baseline=domain.to_codes(X))
        values = acqf(domain.to_codes(every).unsqueeze(1))
    best = domain.to_codes(every)[values.argmax()]
    assert float(acqf(domain.to_codes(x).unsqueeze(0))) >= float(values.max()) - 1e-6, (domain.to_codes(x), best)


def test_mixed_qlognei_batch_and_pending_points_are_distinct_domain_points():
    from botorch_unknown_hypers.integrations.peers import MixedQLogNEI

    domain = _mixed()
    X0 = domain.sample(8, seed=0)
    Y0 = _mixed_objective(domain, X0).unsqueeze(-1)
    a = MixedQLogNEI(domain, seed=1, num_restarts=4, raw_samples=64)
    X = a.suggest(X0, Y0, q=2)
    assert X.shape == (2, domain.dim) and domain.contains(X).all() and not torch.equal(X[0], X[1])
    b = MixedQLogNEI(domain, seed=1, num_restarts=4, raw_samples=64)
    torch.testing.assert_close(b.suggest(X0, Y0, q=2), X)  # deterministic given the seed
    P = a.suggest(X0, Y0, q=1, X_pending=X[:1])
    assert domain.contains(P).all() and not torch.equal(P[0], X[0])
