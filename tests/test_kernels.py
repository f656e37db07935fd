"""Tests for botorch_unknown_hypers.kernels (kernel names, Matérn smoothness, correlations, builders).

References are independent of the module: the general Matérn formula with SciPy's modified
Bessel function, and the squared-exponential formula written out.
"""

from __future__ import annotations

import math

import gpytorch
import pytest
import scipy.special
import torch
from gpytorch.constraints import Positive
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel
from linear_operator import to_dense

from botorch_unknown_hypers.kernels import KERNELS, check_kernel, correlation, scale_kernel
from tests.host_reads import record_reads


def bessel_matern(r: torch.Tensor, nu: float) -> torch.Tensor:
    r"""The general Matérn correlation :math:`2^{1-\nu}/\Gamma(\nu)\,s^\nu K_\nu(s)`, :math:`s = \sqrt{2\nu} r`."""
    s = (math.sqrt(2 * nu) * r).numpy()
    return torch.as_tensor(2 ** (1 - nu) / math.gamma(nu) * s**nu * scipy.special.kv(nu, s))


def test_kernel_table():
    assert KERNELS == {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5, "rbf": None}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_check_kernel_returns_valid_names(name):
    assert check_kernel(name) == name


@pytest.mark.parametrize("bad", ["matern72", "RBF", "Matern52", "", None, 2.5, ["rbf"]], ids=repr)
def test_check_kernel_refuses_other_values_naming_the_argument(bad):
    with pytest.raises(ValueError, match=r"^kernel must be one of \['matern12', 'matern32', 'matern52', 'rbf'\]"):
        check_kernel(bad)
    with pytest.raises(ValueError, match=r"^surrogate\.kernel must be one of"):
        check_kernel(bad, name="surrogate.kernel")


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_matern_correlation_matches_the_bessel_formula(nu):
    r = torch.linspace(0.01, 6.0, 50, dtype=torch.float64)
    torch.testing.assert_close(correlation(r.square(), nu), bessel_matern(r, nu), rtol=1e-10, atol=1e-14)


def test_correlation_closed_forms_at_hand_values():
    # r = 1: e^-1, (1 + sqrt3) e^-sqrt3, (1 + sqrt5 + 5/3) e^-sqrt5, e^-1/2
    one = torch.tensor([1.0], dtype=torch.float64)
    assert float(correlation(one, 0.5)) == pytest.approx(math.exp(-1.0), rel=1e-14)
    assert float(correlation(one, 1.5)) == pytest.approx((1 + math.sqrt(3)) * math.exp(-math.sqrt(3)), rel=1e-14)
    assert float(correlation(one, 2.5)) == pytest.approx((1 + math.sqrt(5) + 5 / 3) * math.exp(-math.sqrt(5)), rel=1e-14)
    assert float(correlation(one, None)) == pytest.approx(math.exp(-0.5), rel=1e-14)
    # r = 2 for RBF: exp(-r^2 / 2) = e^-2
    assert float(correlation(torch.tensor([4.0], dtype=torch.float64), None)) == pytest.approx(math.exp(-2.0), rel=1e-14)


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5, None])
def test_correlation_is_one_at_zero_decreasing_and_keeps_shape_and_dtype(nu):
    d2 = torch.tensor([[0.0, 0.25, 1.0], [4.0, 9.0, 100.0]], dtype=torch.float32)
    values = correlation(d2, nu)
    assert values.shape == (2, 3) and values.dtype == torch.float32
    assert float(values[0, 0]) == pytest.approx(1.0, abs=1e-6)
    flat = values.reshape(-1)
    assert bool((flat.diff() < 0).all()) and bool((flat > 0).all())


def test_correlation_gradient_is_finite_at_zero_distance():
    d2 = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    correlation(d2, 2.5).sum().backward()
    assert torch.isfinite(d2.grad).all()


@pytest.mark.parametrize("nu", [0.0, 1.0, 3.5, 0.25])
def test_correlation_refuses_other_smoothness_naming_nu(nu):
    with pytest.raises(ValueError, match=r"^nu must be 0\.5, 1\.5, 2\.5 or None"):
        correlation(torch.ones(2, dtype=torch.float64), nu)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_scale_kernel_structure_constraints_and_initial_values(name):
    kernel = scale_kernel(name)
    assert isinstance(kernel, ScaleKernel)
    nu = KERNELS[name]
    if nu is None:
        assert isinstance(kernel.base_kernel, RBFKernel)
    else:
        assert isinstance(kernel.base_kernel, MaternKernel) and kernel.base_kernel.nu == nu
    assert type(kernel.raw_outputscale_constraint) is Positive
    assert type(kernel.base_kernel.raw_lengthscale_constraint) is Positive
    # GPyTorch's initial raw values 0: softplus(0) = log 2
    assert float(kernel.outputscale) == pytest.approx(math.log(2), rel=1e-6)
    assert kernel.base_kernel.lengthscale.shape == (1, 1)
    assert float(kernel.base_kernel.lengthscale) == pytest.approx(math.log(2), rel=1e-6)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_scale_kernel_value_is_outputscale_times_correlation(name):
    kernel = scale_kernel(name, ard_num_dims=2).double()
    lengthscale = torch.tensor([[0.3, 1.7]], dtype=torch.float64)
    kernel.base_kernel.lengthscale = lengthscale
    kernel.outputscale = torch.tensor(2.5, dtype=torch.float64)
    g = torch.Generator().manual_seed(0)
    X1 = torch.rand(5, 2, generator=g, dtype=torch.float64)
    X2 = torch.rand(4, 2, generator=g, dtype=torch.float64)
    d2 = ((X1.unsqueeze(-2) - X2.unsqueeze(-3)) / lengthscale).square().sum(-1)
    expected = 2.5 * correlation(d2, KERNELS[name])
    with torch.no_grad():
        got = kernel(X1, X2).to_dense()
    torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-12)


def test_scale_kernel_ard_and_batch_shape():
    kernel = scale_kernel("matern52", ard_num_dims=3, batch_shape=torch.Size([4]))
    assert kernel.base_kernel.lengthscale.shape == (4, 1, 3)
    assert kernel.outputscale.shape == (4,)
    X = torch.rand(4, 6, 3, dtype=torch.float64)
    with torch.no_grad():
        assert kernel.double()(X).to_dense().shape == (4, 6, 6)


def test_scale_kernel_refuses_an_unknown_name():
    with pytest.raises(ValueError, match="^kernel must be one of"):
        scale_kernel("periodic")


def _gpytorch_twin(ours: ScaleKernel) -> ScaleKernel:
    r"""GPyTorch's own ``ScaleKernel(MaternKernel | RBFKernel)`` with ``ours``' hyperparameters."""
    base = ours.base_kernel
    twin_base = (
        RBFKernel(ard_num_dims=base.ard_num_dims, batch_shape=base.batch_shape)
        if isinstance(base, RBFKernel)
        else MaternKernel(nu=base.nu, ard_num_dims=base.ard_num_dims, batch_shape=base.batch_shape)
    )
    twin = ScaleKernel(twin_base, batch_shape=ours.batch_shape).to(torch.float64)
    twin.load_state_dict(ours.state_dict())
    return twin


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("ard", [None, 3])
@pytest.mark.parametrize("grad", [False, True])
def test_scale_kernel_values_and_gradients_are_gpytorchs_bit_for_bit(name, ard, grad):
    gen = torch.Generator().manual_seed(0)
    ours = scale_kernel(name, ard_num_dims=ard, batch_shape=torch.Size([4])).to(torch.float64)
    with torch.no_grad():
        ours.base_kernel.lengthscale = 0.1 + torch.rand(4, 1, ard or 1, generator=gen, dtype=torch.float64)
        ours.outputscale = 0.5 + torch.rand(4, generator=gen, dtype=torch.float64)
    twin = _gpytorch_twin(ours)
    X = torch.rand(4, 7, 3, generator=gen, dtype=torch.float64).requires_grad_(grad)
    T = torch.rand(20, 3, generator=gen, dtype=torch.float64)
    same_count = X[0].detach().clone()  # as many points as X, not the same tensor: GPyTorch decides
    cases = [
        lambda k: k(X, T),  # test points against training data
        lambda k: k(X, diag=True),  # prior variances
        lambda k: k(X),  # one set with itself: the symmetric path
        lambda k: k(T),
        lambda k: k(X, same_count),
        lambda k: k(same_count.expand(4, 7, 3), same_count),  # equal values, different tensors
        lambda k: k(X, X.detach().clone()),
        lambda k: k(X[..., 2:5, :], X[..., 2:5, :]),  # two equal views of one memory
        lambda k: k(X[..., 2:5, :], X[..., 2:5, :], diag=True),
        lambda k: k(X[..., 2:5, :], X[..., 3:6, :]),  # views of one memory at different offsets
        lambda k: k(X[..., :3, :], X[..., :3, :].transpose(-1, -2).contiguous().transpose(-1, -2)),  # other strides
    ]
    with gpytorch.settings.lazily_evaluate_kernels(False):
        for i, case in enumerate(cases):
            got, want = to_dense(case(ours)), to_dense(case(twin))
            assert torch.equal(got, want), i
            if grad:
                (g_got,), (g_want,) = (torch.autograd.grad(v.sum(), X, allow_unused=True) for v in (got, want))
                assert (g_got is None and g_want is None) or torch.equal(g_got, g_want), i


@pytest.mark.parametrize("name", ["rbf", "matern52"])
def test_scale_kernel_builds_one_shared_positive_constraint_in_one_host_read(name, monkeypatch):
    # Each GPyTorch constraint checks its bounds with a host read when it is built: the kernel's
    # positive hyperparameters share one constraint, so building the kernel reads once.
    reads = record_reads(monkeypatch)
    kernel = scale_kernel(name, ard_num_dims=3, batch_shape=torch.Size([2]))
    monkeypatch.undo()
    assert reads == ["__bool__"]
    shared = kernel.raw_outputscale_constraint
    assert shared is kernel.base_kernel.raw_lengthscale_constraint
    # shared, it still acts as each parameter's constraint, and a state dict round trip keeps it
    kernel.base_kernel.lengthscale = torch.tensor([0.5, 1.0, 2.0])
    kernel.outputscale = torch.tensor([3.0, 4.0])
    other = scale_kernel(name, ard_num_dims=3, batch_shape=torch.Size([2]))
    other.load_state_dict(kernel.state_dict())
    torch.testing.assert_close(other.base_kernel.lengthscale, kernel.base_kernel.lengthscale)
    torch.testing.assert_close(other.outputscale, torch.tensor([3.0, 4.0]))
    assert torch.isinf(shared.upper_bound) and float(shared.lower_bound) == 0.0


def test_scale_kernel_reads_no_device_value_to_compare_its_inputs(monkeypatch):
    # torch.equal of two tensors is a host read (a synchronisation on a GPU): cross-covariances,
    # prior variances and one set with itself decide without it; equal point counts still ask.
    calls = []
    monkeypatch.setattr(torch, "equal", lambda a, b: calls.append(1) or bool((a == b).all()) if a.shape == b.shape else False)
    kernel = scale_kernel("matern52", batch_shape=torch.Size([4])).to(torch.float64)
    X = torch.rand(4, 7, 3, dtype=torch.float64, requires_grad=True)
    T = torch.rand(20, 3, dtype=torch.float64)
    with gpytorch.settings.lazily_evaluate_kernels(False):
        to_dense(kernel(X, T)), to_dense(kernel(X, diag=True)), to_dense(kernel(T))
        with torch.no_grad():
            to_dense(kernel(X, T)), to_dense(kernel(X))
        assert calls == []
        to_dense(kernel(X[:, 1:4], X[:, 1:4])), to_dense(kernel(X[:, 1:4], X[:, 1:4], diag=True))
        assert calls == []  # equal views of one memory (a lazy kernel tensor's sliced block)
        to_dense(kernel(X, X.detach().clone()))
        to_dense(kernel(X[:, 1:4], X[:, 2:5]))
    assert calls == [1, 1]


@pytest.mark.parametrize("kernel", ["rbf", "matern52"])
def test_set_constrained_is_gpytorchs_setter_bit_for_bit_without_host_reads(kernel):
    from gpytorch.likelihoods import GaussianLikelihood
    from torch.profiler import ProfilerActivity, profile

    from botorch_unknown_hypers.kernels import scale_kernel, set_constrained

    ls = torch.tensor([[[0.3, 2.0]], [[1e-3, 7.5]]], dtype=torch.float64)
    scales = torch.tensor([0.25, 3.0], dtype=torch.float64)
    noise = torch.tensor([[1e-4], [0.5]], dtype=torch.float64)
    ours, theirs = (scale_kernel(kernel, 2, torch.Size([2])).double() for _ in range(2))
    lik_ours, lik_theirs = (GaussianLikelihood(batch_shape=torch.Size([2])).double() for _ in range(2))
    theirs.base_kernel.lengthscale, theirs.outputscale, lik_theirs.noise = ls, scales, noise
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        set_constrained(ours.base_kernel, "lengthscale", ls)
        set_constrained(ours, "outputscale", scales)
        set_constrained(lik_ours.noise_covar, "noise", noise)
    assert not [e for e in prof.events() if e.name in ("aten::_local_scalar_dense", "aten::is_nonzero")]
    for a, b in ((ours, theirs), (lik_ours, lik_theirs)):
        for (name, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
            assert torch.equal(p, q), name
