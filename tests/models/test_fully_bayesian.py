import pytest
import torch

import botorch_unknown_hypers.models.fitted as fitted

pytest.importorskip("numpyro")

TINY = {"warmup_steps": 24, "num_samples": 16, "thinning": 4}


def _data():
    X = torch.rand(7, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 4.0 - 2.0
    return X, torch.sin(X.sum(-1, keepdim=True))


def test_the_fully_bayesian_gp_is_a_seeded_mixture_of_its_nuts_samples():
    X, Y = _data()
    bounds = torch.tensor([[-2.0, -2.0], [2.0, 2.0]], dtype=torch.float64)
    model = fitted.fit_fully_bayesian_single_task_gp(X, Y, bounds, seed=3, **TINY)
    again = fitted.fit_fully_bayesian_single_task_gp(X, Y, bounds, seed=3, **TINY)
    assert model.num_mcmc_samples == 16 // 4
    ls = model.covar_module.lengthscale.detach()
    assert ls.shape[0] == 4 and torch.equal(ls, again.covar_module.lengthscale.detach())  # seeded
    test = torch.tensor([[0.3, -0.7]], dtype=torch.float64)
    with torch.no_grad():
        post = model.posterior(test)
        means = post.mean.reshape(-1)  # one mean per sample (BoTorch's MCMC batch)
        assert means.shape == (4,)
        assert post.mixture_mean.reshape(()) == pytest.approx(float(means.mean()), rel=1e-12)
    with pytest.raises(ValueError, match=r"budget: unknown NUTS setting\(s\) \['steps'\]"):
        fitted.fit_fully_bayesian_single_task_gp(X, Y, bounds, steps=3)
    with pytest.raises(ValueError, match="positive integers"):
        fitted.fit_fully_bayesian_single_task_gp(X, Y, bounds, thinning=0)


def test_the_fully_bayesian_peer_proposes_in_the_box_deterministically(monkeypatch):
    from botorch_unknown_hypers.domains import BoxDomain
    from botorch_unknown_hypers.integrations.peers import PEERS

    monkeypatch.setattr(fitted, "NUTS_BUDGET", TINY)
    X, Y = _data()
    box = BoxDomain(torch.tensor([[-2.0, -2.0], [2.0, 2.0]], dtype=torch.float64))
    points = []
    for _ in range(2):
        policy = PEERS["fb-qlognei"](box, seed=1, num_restarts=2, raw_samples=32)
        assert policy.name == "fb-qlognei" and policy.surrogate == "fully-bayesian"
        points.append(policy.suggest(X, Y))
        assert policy.last_label.startswith("fully-bayesian:")
    assert torch.equal(points[0], points[1]) and bool(box.contains(points[0]).all())
