from __future__ import annotations

import torch
from torch.profiler import ProfilerActivity, profile

from botorch_unknown_hypers.host import host_values


def record_non_blocking(monkeypatch) -> list[bool]:
    r"""The ``non_blocking`` flag of every ``Tensor.to`` call while ``monkeypatch`` holds (a copy to
    the ``meta`` device is not made)."""
    seen = []
    original = torch.Tensor.to

    def to(self, *args, **kwargs):
        seen.append(kwargs.get("non_blocking", False))
        return original(self, *args, **{k: v for k, v in kwargs.items() if k != "device" or v.type == "cpu"})

    monkeypatch.setattr(torch.Tensor, "to", to)
    return seen


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


def test_host_tensor_and_to_device_give_torchs_values_dtypes_and_devices():
    from gpytorch.constraints import Positive

    from botorch_unknown_hypers.host import host_tensor, to_device

    for values, dtype in (([1, 2, 3], torch.long), ([[0.1, 0.2]], torch.float32), (2.5, torch.float64), ([0.1, 0.2], None)):
        out = host_tensor(values, dtype, "cpu")
        expected = torch.tensor(values, dtype=dtype)
        assert out.dtype == expected.dtype and out.device.type == "cpu" and torch.equal(out, expected)
    assert host_tensor([1.0]).device.type == "cpu"
    like = torch.zeros(2, dtype=torch.float64)
    module = to_device(Positive(), like)
    assert module.lower_bound.dtype == torch.float64 and float(module.lower_bound) == 0.0
    assert to_device(torch.tensor([0.1], dtype=torch.float32), like).dtype == torch.float64


def test_to_device_copies_to_the_host_blocking_and_to_a_device_without_a_wait(monkeypatch):
    from botorch_unknown_hypers.host import host_tensor, to_device

    seen = record_non_blocking(monkeypatch)
    to_device(torch.ones(2), torch.zeros(2, device="meta"))
    host_tensor([1.0, 2.0], device="meta")
    to_device(torch.ones(2), torch.zeros(2))
    host_tensor([1.0, 2.0])
    assert seen == [True, True, False, False]


def test_as_device_tensor_is_torchs_as_tensor_with_no_wait_for_a_device(monkeypatch):
    from botorch_unknown_hypers.host import as_device_tensor

    for value, dtype in ((2.5, torch.float64), ([0.1, 0.2], torch.float32), (torch.tensor([1, 2]), torch.float64), (torch.tensor(0.3), None)):
        out, expected = as_device_tensor(value, dtype, "cpu"), torch.as_tensor(value, dtype=dtype, device="cpu")
        assert out.dtype == expected.dtype and out.device.type == "cpu" and torch.equal(out, expected)
    same = torch.tensor([1.0, 2.0], dtype=torch.float64)
    assert as_device_tensor(same, torch.float64) is same  # nothing to convert: the tensor itself, as torch gives it
    seen = record_non_blocking(monkeypatch)
    as_device_tensor(1.5, torch.float64, "meta")  # a Python number towards a device
    as_device_tensor(torch.ones(2), torch.float64, "meta")  # a host tensor towards a device
    assert seen == [True, True]


def test_at_argmax_gives_indexings_rows_with_no_host_read():
    from botorch_unknown_hypers.host import at_argmax
    from tests.host_reads import profiled_reads

    values = torch.tensor([0.3, 2.0, -1.0, 2.0], dtype=torch.float64)
    X, k = torch.arange(8.0).reshape(4, 2), torch.tensor([5, 6, 7, 8])
    best, top, x, kk = at_argmax(values, X, k)
    i = int(values.argmax())  # the first of the ties, as argmax gives it
    assert best.tolist() == [i] and torch.equal(top, values[i : i + 1])
    assert torch.equal(x, X[i : i + 1]) and torch.equal(kk, k[i : i + 1])
    assert profiled_reads(lambda: at_argmax(values, X, k)) == []


def test_read_together_reads_each_step_of_all_generators_in_one_copy(monkeypatch):
    from botorch_unknown_hypers.host import read_together
    from tests.host_reads import record_reads

    def steps(values: list[float], scale: float):  # reads len(values) times, then returns what it read
        seen = []
        for v in values:
            got = yield torch.tensor([v, v * scale], dtype=torch.float64)
            seen.append(got)
        return seen

    def no_read():
        return "none"
        yield  # a generator that never yields

    reads = record_reads(monkeypatch)
    out = read_together([steps([1.0, 2.0, 3.0], 10.0), no_read(), steps([4.0], -1.0)])
    monkeypatch.undo()
    assert reads == ["tolist"] * 3  # the largest number of reads, not their sum (4)
    assert out == [[[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]], "none", [[4.0, -4.0]]]
    assert read_together([]) == []


def test_split_rows_gives_the_rows_of_a_flattened_table():
    from botorch_unknown_hypers.host import split_rows

    table = torch.arange(6, dtype=torch.float64).reshape(3, 2)
    (flat,) = host_values(table)
    assert split_rows(flat, 2) == table.tolist()
    assert split_rows([], 0) == [] and split_rows([1.0, 2.0, 3.0], 3) == [[1.0, 2.0, 3.0]]
