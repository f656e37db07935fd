"""Tests of TS-RSR (botorch_unknown_hypers.acquisition.ts_rsr); the conditioned variances it uses
are tested in test_pending.py, the posterior-mean maximiser and random-point sampler in test_thompson.py."""

import math

import pytest
import torch

from botorch_unknown_hypers.acquisition.pending import conditional_posterior_variance
from botorch_unknown_hypers.acquisition.ts_rsr import RegretToSigmaRatio, gen_ts_rsr_batch_box, gen_ts_rsr_batch_pool
from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp
from tests.acquisition.surrogate_helpers import BOUNDS, SPEC, conditioned_on_three_pending, surrogate_data


def test_acquisition_value_is_negative_ratio():
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    Q = torch.tensor([[0.0, 0.0]], dtype=torch.float64)
    acqf = RegretToSigmaRatio(model, f_star=10.0, X_pending=Q)
    Xs = torch.rand(5, 1, 2, dtype=torch.float64)
    mean, var = conditional_posterior_variance(model, Xs, Q)
    assert torch.allclose(acqf(Xs), -(10.0 - mean) / var.sqrt(), atol=1e-10)
    with pytest.raises(ValueError, match="f_star"):
        RegretToSigmaRatio(model, f_star=float("inf"))


def _brute_pool_batch(model, points, f_star):
    """Psi argmin per slot with the conditional variance from the full formula (no downdates)."""
    chosen = []
    for fs in f_star:
        Q = points[chosen] if chosen else None
        mean, var = conditional_posterior_variance(model, points.unsqueeze(-2), Q)
        chosen.append(int(((fs - mean) / var.sqrt()).argmin()))
    return chosen


def test_pool_batch_matches_brute_force_and_diagnostics():
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    points = torch.rand(150, 2, generator=torch.Generator().manual_seed(3), dtype=torch.float64) * 4 - 2
    idx, info = gen_ts_rsr_batch_pool(model, points, 6, torch.Generator().manual_seed(1))
    f_star = [s.f_star for s in info.slots]
    assert idx.tolist() == _brute_pool_batch(model, points, f_star)
    assert len(set(f_star)) == 6  # one independent sample per slot
    post = model.posterior(points[idx])
    for i, s in enumerate(info.slots):
        # the mean of every slot is the unconditioned mu_t (frozen within the batch)
        assert s.mean == pytest.approx(float(post.mean[i]), abs=1e-10)
        assert s.psi == pytest.approx((s.f_star - s.mean) / s.sigma_conditional, rel=1e-8)
        assert s.f_star > info.max_mean or s.resamples == 10
    assert info.slots[0].sigma == pytest.approx(info.slots[0].sigma_conditional)
    assert info.rho >= 1.0


def test_pool_samples_have_the_max_distribution():
    """f* of a slot is the max of an exact joint posterior sample (App. C redraws off)."""
    X, Y = surrogate_data(n=6)
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    points = torch.linspace(-2, 2, 25, dtype=torch.float64).unsqueeze(-1).expand(25, 2).contiguous()
    _, info = gen_ts_rsr_batch_pool(model, points, 400, torch.Generator().manual_seed(0), max_resamples=0)
    ours = torch.tensor([s.f_star for s in info.slots])
    with torch.no_grad():
        ref = model.posterior(points).rsample(torch.Size([4000])).squeeze(-1).amax(-1)
    se = math.sqrt(ours.var() / 400 + ref.var() / 4000)
    assert abs(float(ours.mean() - ref.mean())) < 4 * se


def test_resampling_rule():
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    points = torch.rand(200, 2, generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 4 - 2
    _, raw = gen_ts_rsr_batch_pool(model, points, 300, torch.Generator().manual_seed(0), max_resamples=0)
    below = sum(s.f_star <= raw.max_mean for s in raw.slots)
    assert below > 0  # the rule has something to do on this posterior
    _, info = gen_ts_rsr_batch_pool(model, points, 300, torch.Generator().manual_seed(0), max_resamples=50)
    assert all(s.f_star > info.max_mean for s in info.slots)
    assert sum(s.resamples > 0 for s in info.slots) >= below


def test_box_batch_slots_and_determinism():
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    kw = dict(num_restarts=10, raw_samples=512)
    Xb, info = gen_ts_rsr_batch_box(model, BOUNDS, X, 4, torch.Generator().manual_seed(0), **kw)
    Xb2, _ = gen_ts_rsr_batch_box(model, BOUNDS, X, 4, torch.Generator().manual_seed(0), **kw)
    assert torch.equal(Xb, Xb2)
    assert Xb.shape == (4, 2) and (Xb >= BOUNDS[0]).all() and (Xb <= BOUNDS[1]).all()
    assert len({s.f_star for s in info.slots}) == 4
    post = model.posterior(Xb)
    for i, s in enumerate(info.slots):
        assert s.f_star > info.max_mean or s.resamples == 10
        assert s.mean == pytest.approx(float(post.mean[i]), abs=1e-10)
        _, var = conditional_posterior_variance(model, Xb[i : i + 1].unsqueeze(0), Xb[:i] if i else None)
        assert s.sigma_conditional == pytest.approx(float(var.sqrt()), rel=1e-8)
        # the chosen point is no worse than random points for the slot's Psi
        cand = torch.rand(256, 1, 2, dtype=torch.float64) * 4 - 2
        m, v = conditional_posterior_variance(model, cand, Xb[:i] if i else None)
        assert s.psi <= float(((s.f_star - m) / v.sqrt()).min()) + 1e-6
    assert info.max_mean >= float(model.posterior(X).mean.max()) - 1e-12


def test_box_batch_with_the_device_search():
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    kw = dict(num_restarts=4, raw_samples=64)
    _, info_s = gen_ts_rsr_batch_box(model, BOUNDS, X, 2, torch.Generator().manual_seed(0), **kw)
    Xb, info = gen_ts_rsr_batch_box(model, BOUNDS, X, 2, torch.Generator().manual_seed(0), **kw, search="torch")
    assert Xb.shape == (2, 2) and len(info.slots) == 2
    assert (Xb >= BOUNDS[0]).all() and (Xb <= BOUNDS[1]).all()
    # the same seeds: the same max mu_t (the sample paths are multimodal: with few restarts
    # either search may stop at another local maximum of a path, so their maxima are not compared)
    assert info.max_mean == pytest.approx(info_s.max_mean, abs=1e-6)
    assert all(s.f_star > info.max_mean or s.resamples == 10 for s in info.slots)
    for i, s in enumerate(info.slots):  # each argmin is no worse than random points for its Psi
        cand = torch.rand(256, 1, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(i)) * 4 - 2
        m, v = conditional_posterior_variance(model, cand, Xb[:i] if i else None)
        assert s.psi <= float(((s.f_star - m) / v.sqrt()).min()) + 1e-6
    g = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="search must be one of"):
        gen_ts_rsr_batch_box(model, BOUNDS, X, 2, g, **kw, search="adam")
    assert torch.equal(g.get_state(), torch.Generator().manual_seed(0).get_state())

def test_bad_arguments():
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    with pytest.raises(ValueError, match="q"):
        gen_ts_rsr_batch_pool(model, X, 0, torch.Generator())
    with pytest.raises(ValueError, match="max_resamples"):
        gen_ts_rsr_batch_pool(model, X, 2, torch.Generator(), max_resamples=-1)


def test_log_form_is_a_monotone_transform_of_the_ratio():
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    Q = torch.tensor([[0.0, 0.0]], dtype=torch.float64)
    f_star = float(model.posterior(X).mean.max()) + 1.0
    Xs = torch.rand(50, 1, 2, dtype=torch.float64) * 4 - 2
    raw = RegretToSigmaRatio(model, f_star=f_star, X_pending=Q)(Xs)
    log = RegretToSigmaRatio(model, f_star=f_star, X_pending=Q, log=True)(Xs)
    assert torch.allclose(log, -torch.log(-raw), atol=1e-10)
    assert torch.equal(raw.argsort(), log.argsort())


def test_conditioned_model_option_gives_the_same_ratio():
    X, model, Q, cond = conditioned_on_three_pending()
    Xs = torch.rand(20, 1, 2, dtype=torch.float64) * 4 - 2
    f_star = float(model.posterior(X).mean.max()) + 0.5
    a = RegretToSigmaRatio(model, f_star, X_pending=Q)(Xs)
    b = RegretToSigmaRatio(model, f_star, X_pending=Q, conditioned_model=cond, predictive=False)(Xs)
    assert torch.allclose(a, b, atol=1e-8)


def test_works_on_one_candidate_of_a_candidate_model():
    from botorch_unknown_hypers.candidates import KernelCandidates
    from botorch_unknown_hypers.models.candidate_gp import CandidateGP

    X, Y = surrogate_data()
    cands = KernelCandidates.from_lengthscales(torch.tensor([0.8, 0.4], dtype=torch.float64))
    model = CandidateGP(X, Y, cands).select(1)
    Q = torch.tensor([[0.3, -0.4]], dtype=torch.float64)
    Xs = torch.rand(10, 1, 2, dtype=torch.float64) * 4 - 2
    _, var = conditional_posterior_variance(model, Xs, Q)
    assert (var < model.posterior(Xs).variance[..., 0, 0] + 1e-12).all()
    Xb, info = gen_ts_rsr_batch_box(model, BOUNDS, X, 3, torch.Generator().manual_seed(0), num_restarts=4, raw_samples=64)
    assert Xb.shape == (3, 2) and len(info.slots) == 3


def test_authors_random_point_f_star_option():
    """f_star_points=N: f* is the max of a joint sample over N random points plus argmax mu, so it
    never exceeds the continuous sample maximum in law, and it still obeys the App. C rule
    (the sampler itself is tested in test_thompson.py)."""
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    kw = dict(num_restarts=4, raw_samples=64)
    Xb, info = gen_ts_rsr_batch_box(model, BOUNDS, X, 4, torch.Generator().manual_seed(0), f_star_points=200, **kw)
    assert Xb.shape == (4, 2)
    assert all(s.f_star > info.max_mean or s.resamples == 10 for s in info.slots)
    _, cont = gen_ts_rsr_batch_box(model, BOUNDS, X, 4, torch.Generator().manual_seed(0), **kw)
    assert [s.f_star for s in info.slots] != [s.f_star for s in cont.slots]
    with pytest.raises(ValueError, match="f_star_points"):
        gen_ts_rsr_batch_box(model, BOUNDS, X, 2, torch.Generator(), f_star_points=0, **kw)


def test_argmin_start_at_the_mean_maximiser_finds_the_narrow_exploitation_basin():
    """Ackley-2D late in a run: data cluster around the optimum, f* just above max mu. The
    Psi basin around argmax mu is far narrower than the raw-sample spacing; the extra start
    finds it (Psi ~ 1) where raw-sample starts alone stay in the exploration plateau (Psi ~ 6)."""
    from botorch.test_functions import Ackley

    g = torch.Generator().manual_seed(0)
    box = torch.tensor([[-5.0, -5.0], [5.0, 5.0]], dtype=torch.float64)
    grid = torch.linspace(-4.7, 4.7, 15, dtype=torch.float64)
    X = torch.cat([torch.cartesian_prod(grid, grid), (torch.rand(30, 2, generator=g, dtype=torch.float64) - 0.5) * 0.1])
    Y = Ackley(dim=2, negate=True)(X).unsqueeze(-1)
    spec = SurrogateSpec(kernel="matern52", lengthscale=(math.log(2),), outputscale=math.log(2), noise_variance=1e-6)
    model = fixed_hyperparameter_gp(X, Y, spec)
    kw = dict(num_restarts=5, raw_samples=256, max_resamples=50)
    with_start, info = gen_ts_rsr_batch_box(model, box, X, 3, torch.Generator().manual_seed(1), **kw)
    without, info_raw = gen_ts_rsr_batch_box(
        model, box, X, 3, torch.Generator().manual_seed(1), start_at_mean_max=False, **kw
    )
    assert info.slots[0].psi < 2.0 < 3.0 < info_raw.slots[0].psi
    assert float(with_start[0].norm()) < 0.1  # slot 1 exploits next to the optimum
    assert float(without[0].norm()) > 0.3  # raw-sample starts alone miss the basin
