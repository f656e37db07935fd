"""Tests of K Gaussian priors over N arms (botorch_unknown_hypers.models.tabular_priors):
validation, subsets, persistence and evaluation of kernel priors on the arms."""

from __future__ import annotations

import json
import math

import pytest
import torch

from botorch_unknown_hypers.models.tabular_priors import TabularPriors, as_index_tensor, symmetry_tolerance
from botorch_unknown_hypers.problems.prior_tasks import paper_rbf
from tests.models.tabular_helpers import NOISE, small_priors


def test_tabular_priors_validation():
    priors = small_priors()
    arms, means, cov = priors.arms, priors.means, priors.covariances
    cases = {
        "arms": {"arms": arms[:, 0]},
        "means": {"means": means[:, :5]},
        "covariances": {"covariances": cov[:, :5]},
    }
    for name, override in cases.items():
        kwargs = {"arms": arms, "means": means, "covariances": cov, "noise": NOISE} | override
        with pytest.raises(ValueError, match=name):
            TabularPriors(**kwargs)
    bad = cov.clone()
    bad[0, 0, 1] += 0.1
    with pytest.raises(ValueError, match="symmetric"):
        TabularPriors(arms, means, bad, NOISE)
    nan = means.clone()
    nan[1, 2] = float("nan")
    with pytest.raises(ValueError, match="means"):
        TabularPriors(arms, nan, cov, NOISE)
    for noise in (0.0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="noise"):
            TabularPriors(arms, means, cov, noise)
    with pytest.raises(ValueError, match="names"):
        TabularPriors(arms, means, cov, NOISE, names=["a"])
    with pytest.raises(ValueError, match="means"):
        TabularPriors(arms, means.float(), cov, NOISE)
    # Tiny asymmetry (rounding) is accepted and removed.
    tiny = cov.clone()
    tiny[0, 0, 1] += 1e-12
    fixed = TabularPriors(arms, means, tiny, NOISE)
    assert torch.equal(fixed.covariances, fixed.covariances.transpose(-1, -2))


def test_tabular_priors_subset_to_and_dict_roundtrip():
    priors = small_priors()
    assert len(priors) == 5 and priors.labels() == ["se", "m32", "per", "lin", "rq"]
    sub = priors.subset([3, 1])
    assert sub.labels() == ["lin", "m32"]
    torch.testing.assert_close(sub.covariances, priors.covariances[[3, 1]])
    with pytest.raises(ValueError, match="indices"):
        priors.subset([7])
    state = json.loads(json.dumps(priors.to_dict()))
    back = TabularPriors.from_dict(state)
    for name in ("arms", "means", "covariances"):
        torch.testing.assert_close(getattr(back, name), getattr(priors, name), rtol=0, atol=0)
    assert back.noise == priors.noise and back.names == priors.names
    with pytest.raises(ValueError, match="state"):
        TabularPriors.from_dict({"type": "kernel"})
    f32 = priors.to(dtype=torch.float32)
    assert f32.means.dtype == torch.float32 and f32.labels() == priors.labels()
    unnamed = TabularPriors(priors.arms, priors.means, priors.covariances, NOISE)
    assert unnamed.labels() == ["p0", "p1", "p2", "p3", "p4"]


def test_from_kernels_evaluates_each_kernel_and_mean_on_the_arms():
    arms = torch.tensor([[0.0], [0.5], [2.0], [3.0]], dtype=torch.float64)
    priors = TabularPriors.from_kernels(
        arms, [paper_rbf(1.0), paper_rbf(2.0)], [lambda X: X[:, 0], lambda X: torch.full_like(X[:, 0], -1.0)],
        noise=0.1, names=["short", "long"],
    )
    r2 = (arms - arms.T).square()
    torch.testing.assert_close(priors.covariances, torch.stack([torch.exp(-r2), torch.exp(-r2 / 4.0)]), rtol=1e-14, atol=0)
    assert priors.means.tolist() == [[0.0, 0.5, 2.0, 3.0], [-1.0] * 4]
    assert len(priors) == 2 and priors.num_arms == 4 and priors.noise == 0.1 and priors.labels() == ["short", "long"]
    zero = TabularPriors.from_kernels(arms, [paper_rbf(1.0)], noise=0.1)
    assert zero.means.tolist() == [[0.0] * 4] and zero.labels() == ["p0"]


def test_from_kernels_validation():
    arms = torch.linspace(0, 1, 5, dtype=torch.float64).unsqueeze(-1)
    with pytest.raises(ValueError, match="arms must be an N x d tensor"):
        TabularPriors.from_kernels(arms[:, 0], [paper_rbf(1.0)], noise=0.1)
    with pytest.raises(ValueError, match="kernels is empty"):
        TabularPriors.from_kernels(arms, [], noise=0.1)
    with pytest.raises(ValueError, match=r"means must have one function per kernel \(2\), got 1"):
        TabularPriors.from_kernels(arms, [paper_rbf(1.0), paper_rbf(2.0)], [lambda X: X[:, 0]], noise=0.1)
    with pytest.raises(ValueError, match="noise"):
        TabularPriors.from_kernels(arms, [paper_rbf(1.0)], noise=0.0)


def test_more_construction_errors_name_the_argument():
    priors = small_priors()
    arms, means, cov = priors.arms, priors.means, priors.covariances
    with pytest.raises(ValueError, match="arms must be a torch.Tensor"):
        TabularPriors(arms.tolist(), means, cov, NOISE)
    with pytest.raises(ValueError, match="means must be a floating-point tensor"):
        TabularPriors(arms, means.long(), cov, NOISE)
    negative = cov.clone()
    negative[2, 3, 3] = -0.5
    with pytest.raises(ValueError, match="non-negative diagonal"):
        TabularPriors(arms, means, negative, NOISE)
    with pytest.raises(ValueError, match="names must be None or a list of 5 strings"):
        TabularPriors(arms, means, cov, NOISE, names=["a", "b", "c", "d", 5])


def test_the_symmetry_tolerance_follows_the_dtype():
    assert symmetry_tolerance(torch.float64) == pytest.approx(math.sqrt(2.0**-52))
    assert symmetry_tolerance(torch.float32) == pytest.approx(math.sqrt(2.0**-23))
    # a relative asymmetry of 1e-5 is rounding in float32 but an error in float64
    priors = small_priors()
    for dtype, accepted in ((torch.float32, True), (torch.float64, False)):
        cov = priors.covariances.to(dtype).clone()
        cov[0, 1, 2] += 1e-5
        args = (priors.arms.to(dtype), priors.means.to(dtype), cov, NOISE)
        if accepted:
            fixed = TabularPriors(*args)
            assert torch.equal(fixed.covariances, fixed.covariances.transpose(-1, -2))
        else:
            with pytest.raises(ValueError, match="covariances must be symmetric"):
                TabularPriors(*args)


def test_as_index_tensor():
    idx = as_index_tensor([2, 0, 2], 3, "prior_indices", torch.device("cpu"))
    assert idx.dtype == torch.long and idx.tolist() == [2, 0, 2]
    assert as_index_tensor(torch.tensor([1]), 3, "x", torch.device("cpu")).tolist() == [1]
    cases = [
        ([], "^prior_indices must be a non-empty 1-d list of indices"),
        ([[0, 1]], "^prior_indices must be a non-empty 1-d list of indices"),
        ([3], r"^prior_indices must lie in \[0, 2\], got \[3\]"),
        ([0, -1], r"^prior_indices must lie in \[0, 2\]"),
    ]
    for bad, pattern in cases:
        with pytest.raises(ValueError, match=pattern):
            as_index_tensor(bad, 3, "prior_indices", torch.device("cpu"))


def test_from_dict_rejects_malformed_states_and_casts_to_the_dtype():
    priors = small_priors()
    state = json.loads(json.dumps(priors.to_dict()))
    assert state["type"] == "tabular" and state["noise"] == NOISE
    missing = {k: v for k, v in state.items() if k != "noise"}
    with pytest.raises(ValueError, match="state is missing the key 'noise'"):
        TabularPriors.from_dict(missing)
    with pytest.raises(ValueError, match="state is not a TabularPriors dict"):
        TabularPriors.from_dict([state])
    f32 = TabularPriors.from_dict(state, dtype=torch.float32)
    assert f32.covariances.dtype == torch.float32 and f32.labels() == priors.labels()
    torch.testing.assert_close(f32.means, priors.means.float())
