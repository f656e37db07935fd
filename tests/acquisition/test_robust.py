"""Tests of the batched worst case on a pool (botorch_unknown_hypers.acquisition.robust)."""

from __future__ import annotations

import pytest
import torch

from botorch_unknown_hypers.acquisition.robust import robust_min
from botorch_unknown_hypers.domains import FiniteDomain


def test_neighbourhoods_and_robust_min_brute_force():
    gen = torch.Generator().manual_seed(0)
    pts = torch.rand(30, 2, generator=gen, dtype=torch.float64)
    values = torch.randn(3, 30, generator=gen, dtype=torch.float64)
    for kind, p in (("box", float("inf")), ("ball", 2.0)):
        mask = FiniteDomain(pts).neighbourhoods(0.2, kind)
        got = robust_min(values, mask)
        for i in range(30):
            near = [j for j in range(30) if float(torch.dist(pts[i], pts[j], p=p)) <= 0.2]
            assert got[:, i].tolist() == pytest.approx(values[:, near].min(-1).values.tolist())
    with pytest.raises(ValueError, match="perturbation"):
        FiniteDomain(pts).neighbourhoods(0.1, "diamond")


def test_robust_min_hand_computed():
    # three points on a line, neighbourhoods {0, 1}, {0, 1, 2}, {1, 2}
    mask = torch.tensor([[True, True, False], [True, True, True], [False, True, True]])
    values = torch.tensor([[3.0, 1.0, 2.0], [-1.0, 5.0, 4.0]], dtype=torch.float64)
    assert robust_min(values, mask).tolist() == [[1.0, 1.0, 1.0], [-1.0, -1.0, 4.0]]
    # only itself: no perturbation, the values themselves; everything: the row minimum everywhere
    assert torch.equal(robust_min(values, torch.eye(3, dtype=torch.bool)), values)
    full = robust_min(values, torch.ones(3, 3, dtype=torch.bool))
    assert full.tolist() == [[1.0] * 3, [-1.0] * 3]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_robust_min_keeps_dtype_shape_and_extreme_values(dtype):
    points = torch.arange(6, dtype=dtype).unsqueeze(-1) * 0.25  # exact in both dtypes
    mask = FiniteDomain(points).neighbourhoods(0.25)
    big = torch.finfo(dtype).max
    values = torch.tensor([[0.0, big, -big, 1.0, 2.0, 3.0]], dtype=dtype)
    out = robust_min(values, mask)
    assert out.shape == (1, 6) and out.dtype == dtype
    assert out[0].tolist() == [0.0, -big, -big, -big, 1.0, 2.0]
