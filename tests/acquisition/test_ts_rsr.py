import math

import pytest
import torch
from botorch.models import SingleTaskGP
from gpytorch.kernels import MaternKernel, ScaleKernel
from gpytorch.means import ZeroMean

from botorch_unknown_hypers.acquisition.ts_rsr import RegretToSigmaRatio, gen_ts_rsr_batch_box, gen_ts_rsr_batch_pool
from botorch_unknown_hypers.acquisition.pending import conditional_posterior_variance, observation_noise_variance
from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp

SPEC = SurrogateSpec(kernel="matern52", lengthscale=(0.6,), outputscale=1.0, noise_variance=1e-4)
BOUNDS = torch.tensor([[-2.0, -2.0], [2.0, 2.0]], dtype=torch.float64)


def _data(n=15, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 2, generator=g, dtype=torch.float64) * 4 - 2
    Y = 2.0 + 4.0 * torch.sin(2 * X[:, :1]) * torch.cos(X[:, 1:])
    return X, Y


def _gp_without_transform(X, Y, noise):
    covar = ScaleKernel(MaternKernel(nu=2.5))
    model = SingleTaskGP(X, Y, covar_module=covar, mean_module=ZeroMean(), outcome_transform=None)
    covar.base_kernel.lengthscale = 0.6
    covar.outputscale = 1.0
    model.likelihood.noise = noise
    return model.eval()


def test_conditional_variance_equals_gp_that_observed_pending_points():
    X, Y = _data()
    Q = torch.tensor([[0.1, 0.2], [0.5, -0.3], [0.1, 0.25]], dtype=torch.float64)
    Xs = torch.rand(20, 1, 2, dtype=torch.float64) * 4 - 2
    # Without an outcome transform: a brute-force GP on X u Q (values irrelevant).
    model = _gp_without_transform(X, Y, 1e-4)
    mean, var = conditional_posterior_variance(model, Xs, Q)
    brute = _gp_without_transform(torch.cat([X, Q]), torch.cat([Y, torch.zeros(3, 1, dtype=X.dtype)]), 1e-4)
    assert torch.allclose(var, brute.posterior(Xs).variance[..., 0, 0], atol=1e-8)
    assert torch.allclose(mean, model.posterior(Xs).mean[..., 0, 0], atol=1e-12)  # mean not conditioned
    # With Standardize (the paper surrogate): the same in standardised units times sd(y)^2.
    fixed = fixed_hyperparameter_gp(X, Y, SPEC)
    _, var_f = conditional_posterior_variance(fixed, Xs, Q)
    assert torch.allclose(var_f, Y.std() ** 2 * brute.posterior(Xs).variance[..., 0, 0], atol=1e-8)
    noise = observation_noise_variance(fixed, Q)
    assert torch.allclose(noise, Y.std() ** 2 * 1e-4 * torch.ones(3, dtype=X.dtype), rtol=1e-8)


def test_repeated_pending_point_keeps_variance_positive():
    X, Y = _data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    x = torch.tensor([[[0.3, 0.3]]], dtype=torch.float64)
    _, var = conditional_posterior_variance(model, x, x[0].expand(2, 2))
    assert float(var) > 0


def test_acquisition_value_is_negative_ratio():
    X, Y = _data()
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
    X, Y = _data()
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
    X, Y = _data(n=6)
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    points = torch.linspace(-2, 2, 25, dtype=torch.float64).unsqueeze(-1).expand(25, 2).contiguous()
    _, info = gen_ts_rsr_batch_pool(model, points, 400, torch.Generator().manual_seed(0), max_resamples=0)
    ours = torch.tensor([s.f_star for s in info.slots])
    with torch.no_grad():
        ref = model.posterior(points).rsample(torch.Size([4000])).squeeze(-1).amax(-1)
    se = math.sqrt(ours.var() / 400 + ref.var() / 4000)
    assert abs(float(ours.mean() - ref.mean())) < 4 * se


def test_resampling_rule():
    X, Y = _data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    points = torch.rand(200, 2, generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 4 - 2
    _, raw = gen_ts_rsr_batch_pool(model, points, 300, torch.Generator().manual_seed(0), max_resamples=0)
    below = sum(s.f_star <= raw.max_mean for s in raw.slots)
    assert below > 0  # the rule has something to do on this posterior
    _, info = gen_ts_rsr_batch_pool(model, points, 300, torch.Generator().manual_seed(0), max_resamples=50)
    assert all(s.f_star > info.max_mean for s in info.slots)
    assert sum(s.resamples > 0 for s in info.slots) >= below


def test_box_batch_slots_and_determinism():
    X, Y = _data()
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


def test_bad_arguments():
    X, Y = _data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    with pytest.raises(ValueError, match="q"):
        gen_ts_rsr_batch_pool(model, X, 0, torch.Generator())
    with pytest.raises(ValueError, match="max_resamples"):
        gen_ts_rsr_batch_pool(model, X, 2, torch.Generator(), max_resamples=-1)
    with pytest.raises(ValueError, match="batch_shape x 1 x d"):
        conditional_posterior_variance(model, X.unsqueeze(0), None)


def test_log_form_is_a_monotone_transform_of_the_ratio():
    X, Y = _data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    Q = torch.tensor([[0.0, 0.0]], dtype=torch.float64)
    f_star = float(model.posterior(X).mean.max()) + 1.0
    Xs = torch.rand(50, 1, 2, dtype=torch.float64) * 4 - 2
    raw = RegretToSigmaRatio(model, f_star=f_star, X_pending=Q)(Xs)
    log = RegretToSigmaRatio(model, f_star=f_star, X_pending=Q, log=True)(Xs)
    assert torch.allclose(log, -torch.log(-raw), atol=1e-10)
    assert torch.equal(raw.argsort(), log.argsort())


def test_rank_one_conditioned_model_gives_the_conditional_variance():
    from botorch_unknown_hypers.acquisition.pending import condition_on_pending

    X, Y = _data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    Q = torch.tensor([[0.1, 0.2], [0.5, -0.3], [0.1, 0.25]], dtype=torch.float64)
    model.posterior(X[:1])
    cond = model
    for i in range(3):
        cond = condition_on_pending(cond, Q[i : i + 1])
    Xs = torch.rand(20, 1, 2, dtype=torch.float64) * 4 - 2
    _, var = conditional_posterior_variance(model, Xs, Q)
    assert torch.allclose(cond.posterior(Xs).variance[..., 0, 0], var, atol=1e-8)
    f_star = float(model.posterior(X).mean.max()) + 0.5
    a = RegretToSigmaRatio(model, f_star, X_pending=Q)(Xs)
    b = RegretToSigmaRatio(model, f_star, X_pending=Q, conditioned_model=cond, predictive=False)(Xs)
    assert torch.allclose(a, b, atol=1e-8)


def test_conditioned_model_keeps_the_mean_frozen():
    from botorch_unknown_hypers.acquisition.pending import condition_on_pending

    X, Y = _data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    model.posterior(X[:1])
    cond = condition_on_pending(condition_on_pending(model, X[:1] * 0.5), X[1:2] * 0.5)
    Xs = torch.rand(30, 1, 2, dtype=torch.float64) * 4 - 2
    assert torch.allclose(cond.posterior(Xs).mean, model.posterior(Xs).mean, atol=1e-8)


def test_works_on_one_candidate_of_a_candidate_model():
    from botorch_unknown_hypers.candidates import KernelCandidates
    from botorch_unknown_hypers.models.candidate_gp import CandidateGP

    X, Y = _data()
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
    never exceeds the continuous sample maximum in law, and it still obeys the App. C rule."""
    from botorch_unknown_hypers.acquisition.thompson import max_posterior_mean_box, random_point_sampler

    X, Y = _data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    max_mean, x_best = max_posterior_mean_box(model, BOUNDS, X, 5, 128, 0)
    assert x_best.shape == (1, 2)
    assert float(model.posterior(x_best).mean) == pytest.approx(max_mean, abs=1e-9)
    g = torch.Generator().manual_seed(0)
    few = random_point_sampler(model, BOUNDS, 5, x_best, g).draw(300, g).amax(dim=0)
    many = random_point_sampler(model, BOUNDS, 1000, x_best, g).draw(300, g).amax(dim=0)
    assert few.shape == (300,) and few.mean() < many.mean()  # more points, larger maxima
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
