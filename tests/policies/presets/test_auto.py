import json
import math

import pytest
import torch

from botorch_unknown_hypers.confidence import xi
from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain
from botorch_unknown_hypers.models.fitted import fit_default_single_task_gp
from botorch_unknown_hypers.models.proposals import propose_ard_lengthscales
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.policies.presets.auto import AUTO_H6, MIN_NOISE, HEGPUCBAuto, LBGPUCBAuto, due
from botorch_unknown_hypers.policies.round.shared_pieces import UnitCubeModel
from botorch_unknown_hypers.policies.registry import list_methods, method_limits

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
                       ({"shrink": 0.5}, "list"), ({"restart": "yes"}, "restart must be true or false"),
                       ({"standing": "yes"}, "standing must be true or false"), ({"standing": 1}, "standing must be true or false"),
                       ({"mean_start": "no"}, "mean_start must be true or false"),
                       ({"lengthscale_prior": "wide"}, "lengthscale_prior must be one of"),
                       ({"noise_prior": "flat"}, "noise_prior must be one of"), ({"kernel": "cubic"}, "kernel must be one of"),
                       ({"noisy_above": 0.0}, "noisy_above"), ({"noisy_above": "high"}, "noisy_above"),
                       ({"noisy_above": math.inf}, "noisy_above")]:
        with pytest.raises(ValueError, match=match):
            make_policy(name, domain, **bad)


@pytest.mark.parametrize("ard", [False, True])  # LB's default: one shared MAP length scale
def test_first_candidates_are_the_map_ladder(ard):
    X, Y = _data()
    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    policy = LBGPUCBAuto(domain, seed=0, **FAST) if not ard else LBGPUCBAuto(domain, seed=0, ard=True, **FAST)
    policy.suggest(X, Y)
    _, ell, _ = propose_ard_lengthscales(X, Y, domain.bounds, shrink=(1.0,), isotropic=(), ard=ard)
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
@pytest.mark.parametrize("acquisition", ["logei", "lognei", "ucb", "logei-plugin", "lognei-if-noisy"])
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
    from botorch_unknown_hypers.policies.presets.auto import acquisition
    from botorch_unknown_hypers.policies.balancing.hyperparameter_balancing import standardised_candidate_gp

    model = standardised_candidate_gp(policy.domain, X, Y, policy.state.candidates)
    acqf = acquisition(model, policy.settings, 1, Y, reduction="max")
    values = acqf.candidate_values(policy.domain.points)  # N x K
    flat = int(values.argmax())
    assert torch.equal(x[0], policy.domain.points[flat // values.shape[1]])
    assert policy.state.pending[-1].candidate == flat % values.shape[1]


@pytest.mark.parametrize("name", [*AUTOS, "auto"])
def test_mean_start_false_starts_from_the_incumbent_alone(monkeypatch, name):
    r"""``mean_start=False`` skips the posterior mean's maximisation (H7 of ``docs/bbob.md``): the
    acquisition's extra start is the incumbent, and nothing else differs in what is built."""
    from botorch_unknown_hypers.policies.presets import auto as auto_module

    domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    X, Y = _data()
    calls = []
    original = auto_module.posterior_mean_maximizer
    monkeypatch.setattr(auto_module, "posterior_mean_maximizer", lambda *a, **k: calls.append(1) or original(*a, **k))
    make_policy(name, domain, seed=0, **FAST).suggest(X, Y)
    assert calls == [1]
    lean = make_policy(name, domain, seed=0, mean_start=False, **FAST)
    x = lean.suggest(X, Y)
    assert calls == [1] and x.shape == (1, 2) and bool(domain.contains(x).all())
    incumbent = auto_module.extra_starts(lean.context, None, 0, X, Y, mean=False)  # the model is not needed without the mean
    assert torch.equal(incumbent, X[Y.reshape(-1).argmax()].unsqueeze(0))
    again = make_policy(name, domain, seed=0, mean_start=False, **FAST).suggest(X, Y)
    assert torch.equal(x, again)  # deterministic given the seed


def test_logei_reads_its_incumbent_only_when_it_holds_believed_values(monkeypatch):
    from botorch_unknown_hypers.policies.presets.auto import acquisition
    from botorch_unknown_hypers.policies.balancing.hyperparameter_balancing import standardised_candidate_gp
    from tests.host_reads import record_reads

    policy = HEGPUCBAuto(_pool(), seed=0)
    X, Y = _pool_data()
    policy.suggest(X, Y)
    model = standardised_candidate_gp(policy.domain, X, Y, policy.state.candidates)
    Ys = (Y - Y.mean()) / Y.std()
    reads = record_reads(monkeypatch)
    plain = acquisition(model, policy.settings, 1, Ys, reduction="max")  # f+ = the best observation: checked data
    assert reads == []
    fixed = policy.domain.points[:2]
    believed = acquisition(model.condition_on_pending(fixed), policy.settings, 1, Ys, reduction="max", fixed=fixed)
    assert "__bool__" in reads  # f+ raised to the believed means at the fixed points: checked
    monkeypatch.undo()
    assert plain.best_f.shape == (model.num_candidates,) and torch.equal(plain.best_f, Ys.max().expand(model.num_candidates))
    assert bool((believed.best_f >= plain.best_f).all())


def test_logei_plugin_takes_each_candidates_best_posterior_mean_as_its_incumbent():
    from dataclasses import replace

    from botorch_unknown_hypers.acquisition.logei import plugin_best_f
    from botorch_unknown_hypers.policies.presets.auto import acquisition
    from botorch_unknown_hypers.policies.balancing.hyperparameter_balancing import standardised_candidate_gp

    policy = HEGPUCBAuto(_pool(), seed=0)
    X, Y = _pool_data()
    Y = Y + 0.3 * torch.randn(Y.shape, generator=torch.Generator().manual_seed(1), dtype=Y.dtype)
    policy.suggest(X, Y)
    model = standardised_candidate_gp(policy.domain, X, Y, policy.state.candidates)
    Ys = (Y - Y.mean()) / Y.std()
    plugin = replace(policy.settings, acquisition="logei-plugin")
    got = acquisition(model, plugin, 1, Ys, reduction="max").best_f
    torch.testing.assert_close(got, plugin_best_f(model))
    assert not torch.equal(got, acquisition(model, policy.settings, 1, Ys, reduction="max").best_f)  # not the best observation
    fixed = policy.domain.points[:2]
    believed = acquisition(model.condition_on_pending(fixed), plugin, 1, Ys, reduction="max", fixed=fixed).best_f
    assert bool((believed >= got - 1e-10).all())  # the mean at the observed points is unchanged by pending points, to rounding
    one = acquisition(model.subset([0]), plugin, 1, Ys, reduction="select", index=0)  # BoTorch's LogEI on one candidate
    torch.testing.assert_close(one.best_f.reshape(()), got[0])


def test_lognei_if_noisy_resolves_by_the_acquired_candidates_noise():
    from dataclasses import replace

    from botorch_unknown_hypers.policies.presets.auto import acquired, acquisition
    from botorch_unknown_hypers.policies.balancing.hyperparameter_balancing import standardised_candidate_gp

    policy = HEGPUCBAuto(_pool(), seed=0, acquisition="lognei-if-noisy")
    X, Y = _pool_data()
    policy.suggest(X, Y)
    spec = policy.state.candidates
    noise = torch.tensor([1e-6, 1e-3, 1e-5], dtype=spec.noise.dtype)
    spec = replace(spec, noise=noise)
    model = standardised_candidate_gp(policy.domain, X, Y, spec)
    settings = policy.settings
    assert settings.noisy_above == 1e-4  # BoTorch's least inferred noise variance
    assert [acquired(model, settings, u) for u in range(3)] == ["logei-plugin", "lognei", "logei-plugin"]
    assert acquired(model, settings) == "lognei"  # the joint argmax: any survivor's noise
    assert acquired(model.subset([0, 2]), settings) == "logei-plugin"
    assert acquired(model, replace(settings, noisy_above=1e-2), 1) == "logei-plugin"  # strictly above the threshold
    assert acquired(model, replace(settings, noisy_above=1e-3), 1) == "logei-plugin"
    for name in ("logei", "lognei", "ucb", "logei-plugin"):  # the other names are what they say
        assert acquired(model, replace(settings, acquisition=name), 1) == name
    Ys = (Y - Y.mean()) / Y.std()
    from botorch_unknown_hypers.acquisition.logei import plugin_best_f

    quiet = acquisition(model, settings, 1, Ys, reduction="select", index=2)  # the plug-in incumbent, no ctx needed
    torch.testing.assert_close(quiet.best_f.reshape(-1), plugin_best_f(model)[2:])
    with pytest.raises(ValueError, match="ctx must be given for acquisition='lognei'"):  # the noisy one is qLogNEI
        acquisition(model, settings, 1, Ys, reduction="select", index=1)


def test_repeat_evidence_against_a_brute_force_reading():
    from botorch_unknown_hypers.policies.presets.auto import repeat_evidence

    g = torch.Generator().manual_seed(3)
    for trial in range(40):
        X = torch.randint(0, 3, (8, 2), generator=g).to(torch.float64)  # many exact repeats
        Y = torch.randint(0, 2 if trial % 2 else 1, (8, 1), generator=g).to(torch.float64)
        groups = {}
        for x, y in zip(X.tolist(), Y.reshape(-1).tolist()):
            groups.setdefault(tuple(x), []).append(y)
        repeated = [v for v in groups.values() if len(v) > 1]
        want = None if not repeated else any(max(v) > min(v) for v in repeated)
        assert repeat_evidence(X, Y) is want
    X = torch.rand(5, 3, generator=g, dtype=torch.float64)
    assert repeat_evidence(X, torch.ones(5, 1, dtype=torch.float64)) is None  # nothing observed twice
    Xr, Yr = torch.cat([X, X[2:3]]), torch.cat([torch.arange(5.0, dtype=torch.float64).unsqueeze(-1), torch.tensor([[2.0]])])
    assert repeat_evidence(Xr, Yr) is False  # the repeat returned the same value
    assert repeat_evidence(Xr, Yr + torch.tensor([[0.0]] * 5 + [[1e-12]], dtype=torch.float64)) is True  # any difference counts


def test_lognei_if_repeats_differ_resolves_by_the_repeats_then_by_the_noise():
    from dataclasses import replace

    from botorch_unknown_hypers.policies.presets.auto import acquired, noise_level, noisiest, repeat_slot
    from botorch_unknown_hypers.policies.balancing.hyperparameter_balancing import standardised_candidate_gp

    policy = HEGPUCBAuto(_pool(), seed=0, acquisition="lognei-if-repeats-differ")
    X, Y = _pool_data()
    policy.suggest(X, Y)
    spec = replace(policy.state.candidates, noise=torch.tensor([1e-6, 1e-3, 1e-5], dtype=torch.float64))
    settings = policy.settings
    model = standardised_candidate_gp(policy.domain, X, Y, spec)
    assert [noisiest(model, u) for u in (None, 0, 2)] == [1, 0, 2]  # the joint argmax reads the noisiest candidate
    assert noise_level(model) == noise_level(model, 1) == pytest.approx(1e-3)
    # no repeat yet: H16's switch, and a repeat of the best observation where the noise is above tau
    assert [acquired(model, settings, u) for u in range(3)] == ["logei-plugin", "lognei", "logei-plugin"]
    best = X[Y.argmax()].unsqueeze(0)
    assert repeat_slot(model, settings, 0, X, Y, None) is None  # sigma^2 at the floor: the model interpolates
    x, u = repeat_slot(model, settings, 1, X, Y, None)
    assert torch.equal(x, best) and u == 1
    x, u = repeat_slot(model, settings, None, X, Y, None)  # the joint argmax: the noisiest candidate plays it
    assert torch.equal(x, best) and u == 1
    assert repeat_slot(model, settings, 1, X, Y, torch.cat([X[:1], best])) is None  # already pending or in the batch
    assert repeat_slot(model, replace(settings, acquisition="lognei-if-noisy"), 1, X, Y, None) is None
    # the repeat agrees: the plug-in LogEI everywhere, whatever the noise; it differs: qLogNEI everywhere
    for shift, want in ((0.0, "logei-plugin"), (1e-3, "lognei")):
        Xr, Yr = torch.cat([X, best]), torch.cat([Y, Y.max().reshape(1, 1) + shift])
        seen = standardised_candidate_gp(policy.domain, Xr, Yr, spec)
        assert [acquired(seen, settings, u) for u in range(3)] == [want] * 3
        assert repeat_slot(seen, settings, 1, Xr, Yr, None) is None  # made once per run


@pytest.mark.parametrize("noisy", [False, True])
def test_auto_repeats_the_best_observation_once_and_then_follows_its_values(noisy):
    from unittest import mock

    from botorch_unknown_hypers.policies.presets import auto as auto_module

    domain = BoxDomain(torch.tensor([[-1.0, 0.0], [2.0, 3.0]], dtype=torch.float64))
    g = torch.Generator().manual_seed(0)
    X = domain.bounds[0] + 3 * torch.rand(6, 2, generator=g, dtype=torch.float64)
    f = _noisy if noisy else _f
    Y = f(X).unsqueeze(-1)
    policy = make_policy("auto", domain, seed=7, acquisition="lognei-if-repeats-differ", noisy_above=1e-9, **FAST)
    real = auto_module.acquired
    with mock.patch.object(auto_module, "acquired", wraps=real) as spy:
        x = policy.suggest(X, Y)
        assert torch.equal(x, X[Y.argmax()].unsqueeze(0))  # tau below any fit: the first round repeats
        assert spy.call_count == 0  # a repeat needs no acquisition
        # _noisy is seeded by the points, so it repeats itself: the noisy repeat is made to differ
        X, Y = torch.cat([X, x]), torch.cat([Y, f(x).unsqueeze(-1) + (0.01 if noisy else 0.0)])
        for _ in range(2):
            x = policy.suggest(X, Y)
            assert not bool((X == x).all(-1).any())  # no second repeat
            X, Y = torch.cat([X, x]), torch.cat([Y, f(x).unsqueeze(-1)])
    names = {real(*c.args, **c.kwargs) for c in spy.call_args_list}
    assert names == {"lognei" if noisy else "logei-plugin"}


def test_auto_batch_repeats_in_one_slot_only():
    domain = BoxDomain(torch.tensor([[-1.0, 0.0], [2.0, 3.0]], dtype=torch.float64))
    g = torch.Generator().manual_seed(0)
    X = domain.bounds[0] + 3 * torch.rand(6, 2, generator=g, dtype=torch.float64)
    Y = _noisy(X).unsqueeze(-1)
    best = X[Y.argmax()].unsqueeze(0)
    policy = make_policy("auto", domain, seed=7, acquisition="lognei-if-repeats-differ", noisy_above=1e-9, **FAST)
    x = policy.suggest(X, Y, q=3)
    assert torch.equal(x[:1], best) and int((x == best).all(-1).sum()) == 1
    pending = make_policy("auto", domain, seed=7, acquisition="lognei-if-repeats-differ", noisy_above=1e-9, **FAST)
    x = pending.suggest(X, Y, X_pending=best)  # the repeat is already being evaluated
    assert not torch.equal(x, best)


@pytest.mark.parametrize("name", AUTOS)
def test_lognei_if_noisy_plays_what_its_resolution_names(name):
    # tau below the noise floor: every round is qLogNEI; tau above any noise: every round is the plug-in LogEI
    domain = BoxDomain(torch.tensor([[-1.0, 0.0], [2.0, 3.0]], dtype=torch.float64))
    g = torch.Generator().manual_seed(0)
    X0 = domain.bounds[0] + 3 * torch.rand(6, 2, generator=g, dtype=torch.float64)
    Y0 = _noisy(X0).unsqueeze(-1)
    plays = {}
    for label, options in [("low", {"acquisition": "lognei-if-noisy", "noisy_above": 1e-9}), ("lognei", {"acquisition": "lognei"}),
                           ("high", {"acquisition": "lognei-if-noisy", "noisy_above": 1e3}), ("plugin", {"acquisition": "logei-plugin"})]:
        policy = make_policy(name, domain, seed=7, **{**FAST, **options})
        plays[label] = _campaign(policy, X0, Y0, 3, f=_noisy)[0]
    torch.testing.assert_close(plays["low"], plays["lognei"], rtol=0, atol=0)
    torch.testing.assert_close(plays["high"], plays["plugin"], rtol=0, atol=0)
    assert not torch.equal(plays["lognei"], plays["plugin"])


def test_he_auto_evidence_plays_the_most_likely_survivor_at_its_acquisition_max():
    policy = HEGPUCBAuto(_pool(), seed=0, reduction="evidence")
    X, Y = _pool_data()
    x = policy.suggest(X, Y)
    from botorch_unknown_hypers.policies.presets.auto import acquisition
    from botorch_unknown_hypers.policies.balancing.hyperparameter_balancing import standardised_candidate_gp

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
    flags = st.alive
    assert st.proposed_at == [5, 10] and len(st.candidates) == 6
    assert set(st.retired_at) == {0, 1, 2} - set(getattr(st, "eliminated_at", {}))
    assert not any(flags[:3]) and policy.n_candidates <= 3
    fresh = make_policy(name, _pool(), seed=0, restart=True)
    fresh.load_state_dict(policy.state_dict())
    torch.testing.assert_close(fresh.suggest(X, Y), policy.suggest(X, Y))


# --------------------------------------------------------------------------- standing candidate
BOX = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
STANDING = {"standing": True, "shrink": [1.0], **FAST}


def _default_fit(X, Y):
    r"""Brute-force reference: BoTorch's default model fitted directly on the data (ARD)."""
    model = fit_default_single_task_gp(X, Y, BOX.bounds)
    ell = model.covar_module.lengthscale.detach().reshape(-1)
    return ell, max(float(model.likelihood.noise.detach().reshape(-1)[0]), MIN_NOISE)


@pytest.mark.parametrize("name", AUTOS)
def test_standing_candidate_is_the_default_model_refitted_every_round(name):
    policy = make_policy(name, BOX, seed=0, **STANDING)
    X, Y = _data(6)
    for _ in range(7):
        x = policy.suggest(X, Y)
        st = policy.state
        assert st.standing == 0 and policy.diagnostics["standing"] == 0
        ell, noise = _default_fit(X, Y)  # ARD on all data observed, whatever the preset's `ard`
        assert ell.shape == (2,)
        torch.testing.assert_close(st.candidates.lengthscale[0], ell, rtol=1e-9, atol=0)
        assert float(st.candidates.noise[0]) == pytest.approx(noise, rel=1e-9)
        assert float(st.candidates.outputscale[0]) == 1.0
        y = _f(x).unsqueeze(-1)
        policy.observe(x, y)
        X, Y = torch.cat([X, x]), torch.cat([Y, y])
    # the proposals of a(t) are made as without the option: at n = 6 and 12, one each (shrink 1)
    assert st.proposed_at == [6, 12] and len(st.candidates) == 3
    for u, n in zip((1, 2), (6, 12)):
        _, ell, _ = propose_ard_lengthscales(X[:n], Y[:n], BOX.bounds, shrink=(1.0,), isotropic=(), ard=name.startswith("he"))
        torch.testing.assert_close(st.candidates.lengthscale[u], ell, rtol=1e-9, atol=0)
    if name.startswith("lb"):
        assert st.norms.tolist() == [1.0, 1.0, 1.0]  # settings.B for the standing candidate too
        assert bool(st.candidates.lengthscale[1, 0] == st.candidates.lengthscale[1, 1])  # LB's proposals: shared
    assert 0 in st.play_candidate  # its plays are kept under its index across refits


def test_standing_candidates_posterior_after_a_refit_is_a_fresh_models():
    # HE holds every survivor in the round's model: after each refit the standing candidate's
    # factor must be rebuilt (a new factorisation), the others' extended; its posterior equals a
    # dense GP with its new hyperparameters on all data
    policy = make_policy("he-gp-ucb-auto", BOX, seed=1, **STANDING)
    X, Y = _data(6, seed=1)
    Z = torch.rand(5, 2, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    previous, seen, refits = None, 0, 0
    for t in range(5):
        x = policy.suggest(X, Y)
        st, stats = policy.state, policy.factor_caches[None].stats
        spec = st.candidates.subset([u for u, a in enumerate(st.alive) if a])
        new = stats.refactor_reasons.get("new candidates", 0)
        if previous is not None and not torch.equal(previous, st.candidates.lengthscale[0]) and X.shape[0] != 12:
            assert new - seen == 1  # only the refitted standing candidate, the others extended
            refits += 1
        previous, seen = st.candidates.lengthscale[0].clone(), new
        model, _, _ = UnitCubeModel(standardise=True)(policy.context, policy.state, spec, X, Y)  # the round's cached factors
        assert model.factor is not None
        mean, var = model.marginal_mean_variance(Z.unsqueeze(0))
        # brute force: dense RBF GP of the standing candidate, standardised outputs, raw units back
        ell, noise = st.candidates.lengthscale[0], float(st.candidates.noise[0])
        k = lambda A, B: torch.exp(-0.5 * torch.cdist(A / ell, B / ell) ** 2)  # noqa: E731
        mu, sd = Y.mean(), Y.std()
        A = k(X, X) + noise * torch.eye(X.shape[0], dtype=X.dtype)
        kz = k(X, Z)
        ref_mean = kz.T @ torch.linalg.solve(A, (Y - mu) / sd) * sd + mu
        ref_var = (1 - (kz * torch.linalg.solve(A, kz)).sum(0)) * sd**2
        torch.testing.assert_close(mean[0], ref_mean.reshape(-1), rtol=1e-7, atol=1e-9)
        torch.testing.assert_close(var[0], ref_var, rtol=1e-6, atol=1e-9)
        y = _f(x).unsqueeze(-1)
        policy.observe(x, y)
        X, Y = torch.cat([X, x]), torch.cat([Y, y])
    assert refits >= 2


@pytest.mark.parametrize("name", AUTOS)
def test_restart_never_retires_the_standing_candidate(name):
    policy = make_policy(name, _pool(), seed=0, restart=True, standing=True)
    X, Y = _pool_data(5)
    X, Y = _campaign(policy, X, Y, 6)
    st = policy.state
    flags = st.alive
    assert st.proposed_at == [5, 10] and len(st.candidates) == 7  # the standing one, then 3 + 3
    assert 0 not in st.retired_at and set(st.retired_at) == {1, 2, 3} - set(st.eliminated_at)
    assert flags[0] or 0 in st.eliminated_at


@pytest.mark.parametrize("name", AUTOS)
def test_an_eliminated_standing_candidate_stays_out_and_is_no_longer_refitted(name):
    policy = make_policy(name, BOX, seed=2, **STANDING)
    X, Y = _campaign(policy, *_data(6), 2)
    st = policy.state
    flags = st.alive
    flags[0] = False  # as the rule's test eliminates it
    st.eliminated_at[0] = st.round
    frozen = st.candidates.lengthscale[0].clone()
    X, Y = _campaign(policy, X, Y, 3)
    assert not flags[0] and st.standing == 0 and all(p.candidate != 0 for p in st.pending)
    assert torch.equal(st.candidates.lengthscale[0], frozen)
    assert all(c != 0 for c in st.play_candidate[2:])
    ell, _ = _default_fit(X, Y)
    assert not torch.allclose(ell, frozen)  # a refit would have moved it


def _standing_run(name, seed):
    policy = make_policy(name, BOX, seed=seed, **STANDING)
    X, Y = _campaign(policy, *_data(6), 4)
    return X, policy.state_dict()


@pytest.mark.parametrize("name", AUTOS)
def test_standing_runs_are_deterministic_given_a_seed(name):
    rng = torch.get_rng_state()
    (X1, s1), (X2, s2) = _standing_run(name, 4), _standing_run(name, 4)
    assert torch.equal(X1, X2) and s1 == s2
    assert torch.equal(torch.get_rng_state(), rng)  # the fits draw from the policy's generator only


@pytest.mark.parametrize("name", AUTOS)
def test_standing_state_round_trip(name):
    import json

    policy = make_policy(name, BOX, seed=5, **STANDING)
    X, Y = _campaign(policy, *_data(6), 3)
    state = json.loads(json.dumps(policy.state_dict(), allow_nan=False))
    assert state["state"]["standing"] == 0
    fresh = make_policy(name, BOX, seed=0, **STANDING)
    fresh.load_state_dict(state)
    assert fresh.state.standing == 0
    assert torch.equal(fresh.state.candidates.lengthscale, policy.state.candidates.lengthscale)
    assert torch.equal(fresh.state.candidates.noise, policy.state.candidates.noise)
    torch.testing.assert_close(fresh.suggest(X, Y), policy.suggest(X, Y))
    assert torch.equal(fresh.state.candidates.lengthscale, policy.state.candidates.lengthscale)  # refitted alike
    # a state and a preset that disagree on the option are refused, the policy unchanged
    plain = make_policy(name, BOX, seed=0, shrink=[1.0], **FAST)
    before = plain.state_dict()
    with pytest.raises(ValueError, match="standing"):
        plain.load_state_dict(state)
    assert plain.state_dict() == before
    with pytest.raises(ValueError, match="standing"):
        fresh.load_state_dict(plain_after(name))
    bad = json.loads(json.dumps(state))
    bad["state"]["standing"] = 7
    with pytest.raises(ValueError, match="standing must be None or a candidate index"):
        make_policy(name, BOX, seed=0, **STANDING).load_state_dict(bad)
    empty = make_policy(name, BOX, seed=0, **STANDING).state_dict()  # before its first round
    assert empty["state"]["standing"] is None
    empty["state"]["standing"] = 0
    with pytest.raises(ValueError, match="standing"):
        make_policy(name, BOX, seed=0, **STANDING).load_state_dict(empty)


def plain_after(name):
    r"""The state of a preset without the option after one round."""
    policy = make_policy(name, BOX, seed=0, shrink=[1.0], **FAST)
    _campaign(policy, *_data(6), 1)
    return policy.state_dict()


@pytest.mark.parametrize("name", AUTOS)
def test_both_presets_run_with_a_standing_candidate_on_a_tiny_problem(name):
    from botorch_unknown_hypers import get_problem, run

    problem = get_problem("branin")
    policy = make_policy(name, problem.domain, seed=0, standing=True, shrink=[1.0], **FAST)
    history = run(problem, policy, iterations=4, seed=0, n_init=5)
    assert len(history) == 9 and policy.state.standing == 0
    assert policy.state.proposed_at == [5] and len(policy.state.candidates) == 2
    assert bool(history["simple_regret"].notna().all())


def test_an_unknown_acquisition_is_refused_with_the_valid_ones_named():
    for name in AUTOS:
        with pytest.raises(ValueError, match=r"acquisition must be one of \('logei', 'lognei', 'ucb', 'logei-plugin', 'lognei-if-noisy', 'lognei-if-repeats-differ'\), got 'bogus'"):
            make_policy(name, _pool(), acquisition="bogus")
    from botorch_unknown_hypers.policies.presets.auto import acquisition
    from botorch_unknown_hypers.policies.balancing.hyperparameter_balancing import standardised_candidate_gp

    policy = HEGPUCBAuto(_pool(), seed=0, acquisition="lognei")
    X, Y = _pool_data()
    policy.suggest(X, Y)
    model = standardised_candidate_gp(policy.domain, X, Y, policy.state.candidates)
    with pytest.raises(ValueError, match="ctx must be given for acquisition='lognei'"):
        acquisition(model, policy.settings, 1, Y, reduction="max")


def _noisy(X):
    r"""The test function plus noise of a tenth of its spread, from a generator seeded by the points."""
    g = torch.Generator().manual_seed(int(1e6 * float(X.sum())) % 2**31)
    return _f(X) + 0.2 * torch.randn(X.shape[0], generator=g, dtype=X.dtype)


@pytest.mark.parametrize(
    "name, options",
    [(n, {}) for n in AUTOS]
    + [("he-gp-ucb-auto", {"reduction": "evidence"})]
    + [(n, {"acquisition": "logei-plugin"}) for n in AUTOS]
    + [(n, {"acquisition": "lognei-if-noisy"}) for n in AUTOS]
    + [("auto", {"acquisition": "lognei-if-repeats-differ"})],
)
def test_lognei_campaign_is_reproducible_and_inside_the_bounds(name, options):
    domain = BoxDomain(torch.tensor([[-1.0, 0.0], [2.0, 3.0]], dtype=torch.float64))
    g = torch.Generator().manual_seed(0)
    X0 = domain.bounds[0] + 3 * torch.rand(6, 2, generator=g, dtype=torch.float64)
    runs = []
    for _ in range(2):
        policy = make_policy(name, domain, seed=7, **{"acquisition": "lognei", **FAST, **options})
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


def test_lognei_runs_on_an_objective_spread_over_a_billion():
    # BBOB's Bent Cigar (f12), whose values spread over about 1e9: LogNEI on the raw scale gave
    # NaN gradients in the third round (BoTorch's absolute jitter lost on covariances of order
    # 1e18) and L-BFGS-B raised; on the standardised scale the campaign runs.
    pytest.importorskip("ioh")
    from botorch_unknown_hypers.loop import run
    from botorch_unknown_hypers.problems.bbob_problems import bbob_problem

    problem = bbob_problem("bbob-f12-i1-d5")
    policy = make_policy("lb-gp-ucb-auto", problem.domain, seed=0, acquisition="lognei")
    history = run(problem, policy, iterations=4, seed=0, batch_size=1, n_init=10)
    assert len(history) == 14 and history["simple_regret"].notna().all()


def test_he_auto_lognei_plays_the_candidate_attaining_the_joint_max(monkeypatch):
    from botorch_unknown_hypers.policies.presets import auto

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


def _auto_round(policy, X, f):
    x = policy.suggest(X, f(X))
    policy.observe(x, f(x))
    return torch.cat([X, x])


@pytest.mark.parametrize(
    "given, expected",
    [
        ({}, ("evidence", True, "logei-plugin", 1e-6, "matern52", "optuna", "optuna")),
        (AUTO_H6, ("evidence", True, "lognei", 1e-6, "rbf", "dim-scaled", "lognormal")),
    ],
    ids=["H14", "H6"],
)
def test_auto_default_is_he_auto_playing_the_likeliest_survivor_with_the_noise_floor(given, expected):
    r"""``auto``'s default (H14 of ``docs/bbob.md``) is HE-auto with the standing MAP candidate,
    ``noise_floor=1e-6``, ``reduction="evidence"``, Optuna's Matérn-5/2 kernel and priors and LogEI
    at the plug-in incumbent; with :data:`AUTO_H6` it is H6 (BoTorch's RBF model and priors,
    qLogNEI). Every round plays the survivor of highest log marginal likelihood (brute force over
    the candidates' models), at the point and with the candidate that ``he-gp-ucb-auto`` with those
    options plays from the same state, also once the test has eliminated MAP."""
    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    f = lambda X: -(X - 0.3).square().sum(-1, keepdim=True)  # noqa: E731
    policy = make_policy("auto", box, seed=0, num_restarts=2, raw_samples=16, **given)
    s = policy.settings
    settings = (policy.reduction, s.standing, s.acquisition, s.noise_floor, s.kernel, s.lengthscale_prior, s.noise_prior)
    assert policy.name == "auto" and settings == expected
    options = dict(zip(("reduction", "standing", "acquisition", "noise_floor", "kernel", "lengthscale_prior", "noise_prior"), expected))
    X = box.sample(6, seed=0)
    for eliminated in (False, False, True):
        if eliminated:
            policy.state.alive[0] = False  # the test has rejected MAP
        he = make_policy("he-gp-ucb-auto", box, seed=0, num_restarts=2, raw_samples=16, **options)
        he.load_state_dict({**json.loads(json.dumps(policy.state_dict())), "name": "he-gp-ucb-auto"})
        x = policy.suggest(X, f(X))
        assert torch.equal(x, he.suggest(X, f(X))) and policy.diagnostics["played"] == he.diagnostics["played"]
        cands = policy.state.candidates
        assert cands.kernel == s.kernel
        alive = [u for u in range(len(cands)) if policy.state.alive[u]]
        evidence = [_evidence(cands, u, X, f(X)) for u in alive]  # the box is the unit square
        assert policy.diagnostics["played"] == alive[max(range(len(alive)), key=evidence.__getitem__)]
        assert policy.diagnostics["played"] != 0 or not eliminated
        policy.observe(x, f(x))
        X = torch.cat([X, x])


def _evidence(cands, u, U, Y):
    r"""Brute-force :math:`\log N(y; m_u 1, s_u k_u(U, U) + \sigma_u^2 I)` of candidate ``u`` on
    the unit-cube inputs ``U`` and the standardised outputs, with ARD length scales and
    :math:`k = e^{-r^2/2}` (RBF) or :math:`k = (1 + \sqrt5 r + \tfrac53 r^2)e^{-\sqrt5 r}`
    (Matérn-5/2), :math:`r` the scaled distance."""
    y = ((Y - Y.mean()) / Y.std()).reshape(-1)
    ls = cands.lengthscale[u]
    r = ((U.unsqueeze(-2) - U.unsqueeze(-3)) / ls).square().sum(-1).clamp_min(0).sqrt()
    if cands.kernel == "rbf":
        k = torch.exp(-0.5 * r.square())
    else:
        assert cands.kernel == "matern52"
        k = (1 + math.sqrt(5) * r + 5 / 3 * r.square()) * torch.exp(-math.sqrt(5) * r)
    K = cands.outputscale[u] * k + cands.noise[u] * torch.eye(len(U), dtype=U.dtype)
    mean = torch.zeros_like(y) if cands.mean_constant is None else cands.mean_constant[u].expand_as(y)
    return float(torch.distributions.MultivariateNormal(mean, covariance_matrix=K).log_prob(y))


def test_auto_map_reduction_plays_the_map_model_until_the_test_eliminates_it_then_the_survivors_pair():
    r"""``auto[reduction=map&noise_floor=null]`` (H2a, the default before H6): while the standing
    candidate survives it is the one played; once the test has eliminated it, the round is
    HE-auto's doubly optimistic pair over the survivors (the same point and candidate as
    ``he-gp-ucb-auto[standing=true&acquisition=lognei]`` from the same state)."""
    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    f = lambda X: -(X - 0.3).square().sum(-1, keepdim=True)  # noqa: E731
    policy = make_policy("auto", box, seed=0, num_restarts=2, raw_samples=16, reduction="map", noise_floor=None, **AUTO_H6)
    assert (policy.name, policy.reduction, policy.settings.standing, policy.settings.acquisition) == ("auto", "map", True, "lognei")
    assert policy.settings.probe == 0.1  # kept by the decision rule of docs/bbob.md: rounds 10, 20, ... probe
    X = box.sample(6, seed=0)
    for _ in range(3):
        X = _auto_round(policy, X, f)
        assert policy.diagnostics["played"] == policy.state.standing == 0
    policy.state.alive[0] = False  # the test has rejected MAP
    saved = json.dumps(policy.state_dict())
    he = make_policy("he-gp-ucb-auto", box, seed=0, num_restarts=2, raw_samples=16, standing=True, acquisition="lognei",
                     probe=0.1)
    he.load_state_dict({**json.loads(saved), "name": "he-gp-ucb-auto"})  # the same state under HE-auto's name
    x = policy.suggest(X, f(X))
    assert policy.diagnostics["played"] != 0 and torch.equal(x, he.suggest(X, f(X)))
    assert policy.diagnostics["played"] == he.diagnostics["played"]


def test_auto_probes_on_a_fixed_share_of_rounds_and_refuses_bad_options():
    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    f = lambda X: -(X - 0.3).square().sum(-1, keepdim=True)  # noqa: E731
    probing = make_policy("auto", box, seed=0, num_restarts=2, raw_samples=16, probe=0.5, reduction="map", noise_floor=None, **AUTO_H6)
    X = box.sample(6, seed=0)
    for t in range(1, 5):  # with p = 1/2, floor(t/2) grows at t = 2 and 4: the probing rounds
        he = make_policy("he-gp-ucb-auto", box, seed=0, num_restarts=2, raw_samples=16, standing=True, acquisition="lognei")
        he.load_state_dict({**json.loads(json.dumps(probing.state_dict())), "name": "he-gp-ucb-auto"})
        x = probing.suggest(X, f(X))
        if t % 2 == 0:  # the survivors' doubly optimistic pair, as HE-auto plays it
            assert torch.equal(x, he.suggest(X, f(X))) and probing.diagnostics["played"] == he.diagnostics["played"]
        else:
            assert probing.diagnostics["played"] == 0
        probing.observe(x, f(x))
        X = torch.cat([X, x])
    with pytest.raises(ValueError, match="standing=true"):
        make_policy("auto", box, standing=False, reduction="map")
    with pytest.raises(ValueError, match=r"probe must be a number in \[0, 1\), got 1"):
        make_policy("auto", box, probe=1)
    with pytest.raises(ValueError, match="probe must be a number"):
        make_policy("auto", box, probe=True)
    for bad in (0.0, 1.0, "1e-6", math.nan):
        with pytest.raises(ValueError, match="noise_floor must be a finite number > 0 and < 1.0"):
            make_policy("auto", box, noise_floor=bad)
    assert "auto" in list_methods()


def test_auto_probe_evidence_plays_the_survivors_pair_on_the_probing_rounds_and_the_likeliest_otherwise():
    r"""H15's option: under ``reduction="evidence"``, the probing rounds of ``probe`` play HE-auto's
    doubly optimistic pair over the survivors (the same point and candidate from the same state);
    the other rounds play what ``auto`` without the option plays."""
    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    f = lambda X: -(X - 0.3).square().sum(-1, keepdim=True)  # noqa: E731
    kw = dict(seed=0, num_restarts=2, raw_samples=16, noise_floor=None, **AUTO_H6)
    probing = make_policy("auto", box, probe=0.5, probe_evidence=True, **kw)
    assert probing.reduction == "evidence"
    X = box.sample(6, seed=0)
    differs = []
    for t in range(1, 5):  # with p = 1/2 the probing rounds are t = 2 and 4
        state = json.loads(json.dumps(probing.state_dict()))
        plain = make_policy("auto", box, probe=0.5, **kw)
        plain.load_state_dict({**state, "name": "auto"})
        other = make_policy("he-gp-ucb-auto", box, standing=True, **kw) if t % 2 == 0 else plain
        other.load_state_dict({**state, "name": other.name})
        x = probing.suggest(X, f(X))
        assert torch.equal(x, other.suggest(X, f(X))) and probing.diagnostics["played"] == other.diagnostics["played"]
        if t % 2 == 0:  # the likeliest survivor's play, for contrast
            plain.load_state_dict({**state, "name": "auto"})
            differs.append(not torch.equal(x, plain.suggest(X, f(X))))
        probing.observe(x, f(x))
        X = torch.cat([X, x])
    assert any(differs)  # the probing rounds play something the likeliest survivor would not
    for bad in ({"probe_evidence": True, "reduction": "map"}, {"probe_evidence": True, "probe": 0.0}):
        with pytest.raises(ValueError, match="probe_evidence=true probes under reduction='evidence'"):
            make_policy("auto", box, **bad)
    with pytest.raises(ValueError, match="probe_evidence must be true or false, got 1"):
        make_policy("auto", box, probe_evidence=1)
    with pytest.raises(ValueError, match="probe_evidence is an option of HE-auto and auto only"):
        make_policy("lb-gp-ucb-auto", box, probe_evidence=True)


def test_auto_noise_floor_reaches_every_map_fit():
    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    f = lambda X: torch.sin(3 * X[:, :1]) + 0.5 * X[:, 1:]  # noqa: E731  noise-free
    X = box.sample(30, seed=0)  # enough data for BoTorch's MAP noise to sit at its bound
    noise = {}
    for floor in (None, 1e-6):
        policy = make_policy("auto", box, seed=0, num_restarts=2, raw_samples=16, noise_floor=floor)
        policy.suggest(X, f(X))
        noise[floor] = policy.state.candidates.noise_variances()  # the standing model and the proposals
    assert float(noise[None].min()) >= 1e-4 * (1 - 1e-6)  # BoTorch's bound (stored in float32)
    assert float(noise[1e-6].max()) < 1e-4 and float(noise[1e-6].min()) >= 1e-6 * (1 - 1e-6)


def test_auto_noise_prior_and_kernel_reach_every_map_fit_and_every_candidate():
    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    f = lambda X: torch.sin(3 * X[:, :1]) + 0.5 * X[:, 1:]  # noqa: E731  noise-free
    X = box.sample(30, seed=0)
    noise, kernels = {}, {}
    for prior, kernel in (("lognormal", "rbf"), ("optuna", "matern52")):
        policy = make_policy("auto", box, seed=0, num_restarts=2, raw_samples=16, noise_prior=prior, kernel=kernel)
        policy.suggest(X, f(X))
        noise[prior] = policy.state.candidates.noise_variances()  # the standing model and the proposals
        kernels[prior] = policy.state.candidates.kernel
    # BoTorch's LogNormal(-4, 1) charges 48 nats at auto's floor 1e-6 and holds a deterministic
    # fit's noise above it (4e-5 here); Gamma(1.1, 30) lets it fall to the floor
    assert float(noise["lognormal"].min()) > 1e-5
    assert float(noise["optuna"].max()) < 1.01e-6 and float(noise["optuna"].min()) >= 1e-6 * (1 - 1e-6)
    assert kernels == {"lognormal": "rbf", "optuna": "matern52"}
    with pytest.raises(ValueError, match="laplace_draws > 0 needs kernel='rbf'"):
        make_policy("auto", box, laplace_draws=4, kernel="matern52")


def test_laplace_draws_average_qlognei_over_the_map_fits_hyperposterior_while_map_plays(monkeypatch):
    r"""``laplace_draws`` (H3 of ``docs/bbob.md``): whenever the standing MAP candidate is the
    likeliest survivor, the acquisition is qLogNEI averaged over draws from the Laplace
    approximation at BoTorch's fit on all data (drawn every round, the MAP candidate's own
    hyperparameters unchanged); another survivor plays as in ``auto``; runs are deterministic."""
    from botorch_unknown_hypers.models.laplace import laplace_hyperposterior
    from botorch_unknown_hypers.policies.presets import auto as auto_module

    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    calls = []
    real = auto_module.hyperposterior_acquisition

    def spy(ctx, draws, train_X, train_Y, fixed):
        acqf = real(ctx, draws, train_X, train_Y, fixed)
        calls.append((len(draws), acqf.reduction, train_X.shape[0]))
        return acqf

    monkeypatch.setattr(auto_module, "hyperposterior_acquisition", spy)
    policy = make_policy("auto", box, seed=3, laplace_draws=8, num_restarts=2, raw_samples=16, **AUTO_H6)
    plain = make_policy("auto", box, seed=3, num_restarts=2, raw_samples=16, **AUTO_H6)
    X0, Y0 = _data(6)
    X, Y = _campaign(policy, X0, Y0, 3)
    st = policy.state
    played_map = [u == st.standing for u in st.play_candidate]
    assert sum(played_map) >= 1 and len(calls) == sum(played_map) and all(c[:2] == (8, "average") for c in calls)
    assert st.draws is not None and len(st.draws) == 8 and st.draws.kernel == "rbf"
    assert "draws" not in policy.state_dict()["state"]  # drawn again every round, never saved
    # the standing candidate is BoTorch's MAP fit, as without the option
    fit = fit_default_single_task_gp(X[:-1], Y[:-1], box.bounds, noise_floor=1e-6)
    torch.testing.assert_close(st.candidates.lengthscale[st.standing], fit.covar_module.lengthscale.detach().reshape(-1))
    spread = laplace_hyperposterior(fit)
    assert spread.mode.shape == (3,)
    # deterministic given the seed; not the point estimate's campaign
    again = make_policy("auto", box, seed=3, laplace_draws=8, num_restarts=2, raw_samples=16, **AUTO_H6)
    assert torch.equal(_campaign(again, X0, Y0, 3)[0], X)
    assert not torch.equal(_campaign(plain, X0, Y0, 3)[0], X)
    # a saved state resumes to the same next point
    fresh = make_policy("auto", box, seed=0, laplace_draws=8, num_restarts=2, raw_samples=16, **AUTO_H6)
    fresh.load_state_dict(json.loads(json.dumps(policy.state_dict(), allow_nan=False)))
    torch.testing.assert_close(fresh.suggest(X, Y), policy.suggest(X, Y))
    # once the test has rejected MAP the likeliest survivor plays its own qLogNEI, no draws
    st.alive[st.standing] = False
    st.eliminated_at[st.standing] = st.round
    before = len(calls)
    _campaign(policy, X, Y, 2)
    assert len(calls) == before and st.draws is None


def test_laplace_draws_run_on_a_pool_and_in_batches_and_bad_values_are_refused():
    pool = _pool()
    policy = make_policy("auto", pool, seed=1, laplace_draws=4, **AUTO_H6)
    x = policy.suggest(*_pool_data(8), q=2)
    assert x.shape == (2, 2) and all(any(torch.equal(p, c) for c in pool.points) for p in x)
    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    for bad in (-1, 1.5, True, "4"):
        with pytest.raises(ValueError, match="laplace_draws must be an integer >= 0"):
            make_policy("auto", box, laplace_draws=bad)
    with pytest.raises(ValueError, match="needs standing=true and acquisition='lognei'; got standing=False"):
        make_policy("he-gp-ucb-auto", box, laplace_draws=4)
    with pytest.raises(ValueError, match="acquisition='lognei'; got standing=True, acquisition='logei'"):
        make_policy("auto", box, laplace_draws=4, acquisition="logei", kernel="rbf")
    with pytest.raises(ValueError, match="laplace_draws is an option of HE-auto and auto only"):
        make_policy("lb-gp-ucb-auto", box, laplace_draws=4, standing=True, acquisition="lognei")


def test_fitted_mean_makes_the_standing_candidate_botorchs_map_model():
    # H10: with `fitted_mean` every candidate carries its MAP fit's constant mean, so the standing
    # candidate's posterior in the round's model is that of BoTorch's fitted SingleTaskGP (mean and
    # variance at new points); with the zero mean it is not, away from the data
    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    X, Y = _data(12, seed=3)
    Y = Y - 3.0 * (X[:, :1] - 0.3).pow(2)  # a skewed sample: the fitted constant mean is far from the average
    Z = torch.tensor([[0.95, 0.05], [0.9, 0.95], [0.5, 0.5]], dtype=torch.float64)
    fit = fit_default_single_task_gp(X, Y, box.bounds, noise_floor=1e-6)
    with torch.no_grad():
        post = fit.posterior(Z)
    means = {}
    for fitted in (True, False):
        policy = make_policy("auto", box, seed=0, fitted_mean=fitted, **FAST, **AUTO_H6)
        policy.suggest(X, Y)
        st = policy.state
        if fitted:
            c = float(fit.mean_module.constant.detach())
            assert st.candidates.mean_constant.tolist() == pytest.approx([c] * len(st.candidates), rel=1e-9)
            assert abs(c) > 0.1  # the check below is not trivially met by a zero mean
        else:
            assert st.candidates.mean_constant is None
        model, _, _ = UnitCubeModel(standardise=True)(policy.context, st, st.candidates.subset([0]), X, Y)
        mean, var = model.marginal_mean_variance(Z.unsqueeze(0))
        means[fitted] = mean[0]
        if fitted:
            torch.testing.assert_close(mean[0], post.mean.reshape(-1), rtol=1e-6, atol=1e-8)
            torch.testing.assert_close(var[0], post.variance.reshape(-1), rtol=1e-5, atol=1e-9)
    assert float((means[True] - means[False]).abs().max()) > 1e-2


@pytest.mark.parametrize("name, ard", [("lb-gp-ucb-auto", False), ("he-gp-ucb-auto", True)])
def test_fitted_mean_puts_the_proposing_fits_constant_mean_on_every_candidate_of_the_older_presets(name, ard):
    # the older presets propose from one MAP fit (shared length scale for LB, ARD for HE); with
    # `fitted_mean` every proposed candidate carries that fit's constant mean, standardised units
    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    X, Y = _data(12, seed=3)
    Y = Y - 3.0 * (X[:, :1] - 0.3).pow(2)
    c = float(fit_default_single_task_gp(X, Y, box.bounds, ard=ard).mean_module.constant.detach())
    assert abs(c) > 0.1  # far from zero, so a zero mean cannot pass
    policy = make_policy(name, box, seed=0, fitted_mean=True, **FAST)
    policy.suggest(X, Y)
    candidates = policy.state.candidates
    assert len(candidates) > 1
    assert candidates.mean_constant.tolist() == pytest.approx([c] * len(candidates), rel=1e-6)
    plain = make_policy(name, box, seed=0, **FAST)
    plain.suggest(X, Y)
    assert plain.state.candidates.mean_constant is None


def test_fitted_mean_is_checked_and_survives_a_state_round_trip():
    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    with pytest.raises(ValueError, match="fitted_mean must be true or false"):
        make_policy("auto", box, fitted_mean="yes")
    with pytest.raises(ValueError, match="fitted_mean"):
        propose_ard_lengthscales(*_data(), box.bounds, fitted_mean=1)
    policy = make_policy("auto", box, seed=0, fitted_mean=True, **FAST)
    X, Y = _campaign(policy, *_data(6), rounds=3)
    fresh = make_policy("auto", box, seed=0, fitted_mean=True, **FAST)
    fresh.load_state_dict(json.loads(json.dumps(policy.state_dict())))
    assert fresh.state.candidates.mean_constant.tolist() == policy.state.candidates.mean_constant.tolist()
    torch.testing.assert_close(fresh.suggest(X, Y), policy.suggest(X, Y), rtol=0, atol=0)
