import pytest
import torch
from botorch.models import ModelListGP, SingleTaskGP
from botorch.models.transforms import Log, Normalize, Standardize
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel
from gpytorch.likelihoods import FixedNoiseGaussianLikelihood
from gpytorch.means import ConstantMean, ZeroMean

from botorch_unknown_hypers.acquisition.ts_rsr import RegretToSigmaRatio
from botorch_unknown_hypers.acquisition.pending import conditional_posterior_variance
from botorch_unknown_hypers.models.cached_predictive import CachedExactPredictive
from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp

DTYPES = [torch.float64, torch.float32]


def _data(dtype, n=30, d=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = (torch.rand(n, d, generator=g, dtype=torch.float64) * 4 - 1).to(dtype)
    Y = 3.0 + 2.0 * torch.sin(2 * X).sum(-1, keepdim=True)
    return X, Y


def _models(X, Y):
    """The model shapes the predictive supports: the paper surrogate, BoTorch's default
    SingleTaskGP with Normalize + Standardize, and a transform-free GP with a constant mean."""
    fixed = fixed_hyperparameter_gp(X, Y, SurrogateSpec(kernel="matern52", lengthscale=(0.5,), noise_variance=1e-4))
    default = SingleTaskGP(X, Y, input_transform=Normalize(X.shape[-1]), outcome_transform=Standardize(1))
    default.covar_module.lengthscale = 0.3
    default.likelihood.noise = 1e-3
    plain = SingleTaskGP(
        X, Y, covar_module=ScaleKernel(RBFKernel(ard_num_dims=X.shape[-1])), mean_module=ConstantMean(), outcome_transform=None
    )
    plain.mean_module.constant = 2.5
    plain.likelihood.noise = 1e-2
    return {"fixed": fixed, "default": default.eval(), "plain": plain.eval()}


@pytest.mark.parametrize("dtype", DTYPES)
def test_matches_the_model_posterior(dtype):
    X, Y = _data(dtype)
    Xs = torch.rand(11, 1, X.shape[-1], dtype=dtype) * 4 - 1
    tol = dict(rtol=1e-9, atol=1e-9) if dtype == torch.float64 else dict(rtol=2e-3, atol=2e-3)
    for name, model in _models(X, Y).items():
        pred = CachedExactPredictive.from_model(model)
        assert pred is not None, name
        mean, var = pred.mean_and_variance(Xs)
        post = model.posterior(Xs)
        torch.testing.assert_close(mean, post.mean[..., 0, 0], **tol)
        torch.testing.assert_close(var, post.variance[..., 0, 0], **tol)
        assert mean.dtype == dtype and mean.shape == (11,)


def test_conditioned_variance_equals_brute_force_gp_that_observed_pending_points():
    X, Y = _data(torch.float64)
    Q = torch.tensor([[0.1, 0.2, 0.0], [0.5, -0.3, 1.0], [0.1, 0.25, 0.0]], dtype=torch.float64)
    Xs = torch.rand(25, 1, 3, dtype=torch.float64) * 4 - 1
    for name, model in _models(X, Y).items():
        pred = CachedExactPredictive.from_model(model).condition(Q)
        mean, var = pred.mean_and_variance(Xs)
        # Brute force in the model's own space: dense kernel matrices and a linear solve.
        Xt, Qt, St = model.transform_inputs(X), model.transform_inputs(Q), model.transform_inputs(Xs.squeeze(1))
        A = torch.cat([Xt, Qt])
        with torch.no_grad():
            K = model.covar_module(A).to_dense() + model.likelihood.noise * torch.eye(A.shape[0], dtype=A.dtype)
            k = model.covar_module(St, A).to_dense()
            kss = model.covar_module(St, diag=True)
        brute = kss - (k * torch.linalg.solve(K, k.T).T).sum(-1)
        scale = model.outcome_transform.stdvs.reshape(()) ** 2 if getattr(model, "outcome_transform", None) else 1.0
        torch.testing.assert_close(var, (brute * scale).detach(), rtol=0, atol=1e-8, msg=name)
        # The mean is not conditioned (mu_t stays frozen in the batch).
        torch.testing.assert_close(mean, model.posterior(Xs).mean[..., 0, 0], rtol=0, atol=1e-9)


def test_gradients_match_the_botorch_posterior_path():
    X, Y = _data(torch.float64)
    Q = X[:2] + 0.05
    for model in _models(X, Y).values():
        pred = CachedExactPredictive.from_model(model).condition(Q)
        Xa = (torch.rand(6, 1, 3, dtype=torch.float64) * 4 - 1).requires_grad_(True)
        Xb = Xa.detach().clone().requires_grad_(True)
        m1, v1 = pred.mean_and_variance(Xa)
        m2, v2 = conditional_posterior_variance(model, Xb, Q)
        (m1 + v1.sqrt()).sum().backward()
        (m2 + v2.sqrt()).sum().backward()
        torch.testing.assert_close(Xa.grad, Xb.grad, rtol=1e-7, atol=1e-9)


def test_condition_replaces_pending_and_leaves_the_original_unchanged():
    X, Y = _data(torch.float64)
    model = _models(X, Y)["fixed"]
    pred = CachedExactPredictive.from_model(model)
    Xs = torch.rand(5, 1, 3, dtype=torch.float64)
    before = pred.mean_and_variance(Xs)[1]
    one = pred.condition(Xs[0])
    assert one.pending.shape == (1, 3) and pred.pending.shape == (0, 3)
    torch.testing.assert_close(pred.mean_and_variance(Xs)[1], before, rtol=0, atol=0)
    # conditioning on [a] then on [b] replaces, it does not accumulate
    torch.testing.assert_close(
        one.condition(Xs[1]).mean_and_variance(Xs)[1], pred.condition(Xs[1]).mean_and_variance(Xs)[1]
    )
    assert one.mean_and_variance(Xs[:1])[1] < before[0]  # observing x shrinks sigma(x)
    assert float(pred.condition(None).mean_and_variance(Xs)[1][0]) == pytest.approx(float(before[0]))


def test_unsupported_models_return_none_with_a_reason():
    X, Y = _data(torch.float64)
    fixed = _models(X, Y)["fixed"]
    two = SingleTaskGP(X, torch.cat([Y, -Y], dim=-1)).eval()
    batched = SingleTaskGP(X.expand(2, *X.shape), Y.expand(2, *Y.shape)).eval()
    fixed_noise = SingleTaskGP(X, Y, train_Yvar=torch.full_like(Y, 1e-3)).eval()
    logged = SingleTaskGP(X, Y.exp(), outcome_transform=Log()).eval()
    training = SingleTaskGP(X, Y).train()
    cases = {
        "more than one output": two,
        "batch dimensions": batched,
        "homoskedastic": fixed_noise,
        "outcome transform": logged,
        "train mode": training,
        "exact GPyTorch": ModelListGP(fixed, fixed),
    }
    for match, model in cases.items():
        assert CachedExactPredictive.from_model(model) is None
        assert match in CachedExactPredictive.unsupported_reason(model)
        with pytest.raises(ValueError, match="not supported"):
            CachedExactPredictive(model)
    assert isinstance(fixed_noise.likelihood, FixedNoiseGaussianLikelihood)


def test_bad_shapes():
    X, Y = _data(torch.float64)
    pred = CachedExactPredictive.from_model(_models(X, Y)["fixed"])
    with pytest.raises(ValueError, match="X_pending must be p x 3"):
        pred.condition(torch.zeros(2, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="batch_shape x 1 x d"):
        pred.mean_and_variance(torch.zeros(4, 2, 3, dtype=torch.float64))


def test_acquisition_uses_it_and_agrees_with_the_posterior_paths():
    X, Y = _data(torch.float64)
    Q = X[:3] * 0.9
    Xs = torch.rand(40, 1, 3, dtype=torch.float64) * 4 - 1
    for model in _models(X, Y).values():
        f_star = float(model.posterior(X).mean.max()) + 0.5
        fast = RegretToSigmaRatio(model, f_star, X_pending=Q, log=True)
        slow = RegretToSigmaRatio(model, f_star, X_pending=Q, log=True, predictive=False)
        assert fast.uses_cached_predictive and not slow.uses_cached_predictive
        torch.testing.assert_close(fast(Xs), slow(Xs), rtol=1e-8, atol=1e-8)
        fast.set_X_pending(None)  # resetting the pending points resets the conditioning
        slow.set_X_pending(None)
        torch.testing.assert_close(fast(Xs), slow(Xs), rtol=1e-8, atol=1e-8)
    other = _models(X, Y)["plain"]
    with pytest.raises(ValueError, match="same model"):
        RegretToSigmaRatio(_models(X, Y)["fixed"], 1.0, predictive=CachedExactPredictive.from_model(other))
    with pytest.raises(ValueError, match="predictive must be"):
        RegretToSigmaRatio(other, 1.0, predictive="yes")


def test_a_kernel_without_scale_and_matern_ard():
    X, Y = _data(torch.float64)
    model = SingleTaskGP(X, Y, covar_module=MaternKernel(nu=1.5, ard_num_dims=3), mean_module=ZeroMean()).eval()
    pred = CachedExactPredictive.from_model(model)
    Xs = torch.rand(9, 1, 3, dtype=torch.float64)
    mean, var = pred.mean_and_variance(Xs)
    post = model.posterior(Xs)
    torch.testing.assert_close(mean, post.mean[..., 0, 0], rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(var, post.variance[..., 0, 0], rtol=1e-9, atol=1e-9)


def test_pending_points_extend_the_training_factor_by_a_block_update():
    # the extended factor is the factor of [X; P] (a fresh factorisation), repeated pending points included
    X, Y = _data(torch.float64, n=40)
    model = _models(X, Y)["default"]
    pred = CachedExactPredictive.from_model(model)
    P = torch.rand(6, 3, dtype=torch.float64) * 4 - 1
    P[3] = P[1]
    cond = pred.condition(P)
    X_all = torch.cat([model.transform_inputs(X), model.transform_inputs(P)])
    fresh = torch.linalg.cholesky(model.covar_module(X_all).to_dense() + model.likelihood.noise * torch.eye(46, dtype=torch.float64))
    torch.testing.assert_close(cond._chol, fresh, rtol=1e-9, atol=1e-9)
    assert cond._chol_train is pred._chol_train  # the training factor is shared, not recomputed
