"""Tests of the TS-RSR paper's sequential batch baselines and qLogNEI (policies/batch/batch_baselines.py):
BUCB, UCB-PE, the Kriging believer and the shared loop of every batch baseline.

The sampling baselines (gp-ts, sp, dpp-ts) are tested in test_batch_sampling.py; the shared
set-up is in batch_helpers.py and conftest.py.
"""

from __future__ import annotations

import math

import pytest
import torch

from botorch_unknown_hypers.acquisition.pending import ConditionalUCB, observation_noise_variance
from botorch_unknown_hypers.domains import FiniteDomain
from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp
from botorch_unknown_hypers.policies.batch.batch_baselines import BUCB, UCBPE, KrigingBelieverEI, QLogNEI, bucb_beta
from tests.policies.batch_helpers import (
    BATCH_BASELINES,
    DT,
    FAST,
    HI,
    LO,
    SPEC,
    check_batch_in_domain_deterministic_and_resumable,
    make,
    objective,
    pool_index,
)


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


# --------------------------------------------------------------------------- #
# all policies: domain, diversity, determinism, JSON state round trip
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("kind", ["box", "pool"])
@pytest.mark.parametrize("name", ["bucb", "kb-ei", "qlognei", "ucbpe"])
def test_batch_in_domain_deterministic_and_resumable(name, kind, box, box_data, pool, pool_data):
    domain, (X, Y) = (box, box_data) if kind == "box" else (pool, pool_data)
    check_batch_in_domain_deterministic_and_resumable(name, kind, domain, X, Y)


@pytest.mark.parametrize(
    "name, options",
    [
        ("bucb", {"num_points": 0}),
        ("bucb", {"delta": 1.5}),
        ("ucbpe", {"use_variance_bug": "yes"}),
        ("kb-ei", {"update_best_f": 1}),
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
# qLogNEI
# --------------------------------------------------------------------------- #


def test_qlognei_uses_sequential_greedy_optimize_acqf(box, box_data, monkeypatch):
    import botorch.optim as optimize_module  # maximize imports optimize_acqf from it when run

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


