"""Tests for botorch_unknown_hypers.regret_bounds (expected values computed by hand here):
information gain of a covariance and of a model, MIG rates, suspected regret and norm bounds."""

from __future__ import annotations

import copy
import math

import gpytorch
import numpy as np
import pytest
import torch
from botorch.models import SingleTaskGP

from botorch_unknown_hypers.kernels import KERNELS as KERNEL_TABLE
from botorch_unknown_hypers.regret_bounds import (
    gamma,
    gamma_matern,
    gamma_rbf,
    gpytorch_rbf_lengthscale,
    information_gain,
    information_gain_of_model,
    norm_bound,
    paper_rbf_lengthscale,
    suspected_regret_bound,
)

KERNELS = sorted(KERNEL_TABLE)


# --------------------------------------------------------------------------- #
# information gain
# --------------------------------------------------------------------------- #


def _random_psd(batch: int, n: int, rank: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    A = torch.randn(batch, n, rank, generator=gen, dtype=torch.float64)
    return A @ A.transpose(-1, -2) / rank


def test_information_gain_matches_eigenvalues_and_logdet() -> None:
    K = _random_psd(3, 7, 4, seed=0)  # rank-deficient PSD
    noise = 0.3
    out = information_gain(K, noise)
    assert out.shape == (3,) and out.dtype == torch.float64
    K_np = K.numpy()
    for i in range(3):
        eig = np.linalg.eigvalsh(K_np[i])
        by_eig = 0.5 * np.sum(np.log1p(np.clip(eig, 0, None) / noise))
        sign, logdet = np.linalg.slogdet(np.eye(7) + K_np[i] / noise)
        assert sign == 1.0
        assert float(out[i]) == pytest.approx(by_eig, rel=1e-10)
        assert float(out[i]) == pytest.approx(0.5 * logdet, rel=1e-10)


def test_information_gain_per_batch_noise_and_empty() -> None:
    K = _random_psd(3, 5, 5, seed=1)
    noise = torch.tensor([0.01, 0.1, 1.0], dtype=torch.float64)
    out = information_gain(K, noise)
    for i in range(3):
        _, logdet = np.linalg.slogdet(np.eye(5) + K[i].numpy() / float(noise[i]))
        assert float(out[i]) == pytest.approx(0.5 * logdet, rel=1e-10)
    # more noise -> less information
    same = information_gain(K[0].expand(3, 5, 5), noise)
    assert bool((same.diff() < 0).all())
    empty = information_gain(torch.zeros(3, 0, 0), 0.1)
    assert empty.shape == (3,) and bool((empty == 0).all())
    assert float(information_gain(torch.zeros(0, 0), 1.0)) == 0.0


def test_information_gain_fallback_for_indefinite_matrix() -> None:
    # eigenvalue -2 sigma^2 makes I + K / sigma^2 indefinite -> Cholesky fails
    gen = torch.Generator().manual_seed(2)
    Q, _ = torch.linalg.qr(torch.randn(4, 4, generator=gen, dtype=torch.float64))
    s2 = 0.1
    lam = torch.tensor([-2 * s2, 0.5, 1.0, 3.0], dtype=torch.float64)
    K = Q @ torch.diag(lam) @ Q.T
    expected = 0.5 * sum(math.log1p(max(v, 0.0) / s2) for v in lam.tolist())
    assert float(information_gain(K, s2)) == pytest.approx(expected, rel=1e-10)
    batch = torch.stack([K, torch.eye(4, dtype=torch.float64)])
    out = information_gain(batch, s2)
    assert float(out[0]) == pytest.approx(expected, rel=1e-10)
    assert float(out[1]) == pytest.approx(0.5 * 4 * math.log1p(1 / s2), rel=1e-10)


def test_information_gain_float32() -> None:
    K = _random_psd(2, 4, 4, seed=3).float()
    out = information_gain(K, 0.5)
    assert out.dtype == torch.float32
    ref = information_gain(K.double(), 0.5)
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5)


class _BatchGP(gpytorch.models.ExactGP):
    def __init__(self, X: torch.Tensor, Y: torch.Tensor, batch: int) -> None:
        likelihood = gpytorch.likelihoods.GaussianLikelihood(batch_shape=torch.Size([batch]))
        super().__init__(X, Y, likelihood)
        self.mean_module = gpytorch.means.ZeroMean(batch_shape=torch.Size([batch]))
        self.covar_module = gpytorch.kernels.ScaleKernel(
            gpytorch.kernels.RBFKernel(batch_shape=torch.Size([batch])),
            batch_shape=torch.Size([batch]),
        )

    def forward(self, x: torch.Tensor) -> gpytorch.distributions.MultivariateNormal:
        return gpytorch.distributions.MultivariateNormal(
            self.mean_module(x), self.covar_module(x)
        )


def _brute_rbf_ig(X: np.ndarray, ls: float, os_: float, noise: float) -> float:
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = os_ * np.exp(-sq / (2 * ls**2))
    _, logdet = np.linalg.slogdet(np.eye(len(X)) + K / noise)
    return 0.5 * logdet


def test_information_gain_of_batched_exact_gp() -> None:
    torch.manual_seed(0)
    batch, n, d = 3, 6, 2
    X = torch.rand(batch, n, d, dtype=torch.float64)
    Y = torch.randn(batch, n, dtype=torch.float64)
    model = _BatchGP(X, Y, batch).double()
    lengthscales = [0.1, 0.4, 1.5]
    outputscales = [1.0, 0.5, 2.0]
    noises = [1e-4, 1e-2, 0.3]
    model.covar_module.base_kernel.lengthscale = torch.tensor(lengthscales).view(3, 1, 1)
    model.covar_module.outputscale = torch.tensor(outputscales)
    model.likelihood.noise = torch.tensor(noises).view(3, 1)
    model.eval()
    state = copy.deepcopy(model.state_dict())
    # read back the constrained values actually in force
    lengthscales = model.covar_module.base_kernel.lengthscale.detach().view(-1).tolist()
    outputscales = model.covar_module.outputscale.detach().view(-1).tolist()
    noises = model.likelihood.noise.detach().view(-1).tolist()
    assert noises == pytest.approx([1e-4, 1e-2, 0.3], rel=1e-3)

    out = information_gain_of_model(model)
    assert out.shape == (batch,) and out.dtype == torch.float64
    assert not out.requires_grad
    for i in range(batch):
        expected = _brute_rbf_ig(X[i].numpy(), lengthscales[i], outputscales[i], noises[i])
        assert float(out[i]) == pytest.approx(expected, rel=1e-8)
    # model untouched
    assert not model.training
    for k, v in model.state_dict().items():
        torch.testing.assert_close(v, state[k])

    # explicit X, shared across the batch, and train mode preserved
    model.train()
    Xq = torch.rand(4, d, dtype=torch.float64)
    out_q = information_gain_of_model(model, Xq)
    assert model.training
    assert out_q.shape == (batch,)
    for i in range(batch):
        expected = _brute_rbf_ig(Xq.numpy(), lengthscales[i], outputscales[i], noises[i])
        assert float(out_q[i]) == pytest.approx(expected, rel=1e-8)


def test_information_gain_of_botorch_models() -> None:
    torch.manual_seed(1)
    X = torch.rand(3, 5, 2, dtype=torch.float64)
    Y = torch.randn(3, 5, 1, dtype=torch.float64)
    model = SingleTaskGP(X, Y)  # batch_shape 3, noise shape 3 x 1
    ls = model.covar_module.lengthscale.detach()  # 3 x 1 x 2 (ARD)
    noise = model.likelihood.noise.detach().squeeze(-1)
    out = information_gain_of_model(model)
    assert out.shape == (3,)
    Xt = model.train_inputs[0]
    for i in range(3):
        Z = (Xt[i] / ls[i]).numpy()
        expected = _brute_rbf_ig(Z, 1.0, 1.0, float(noise[i]))
        assert float(out[i]) == pytest.approx(expected, rel=1e-8)

    single = SingleTaskGP(X[0], Y[0])
    assert information_gain_of_model(single).shape == ()

    # fixed, heteroskedastic noise: 0.5 (logdet(K + D) - logdet D)
    yvar = torch.tensor([0.01, 0.02, 0.05, 0.1, 0.2], dtype=torch.float64).unsqueeze(-1)
    Y0 = (Y[0] - Y[0].mean()) / Y[0].std()
    fixed = SingleTaskGP(X[0], Y0, train_Yvar=yvar, outcome_transform=None)
    torch.testing.assert_close(fixed.likelihood.noise.detach(), yvar.squeeze(-1))
    K = fixed.covar_module(fixed.train_inputs[0]).to_dense().detach().numpy()
    D = np.diag(yvar.squeeze(-1).numpy())
    expected = 0.5 * (np.linalg.slogdet(K + D)[1] - np.linalg.slogdet(D)[1])
    assert float(information_gain_of_model(fixed)) == pytest.approx(expected, rel=1e-8)
    with pytest.raises(ValueError, match="X"):
        information_gain_of_model(fixed, torch.rand(3, 2, dtype=torch.float64))


# --------------------------------------------------------------------------- #
# gamma, suspected regret, norm bound
# --------------------------------------------------------------------------- #


def test_gamma_rbf_and_lengthscale_conversion() -> None:
    T, theta, d = 100.0, 0.3, 2
    assert float(gamma_rbf(T, theta, d)) == pytest.approx(
        theta ** (-d) * math.log(T) ** (d + 1), rel=1e-12
    )
    # paper exp(-r^2/theta^2) with theta = sqrt(2) l equals gpytorch exp(-r^2/(2 l^2))
    ell = 0.37
    theta_p = float(paper_rbf_lengthscale(ell))
    assert theta_p == pytest.approx(math.sqrt(2) * ell)
    kern = gpytorch.kernels.RBFKernel().double()
    kern.lengthscale = ell
    x = torch.tensor([[0.0], [0.25], [0.9]], dtype=torch.float64)
    k_gp = kern(x).to_dense().detach()
    k_paper = torch.exp(-torch.cdist(x, x) ** 2 / theta_p**2)
    torch.testing.assert_close(k_gp, k_paper)
    assert float(gpytorch_rbf_lengthscale(theta_p)) == pytest.approx(ell)


def test_gamma_matern_forms() -> None:
    T, theta, d, nu = 250.0, 0.2, 3, 2.5
    main = gamma_matern(T, theta, d, nu, form="main")
    proof = gamma_matern(T, theta, d, nu, form="proof")
    log_part = math.log(T) ** (2 * nu / (2 * nu + d))
    assert float(main) == pytest.approx(
        theta**-d * T ** (d * (d + 1) / (2 * nu + d * (d + 1))) * log_part, rel=1e-12
    )
    assert float(proof) == pytest.approx(theta**-d * T ** (d / (2 * nu + d)) * log_part, rel=1e-12)
    for name, nu_k in [("matern12", 0.5), ("matern32", 1.5), ("matern52", 2.5)]:
        torch.testing.assert_close(
            gamma(T, theta, d, name, form="proof"), gamma_matern(T, theta, d, nu_k, "proof")
        )
    torch.testing.assert_close(gamma(T, theta, d, "RBF"), gamma_rbf(T, theta, d))
    with pytest.raises(ValueError, match="form"):
        gamma_matern(T, theta, d, nu, form="printed")
    with pytest.raises(ValueError, match="kernel"):
        gamma(T, theta, d, "periodic")


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("form", ["main", "proof"])
def test_gamma_decreasing_in_lengthscale_and_broadcasts(kernel: str, form: str) -> None:
    ls = torch.tensor([0.05, 0.1, 0.2, 0.5, 1.0], dtype=torch.float64)
    values = gamma(50, ls, 2, kernel, form=form)
    assert values.shape == (5,)
    assert bool((values.diff() < 0).all())
    for i, l in enumerate(ls.tolist()):
        assert float(values[i]) == pytest.approx(float(gamma(50, l, 2, kernel, form)), rel=1e-12)
    grid = gamma(torch.tensor([[2.0], [10.0], [100.0]]), ls, 2, kernel, form)
    assert grid.shape == (3, 5) and grid.dtype == torch.float64
    assert bool((grid.diff(dim=0) > 0).all())  # increasing in T


@pytest.mark.parametrize("kernel", KERNELS)
def test_suspected_regret_bound(kernel: str) -> None:
    ls = torch.tensor([0.1, 0.3, 1.0])
    assert bool((suspected_regret_bound(1, ls, 3, kernel, B=2.0) == 0).all())
    assert float(suspected_regret_bound(1.0, 0.5, 1, kernel, 0.0)) == 0.0
    T, theta, d, B = 40.0, 0.25, 2, 3.0
    g = float(gamma(T, theta, d, kernel))
    assert float(suspected_regret_bound(T, theta, d, kernel, B)) == pytest.approx(
        math.sqrt(T) * (B * math.sqrt(g) + g), rel=1e-12
    )
    # per-candidate play counts and per-candidate norm bounds, K = 3
    counts = torch.tensor([1.0, 5.0, 20.0], dtype=torch.float64)
    Bs = norm_bound(ls.double(), 1.0, 1.0, 3)
    out = suspected_regret_bound(counts, ls.double(), 3, kernel, Bs)
    assert out.shape == (3,) and float(out[0]) == 0.0 and bool((out[1:] > 0).all())


def test_norm_bound() -> None:
    assert float(norm_bound(0.25, 1.0, 2.0, 4)) == pytest.approx((1.0 / 0.25) ** 2 * 2.0)
    assert float(norm_bound(0.7, 0.7, 3.0, 5)) == pytest.approx(3.0)
    ls = torch.tensor([1.0, 0.5, 0.1], dtype=torch.float32)
    out = norm_bound(ls, 1.0, 1.0, 3)
    assert out.dtype == torch.float32 and out.shape == (3,)
    expected = torch.tensor([(1.0 / v) ** 1.5 for v in ls.tolist()])
    torch.testing.assert_close(out, expected)


# --------------------------------------------------------------------------- #
# dtype handling
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_tensor_dtype_is_kept(dtype: torch.dtype) -> None:
    t = torch.tensor([1.0, 2.0, 30.0], dtype=dtype)
    ls = torch.tensor([0.2, 0.5, 1.0], dtype=dtype)
    results = [
        gamma_rbf(t, ls, 2),
        gamma_matern(t, ls, 2, 1.5),
        suspected_regret_bound(t, ls, 2, "matern52", 1.0),
        norm_bound(ls, 1.0, 1.0, 2),
        paper_rbf_lengthscale(ls),
    ]
    for r in results:
        assert r.dtype == dtype and r.shape == (3,)


def test_int_tensors_give_float64() -> None:
    assert gamma(torch.tensor([5, 10]), 1, 1, "rbf").dtype == torch.float64


# --------------------------------------------------------------------------- #
# validation
# --------------------------------------------------------------------------- #

BAD_CALLS = [
    ("noise_variance", lambda: information_gain(torch.eye(3), 0.0)),
    ("noise_variance", lambda: information_gain(torch.eye(3), torch.tensor([1.0, -1.0]))),
    ("covariance", lambda: information_gain(torch.ones(3, 2), 1.0)),
    ("covariance", lambda: information_gain(torch.ones(3), 1.0)),
    ("covariance", lambda: information_gain(torch.full((2, 2), float("nan")), 1.0)),
    ("T", lambda: gamma_rbf(0.5, 1.0, 1)),
    ("lengthscale", lambda: gamma_rbf(10, 0.0, 1)),
    ("lengthscale", lambda: gamma_rbf(10, torch.tensor([0.5, -0.1]), 1)),
    ("dim", lambda: gamma_rbf(10, 1.0, 0)),
    ("T", lambda: gamma_matern(0, 1.0, 1, 2.5)),
    ("lengthscale", lambda: gamma_matern(10, -1.0, 1, 2.5)),
    ("nu", lambda: gamma_matern(10, 1.0, 1, 0.0)),
    ("form", lambda: gamma(10, 1.0, 1, "matern52", form="other")),
    ("kernel", lambda: gamma(10, 1.0, 1, "matern72")),
    ("B", lambda: suspected_regret_bound(10, 1.0, 1, "rbf", -1.0)),
    ("T", lambda: suspected_regret_bound(0, 1.0, 1, "rbf", 1.0)),
    ("lengthscale", lambda: norm_bound(0.0, 1.0, 1.0, 2)),
    ("theta0", lambda: norm_bound(0.5, -1.0, 1.0, 2)),
    ("N", lambda: norm_bound(0.5, 1.0, -1.0, 2)),
    ("dim", lambda: norm_bound(0.5, 1.0, 1.0, -2)),
    ("gpytorch_lengthscale", lambda: paper_rbf_lengthscale(0.0)),
    ("broadcast", lambda: gamma(torch.ones(3) * 5, torch.ones(2), 1, "rbf")),
    ("nu", lambda: gamma_matern(5.0, 0.5, 2, 0.0)),
    ("nu", lambda: gamma_matern(5.0, 0.5, 2, True)),
    ("nu", lambda: gamma_matern(5.0, 0.5, 2, float("nan"))),
    ("nu", lambda: gamma_matern(5.0, 0.5, 2, "2.5")),
    ("kernel", lambda: gamma(5.0, 0.5, 2, 52)),
    ("kernel", lambda: gamma(5.0, 0.5, 2, ["rbf"])),
    ("form", lambda: gamma(5.0, 0.5, 2, "matern52", form="Main")),
    ("form", lambda: gamma(5.0, 0.5, 2, "rbf", form=None)),
]


@pytest.mark.parametrize("name,call", BAD_CALLS, ids=[f"{i}-{n}" for i, (n, _) in enumerate(BAD_CALLS)])
def test_bad_inputs_raise_value_error_naming_argument(name: str, call) -> None:
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


def test_model_without_covar_module_raises() -> None:
    with pytest.raises(ValueError, match="covar_module"):
        information_gain_of_model(object())


def test_suspected_regret_bound_checks_every_argument_in_one_read(monkeypatch):
    from botorch_unknown_hypers.regret_bounds import suspected_regret_bound
    from tests.host_reads import record_reads

    T = torch.tensor([1.0, 3.0, 7.0], dtype=torch.float64)
    theta = torch.tensor([0.5, 0.2, 0.1], dtype=torch.float64)
    B = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64)
    reads = record_reads(monkeypatch)
    values = [suspected_regret_bound(T, theta, 2, kernel, B) for kernel in ("rbf", "matern52")]
    assert reads == ["__bool__"] * 2  # one per bound: B's check joins the rate's
    monkeypatch.undo()
    for kernel, value in zip(("rbf", "matern52"), values):
        g = gamma(T, theta, 2, kernel)
        torch.testing.assert_close(value, torch.sqrt(T) * (B * torch.sqrt(g) + g), rtol=0, atol=0)
    with pytest.raises(ValueError, match="B must be"):
        suspected_regret_bound(T, theta, 2, "rbf", -B)
    with pytest.raises(ValueError, match="lengthscale must be"):
        suspected_regret_bound(T, -theta, 2, "matern32", B)


def test_unchecked_suspected_regret_bound_reads_nothing_and_equals_the_checked_one(monkeypatch):
    from botorch_unknown_hypers.regret_bounds import suspected_regret_bound
    from tests.host_reads import record_reads

    T = torch.tensor([1.0, 3.0, 7.0], dtype=torch.float64)
    theta = torch.tensor([0.5, 0.2, 0.1], dtype=torch.float64)
    B = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64)
    reads = record_reads(monkeypatch)
    values = [suspected_regret_bound(T, theta, 2, kernel, B, checked=False) for kernel in ("rbf", "matern52")]
    assert reads == []
    monkeypatch.undo()
    for kernel, value in zip(("rbf", "matern52"), values):
        torch.testing.assert_close(value, suspected_regret_bound(T, theta, 2, kernel, B), rtol=0, atol=0)
