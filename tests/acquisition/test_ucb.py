"""Tests for botorch_unknown_hypers.acquisition.ucb (expected values computed here)."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.acquisition import UpperConfidenceBound
from botorch.models.transforms.outcome import Standardize
from botorch.optim import optimize_acqf

from botorch_unknown_hypers.acquisition.ucb import REDUCTIONS, CandidateUCB, as_beta
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.candidate_gp import CandidateGP

DTYPES = [torch.float32, torch.float64]
DEVICES = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
BETA = [0.5, 2.0, 1.0, 3.0]


def _tol(dtype):
    return dict(rtol=1e-9, atol=1e-12) if dtype == torch.float64 else dict(rtol=1e-4, atol=1e-4)


def matern52_posterior(train_X, train_y, X, lengthscale, outputscale, noise):
    r"""Exact Matern-5/2 GP posterior mean / variance in float64, written out by hand."""
    train_X, train_y, X = train_X.double(), train_y.double().reshape(-1), X.double()

    def kernel(A, B):
        r = ((A.unsqueeze(-2) - B.unsqueeze(-3)) / lengthscale).pow(2).sum(-1).sqrt()
        s = math.sqrt(5.0) * r
        return outputscale * (1.0 + s + 5.0 * r**2 / 3.0) * torch.exp(-s)

    K_train = kernel(train_X, train_X) + noise * torch.eye(len(train_X), dtype=torch.float64)
    K_cross = kernel(train_X, X)
    mean = K_cross.transpose(0, 1) @ torch.linalg.solve(K_train, train_y)
    variance = outputscale - (K_cross * torch.linalg.solve(K_train, K_cross)).sum(0)
    return mean, variance


def make_model(dtype=torch.float64, device="cpu", **kwargs):
    generator = torch.Generator().manual_seed(3)
    train_X = torch.rand(15, 2, generator=generator, dtype=torch.float64)
    train_Y = torch.cos(4.0 * train_X).prod(-1, keepdim=True)
    cands = KernelCandidates(
        lengthscale=torch.tensor([0.1, 0.25, 0.5, 1.0], dtype=torch.float64),
        outputscale=torch.tensor([1.0, 0.5, 2.0, 1.5], dtype=torch.float64),
        noise=torch.tensor([1e-4, 1e-3, 1e-2, 1e-4], dtype=torch.float64),
        kernel="matern52",
    )
    model = CandidateGP(train_X.to(device, dtype), train_Y.to(device, dtype), cands, **kwargs)
    return model, cands, train_X, train_Y


def brute_force_values(cands, train_X, train_Y, X, beta):
    r"""``batch x K`` UCB values for ``batch x d`` points, per candidate by hand."""
    columns = []
    for k in range(len(cands)):
        mean, variance = matern52_posterior(
            train_X,
            train_Y,
            X,
            cands.lengthscale[k].double(),
            float(cands.outputscale[k]),
            float(cands.noise[k]),
        )
        columns.append(mean + beta[k] * variance.sqrt())
    return torch.stack(columns, dim=-1)


def points(n, dtype=torch.float64, device="cpu", seed=11):
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(n, 2, generator=generator, dtype=torch.float64).to(device, dtype)


# --------------------------------------------------------------------------- #
# Values and reductions
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
class TestReductions:
    def test_candidate_values(self, dtype, device):
        model, cands, train_X, train_Y = make_model(dtype, device)
        beta = torch.tensor(BETA, dtype=dtype, device=device)
        acqf = CandidateUCB(model, beta=beta, reduction="max")
        X = points(6, dtype, device)
        values = acqf.candidate_values(X)
        assert values.shape == (6, 4)
        assert values.dtype == dtype and values.device.type == device.type
        expected = brute_force_values(cands, train_X, train_Y, X.cpu(), BETA)
        torch.testing.assert_close(values.cpu().double(), expected, **_tol(dtype))
        # Arbitrary batch shapes are kept: 2 x 3 x d -> 2 x 3 x K.
        batched = acqf.candidate_values(X.reshape(2, 3, 2))
        torch.testing.assert_close(batched, values.reshape(2, 3, 4), **_tol(dtype))

    def test_max(self, dtype, device):
        model, cands, train_X, train_Y = make_model(dtype, device)
        acqf = CandidateUCB(model, beta=torch.tensor(BETA), reduction="max")
        X = points(8, dtype, device).unsqueeze(-2)  # 8 x 1 x d
        values = acqf(X)
        assert values.shape == (8,)
        expected = brute_force_values(cands, train_X, train_Y, X[:, 0].cpu(), BETA).max(-1).values
        torch.testing.assert_close(values.cpu().double(), expected, **_tol(dtype))

    def test_weighted(self, dtype, device):
        model, cands, train_X, train_Y = make_model(dtype, device)
        weights = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64)
        acqf = CandidateUCB(model, beta=torch.tensor(BETA), reduction="weighted", weights=weights)
        X = points(8, dtype, device).unsqueeze(-2)
        values = acqf(X)
        assert values.shape == (8,)
        expected = brute_force_values(cands, train_X, train_Y, X[:, 0].cpu(), BETA) @ weights
        torch.testing.assert_close(values.cpu().double(), expected, **_tol(dtype))

    @pytest.mark.parametrize("index", [0, 2, 3])
    def test_select(self, dtype, device, index):
        model, cands, train_X, train_Y = make_model(dtype, device)
        acqf = CandidateUCB(model, beta=torch.tensor(BETA), reduction="select", index=index)
        X = points(8, dtype, device).unsqueeze(-2)
        values = acqf(X)
        assert values.shape == (8,)
        assert acqf.candidate_values(X[:, 0]).shape == (8, 1)
        expected = brute_force_values(cands, train_X, train_Y, X[:, 0].cpu(), BETA)[:, index]
        torch.testing.assert_close(values.cpu().double(), expected, **_tol(dtype))
        botorch_ucb = UpperConfidenceBound(model.select(index), beta=BETA[index] ** 2)
        torch.testing.assert_close(values, botorch_ucb(X), **_tol(dtype))

    def test_scalar_beta(self, dtype, device):
        model, cands, train_X, train_Y = make_model(dtype, device)
        acqf = CandidateUCB(model, beta=1.5, reduction="max")
        X = points(5, dtype, device)
        expected = brute_force_values(cands, train_X, train_Y, X.cpu(), [1.5] * 4)
        torch.testing.assert_close(acqf.candidate_values(X).cpu().double(), expected, **_tol(dtype))
        assert acqf.beta.shape == (4,) and acqf.beta.dtype == dtype


def test_select_matches_botorch_with_outcome_transform():
    model, _, _, _ = make_model(outcome_transform=Standardize(m=1))
    X = points(10).unsqueeze(-2)
    for index in range(4):
        acqf = CandidateUCB(model, beta=torch.tensor(BETA), reduction="select", index=index)
        botorch_ucb = UpperConfidenceBound(model.select(index), beta=BETA[index] ** 2)
        torch.testing.assert_close(acqf(X), botorch_ucb(X), rtol=1e-9, atol=1e-12)


def test_max_and_weighted_consistent_with_candidate_values():
    model, _, _, _ = make_model()
    beta = torch.tensor(BETA)
    X = points(7).unsqueeze(-2)
    values = CandidateUCB(model, beta=beta).candidate_values(X[:, 0])
    onehot = torch.tensor([0.0, 0.0, 1.0, 0.0], dtype=torch.float64)
    weighted = CandidateUCB(model, beta=beta, reduction="weighted", weights=onehot)
    torch.testing.assert_close(weighted(X), values[:, 2], rtol=1e-12, atol=1e-12)
    assert CandidateUCB(model, beta=beta).reduction == "max"
    torch.testing.assert_close(CandidateUCB(model, beta=beta)(X), values.max(-1).values)


def test_beta_zero_is_posterior_mean():
    model, _, _, _ = make_model()
    X = points(5)
    acqf = CandidateUCB(model, beta=0.0)
    mean, _ = model.marginal_mean_variance(X.unsqueeze(0))
    torch.testing.assert_close(acqf.candidate_values(X), mean.transpose(0, 1), rtol=1e-12, atol=0.0)


def test_gradients_flow():
    model, _, _, _ = make_model()
    X = points(4).unsqueeze(-2).requires_grad_(True)
    CandidateUCB(model, beta=torch.tensor(BETA), reduction="max")(X).sum().backward()
    assert X.grad is not None and torch.isfinite(X.grad).all() and X.grad.abs().sum() > 0


# --------------------------------------------------------------------------- #
# Invalid arguments
# --------------------------------------------------------------------------- #


class TestInvalid:
    @pytest.mark.parametrize("reduction", ["mean", "sum", "", "MAX"])
    def test_reduction(self, reduction):
        model, _, _, _ = make_model()
        with pytest.raises(ValueError, match="reduction"):
            CandidateUCB(model, beta=1.0, reduction=reduction)

    @pytest.mark.parametrize("index", [None, 4, -1, 10])
    def test_index(self, index):
        model, _, _, _ = make_model()
        with pytest.raises(ValueError, match="index"):
            CandidateUCB(model, beta=1.0, reduction="select", index=index)

    @pytest.mark.parametrize(
        "weights",
        [
            None,
            torch.tensor([0.5, 0.5]),
            torch.tensor([0.5, 0.5, 0.5, 0.5]),
            torch.tensor([1.5, -0.5, 0.0, 0.0]),
            torch.tensor([math.nan, 0.5, 0.25, 0.25]),
            torch.full((2, 2), 0.25),
        ],
    )
    def test_weights(self, weights):
        model, _, _, _ = make_model()
        with pytest.raises(ValueError, match="weights"):
            CandidateUCB(model, beta=1.0, reduction="weighted", weights=weights)

    @pytest.mark.parametrize(
        "beta",
        [
            -1.0,
            math.nan,
            math.inf,
            torch.tensor([1.0, 2.0]),
            torch.tensor([1.0, 2.0, 3.0, -1.0]),
            torch.ones(2, 2),
        ],
    )
    def test_beta(self, beta):
        model, _, _, _ = make_model()
        for reduction, extra in (("max", {}), ("select", {"index": 0})):
            with pytest.raises(ValueError, match="beta"):
                CandidateUCB(model, beta=beta, reduction=reduction, **extra)

    def test_as_beta(self):
        like = torch.zeros(1, dtype=torch.float32)
        out = as_beta(2.0, 3, like)
        assert out.shape == (3,) and out.dtype == torch.float32
        assert torch.equal(out, torch.full((3,), 2.0))
        with pytest.raises(ValueError, match="beta"):
            as_beta(torch.ones(4), 3, like)

    def test_as_beta_checks_a_python_number_on_the_host_for_float64(self, monkeypatch):
        from tests.host_reads import record_reads

        like = torch.zeros(1, dtype=torch.float64)
        reads = record_reads(monkeypatch)
        out = as_beta(2.5, 3, like)
        for bad in (-1.0, math.inf, math.nan):
            with pytest.raises(ValueError, match="beta must be finite and non-negative"):
                as_beta(bad, 3, like)
        assert reads == [] and torch.equal(out, torch.full((3,), 2.5, dtype=torch.float64))
        as_beta(torch.tensor(2.5, dtype=torch.float64), 3, like)  # a tensor is checked on its device
        as_beta(2.5, 3, like.float())  # and a number held in float32 (rounding could overflow)
        assert len(reads) == 2
        with pytest.raises(ValueError, match="beta must be finite"):
            as_beta(1e300, 3, like.float())  # inf in float32

    def test_q_must_be_one(self):
        model, _, _, _ = make_model()
        acqf = CandidateUCB(model, beta=1.0)
        with pytest.raises(AssertionError):
            acqf(points(6).reshape(3, 2, 2))


# --------------------------------------------------------------------------- #
# optimize_acqf
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "reduction, kwargs",
    [
        ("max", {}),
        ("weighted", {"weights": torch.tensor([0.25, 0.25, 0.25, 0.25])}),
        ("select", {"index": 1}),
    ],
)
def test_optimize_acqf(reduction, kwargs):
    assert reduction in REDUCTIONS
    model, _, _, _ = make_model()
    acqf = CandidateUCB(model, beta=torch.tensor(BETA), reduction=reduction, **kwargs)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    torch.manual_seed(0)
    X, value = optimize_acqf(acqf, bounds, q=1, num_restarts=4, raw_samples=64)
    assert X.shape == (1, 2)
    assert (X >= 0).all() and (X <= 1).all()
    torch.testing.assert_close(value.reshape(()), acqf(X).reshape(()), rtol=1e-9, atol=1e-12)
    # No better point on a coarse grid (optimizer found at least a grid-level maximum).
    grid = torch.stack(
        torch.meshgrid(*(torch.linspace(0, 1, 21, dtype=torch.float64),) * 2, indexing="ij"), -1
    ).reshape(-1, 1, 2)
    assert value >= acqf(grid).max() - 1e-3 * acqf(grid).max().abs()


def test_check_beta_false_skips_only_the_read_of_a_tensor_betas_values(monkeypatch):
    from tests.host_reads import record_reads

    model, _, _, _ = make_model()
    X = torch.rand(6, 1, 2, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    beta = torch.tensor(BETA, dtype=torch.float64)
    counts = {}
    for check in (True, False):  # the view's own reads (its modules' constraints) are in both
        reads = record_reads(monkeypatch)
        acqf = CandidateUCB(model, beta=beta, reduction="select", index=2, check_beta=check)
        monkeypatch.undo()
        counts[check] = len(reads)
        values = acqf(X)
        assert torch.equal(values, CandidateUCB(model, beta=BETA[2], reduction="select", index=2)(X))
    assert counts[True] == counts[False] + 1  # the flag of beta's values
    bad = torch.tensor([0.5, math.nan, 1.0, 1.0], dtype=torch.float64)
    CandidateUCB(model, beta=bad, reduction="max", check_beta=False)  # the caller's to check
    with pytest.raises(ValueError, match="beta must be finite and non-negative"):
        CandidateUCB(model, beta=bad, reduction="max")
    with pytest.raises(ValueError, match=r"beta must be a scalar or have shape \(4,\)"):
        CandidateUCB(model, beta=bad[:3], reduction="max", check_beta=False)
    with pytest.raises(ValueError, match="beta must be finite and non-negative"):
        CandidateUCB(model, beta=-1.0, reduction="max", check_beta=False)  # a number is checked on the host
    with pytest.raises(ValueError, match=r"^check_beta must be a bool, got 1\."):
        CandidateUCB(model, beta=beta, check_beta=1)
