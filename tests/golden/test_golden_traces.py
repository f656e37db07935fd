r"""Replay of the golden traces (``tests/golden/traces.json``, written by ``record.py``).

Every registered method's first rounds on a box and, where it supports one, a pool must
stay what they were when the traces were recorded: the same pool points exactly, box
points to 1e-6, the same selected candidates and surviving sets. The traces of the selected
cases are computed once, in worker processes with one intra-op thread each (as recorded),
one per core, and each case's test compares its own.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pytest
import torch

from botorch_unknown_hypers.policies.registry import list_methods
from tests.golden.cases import CASES, SEEDS, close, trace

TRACES = json.loads(Path(__file__).with_name("traces.json").read_text())
BOX_ATOL = 1e-6
FLOAT_ATOL = 1e-6


CASES_BY_KEY = {case.key: case for case in CASES}


def _trace_with_one_thread(key: str, seed: int) -> list[dict[str, Any]]:
    r"""Traces are recorded with one intra-op thread: reductions then add in one order."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return trace(CASES_BY_KEY[key], seed)
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def replayed(request: pytest.FixtureRequest) -> dict[tuple[str, int], Future]:
    r"""Futures of the traces of the cases this session runs, computed on every core."""
    keys = [item.callspec.params["case"].key for item in request.session.items
            if item.originalname == "test_trace_is_unchanged" and hasattr(item, "callspec")]
    jobs = [(key, seed) for key in keys for seed in SEEDS]
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers <= 1:
        futures: dict[tuple[str, int], Future] = {}
        for job in jobs:
            futures[job] = Future()
            futures[job].set_result(_trace_with_one_thread(*job))
        return futures
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        return {job: pool.submit(_trace_with_one_thread, *job) for job in jobs}


def test_every_registered_method_has_a_trace():
    traced = {case.method for case in CASES}
    assert set(list_methods()) <= traced, sorted(set(list_methods()) - traced)
    assert {case.key for case in CASES} == set(TRACES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_trace_is_unchanged(case, replayed):
    for seed in SEEDS:
        expected = TRACES[case.key][str(seed)]
        got = replayed[(case.key, seed)].result()
        assert len(got) == len(expected)
        for t, (g, e) in enumerate(zip(got, expected), start=1):
            where = f"{case.key}, seed {seed}, round {t}"
            if case.pool:
                assert g["index"] == e["index"], where
            else:
                assert close(g["x"], e["x"], BOX_ATOL), f"{where}: {g['x']} != {e['x']}"
            assert g["selected"] == e["selected"], where
            assert g["n_candidates"] == e["n_candidates"], where
            assert close(g.get("diagnostics") or None, e.get("diagnostics") or None, FLOAT_ATOL), where
