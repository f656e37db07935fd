from __future__ import annotations

import torch
from torch.profiler import ProfilerActivity, profile

from botorch_unknown_hypers.host import host_values


def test_host_values_are_each_tensors_tolist_in_one_copy():
    g = torch.Generator().manual_seed(0)
    parts = [
        torch.randn(3, 2, generator=g, dtype=torch.float64),
        torch.randn(4, generator=g).to(torch.float32),
        torch.tensor(7),  # an integer, 0-dim
        torch.zeros(0, dtype=torch.float64),
        torch.tensor([float("inf"), -2.5e-300], dtype=torch.float64),
    ]
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        values = host_values(*parts)
    assert sum(e.name == "aten::_local_scalar_dense" for e in prof.events()) == 0  # one bulk copy, no scalar reads
    assert [len(v) for v in values] == [6, 4, 1, 0, 2]
    for got, t in zip(values, parts):
        want = t.reshape(-1).tolist()
        assert got == [float(w) for w in want] and all(type(v) is float for v in got)
    assert host_values() == []
