"""Recording the reads of tensor values on the host in a test (each a synchronisation on CUDA)."""

from __future__ import annotations

from typing import Callable

import pytest
import torch

READ_METHODS = ("tolist", "item", "__float__", "__int__", "__bool__", "__index__")
r"""The ``Tensor`` methods that copy a value to the host (``float(t)``, ``if t:``, ...)."""


def record_reads(monkeypatch: pytest.MonkeyPatch, skip: Callable[[], bool] = lambda: False) -> list[str]:
    r"""A list that gets the name of each :data:`READ_METHODS` call while ``monkeypatch`` holds
    (``monkeypatch.undo()`` stops it), except those made while ``skip()`` is true."""
    reads: list[str] = []

    def counted(name: str, original: Callable) -> Callable:
        def read(self, *args):
            if not skip():
                reads.append(name)
            return original(self, *args)

        return read

    for name in READ_METHODS:
        monkeypatch.setattr(torch.Tensor, name, counted(name, getattr(torch.Tensor, name)))
    return reads


PROFILED_READS = ("aten::_local_scalar_dense", "aten::equal", "aten::is_nonzero", "aten::nonzero")
r"""The operators that read a value on the host (or, ``nonzero``, size their output by one): a
0-d tensor used as an index and a boolean mask index run them in C++, out of
:func:`record_reads`' sight."""


def profiled_reads(fn: Callable[[], object]) -> list[str]:
    r"""The :data:`PROFILED_READS` operators that ``fn()`` runs, outermost only, by the profiler."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    out = []
    for event in prof.events():
        if event.name in PROFILED_READS:
            parent = event.cpu_parent
            while parent is not None and parent.name not in PROFILED_READS:
                parent = parent.cpu_parent
            if parent is None:
                out.append(event.name)
    return out
