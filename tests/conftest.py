r"""Test-session settings: torch threads per pytest-xdist worker.

Under ``pytest -n N`` every worker is a process that would otherwise start one torch thread per
core; each gets ``cores // N`` threads instead, so workers x threads never exceed the cores.
"""

from __future__ import annotations

import os

import torch


def pytest_configure(config) -> None:
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers:
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(workers)))
