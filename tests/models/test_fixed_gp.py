import math

import pytest
import torch

from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp


def _data(n=12, d=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, d, generator=g, dtype=torch.float64) * 4 - 2
    Y = 5.0 + 3.0 * torch.sin(X.sum(-1, keepdim=True))
    return X, Y


def _matern52(A, B, ls):
    r = torch.cdist(A / ls, B / ls)
    s5 = math.sqrt(5.0) * r
    return (1 + s5 + s5**2 / 3) * torch.exp(-s5)


def test_posterior_matches_closed_form_in_original_units():
    X, Y = _data()
    spec = SurrogateSpec(kernel="matern52", lengthscale=(0.7,), outputscale=0.5, noise_variance=1e-4)
    model = fixed_hyperparameter_gp(X, Y, spec)
    Xs = torch.rand(7, 2, dtype=torch.float64)
    post = model.posterior(Xs)
    ybar, sd = Y.mean(), Y.std()
    Z = (Y - ybar) / sd
    K = 0.5 * _matern52(X, X, 0.7) + 1e-4 * torch.eye(len(X), dtype=X.dtype)
    k = 0.5 * _matern52(Xs, X, 0.7)
    mean = ybar + sd * (k @ torch.linalg.solve(K, Z)).squeeze(-1)
    var = sd**2 * (0.5 - (k * torch.linalg.solve(K, k.T).T).sum(-1))
    assert torch.allclose(post.mean.squeeze(-1), mean, atol=1e-8)
    assert torch.allclose(post.variance.squeeze(-1), var, atol=1e-8)


def test_ard_and_rbf_and_no_trainable_parameters():
    X, Y = _data(d=3)
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec.from_dict({"kernel": "rbf", "lengthscale": [0.1, 0.2, 0.3], "outputscale": 10.0}))
    ls = model.covar_module.base_kernel.lengthscale.flatten().tolist()
    assert ls == pytest.approx([0.1, 0.2, 0.3])
    assert float(model.covar_module.outputscale) == pytest.approx(10.0)
    assert float(model.likelihood.noise) == pytest.approx(1e-6)
    assert not any(p.requires_grad for p in model.parameters())


@pytest.mark.parametrize(
    "spec, match",
    [
        ({"kernel": "matern99"}, "kernel"),
        ({"lengthscale": -1.0}, "lengthscale"),
        ({"outputscale": 0.0}, "outputscale"),
        ({"noise_variance": float("nan")}, "noise_variance"),
        ({"foo": 1}, "unknown keys"),
    ],
)
def test_bad_specs_raise(spec, match):
    with pytest.raises(ValueError, match=match):
        SurrogateSpec.from_dict(spec)


def test_spec_dict_round_trip_and_wrong_ard_length():
    spec = SurrogateSpec.from_dict({"kernel": "matern52", "lengthscale": [0.2, 0.3]})
    assert SurrogateSpec.from_dict(spec.to_dict()) == spec
    X, Y = _data(d=3)
    with pytest.raises(ValueError, match="lengthscale"):
        fixed_hyperparameter_gp(X, Y, spec)
