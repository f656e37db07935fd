"""Tests for botorch_unknown_hypers.candidates (expected values computed by hand here)."""

from __future__ import annotations

import json
import math

import pytest
import torch
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.means import ConstantMean, ZeroMean

from botorch_unknown_hypers.candidates import (
    KERNELS,
    CandidateSpec,
    KernelCandidates,
    geometric_ladder,
)

DTYPES = [torch.float32, torch.float64]
KERNEL_NAMES = ["matern12", "matern32", "matern52", "rbf"]


def _tensor(values, dtype=torch.float64):
    return torch.tensor(values, dtype=dtype)


# --------------------------------------------------------------------------- #
# Construction and validation
# --------------------------------------------------------------------------- #


class TestConstruction:
    @pytest.mark.parametrize("dtype", DTYPES)
    def test_isotropic_from_1d(self, dtype):
        cands = KernelCandidates(
            lengthscale=_tensor([0.5, 0.2, 0.1], dtype),
            outputscale=2.0,
            noise=1e-4,
        )
        assert len(cands) == 3
        assert cands.lengthscale.shape == (3, 1)
        assert cands.lengthscale.dtype == dtype
        assert cands.outputscale.dtype == dtype and cands.noise.dtype == dtype
        assert not cands.ard
        assert cands.kernel == "matern52" and cands.nu == 2.5
        torch.testing.assert_close(cands.outputscale, torch.full((3,), 2.0, dtype=dtype))
        torch.testing.assert_close(cands.noise, torch.full((3,), 1e-4, dtype=dtype))
        assert cands.mean_constant is None
        assert isinstance(cands, CandidateSpec)

    def test_ard(self):
        cands = KernelCandidates(
            lengthscale=_tensor([[0.5, 0.25], [0.1, 0.3]]),
            outputscale=_tensor([1.0, 3.0]),
            noise=_tensor([1e-4, 1e-2]),
            kernel="rbf",
            mean_constant=_tensor([0.5, -1.0]),
        )
        assert cands.ard and len(cands) == 2 and cands.nu is None
        torch.testing.assert_close(cands.mean_constant, _tensor([0.5, -1.0]))

    def test_integer_lengthscale_becomes_float(self):
        cands = KernelCandidates(lengthscale=torch.tensor([1, 2]), outputscale=1.0, noise=0.1)
        assert cands.lengthscale.is_floating_point()
        assert cands.noise.dtype == cands.lengthscale.dtype

    def test_scalar_mean_constant_broadcasts(self):
        cands = KernelCandidates.from_lengthscales(_tensor([0.5, 0.2]), mean_constant=1.5)
        torch.testing.assert_close(cands.mean_constant, _tensor([1.5, 1.5]))

    def test_from_lengthscales_defaults(self):
        cands = KernelCandidates.from_lengthscales(_tensor([0.5, 0.2]), kernel="matern32")
        assert cands.kernel == "matern32" and cands.nu == 1.5
        torch.testing.assert_close(cands.outputscale, _tensor([1.0, 1.0]))
        torch.testing.assert_close(cands.noise, _tensor([1e-4, 1e-4]))

    @pytest.mark.parametrize(
        "kwargs, match",
        [
            (dict(lengthscale=torch.empty(0, 1)), "lengthscale"),
            (dict(lengthscale=torch.empty(0)), "lengthscale"),
            (dict(lengthscale=_tensor([0.5, 0.0])), "lengthscale"),
            (dict(lengthscale=_tensor([0.5, -0.1])), "lengthscale"),
            (dict(lengthscale=_tensor([0.5, math.nan])), "lengthscale"),
            (dict(lengthscale=_tensor([0.5, math.inf])), "lengthscale"),
            (dict(lengthscale=torch.ones(2, 1, 1, dtype=torch.float64)), "lengthscale"),
            (dict(lengthscale=torch.tensor(0.5)), "lengthscale"),
            (dict(outputscale=0.0), "outputscale"),
            (dict(outputscale=-1.0), "outputscale"),
            (dict(outputscale=math.inf), "outputscale"),
            (dict(outputscale=math.nan), "outputscale"),
            (dict(outputscale=_tensor([1.0, 2.0, 3.0])), "outputscale"),
            (dict(outputscale=_tensor([[1.0, 2.0]])), "outputscale"),
            (dict(noise=0.0), "noise"),
            (dict(noise=_tensor([1e-4, -1e-4])), "noise"),
            (dict(noise=math.nan), "noise"),
            (dict(noise=-math.inf), "noise"),
            (dict(noise=_tensor([1e-4])), "noise"),
            (dict(kernel="matern72"), "kernel"),
            (dict(kernel="RBF"), "kernel"),
            (dict(mean_constant=_tensor([0.0, 1.0, 2.0])), "mean_constant"),
            (dict(mean_constant=math.nan), "mean_constant"),
        ],
    )
    def test_invalid(self, kwargs, match):
        full = dict(lengthscale=_tensor([0.5, 0.2]), outputscale=1.0, noise=1e-4)
        full.update(kwargs)
        with pytest.raises(ValueError, match=match):
            KernelCandidates(**full)

    def test_frozen(self):
        cands = KernelCandidates.from_lengthscales(_tensor([0.5]))
        with pytest.raises(AttributeError):
            cands.kernel = "rbf"

    def test_to(self):
        cands = KernelCandidates.from_lengthscales(_tensor([0.5, 0.2]), mean_constant=1.0)
        moved = cands.to(dtype=torch.float32)
        assert moved.lengthscale.dtype == torch.float32
        assert moved.outputscale.dtype == torch.float32
        assert moved.noise.dtype == torch.float32
        assert moved.mean_constant.dtype == torch.float32
        assert moved.kernel == cands.kernel

    def test_to_where_nothing_moves_is_the_same_set_without_a_check(self):
        from torch.profiler import ProfilerActivity, profile

        cands = KernelCandidates.from_lengthscales(_tensor([0.5, 0.2]), mean_constant=1.0)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            same = [cands.to(), cands.to(dtype=cands.lengthscale.dtype), cands.to(device="cpu", dtype=cands.lengthscale.dtype)]
        assert all(s is cands for s in same)
        assert sum(e.name == "aten::_local_scalar_dense" for e in prof.events()) == 0
        assert cands.to(dtype=torch.float32) is not cands


# --------------------------------------------------------------------------- #
# subset / cat / labels
# --------------------------------------------------------------------------- #


class TestSubsetCatLabels:
    def _cands(self, mean=True):
        return KernelCandidates(
            lengthscale=_tensor([[0.5, 0.25], [0.1, 0.3], [0.7, 0.9]]),
            outputscale=_tensor([1.0, 2.0, 3.0]),
            noise=_tensor([1e-4, 1e-3, 1e-2]),
            kernel="matern32",
            mean_constant=_tensor([0.0, 1.0, 2.0]) if mean else None,
        )

    @pytest.mark.parametrize("indices", [[2, 0], torch.tensor([2, 0])])
    def test_subset_reorders(self, indices):
        cands = self._cands()
        sub = cands.subset(indices)
        assert len(sub) == 2 and sub.kernel == "matern32"
        torch.testing.assert_close(sub.lengthscale, _tensor([[0.7, 0.9], [0.5, 0.25]]))
        torch.testing.assert_close(sub.outputscale, _tensor([3.0, 1.0]))
        torch.testing.assert_close(sub.noise, _tensor([1e-2, 1e-4]))
        torch.testing.assert_close(sub.mean_constant, _tensor([2.0, 0.0]))

    def test_subset_without_mean(self):
        sub = self._cands(mean=False).subset([1])
        assert sub.mean_constant is None and len(sub) == 1

    @pytest.mark.parametrize("indices", [[], [3], [-1], [[0, 1]]])
    def test_subset_invalid(self, indices):
        with pytest.raises(ValueError, match="indices"):
            self._cands().subset(indices)

    def test_cat(self):
        a = self._cands()
        b = a.subset([1]).to(dtype=torch.float32)
        both = a.cat(b)
        assert len(both) == 4
        assert both.lengthscale.dtype == torch.float64
        torch.testing.assert_close(both.lengthscale[:3], a.lengthscale)
        torch.testing.assert_close(both.lengthscale[3], a.lengthscale[1].float().double())
        torch.testing.assert_close(both.outputscale, _tensor([1.0, 2.0, 3.0, 2.0]))
        torch.testing.assert_close(both.mean_constant, _tensor([0.0, 1.0, 2.0, 1.0]))

    def test_cat_invalid(self):
        a = self._cands()
        with pytest.raises(ValueError, match="kernel"):
            a.cat(KernelCandidates(a.lengthscale, 1.0, 1e-4, kernel="rbf", mean_constant=0.0))
        with pytest.raises(ValueError, match="columns"):
            a.cat(KernelCandidates(_tensor([0.3]), 1.0, 1e-4, kernel="matern32", mean_constant=0.0))
        with pytest.raises(ValueError, match="mean_constant"):
            a.cat(self._cands(mean=False))
        with pytest.raises(ValueError, match="KernelCandidates"):
            a.cat({"lengthscale": [0.1]})

    def test_labels(self):
        iso = KernelCandidates.from_lengthscales(_tensor([0.5, 0.2, 0.004]))
        assert iso.labels() == ["0.5", "0.2", "0.004"]
        assert self._cands().labels() == ["0.5;0.25", "0.1;0.3", "0.7;0.9"]


# --------------------------------------------------------------------------- #
# to_dict / from_dict
# --------------------------------------------------------------------------- #


class TestSerialisation:
    @pytest.mark.parametrize("mean", [None, [0.5, -2.0]])
    @pytest.mark.parametrize("ard", [False, True])
    def test_round_trip(self, mean, ard):
        ls = _tensor([[0.5, 0.004], [0.1, 0.3]]) if ard else _tensor([0.5, 0.004])
        cands = KernelCandidates(
            lengthscale=ls,
            outputscale=_tensor([1.5, 0.25]),
            noise=_tensor([1e-4, 1e-2]),
            kernel="matern12",
            mean_constant=None if mean is None else _tensor(mean),
        )
        state = cands.to_dict()
        text = json.dumps(state)
        restored = KernelCandidates.from_dict(json.loads(text))
        assert restored.kernel == "matern12"
        assert torch.equal(restored.lengthscale, cands.lengthscale)
        assert torch.equal(restored.outputscale, cands.outputscale)
        assert torch.equal(restored.noise, cands.noise)
        if mean is None:
            assert restored.mean_constant is None
        else:
            assert torch.equal(restored.mean_constant, cands.mean_constant)
        assert restored.to_dict() == state

    def test_from_dict_dtype(self):
        state = KernelCandidates.from_lengthscales(_tensor([0.5, 0.2])).to_dict()
        restored = KernelCandidates.from_dict(state, dtype=torch.float32)
        assert restored.lengthscale.dtype == torch.float32
        assert restored.noise.dtype == torch.float32

    @pytest.mark.parametrize(
        "mutate",
        [
            lambda s: [s],
            lambda s: "kernel",
            lambda s: {k: v for k, v in s.items() if k != "type"},
            lambda s: {**s, "type": "periodic"},
            lambda s: {k: v for k, v in s.items() if k != "lengthscale"},
            lambda s: {k: v for k, v in s.items() if k != "noise"},
            lambda s: {k: v for k, v in s.items() if k != "outputscale"},
            lambda s: {k: v for k, v in s.items() if k != "kernel"},
            lambda s: {**s, "kernel": "cosine"},
            lambda s: {**s, "lengthscale": "abc"},
            lambda s: {**s, "lengthscale": None},
            lambda s: {**s, "lengthscale": [[0.1], [0.2, 0.3]]},
            lambda s: {**s, "lengthscale": []},
            lambda s: {**s, "lengthscale": [[-0.5], [0.2]]},
            lambda s: {**s, "noise": "x"},
            lambda s: {**s, "noise": [1e-4, 1e-4, 1e-4]},
            lambda s: {**s, "outputscale": {"a": 1}},
            lambda s: {**s, "mean_constant": "a"},
            lambda s: {**s, "mean_constant": [1.0, 2.0, 3.0]},
        ],
    )
    def test_from_dict_malformed(self, mutate):
        state = KernelCandidates.from_lengthscales(_tensor([0.5, 0.2])).to_dict()
        with pytest.raises(ValueError):
            KernelCandidates.from_dict(mutate(state))


# --------------------------------------------------------------------------- #
# build
# --------------------------------------------------------------------------- #


class TestBuild:
    @pytest.mark.parametrize("dtype", DTYPES)
    @pytest.mark.parametrize("kernel", KERNEL_NAMES)
    @pytest.mark.parametrize("ard", [False, True])
    def test_build(self, kernel, ard, dtype):
        ls = _tensor([[0.004, 0.02], [0.5, 1.5], [3.0, 0.1]], dtype)
        if not ard:
            ls = ls[:, 0]
        outputscale = _tensor([1.0, 0.3, 7.5], dtype)
        noise = _tensor([1e-4, 1e-6, 0.25], dtype)
        cands = KernelCandidates(ls, outputscale, noise, kernel=kernel)
        mean, covar, likelihood = cands.build(dim=2)
        batch = torch.Size([3])

        assert isinstance(mean, ZeroMean)
        assert isinstance(covar, ScaleKernel)
        assert isinstance(likelihood, GaussianLikelihood)
        if kernel == "rbf":
            assert isinstance(covar.base_kernel, RBFKernel)
        else:
            assert isinstance(covar.base_kernel, MaternKernel)
            assert covar.base_kernel.nu == KERNELS[kernel]
        assert covar.batch_shape == batch and covar.base_kernel.batch_shape == batch
        assert likelihood.noise_covar.raw_noise.shape == (3, 1)
        assert mean.batch_shape == batch
        assert covar.base_kernel.ard_num_dims == (2 if ard else None)

        for module in (mean, covar, likelihood):
            for p in module.parameters():
                assert not p.requires_grad
                assert p.dtype == dtype

        tol = dict(rtol=1e-12, atol=0.0) if dtype == torch.float64 else dict(rtol=1e-6, atol=0.0)
        expected_ls = ls.reshape(3, 1, -1)
        assert covar.base_kernel.lengthscale.shape == expected_ls.shape
        torch.testing.assert_close(covar.base_kernel.lengthscale, expected_ls, **tol)
        torch.testing.assert_close(covar.outputscale, outputscale, **tol)
        assert likelihood.noise.shape == (3, 1)
        torch.testing.assert_close(likelihood.noise, noise.unsqueeze(-1), **tol)

    @pytest.mark.parametrize("dtype", DTYPES)
    def test_build_mean_constant(self, dtype):
        cands = KernelCandidates.from_lengthscales(
            _tensor([0.5, 0.2], dtype), mean_constant=_tensor([1.25, -3.0], dtype)
        )
        mean, _, _ = cands.build(dim=3)
        assert isinstance(mean, ConstantMean)
        assert mean.batch_shape == torch.Size([2])
        assert not mean.constant.requires_grad
        torch.testing.assert_close(mean.constant.reshape(-1), _tensor([1.25, -3.0], dtype))
        # Each batch member's mean function returns its own constant.
        out = mean(torch.zeros(2, 4, 3, dtype=dtype))
        torch.testing.assert_close(out, _tensor([[1.25] * 4, [-3.0] * 4], dtype))

    def test_build_isotropic_any_dim(self):
        cands = KernelCandidates.from_lengthscales(_tensor([0.5, 0.2]))
        for dim in (1, 3, 7):
            _, covar, _ = cands.build(dim=dim)
            assert covar.base_kernel.lengthscale.shape == (2, 1, 1)

    def test_build_ard_dim_mismatch(self):
        cands = KernelCandidates.from_lengthscales(_tensor([[0.5, 0.2], [0.1, 0.1]]))
        with pytest.raises(ValueError, match="lengthscale"):
            cands.build(dim=3)

    def test_build_kernel_values(self):
        # Matern-1/2 value at distance 0.01 with length scale 0.004 (tiny, no clipping).
        cands = KernelCandidates(
            _tensor([0.004]), outputscale=_tensor([2.0]), noise=1e-4, kernel="matern12"
        )
        _, covar, _ = cands.build(dim=1)
        x1 = torch.zeros(1, 1, 1, dtype=torch.float64)
        x2 = torch.full((1, 1, 1), 0.01, dtype=torch.float64)
        value = covar(x1, x2).to_dense()
        expected = 2.0 * math.exp(-0.01 / 0.004)
        torch.testing.assert_close(value.reshape(()), torch.tensor(expected, dtype=torch.float64), rtol=1e-9, atol=0.0)


# --------------------------------------------------------------------------- #
# geometric_ladder
# --------------------------------------------------------------------------- #


class TestGeometricLadder:
    @pytest.mark.parametrize("dtype", DTYPES)
    def test_values(self, dtype):
        ladder = geometric_ladder(2.0, math.exp(0.5), 4, dtype=dtype)
        expected = torch.tensor(
            [2.0, 2.0 * math.exp(-0.5), 2.0 * math.exp(-1.0), 2.0 * math.exp(-1.5)], dtype=dtype
        )
        assert ladder.dtype == dtype and ladder.shape == (4,)
        torch.testing.assert_close(ladder, expected)
        assert (ladder[1:] < ladder[:-1]).all()

    def test_ratio_two(self):
        ladder = geometric_ladder(1.0, 2.0, 5)
        assert torch.equal(ladder, _tensor([1.0, 0.5, 0.25, 0.125, 0.0625]))

    def test_single_rung(self):
        assert torch.equal(geometric_ladder(0.7, 1.1, 1), _tensor([0.7]))

    def test_paper_ratio_is_usable_as_candidates(self):
        # Ziomek et al. 2024 ratio e^{1/d} for d = 3, Matern code ratio e^{1/(d + 2 nu)}.
        ladder = geometric_ladder(1.0, math.exp(1.0 / (3 + 2 * 2.5)), 6)
        torch.testing.assert_close(ladder[-1], torch.tensor(math.exp(-5.0 / 8.0), dtype=torch.float64))
        assert len(KernelCandidates.from_lengthscales(ladder)) == 6

    @pytest.mark.parametrize(
        "args, match",
        [
            ((0.0, 2.0, 3), "theta0"),
            ((-1.0, 2.0, 3), "theta0"),
            ((math.inf, 2.0, 3), "theta0"),
            ((math.nan, 2.0, 3), "theta0"),
            ((1.0, 1.0, 3), "ratio"),
            ((1.0, 0.5, 3), "ratio"),
            ((1.0, math.inf, 3), "ratio"),
            ((1.0, math.nan, 3), "ratio"),
            ((1.0, 2.0, 0), "num"),
            ((1.0, 2.0, -2), "num"),
        ],
    )
    def test_invalid(self, args, match):
        with pytest.raises(ValueError, match=match):
            geometric_ladder(*args)


def test_valid_candidates_are_checked_in_one_device_read_and_subsets_by_list_in_none():
    r"""A valid set costs one device read; a subset by a list of indices none (its rows were checked)."""
    from torch.profiler import profile

    ls = torch.tensor([[0.5, 0.2], [0.1, 0.3], [0.7, 0.9]], dtype=torch.float64)

    def reads(fn):
        with profile() as prof:
            fn()
        return sum(e.count for e in prof.key_averages() if e.key in ("aten::_local_scalar_dense", "aten::is_nonzero"))

    cands = KernelCandidates(lengthscale=ls, outputscale=torch.ones(3, dtype=torch.float64), noise=1e-4, mean_constant=0.0)
    # one bool() of one tensor: is_nonzero and the _local_scalar_dense inside it
    assert reads(lambda: KernelCandidates(lengthscale=ls, outputscale=1.0, noise=1e-4, mean_constant=0.0)) == 2
    assert reads(lambda: cands.subset([2, 0])) == 0  # rows of a checked set: not checked again
    sub, rebuilt = cands.subset([2, 0]), KernelCandidates(
        lengthscale=ls[[2, 0]], outputscale=cands.outputscale[[2, 0]], noise=cands.noise[[2, 0]], mean_constant=cands.mean_constant[[2, 0]]
    )
    assert type(sub) is KernelCandidates and sub.kernel == rebuilt.kernel and len(sub) == 2
    for name in ("lengthscale", "outputscale", "noise", "mean_constant"):
        assert torch.equal(getattr(sub, name), getattr(rebuilt, name)), name
    for bad, match in (({"noise": -1.0}, "noise must be a positive"), ({"outputscale": float("nan")}, "outputscale"),
                       ({"mean_constant": float("inf")}, "mean_constant must be a finite"),
                       ({"noise": torch.ones(2)}, "noise must be")):
        with pytest.raises(ValueError, match=match):
            KernelCandidates(**{"lengthscale": ls, "outputscale": 1.0, "noise": 1e-4, **bad})
    with pytest.raises(ValueError, match="finite and strictly positive"):
        KernelCandidates(lengthscale=-ls, outputscale=1.0, noise=1e-4)
    with pytest.raises(ValueError, match="indices must lie"):
        cands.subset([0, 3])
    with pytest.raises(ValueError, match="indices must lie"):
        cands.subset(torch.tensor([-1]))


@pytest.mark.parametrize("mean_constant", [None, torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)])
def test_candidate_dicts_equal_each_subsets_dict(mean_constant):
    ls = torch.tensor([[0.5, 0.2], [0.1, 0.3], [0.7, 0.9]], dtype=torch.float64)
    cands = KernelCandidates(lengthscale=ls, outputscale=torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64), noise=1e-4,
                             kernel="rbf", mean_constant=mean_constant)
    assert cands.candidate_dicts() == [cands.subset([u]).to_dict() for u in range(3)]
    assert [json.dumps(d, sort_keys=True) for d in cands.candidate_dicts()] == [
        json.dumps(cands.subset([u]).to_dict(), sort_keys=True) for u in range(3)]


def test_a_noise_below_the_likelihoods_bound_is_refused_when_built():
    from botorch_unknown_hypers.candidates import NOISE_LOWER_BOUND, fixed_likelihood

    spec = KernelCandidates(lengthscale=torch.tensor([[0.3], [0.5]], dtype=torch.float64), outputscale=1.0, noise=1e-13)
    with pytest.raises(ValueError, match=r"noise must be >= 1e-12"):
        spec.build(1)
    likelihood = fixed_likelihood(torch.tensor([NOISE_LOWER_BOUND, 0.1], dtype=torch.float64))
    torch.testing.assert_close(likelihood.noise.reshape(-1), torch.tensor([NOISE_LOWER_BOUND, 0.1], dtype=torch.float64))


@pytest.mark.parametrize("ard", [False, True])
@pytest.mark.parametrize("mean_constant", [None, [0.5, -1.25, 3.0]])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_to_dict_is_each_fields_tolist_from_one_host_copy(ard, mean_constant, dtype, monkeypatch):
    g = torch.Generator().manual_seed(3)
    ls = 0.1 + torch.rand(3, 2, generator=g, dtype=dtype)
    cands = KernelCandidates(
        lengthscale=ls if ard else ls[:, 0], outputscale=0.5 + torch.rand(3, generator=g, dtype=dtype),
        noise=1e-3 * torch.rand(3, generator=g, dtype=dtype) + 1e-6,
        mean_constant=None if mean_constant is None else torch.tensor(mean_constant, dtype=dtype),
    )
    expected = {
        "type": "kernel", "kernel": cands.kernel, "lengthscale": cands.lengthscale.tolist(),
        "outputscale": cands.outputscale.tolist(), "noise": cands.noise.tolist(),
        "mean_constant": None if mean_constant is None else cands.mean_constant.tolist(),
    }
    copies, tolist = [], torch.Tensor.tolist
    monkeypatch.setattr(torch.Tensor, "tolist", lambda t: copies.append(1) or tolist(t))
    assert cands.to_dict() == expected and copies == [1]
    assert KernelCandidates.from_dict(cands.to_dict(), dtype=dtype).to_dict() == expected


def _state(cands):
    return {name: None if getattr(cands, name) is None else getattr(cands, name) for name in ("lengthscale", "outputscale", "noise", "mean_constant")}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ard", [False, True])
def test_from_values_equals_the_tensor_construction_and_keeps_the_values_on_the_host(dtype, ard, monkeypatch):
    r"""Built from Python numbers, a set equals the one built from the same values as tensors (rounded
    to ``dtype`` the same way), and its JSON, labels, noise values, subsets by list, concatenations,
    moves and noise changes read no tensor value; a set built from tensors reads once, then keeps."""
    from tests.host_reads import record_reads

    lengthscale = [[0.3, 0.1], [0.7, 1.3], [0.11, 0.2]] if ard else [0.3, 0.7, 0.11]
    outputscale, noise, mean = [1.0, 2.5, 0.1], 1e-4, [0.1, -0.2, 0.3]
    reference = KernelCandidates(
        _tensor(lengthscale, dtype), _tensor(outputscale, dtype), noise, "rbf", _tensor(mean, dtype)
    )
    expected = reference.to_dict()
    reads = record_reads(monkeypatch)
    cands = KernelCandidates.from_values(lengthscale, "rbf", outputscale, noise, mean, dtype=dtype)
    other = KernelCandidates.from_values([lengthscale[0]], "rbf", 0.5, 1e-3, 0.0, dtype=dtype)
    joined = cands.cat(other)
    moved = cands.to(dtype=torch.float64)
    noisy = cands.with_noise(0.1)
    out = (cands.to_dict(), cands.labels(), cands.noise_values(), cands.subset([2, 0]).to_dict(), joined.to_dict(),
           moved.to_dict(), noisy.noise_values())
    assert reads == []
    built = len(reads)
    cands.build(2)  # GPyTorch's constraints read their own bounds; the noise is checked on the host
    on_host = len(reads) - built
    fresh = KernelCandidates(reference.lengthscale, reference.outputscale, noise, "rbf", reference.mean_constant)
    before = len(reads)
    fresh.build(2)  # its values on the device only: one read more
    assert len(reads) - before == on_host + 1
    assert out[0] == expected and out[1] == reference.labels() and out[2] == reference.noise.tolist()
    assert out[3] == reference.subset([2, 0]).to_dict()
    for name, value in _state(cands).items():
        assert value.dtype == dtype and torch.equal(value, getattr(reference, name)), name
    reference_joined = reference.cat(KernelCandidates(_tensor([lengthscale[0]], dtype), 0.5, 1e-3, "rbf", 0.0))
    monkeypatch.undo()
    assert out[4] == reference_joined.to_dict()
    assert out[5] == reference.to(dtype=torch.float64).to_dict()  # float32 values are float64 values
    assert out[6] == torch.full((3,), 0.1, dtype=dtype).tolist()
    for name, value in _state(joined).items():
        assert torch.equal(value, getattr(reference_joined, name)), name
    reads = record_reads(monkeypatch)
    assert reference.subset([1]).to_dict() == cands.subset([1]).to_dict()  # kept from the first to_dict above
    assert reads == []


def test_a_set_built_from_tensors_reads_its_values_once():
    from tests.host_reads import record_reads

    with pytest.MonkeyPatch.context() as mp:
        cands = KernelCandidates.from_lengthscales(_tensor([0.2, 0.4]))
        reads = record_reads(mp)
        first, second, labels = cands.to_dict(), cands.to_dict(), cands.labels()
        assert reads == ["tolist"] and first == second and labels == ["0.2", "0.4"]
        first["lengthscale"][0][0] = 9.0  # the copy handed out, not the values kept
        assert cands.to_dict()["lengthscale"] == [[0.2], [0.4]]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"lengthscale": []}, "lengthscale must be a non-empty list"),
        ({"lengthscale": 0.3}, "lengthscale must be a non-empty list"),
        ({"lengthscale": [[0.1, 0.2], [0.3]]}, "lengthscale must be K x 1 or K x d"),
        ({"lengthscale": [0.1, -0.2]}, "lengthscale must be finite and strictly positive"),
        ({"lengthscale": [0.1, "0.2"]}, "lengthscale must hold numbers"),
        ({"lengthscale": [0.1, 0.2], "noise": 0.0}, "noise must be a positive finite scalar or 2 values"),
        ({"lengthscale": [0.1, 0.2], "outputscale": [1.0]}, "outputscale must be a positive finite scalar or 2 values"),
        ({"lengthscale": [0.1, 0.2], "mean_constant": [0.0, math.inf]}, "mean_constant must be a finite scalar"),
        ({"lengthscale": [0.1, 0.2], "kernel": "matern72"}, "kernel must be one of"),
        ({"lengthscale": [1e-50], "dtype": torch.float32}, "finite and strictly positive"),  # 0 in float32
    ],
)
def test_from_values_refuses_bad_values_naming_them(kwargs, match):
    with pytest.raises(ValueError, match=match):
        KernelCandidates.from_values(**kwargs)


def test_from_values_in_another_dtype_and_a_narrowing_move_check_on_the_device():
    half = KernelCandidates.from_values([0.25, 0.5], dtype=torch.bfloat16)
    assert half.lengthscale.dtype == torch.bfloat16 and half.to_dict()["lengthscale"] == [[0.25], [0.5]]
    wide = KernelCandidates.from_values([1e-50, 0.5])
    with pytest.raises(ValueError, match="strictly positive"):
        wide.to(dtype=torch.float32)  # 1e-50 underflows to 0 in float32: checked again
    assert wide.with_noise(0.5).noise_values() == [0.5, 0.5]
    with pytest.raises(ValueError, match="noise must be a positive"):
        wide.with_noise(-1.0)
