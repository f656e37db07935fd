"""Tests of the TS-RSR paper's batch baselines and qLogNEI (policies/batch_baselines.py)."""

from __future__ import annotations

import json
import math

import pytest
import torch
from botorch.models.deterministic import GenericDeterministicModel

from botorch_unknown_hypers.acquisition.pending import observation_noise_variance
from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp
from botorch_unknown_hypers.policies.batch_baselines import BUCB, UCBPE, KrigingBelieverEI, QLogNEI, bucb_beta
from botorch_unknown_hypers.policies.batch_sampling import DPPThompsonSampling, StochasticPolicy, boltzmann_probabilities, dpp_acceptance_probability, dpp_log_det
from botorch_unknown_hypers.policies.registry import METHODS

BATCH_BASELINES = {name: METHODS[name] for name in ("gp-ts", "bucb", "ucbpe", "sp", "kb-ei", "dpp-ts", "qlognei")}
from botorch_unknown_hypers.acquisition.pending import ConditionalUCB
from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain

SPEC = {"kernel": "matern52", "lengthscale": 0.7, "outputscale": 1.0, "noise_variance": 1e-6}
FAST = dict(num_restarts=2, raw_samples=32)
LO, HI = -2.0, 2.0
DT = torch.float64


def objective(X: torch.Tensor) -> torch.Tensor:
    return (torch.sin(2.0 * X[:, :1]) + torch.cos(1.5 * X[:, 1:]) - 0.2 * (X**2).sum(-1, keepdim=True))


def make(name: str, domain, seed: int = 3, **options):
    return BATCH_BASELINES[name](domain, seed=seed, surrogate="paper", surrogate_spec=SPEC, **FAST, **options)


@pytest.fixture(scope="module")
def box():
    return BoxDomain(torch.tensor([[LO, LO], [HI, HI]], dtype=DT))


@pytest.fixture(scope="module")
def box_data():
    g = torch.Generator().manual_seed(0)
    X = LO + (HI - LO) * torch.rand(15, 2, dtype=DT, generator=g)
    return X, objective(X)


@pytest.fixture(scope="module")
def pool():
    g = torch.Generator().manual_seed(1)
    return FiniteDomain(LO + (HI - LO) * torch.rand(30, 2, dtype=DT, generator=g))


@pytest.fixture(scope="module")
def pool_data(pool):
    X = pool.points[:10]
    return X, objective(X)


def brute_force_variance(train_X, train_Y, extra_X, X):
    r"""Variance at ``X`` of a GP refit on ``train_X + extra_X`` with the same fixed
    hyperparameters, in the original model's units.

    The paper surrogate's output scale and noise are in *standardised* units and the refit
    re-standardises on the augmented targets, so the refit's variance is rescaled by the
    ratio of the two models' ``Standardize`` scales (the extra targets do not matter).
    """
    spec = SurrogateSpec.from_dict(SPEC)
    original = fixed_hyperparameter_gp(train_X, train_Y, spec)
    X_aug = torch.cat([train_X, extra_X])
    Y_aug = torch.cat([train_Y, torch.zeros(extra_X.shape[0], 1, dtype=DT)])
    refit = fixed_hyperparameter_gp(X_aug, Y_aug, spec)
    with torch.no_grad():
        var = refit.posterior(X).variance.squeeze(-1)
    ratio = (original.outcome_transform.stdvs / refit.outcome_transform.stdvs).squeeze() ** 2
    return var * ratio


def pool_index(pool, X):
    idx = pool.index_of(X)
    assert (idx >= 0).all()
    return idx.tolist()


# --------------------------------------------------------------------------- #
# all policies: domain, diversity, determinism, JSON state round trip
# --------------------------------------------------------------------------- #

# Policies whose batch cannot repeat a point on a pool (TS, SP and DPP-TS draw at random).
NO_REPEATS_ON_POOL = {"bucb", "ucbpe", "kb-ei", "qlognei"}


@pytest.mark.parametrize("kind", ["box", "pool"])
@pytest.mark.parametrize("name", sorted(BATCH_BASELINES))
def test_batch_in_domain_deterministic_and_resumable(name, kind, box, box_data, pool, pool_data):
    domain, (X, Y) = (box, box_data) if kind == "box" else (pool, pool_data)
    q = 4
    first = make(name, domain, seed=3)
    assert first.name == name
    torch.manual_seed(123)
    rng_before = torch.get_rng_state()
    batch = first.suggest(X, Y, q=q)
    assert torch.equal(torch.get_rng_state(), rng_before)  # the caller's RNG is untouched
    assert batch.shape == (q, 2)
    assert domain.contains(batch).all()
    assert first.selected == [SurrogateSpec.from_dict(SPEC).label()] * q
    assert first.n_candidates == 1 and first.state.n == 1
    n_distinct = torch.unique(batch, dim=0).shape[0]
    if kind == "box" or name in NO_REPEATS_ON_POOL:
        assert torch.pdist(batch).min() > 1e-4
    else:
        assert n_distinct >= 2

    # Deterministic given the seed.
    twin = make(name, domain, seed=3)
    assert torch.equal(twin.suggest(X, Y, q=q), batch)

    # JSON round trip into a fresh policy (other seed) gives the same next batch.
    state = json.loads(json.dumps(first.state_dict()))
    fresh = make(name, domain, seed=99)
    fresh.load_state_dict(state)
    assert fresh.state.n == 1 and fresh.state.history == first.state.history
    X2, Y2 = torch.cat([X, batch]), torch.cat([Y, objective(batch)])
    assert torch.equal(fresh.suggest(X2, Y2, q=q), first.suggest(X2, Y2, q=q))
    assert first.state.n == 2


@pytest.mark.parametrize(
    "name, options",
    [
        ("bucb", {"num_points": 0}),
        ("bucb", {"delta": 1.5}),
        ("ucbpe", {"use_variance_bug": "yes"}),
        ("sp", {"num_points": -1}),
        ("sp", {"n_init": -2}),
        ("kb-ei", {"update_best_f": 1}),
        ("dpp-ts", {"mcmc_steps": -1}),
        ("dpp-ts", {"dpp_lambda": 0.0}),
    ],
)
def test_bad_options_name_the_argument(name, options, box):
    with pytest.raises(ValueError, match=next(iter(options))):
        make(name, box, **options)


def test_bad_state_is_rejected_unchanged(box, box_data):
    policy = make("bucb", box)
    policy.suggest(*box_data, q=2)
    state = policy.state_dict()
    state["state"]["n"] = -1
    with pytest.raises(ValueError, match="n"):
        policy.load_state_dict(state)
    assert policy.state.n == 1


# --------------------------------------------------------------------------- #
# BUCB
# --------------------------------------------------------------------------- #


def test_bucb_beta_matches_hand_computation(box, box_data, pool, pool_data):
    assert bucb_beta(1000, 1) == pytest.approx(0.2 * math.log(1000 * math.pi**2 / 0.06), rel=1e-12)
    assert bucb_beta(30, 3, 0.05) == pytest.approx(0.2 * math.log(30 * 9 * math.pi**2 / 0.3), rel=1e-12)
    with pytest.raises(ValueError, match="t must be"):
        bucb_beta(1000, 0)  # the authors' t = 0 (log 0) is not allowed
    policy = make("bucb", box)
    X, Y = box_data
    batch = policy.suggest(X, Y, q=2)
    assert policy.last_info["t"] == 1
    assert policy.last_info["beta"] == pytest.approx(0.2 * math.log(1000 * math.pi**2 / 0.06), rel=1e-12)
    policy.suggest(torch.cat([X, batch]), torch.cat([Y, objective(batch)]), q=2)
    assert policy.last_info["t"] == 2
    assert policy.last_info["beta"] == pytest.approx(0.2 * math.log(1000 * 4 * math.pi**2 / 0.06), rel=1e-12)
    on_pool = make("bucb", pool)
    on_pool.suggest(*pool_data, q=2)
    assert on_pool.last_info["beta"] == pytest.approx(0.2 * math.log(30 * math.pi**2 / 0.06), rel=1e-12)


def test_bucb_mean_frozen_and_sigma_conditioned(pool, pool_data):
    X, Y = pool_data
    policy = make("bucb", pool)
    batch = policy.suggest(X, Y, q=3)
    info = policy.last_info
    beta = info["beta"]
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec.from_dict(SPEC))
    with torch.no_grad():
        mu = model.posterior(pool.points).mean.squeeze(-1)
        var0 = model.posterior(pool.points).variance.squeeze(-1)
    idx = pool_index(pool, batch)
    # Slot 1: plain UCB; every slot's mean is the unconditioned posterior mean mu_t.
    assert idx[0] == int((mu + beta * var0.sqrt()).argmax())
    for slot, j in zip(info["slots"], idx):
        assert slot["mean"] == pytest.approx(float(mu[j]), rel=1e-10, abs=1e-10)
        assert slot["score"] == pytest.approx(slot["mean"] + beta * slot["sigma_conditional"], rel=1e-12)
    # Slot 2: sigma conditioned on slot 1 equals a brute-force GP that also observed x_1.
    var_brute = brute_force_variance(X, Y, batch[:1], pool.points)
    with torch.no_grad():
        mean_c, var_c = ConditionalUCB(model, beta, X_pending=batch[:1]).mean_and_variance(pool.points.unsqueeze(-2))
    assert torch.allclose(var_c, var_brute, rtol=0, atol=1e-8)
    assert torch.allclose(mean_c, mu, rtol=0, atol=1e-10)  # the mean is not updated
    assert idx[1] == int((mu + beta * var_brute.sqrt()).argmax())
    assert info["slots"][1]["sigma_conditional"] == pytest.approx(float(var_brute[idx[1]].sqrt()), rel=1e-6)
    assert info["slots"][1]["sigma_conditional"] < info["slots"][1]["sigma"]
    # Slot 3 conditions on both previous points.
    var_brute2 = brute_force_variance(X, Y, batch[:2], pool.points)
    assert idx[2] == int((mu + beta * var_brute2.sqrt()).argmax())


# --------------------------------------------------------------------------- #
# UCBPE
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("bug", [False, True])
def test_ucbpe_points_maximise_conditioned_variance(bug, pool, pool_data):
    X, Y = pool_data
    policy = make("ucbpe", pool, use_variance_bug=bug)
    batch = policy.suggest(X, Y, q=4)
    idx = pool_index(pool, batch)
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec.from_dict(SPEC))
    with torch.no_grad():
        post = model.posterior(pool.points)
        mu, var = post.mean.squeeze(-1), post.variance.squeeze(-1)
    assert policy.last_info["beta"] == 1.0  # 1 + 0.01 n with n = 0
    bonus = var if bug else var.sqrt()
    assert idx[0] == int((mu + bonus).argmax())
    for i in range(1, 4):
        var_brute = brute_force_variance(X, Y, batch[:i], pool.points)
        assert idx[i] == int(var_brute.argmax())
        assert policy.last_info["variance_conditional"][i - 1] == pytest.approx(float(var_brute.max()), rel=1e-6)
    policy.suggest(torch.cat([X, batch]), torch.cat([Y, objective(batch)]), q=2)
    assert policy.last_info["beta"] == pytest.approx(1.01)


# --------------------------------------------------------------------------- #
# SP
# --------------------------------------------------------------------------- #


def test_sp_frequencies_match_boltzmann_probabilities():
    means = torch.tensor([0.0, 0.4, 0.8, 1.2, 1.6, 2.0], dtype=DT)
    pool = FiniteDomain(torch.stack([means, torch.zeros_like(means)], dim=-1))
    policy = StochasticPolicy(pool, seed=5, surrogate="paper", surrogate_spec=SPEC, n_init=10)
    # A model whose posterior mean is the first coordinate: the constructed mean.
    policy.build_model = lambda X, Y: GenericDeterministicModel(lambda Z: Z[..., :1])
    draws = 6000
    batch = policy.suggest(pool.points[:2], torch.zeros(2, 1, dtype=DT), q=draws)
    beta = 3.0 * math.log(0 + 10 + 1) / 2.0  # C_range = max mu - min mu = 2
    expected = torch.softmax(beta * means, dim=0)
    assert policy.last_info["beta"] == pytest.approx(beta, rel=1e-12)
    counts = torch.bincount(torch.tensor(pool_index(pool, batch)), minlength=6).to(DT)
    chi2 = float(((counts - draws * expected) ** 2 / (draws * expected)).sum())
    assert chi2 < 25.0  # 5 degrees of freedom: P(chi2 > 25) ~ 1e-4
    probs, beta_fn = boltzmann_probabilities(means, 0, 10)
    assert torch.allclose(probs, expected) and beta_fn == pytest.approx(beta)


def test_sp_uniform_when_mean_is_flat_and_n_init_recorded():
    points = torch.linspace(0, 1, 5, dtype=DT).unsqueeze(-1)
    probs, beta = boltzmann_probabilities(torch.full((5,), 3.0, dtype=DT) + 1e-3 * points.squeeze(-1), 0, 15)
    assert beta == 0.0 and torch.allclose(probs, torch.full((5,), 0.2, dtype=DT))
    policy = StochasticPolicy(FiniteDomain(points), seed=0, surrogate="paper", surrogate_spec=SPEC)
    policy.suggest(points[:3], torch.tensor([[0.0], [1.0], [0.5]], dtype=DT), q=2)
    assert policy.state.n_init == 3 and policy.state_dict()["state"]["n_init"] == 3


# --------------------------------------------------------------------------- #
# KB-EI
# --------------------------------------------------------------------------- #


def test_kriging_believer_keeps_mean_and_shrinks_variance(box, box_data):
    X, Y = box_data
    policy = make("kb-ei", box)
    batch = policy.suggest(X, Y, q=3)
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec.from_dict(SPEC))
    believer = policy.last_believer
    with torch.no_grad():
        before, after = model.posterior(batch), believer.posterior(batch)
    # y = mu(x) fantasised in the original units (Standardize is applied by BoTorch):
    # the believer's mean is the original mean, its variance collapses to ~ the noise.
    assert torch.allclose(after.mean, before.mean, rtol=1e-8, atol=1e-8)
    noise = observation_noise_variance(model, batch)
    assert (after.variance.squeeze(-1) < 0.1 * before.variance.squeeze(-1)).all()
    assert (after.variance.squeeze(-1) <= 1.01 * noise).all()
    # best_f starts at the best observed y and is raised by the fantasies.
    slots = policy.last_info["slots"]
    assert slots[0]["best_f"] == pytest.approx(float(Y.max()))
    for i in range(1, 3):
        assert slots[i]["best_f"] == pytest.approx(max([float(Y.max())] + [s["mean"] for s in slots[:i]]))


def test_kriging_believer_fixed_best_f_repeats_a_dominant_point():
    # A long length scale extrapolates the trend: the mean at x = 1.75 beats every
    # observation. With the authors' fixed best_f its EI stays ~ mu - Y_max after the
    # fantasy, so the whole batch repeats it; the Kriging Believer raises best_f.
    points = torch.linspace(-1.0, 2.0, 13, dtype=DT).unsqueeze(-1)
    X, Y = points[[4, 6]], torch.tensor([[0.0], [1.0]], dtype=DT)
    spec = dict(SPEC, lengthscale=2.0)
    code = KrigingBelieverEI(FiniteDomain(points), surrogate="paper", surrogate_spec=spec, update_best_f=False)
    kb = KrigingBelieverEI(FiniteDomain(points), surrogate="paper", surrogate_spec=spec)
    assert torch.unique(code.suggest(X, Y, q=3), dim=0).shape[0] == 1
    assert torch.unique(kb.suggest(X, Y, q=3), dim=0).shape[0] == 3


# --------------------------------------------------------------------------- #
# DPP-TS
# --------------------------------------------------------------------------- #


def hand_det(model, batch):
    with torch.no_grad():
        K = model.posterior(batch).mvn.covariance_matrix
    noise = observation_noise_variance(model, batch)
    return torch.det(torch.eye(batch.shape[0], dtype=DT) + K / noise.unsqueeze(-1).sqrt() / noise.sqrt())


def test_dpp_acceptance_is_determinant_ratio(box_data):
    X, Y = box_data
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec.from_dict(SPEC))
    current = torch.tensor([[0.5, 0.5], [-1.0, 1.2], [1.5, -1.5]], dtype=DT)
    crowded = current.clone()
    crowded[2] = torch.tensor([0.55, 0.5], dtype=DT)  # next to slot 0: less diverse
    spread = current.clone()
    spread[0] = torch.tensor([-1.9, -1.9], dtype=DT)
    ld_cur = float(dpp_log_det(model, current))
    assert ld_cur == pytest.approx(math.log(float(hand_det(model, current))), rel=1e-10)
    for proposed in (crowded, spread):
        ratio = float(hand_det(model, proposed) / hand_det(model, current))
        alpha = dpp_acceptance_probability(ld_cur, float(dpp_log_det(model, proposed)))
        assert alpha == pytest.approx(min(1.0, ratio), rel=1e-8)
    assert dpp_acceptance_probability(ld_cur, float(dpp_log_det(model, crowded))) < 1.0


def test_dpp_ts_chain_replays(pool, pool_data):
    X, Y = pool_data
    policy = DPPThompsonSampling(pool, seed=11, surrogate="paper", surrogate_spec=SPEC, mcmc_steps=8)
    batch = policy.suggest(X, Y, q=4)
    info = policy.last_info
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec.from_dict(SPEC))
    state = torch.tensor(info["initial_batch"], dtype=DT)
    proposals = torch.tensor(info["proposals"], dtype=DT)
    for step, proposal in zip(info["steps"], proposals):
        proposed = state.clone()
        proposed[step["slot"]] = proposal
        ratio = float(hand_det(model, proposed) / hand_det(model, state))
        assert step["acceptance_probability"] == pytest.approx(min(1.0, ratio), rel=1e-6)
        if step["accepted"]:
            state = proposed
    assert torch.equal(state, batch)
    assert info["accepted"] == sum(s["accepted"] for s in info["steps"])
    assert 0 < info["accepted"] <= 8


# --------------------------------------------------------------------------- #
# qLogNEI
# --------------------------------------------------------------------------- #


def test_qlognei_uses_sequential_greedy_optimize_acqf(box, box_data, monkeypatch):
    import botorch_unknown_hypers.acquisition.optimize as optimize_module

    calls = []
    real = optimize_module.optimize_acqf

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(optimize_module, "optimize_acqf", spy)
    policy = QLogNEI(box, seed=0, surrogate="paper", surrogate_spec=SPEC, **FAST)
    batch = policy.suggest(*box_data, q=3)
    assert len(calls) == 1
    assert calls[0]["sequential"] is True and calls[0]["q"] == 3
    assert calls[0]["num_restarts"] == 2 and calls[0]["raw_samples"] == 32
    assert batch.shape == (3, 2) and box.contains(batch).all()
    assert torch.pdist(batch).min() > 1e-4
    assert len(policy.last_info["log_nei"]) == 3


def test_ucbpe_and_bucb_are_sequential_on_box(box, box_data):
    # Box: point 2 of UCBPE maximises the conditioned variance (a corner, far from data
    # and from point 1); BUCB's slot scores use the conditioned sigma.
    X, Y = box_data
    ucbpe = BATCH_BASELINES["ucbpe"](box, seed=3, surrogate="paper", surrogate_spec=SPEC, num_restarts=8, raw_samples=256)
    batch = ucbpe.suggest(X, Y, q=2)
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec.from_dict(SPEC))
    corners = torch.tensor([[LO, LO], [LO, HI], [HI, LO], [HI, HI]], dtype=DT)
    var_corners = brute_force_variance(X, Y, batch[:1], corners)
    var_chosen = brute_force_variance(X, Y, batch[:1], batch[1:])
    assert float(var_chosen) >= float(var_corners.max()) * (1 - 1e-6)
    bucb = make("bucb", box)
    bucb.suggest(X, Y, q=3)
    for slot in bucb.last_info["slots"][1:]:
        assert slot["sigma_conditional"] <= slot["sigma"]
    assert isinstance(bucb, BUCB) and isinstance(ucbpe, UCBPE)
    del model


def test_conditional_log_ei_equals_log_ei_of_the_kriging_believer():
    from botorch.acquisition import LogExpectedImprovement

    from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp
    from botorch_unknown_hypers.acquisition.pending import ConditionalLogEI

    g = torch.Generator().manual_seed(4)
    X = torch.rand(12, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(5 * X).sum(-1, keepdim=True)
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec(kernel="matern52", lengthscale=(0.3,), noise_variance=1e-4))
    Q = torch.rand(3, 2, generator=g, dtype=torch.float64)
    believer = model
    for j in range(3):
        believer.posterior(Q[j : j + 1])
        believer = believer.condition_on_observations(Q[j : j + 1], believer.posterior(Q[j : j + 1]).mean.detach())
    Xs = torch.rand(50, 1, 2, generator=g, dtype=torch.float64)
    best_f = float(Y.max()) + 0.1
    fast = ConditionalLogEI(model, best_f, X_pending=Q)
    assert fast.uses_cached_predictive
    # The believer's low-rank cache update is itself accurate to ~1e-7 relative (log EI ~ -8 here).
    torch.testing.assert_close(fast(Xs), LogExpectedImprovement(believer, best_f=best_f)(Xs), rtol=1e-5, atol=1e-6)
    slow = ConditionalLogEI(model, best_f, X_pending=Q, predictive=False)
    torch.testing.assert_close(fast(Xs), slow(Xs), rtol=1e-8, atol=1e-8)


def test_posterior_mean_maximiser_start_is_shared_by_the_paper_baselines(box, box_data):
    """All paper methods get argmax mu_t as an extra start (the authors' shared candidate set
    holds a mu-ascent point); qlognei keeps BoTorch's defaults; pools need none."""
    from botorch.acquisition import PosteriorMean

    X, Y = box_data
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec.from_dict(SPEC))
    for name in ("gp-ts", "bucb", "ucbpe", "sp", "kb-ei", "dpp-ts"):
        policy = make(name, box)
        policy.suggest(X, Y, q=2)
        assert policy.x_mean_max is not None and policy.x_mean_max.shape == (1, 2), name
        # it is a maximiser of mu_t: no better than it among many random points
        cand = torch.rand(2000, 1, 2, generator=torch.Generator().manual_seed(0), dtype=DT) * (HI - LO) + LO
        with torch.no_grad():
            best = float(PosteriorMean(model)(policy.x_mean_max.unsqueeze(0)))
            assert best >= float(PosteriorMean(model)(cand).max()) - 1e-9
    sp = make("sp", box)
    sp.suggest(X, Y, q=2)
    assert torch.equal(sp.candidates()[-1:], sp.x_mean_max)
    off = make("bucb", box, start_at_mean_max=False)
    off.suggest(X, Y, q=2)
    assert off.x_mean_max is None
    q = make("qlognei", box)
    q.suggest(X, Y, q=2)
    assert q.x_mean_max is None
    with pytest.raises(ValueError, match="start_at_mean_max"):
        make("bucb", box, start_at_mean_max="yes")


def test_maximize_per_candidate_extra_starts_are_validated_and_used():
    from botorch_unknown_hypers.acquisition.multistart import maximize_per_candidate

    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=DT)
    peak = torch.tensor([0.731, 0.259], dtype=DT)

    def values(Xk):  # K x m x d -> K x m; a needle at `peak` that raw samples miss
        return torch.exp(-((Xk - peak) ** 2).sum(-1) / 1e-6).expand(Xk.shape[:-1])

    X0, v0 = maximize_per_candidate(values, 2, bounds, num_restarts=2, raw_samples=8, seed=0)
    X1, v1 = maximize_per_candidate(values, 2, bounds, num_restarts=2, raw_samples=8, seed=0, extra_starts=peak[None] + 1e-4)
    assert (v0 < 1e-3).all() and (v1 > 0.99).all()
    with pytest.raises(ValueError, match="extra_starts"):
        maximize_per_candidate(values, 2, bounds, num_restarts=2, raw_samples=8, extra_starts=peak)
