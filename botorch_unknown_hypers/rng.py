r"""Seeded randomness without global state.

Every rule draws its randomness from its own ``torch.Generator`` (seeded at construction and
part of its saved state). Library calls that take an integer seed (Sobol raw samples, BoTorch's
``optimize_acqf`` options) get one from :func:`draw_seed`; calls that draw from the *global*
RNG (BoTorch's Boltzmann restart selection, random Fourier features of pathwise sample paths,
GPyTorch model fitting) run inside :func:`forked_rng`, which seeds a fork of the global RNG and
restores the caller's stream afterwards. A run is then deterministic given its seed, whatever
the caller does with the global RNG.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch

SEED_BOUND = 2**31 - 1
r"""Seeds are drawn uniformly from ``[0, SEED_BOUND)``."""


def draw_seed(generator: torch.Generator) -> int:
    r"""A fresh integer seed from ``generator`` (a CPU generator)."""
    return draw_seeds(generator, 1)[0]


def draw_seeds(generator: torch.Generator, count: int) -> list[int]:
    r"""``count`` fresh integer seeds from ``generator`` (a CPU generator) in one host copy: the
    seeds that ``count`` calls of :func:`draw_seed` in a row would draw, in order."""
    return torch.randint(0, SEED_BOUND, (count,), generator=generator).tolist()


@contextmanager
def forked_rng(seed: int, device: torch.device | str = "cpu") -> Iterator[None]:
    r"""Run a block with the global RNG (and ``device``'s, on CUDA) forked and seeded by ``seed``.
    Only the forked generators are seeded: with a CPU ``device`` a GPU's generator is left as it
    was (``torch.manual_seed`` would seed it too, and the fork would not restore it)."""
    device = torch.device(device)
    devices = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        if devices:
            torch.manual_seed(seed)
        else:
            torch.default_generator.manual_seed(seed)
        yield
