r"""Replay of the golden traces (``tests/golden/traces.json``, written by ``record.py``).

Every registered method's first rounds on a box and, where it supports one, a pool must
stay what they were when the traces were recorded: the same pool points exactly, box
points to 1e-6, the same selected candidates and surviving sets.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from botorch_unknown_hypers.policies.registry import list_methods
from tests.golden.cases import CASES, SEEDS, close, trace

TRACES = json.loads(Path(__file__).with_name("traces.json").read_text())
BOX_ATOL = 1e-6
FLOAT_ATOL = 1e-6


@pytest.fixture(autouse=True)
def one_thread():
    r"""Traces are recorded with one intra-op thread: reductions then add in one order."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_every_registered_method_has_a_trace():
    traced = {case.method for case in CASES}
    assert set(list_methods()) <= traced, sorted(set(list_methods()) - traced)
    assert {case.key for case in CASES} == set(TRACES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_trace_is_unchanged(case):
    for seed in SEEDS:
        expected = TRACES[case.key][str(seed)]
        got = trace(case, seed)
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
