r"""Several tensors' values on the host in one copy.

Each read of a device value on the host (``.item()``, ``float()``, ``.tolist()``) is a
synchronisation on CUDA. Where a step needs several small tensors' values as Python numbers (a
rule's decision and its diagnostics, a candidate set's JSON), :func:`host_values` concatenates
them, flattened, in ``float64`` on the first tensor's device and copies them to the host once.
``float64`` holds every ``float32`` and ``float64`` value and every integer of magnitude below
:math:`2^{53}` exactly, so each value is the one its own ``tolist()`` would give (integers as
floats).
"""

from __future__ import annotations

import torch
from torch import Tensor


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
