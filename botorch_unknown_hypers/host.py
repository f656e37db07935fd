r"""Copies between the host and the device: several tensors' values on the host in one copy, and
host values moved to the device without a wait.

Each read of a device value on the host (``.item()``, ``float()``, ``.tolist()``) is a
synchronisation on CUDA. Where a step needs several small tensors' values as Python numbers (a
rule's decision and its diagnostics, a candidate set's JSON), :func:`host_values` concatenates
them, flattened, in ``float64`` on the first tensor's device and copies them to the host once.
``float64`` holds every ``float32`` and ``float64`` value and every integer of magnitude below
:math:`2^{53}` exactly, so each value is the one its own ``tolist()`` would give (integers as
floats).

The other direction: a plain copy of a host tensor to a CUDA device (``tensor.to(device)``,
``torch.tensor(values, device=...)``, ``module.to(tensor)`` of a module built on the host) makes
the host wait for the device's stream, the queued work included. :func:`to_device` moves host
values and modules with ``non_blocking=True`` where the copy is host to device, which is safe
for pageable memory (the values are staged before the call returns) and makes no wait; a copy
to the host stays blocking.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any, TypeVar

import torch
from torch import Tensor

T = TypeVar("T", Tensor, torch.nn.Module)
R = TypeVar("R")


def host_values(*tensors: Tensor) -> list[list[float]]:
    r"""Each tensor's values, flattened in row-major order, as Python floats, from one copy to the
    host. Tensors on other devices are moved to the first one's device first."""
    if not tensors:
        return []
    device = tensors[0].device
    flat = torch.cat([t.reshape(-1).to(device=device, dtype=torch.float64) for t in tensors]).tolist()
    out, start = [], 0
    for t in tensors:
        out.append(flat[start : start + t.numel()])
        start += t.numel()
    return out


def split_rows(flat: list[float], width: int) -> list[list[float]]:
    r"""The rows of a row-major ``m x width`` table from its flattened values (:func:`host_values`
    gives each tensor flattened)."""
    return [flat[i * width : (i + 1) * width] for i in range(len(flat) // width)] if width else []


def read_together(steps: Sequence[Generator[Tensor, list[float], R]]) -> list[R]:
    r"""Run ``steps``, generators that yield a tensor whenever they must read its values and take
    back :func:`host_values` of it (its values, flattened, as Python floats), with the tensors that
    they yield at the same step read in one copy. Each generator runs to its next yield in turn, so
    their work interleaves only at reads; returns their return values, in order.

    A generator that reads :math:`r` times costs :math:`r` copies alone; :math:`g` of them together
    cost the largest :math:`r`, not the sum (the factor caches of a rule's GP noise and of its
    information gain each test their appended rows once per round: one copy for both)."""
    results: list[Any] = [None] * len(steps)
    asked: dict[int, Tensor] = {}
    for i, step in enumerate(steps):
        try:
            asked[i] = next(step)
        except StopIteration as stop:
            results[i] = stop.value
    while asked:
        order = list(asked)
        values = host_values(*(asked[i] for i in order))
        asked = {}
        for i, value in zip(order, values):
            try:
                asked[i] = steps[i].send(value)
            except StopIteration as stop:
                results[i] = stop.value
    return results


def _moved(value: T, device: torch.device, dtype: torch.dtype | None) -> T:
    # non-blocking only towards a device: a copy to the host must be complete before it is read
    return value.to(device=device, dtype=dtype, non_blocking=device.type != "cpu")


def to_device(value: T, like: Tensor) -> T:
    r"""``value`` (a tensor or a module, on the host) on ``like``'s device and in its dtype (a
    module's floating parameters and buffers), copied without waiting for the device's stream.

    Only a copy to a device other than the CPU is non-blocking: one to the host would let the host
    read the values before they arrive.
    """
    return _moved(value, like.device, like.dtype)


def host_tensor(values, dtype: torch.dtype | None = None, device: torch.device | str | None = None) -> Tensor:
    r"""``torch.tensor(values, dtype=dtype, device=device)`` (Python numbers or nested lists), built
    on the host and copied to ``device`` as :func:`to_device` copies."""
    return _moved(torch.tensor(values, dtype=dtype), torch.device("cpu" if device is None else device), None)


def at_argmax(values: Tensor, *tensors: Tensor) -> tuple[Tensor, ...]:
    r"""``(best, top, *rows)``: the argmax of the 1-dim ``values`` as a 1-element index, its value
    and the row of each of ``tensors`` at it (``1 x ...``), all on the device. They are taken by
    ``index_select``: indexing with the 0-dim argmax would read it on the host first."""
    best = values.argmax().reshape(1)
    return (best, values.index_select(0, best), *(t.index_select(0, best) for t in tensors))


def as_device_tensor(value, dtype: torch.dtype | None = None, device: torch.device | str | None = None) -> Tensor:
    r"""``torch.as_tensor(value, dtype=dtype, device=device)`` with no wait: a tensor converted and
    moved (a host tensor without a wait, as :func:`to_device` moves it), Python numbers or nested
    lists built by :func:`host_tensor`."""
    if isinstance(value, Tensor):
        return _moved(value, value.device if device is None else torch.device(device), dtype)
    return host_tensor(value, dtype, device)
