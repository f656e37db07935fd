import math

import pytest
import torch

from botorch_unknown_hypers.confidence import xi
from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain
from botorch_unknown_hypers.models.proposals import propose_ard_lengthscales
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.policies.auto import HEGPUCBAuto, LBGPUCBAuto, due
from botorch_unknown_hypers.policies.registry import method_limits

FAST = {"num_restarts": 2, "raw_samples": 64}
AUTOS = ("lb-gp-ucb-auto", "he-gp-ucb-auto")


def _f(X):
    return torch.sin(5 * X[:, 0]) + 0.5 * torch.cos(3 * X[:, 1]) - 0.1 * X[:, 0]


def _data(n=10, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 2, generator=g, dtype=torch.float64)
    return X, _f(X).unsqueeze(-1)


def _pool():
    g = torch.Generator().manual_seed(1)
    return FiniteDomain(torch.rand(60, 2, generator=g, dtype=torch.float64))


def _pool_data(n=10):
    X = _pool().points[:n]
    return X, _f(X).unsqueeze(-1)


def _campaign(policy, X, Y, rounds, f=_f):
    for _ in range(rounds):
        x = policy.suggest(X, Y)
        y = f(x).unsqueeze(-1)
        policy.observe(x, y)
        X, Y = torch.cat([X, x]), torch.cat([Y, y])
    return X, Y


@pytest.mark.parametrize("name", AUTOS)
def test_registered_batched_and_validated(name):
    assert method_limits(name) == (None, 1)  # any batch size, one observation at least
    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    for bad, match in [({"acquisition": "ei"}, "acquisition"), ({"shrink": [0.0]}, "shrink"), ({"growth": 1.0}, "growth"),
                       ({"R": -1.0}, "R"), ({"shrink": [], "isotropic": []}, "both be empty"), ({"shrnk": [1.0]}, "unknown option"),
                       ({"shrink": 0.5}, "list"), ({"restart": "yes"}, "restart must be true or false")]:
        with pytest.raises(ValueError, match=match):
            make_policy(name, domain, **bad)


@pytest.mark.parametrize("ard", [False, True])  # LB's default: one shared MAP length scale
def test_first_candidates_are_the_map_ladder(ard):
    X, Y = _data()
    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    policy = LBGPUCBAuto(domain, seed=0, **FAST) if not ard else LBGPUCBAuto(domain, seed=0, ard=True, **FAST)
    policy.suggest(X, Y)
    _, ell = propose_ard_lengthscales(X, Y, domain.bounds, shrink=(1.0,), isotropic=(), ard=ard)
    assert bool(ell[0] == ell[1]) != ard
    ls = policy.state.candidates.lengthscale
    assert ls.shape == (3, 2)
    torch.testing.assert_close(ls[0], ell, rtol=1e-6, atol=0)
    torch.testing.assert_close(ls[1], 0.5 * ell, rtol=1e-6, atol=0)
    torch.testing.assert_close(ls[2], 0.25 * ell, rtol=1e-6, atol=0)
    assert policy.state.proposed_at == [10]
    assert policy.selected == [policy.state.candidates.labels()[0]]  # a fresh candidate is played first


@pytest.mark.parametrize("name", AUTOS)
def test_reproposes_when_the_data_double(name):
    policy = make_policy(name, _pool(), seed=0)
    X, Y = _pool_data(5)
    _campaign(policy, X, Y, 6)
    assert policy.state.proposed_at == [5, 10]
    assert len(policy.state.candidates) == 6
    assert not due([5, 10], 19, 2.0) and due([5, 10], 20, 2.0) and due([], 3, 2.0)


@pytest.mark.parametrize("name", AUTOS)
@pytest.mark.parametrize("acquisition", ["logei", "lognei", "ucb"])
def test_scale_free(name, acquisition):
    # outputs are standardised for every rule: an affine change of units changes nothing
    X, Y = _pool_data()
    runs = []
    for a, b in [(1.0, 0.0), (1000.0, 1e5)]:
        policy = make_policy(name, _pool(), seed=3, acquisition=acquisition)
        XX, _ = _campaign(policy, X, a * Y + b, 5, f=lambda Z: a * _f(Z) + b)
        runs.append((XX, list(policy.selected), policy.state_dict()["state"].get("play_candidate")))
    torch.testing.assert_close(runs[0][0], runs[1][0])
    assert runs[0][2] == runs[1][2]


@pytest.mark.parametrize("name", AUTOS)
def test_state_round_trip_gives_the_same_next_suggestion(name):
    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    policy = make_policy(name, domain, seed=5, **FAST)
    X, Y = _campaign(policy, *_data(), 3)
    state = policy.state_dict()
    fresh = make_policy(name, domain, seed=0, **FAST)
    fresh.load_state_dict(state)
    torch.testing.assert_close(fresh.suggest(X, Y), policy.suggest(X, Y))


def test_he_auto_test_in_standardised_units_matches_brute_force():
    policy = HEGPUCBAuto(_pool(), seed=2, R=0.05)
    X, Y = _pool_data(8)
    scales = []
    for _ in range(8):
        x = policy.suggest(X, Y)
        scales.append(policy.state.pending[-1].y_std)
        y = _f(x).unsqueeze(-1)
        policy.observe(x, y)
        X, Y = torch.cat([X, x]), torch.cat([Y, y])
        st = policy.state
        # brute force: residuals and widths of the played candidate, divided by this round's scale
        u = st.play_candidate[-1]
        mine = [i for i, c in enumerate(st.play_candidate) if c == u]
        s = scales[-1]
        stat = abs(sum(st.play_eta[i] for i in mine)) / s
        thr = math.sqrt(float(xi(st.round, len(st.alive), 0.05, 0.005)) * len(mine)) + sum(st.play_width[i] for i in mine) / s
        assert policy.diagnostics["statistic"] == pytest.approx(stat, rel=1e-9)
        assert policy.diagnostics["threshold"] == pytest.approx(thr, rel=1e-9)
        fired = stat > thr
        assert fired == (st.eliminated_at.get(u) == st.round or st.round in st.kept_last)


def test_he_auto_plays_the_candidate_attaining_the_joint_max():
    policy = HEGPUCBAuto(_pool(), seed=0, acquisition="ucb")
    X, Y = _pool_data()
    x = policy.suggest(X, Y)
    from botorch_unknown_hypers.policies.auto import acquisition
    from botorch_unknown_hypers.policies.hyperparameter_balancing import standardised_candidate_gp

    model = standardised_candidate_gp(policy.domain, X, Y, policy.state.candidates)
    acqf = acquisition(model, policy.settings, 1, Y, reduction="max")
    values = acqf.candidate_values(policy.domain.points)  # N x K
    flat = int(values.argmax())
    assert torch.equal(x[0], policy.domain.points[flat // values.shape[1]])
    assert policy.state.pending[-1].candidate == flat % values.shape[1]


def test_he_auto_evidence_plays_the_most_likely_survivor_at_its_acquisition_max():
    policy = HEGPUCBAuto(_pool(), seed=0, reduction="evidence")
    X, Y = _pool_data()
    x = policy.suggest(X, Y)
    from botorch_unknown_hypers.policies.auto import acquisition
    from botorch_unknown_hypers.policies.hyperparameter_balancing import standardised_candidate_gp

    model = standardised_candidate_gp(policy.domain, X, Y, policy.state.candidates)
    # brute force: the log marginal likelihood of each candidate from its own Gram matrix
    Xu = (X - policy.domain.bounds[0]) / (policy.domain.bounds[1] - policy.domain.bounds[0])
    y = ((Y - Y.mean()) / Y.std()).reshape(-1)
    lml = []
    for ell, noise in zip(policy.state.candidates.lengthscale, policy.state.candidates.noise):
        K = torch.exp(-0.5 * torch.cdist(Xu / ell, Xu / ell) ** 2) + noise * torch.eye(len(y), dtype=y.dtype)
        lml.append(float(torch.distributions.MultivariateNormal(torch.zeros_like(y), K).log_prob(y)))
    best = max(range(len(lml)), key=lml.__getitem__)
    assert policy.state.pending[-1].candidate == best
    values = acquisition(model, policy.settings, 1, Y, reduction="select", index=best)(policy.domain.points.unsqueeze(-2))
    assert torch.equal(x[0], policy.domain.points[int(values.argmax())])


def test_he_auto_refuses_an_unknown_reduction():
    with pytest.raises(ValueError, match="reduction must be one of"):
        HEGPUCBAuto(_pool(), reduction="mean")


def test_isotropic_ablation_proposes_one_shared_length_scale():
    X, Y = _data()
    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    policy = LBGPUCBAuto(domain, seed=0, ard=False, **FAST)
    policy.suggest(X, Y)
    ls = policy.state.candidates.lengthscale
    assert ls.shape == (3, 2) and torch.equal(ls[:, 0], ls[:, 1])
    torch.testing.assert_close(ls[:, 0], ls[0, 0] * torch.tensor([1.0, 0.5, 0.25], dtype=ls.dtype))
    with pytest.raises(ValueError, match="ard must be true or false"):
        LBGPUCBAuto(domain, ard="no")


@pytest.mark.parametrize("name", AUTOS)
def test_restart_retires_the_earlier_proposals(name):
    policy = make_policy(name, _pool(), seed=0, restart=True)
    X, Y = _pool_data(5)
    X, Y = _campaign(policy, X, Y, 6)
    st = policy.state
    flags = st.active if name.startswith("lb") else st.alive
    assert st.proposed_at == [5, 10] and len(st.candidates) == 6
    assert set(st.retired_at) == {0, 1, 2} - set(getattr(st, "eliminated_at", {}))
    assert not any(flags[:3]) and policy.n_candidates <= 3
    fresh = make_policy(name, _pool(), seed=0, restart=True)
    fresh.load_state_dict(policy.state_dict())
    torch.testing.assert_close(fresh.suggest(X, Y), policy.suggest(X, Y))


def test_an_unknown_acquisition_is_refused_with_the_valid_ones_named():
    for name in AUTOS:
        with pytest.raises(ValueError, match=r"acquisition must be one of \('logei', 'lognei', 'ucb'\), got 'bogus'"):
            make_policy(name, _pool(), acquisition="bogus")
    from botorch_unknown_hypers.policies.auto import acquisition
    from botorch_unknown_hypers.policies.hyperparameter_balancing import standardised_candidate_gp

    policy = HEGPUCBAuto(_pool(), seed=0, acquisition="lognei")
    X, Y = _pool_data()
    policy.suggest(X, Y)
    model = standardised_candidate_gp(policy.domain, X, Y, policy.state.candidates)
    with pytest.raises(ValueError, match="policy must be given for acquisition='lognei'"):
        acquisition(model, policy.settings, 1, Y, reduction="max")


def _noisy(X):
    r"""The test function plus noise of a tenth of its spread, from a generator seeded by the points."""
    g = torch.Generator().manual_seed(int(1e6 * float(X.sum())) % 2**31)
    return _f(X) + 0.2 * torch.randn(X.shape[0], generator=g, dtype=X.dtype)


@pytest.mark.parametrize("name, options", [(n, {}) for n in AUTOS] + [("he-gp-ucb-auto", {"reduction": "evidence"})])
def test_lognei_campaign_is_reproducible_and_inside_the_bounds(name, options):
    domain = BoxDomain(torch.tensor([[-1.0, 0.0], [2.0, 3.0]], dtype=torch.float64))
    g = torch.Generator().manual_seed(0)
    X0 = domain.bounds[0] + 3 * torch.rand(6, 2, generator=g, dtype=torch.float64)
    runs = []
    for _ in range(2):
        policy = make_policy(name, domain, seed=7, acquisition="lognei", **FAST, **options)
        X, Y = X0, _noisy(X0).unsqueeze(-1)
        for _ in range(2):  # batches of two: the second slot's acquisition has the first as a pending point
            x = policy.suggest(X, Y, q=2)
            y = _noisy(x).unsqueeze(-1)
            policy.observe(x, y)
            X, Y = torch.cat([X, x]), torch.cat([Y, y])
        runs.append((X, list(policy.selected)))
    assert torch.equal(runs[0][0], runs[1][0]) and runs[0][1] == runs[1][1]
    new = runs[0][0][6:]
    assert new.shape == (4, 2) and bool((new >= domain.bounds[0]).all() and (new <= domain.bounds[1]).all())
    assert torch.unique(new, dim=0).shape[0] == 4  # no slot proposed twice


def test_he_auto_lognei_plays_the_candidate_attaining_the_joint_max(monkeypatch):
    from botorch_unknown_hypers.policies import auto

    built = []

    class Recorded(auto.CandidateLogNEI):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(auto, "CandidateLogNEI", Recorded)
    policy = HEGPUCBAuto(_pool(), seed=0, acquisition="lognei")
    X, Y = _pool_data()
    x = policy.suggest(X, Y, q=2)
    assert len(built) == 2  # one acquisition per slot, each on the model of the data observed
    for j, acqf in enumerate(built):
        assert acqf.reduction == "max" and acqf.model.X_pending is None
        values = acqf.candidate_values(policy.domain.points)  # N x K, K survivors
        if j == 1:  # BoTorch's pending points: the first slot joins every candidate's baseline
            assert all(torch.equal(a.X_baseline[-1], x[0]) for a in acqf.acqfs)
            values[(policy.domain.points == x[0]).all(-1)] = -float("inf")  # a proposed point is not proposed again
        flat = int(values.argmax())
        assert torch.equal(x[j], policy.domain.points[flat // values.shape[1]])
        assert policy.state.pending[j].candidate == flat % values.shape[1]
    assert built[0].seed != built[1].seed  # each slot's samples seeded afresh from the policy's generator
