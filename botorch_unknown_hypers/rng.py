r"""Seeded use of the global torch RNG without disturbing the caller's.

BoTorch draws from the global RNG in a few places (Boltzmann restart selection in
``optimize_acqf``, random Fourier features of pathwise sample paths, GPyTorch
model fitting). Rules and tasks here must be deterministic given their own seed
and must not change the caller's RNG stream, so such calls run inside
:func:`forked_rng`.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch


@contextmanager
def forked_rng(seed: int, device: torch.device | str = "cpu") -> Iterator[None]:
    r"""Run a block with the global RNG (and ``device``'s, on CUDA) forked and seeded by ``seed``."""
    device = torch.device(device)
    devices = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield
