r"""Replay of the golden traces (``tests/golden/traces.json``, written by ``record.py``).

Every registered method's first rounds on a box and, where it supports one, a pool must stay
what they were when recorded. Each round is replayed from the recorded data and policy state
(:mod:`tests.golden.replay`), so a last-bit difference of a CPU kernel (AVX-512 against AVX2,
MKL's code paths, thread counts) changes one round by last bits and cannot compound.

- **Decisions, exactly**: pool points (indices), ``selected``, ``n_candidates`` and the
  decision diagnostics (played candidate, active / alive sets, selected prior, StableOpt's
  ``u`` / ``v``); ``run``'s initial design and its noisy values to :data:`DATA_RTOL`.
- **Box points, to the resolution of the optimiser's stopping rule.** They come from
  multi-start L-BFGS-B in BoTorch's ``gen_candidates_scipy`` (``maxiter`` 2000, 200 in the
  package's batched per-candidate maximiser; otherwise the defaults of scipy's L-BFGS-B and
  ``fmin_l_bfgs_b_batched``): it stops when :math:`(f_k - f_{k+1}) / \max(|f_k|, |f_{k+1}|, 1)
  \le \mathrm{ftol} = \mathrm{factr}\,\epsilon = 10^7\epsilon \approx 2.2\cdot10^{-9}`, when
  the projected gradient is below ``pgtol = 1e-5``, or when the line search fails (ABNORMAL).
  Near a maximiser :math:`u^*` (coordinates scaled to :math:`[0, 1]`) with curvature
  :math:`\lambda` along the last step, :math:`f(u^*) - f(u) \approx \tfrac12\lambda\|u -
  u^*\|^2`, so a stop on the ``ftol`` test places :math:`u` only within
  :math:`\sqrt{2\,\mathrm{ftol}\max(|f|, 1)/\lambda}` of :math:`u^*`. Two replays whose values
  differ in the last bits take the same iterates until a stopping test is decided by a
  rounding-level difference and may then stop one step apart inside that ball. With the
  curvature of an acquisition at its maximiser at least :math:`\max(|f|, 1)` per squared box
  width (about :math:`|f|/\ell^2` for lengthscales :math:`\ell \le 1`), this gives
  :data:`BOX_TOL` :math:`= \sqrt{2\,\mathrm{ftol}} \approx 6.7\cdot10^{-5}` box widths
  (max-norm). A line-search failure happens where value differences along the direction fall
  below rounding, within :math:`\sqrt{\epsilon\max(|f|,1)/\lambda}` of :math:`u^*`, a ball
  :math:`\sqrt{10^7}` times smaller, so the same tolerance covers it (the AVX-512 run of
  ``kb-ei@bird2`` that ended ABNORMAL was :math:`3.6\cdot10^{-7}` box widths away after five
  compounding rounds). On a flat ridge the sounder test compares acquisition values,
  :math:`a(x_\mathrm{new}) \ge a(x_\mathrm{rec}) - \mathrm{ftol}\max(|a|, 1)` on the same
  recorded state, but a policy builds its acquisition inside ``suggest`` and the public API
  does not expose it.

Replays run once per session, in worker processes (one per ``BUH_GOLDEN_THREADS`` cores) with
``BUH_GOLDEN_THREADS`` intra-op threads each (default 1, as recorded); under pytest-xdist, whose
workers already hold the cores, in the test's own process.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import os
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pytest
import torch

from botorch_unknown_hypers.policies.registry import list_methods
from tests.golden.cases import CASES, ROUNDS, SEEDS, Case
from tests.golden.replay import replay_trace, round_rows

TRACES = json.loads(Path(__file__).with_name("traces.json").read_text())
FTOL = 1e7 * torch.finfo(torch.float64).eps
r"""L-BFGS-B's relative-decrease stopping test (``factr = 1e7``, BoTorch's and scipy's default)."""
BOX_TOL = math.sqrt(2 * FTOL)
r"""Largest distance of a replayed box point from the recorded one, in box widths (max-norm)."""
DATA_RTOL = 1e-6
r"""Tolerance (relative, and absolute near 0) of the initial design and its noisy values: an
objective may itself be a linear-algebra computation (the hills task's differs by 4e-9
between torch's AVX2 and default kernels), while any change of the design or of the noise
moves values by the noise scale (0.01 or more)."""

CASES_BY_KEY = {case.key: case for case in CASES}


def golden_threads() -> int:
    r"""Intra-op threads of a replay (``BUH_GOLDEN_THREADS``, default 1 as recorded)."""
    text = os.environ.get("BUH_GOLDEN_THREADS", "1")
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"BUH_GOLDEN_THREADS must be a positive integer, got {text!r}.")
    return int(text)


def _replay(key: str, seed: int, threads: int) -> list[dict[str, Any]]:
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return replay_trace(CASES_BY_KEY[key], TRACES[key][str(seed)])
    finally:
        torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def replayed(request: pytest.FixtureRequest) -> dict[tuple[str, int], Future]:
    r"""Futures of the replayed rounds of the cases this session runs, computed on every core."""
    keys = [item.callspec.params["case"].key for item in request.session.items
            if item.originalname == "test_trace_is_unchanged" and hasattr(item, "callspec")]
    jobs = [(key, seed) for key in keys for seed in SEEDS]
    threads = golden_threads()
    # Under pytest-xdist the other test workers already hold the cores: replay in this process
    # (a pool there would oversubscribe them and pay its processes' start-up besides).
    cores = 1 if os.environ.get("PYTEST_XDIST_WORKER") else (os.cpu_count() or 1)
    workers = min(len(jobs), max(1, cores // threads))
    if workers <= 1:
        futures: dict[tuple[str, int], Future] = {}
        for job in jobs:
            futures[job] = Future()
            futures[job].set_result(_replay(*job, threads))
        return futures
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        return {job: pool.submit(_replay, *job, threads) for job in jobs}


@functools.cache
def _domain(key: str, seed: int) -> Any:
    r"""The domain of ``key``'s problem at run ``seed`` (a pool may depend on the seed)."""
    return CASES_BY_KEY[key].make_problem().instance(seed).domain


def box_distance(domain: Any, got: list[list[float]], want: list[list[float]]) -> float:
    r"""Max-norm distance between two ``q x d`` batches in box widths of ``domain``."""
    width = (domain.bounds[1] - domain.bounds[0]).tolist()
    return max(abs(a - b) / w for g, r in zip(got, want) for a, b, w in zip(g, r, width))


def differences(case: Case, trace: dict[str, Any], got: list[dict[str, Any]]) -> list[str]:
    r"""What differs between the replayed rounds ``got`` and the recorded ``trace`` (empty: the
    trace holds), under the tolerances of the module docstring."""
    out: list[str] = []
    if len(got) != len(trace["rounds"]):
        return [f"{len(got)} rounds replayed, {len(trace['rounds'])} recorded"]
    n_init = trace["n_init"]
    first = got[0]
    for name, have, want in (("initial design", [v for row in first["initial_X"] for v in row], [v for row in trace["X"][:n_init] for v in row]),
                             ("initial values", first["initial_Y"], trace["Y"][:n_init])):
        if len(have) != len(want) or any(not math.isclose(a, b, rel_tol=DATA_RTOL, abs_tol=DATA_RTOL) for a, b in zip(have, want)):
            out.append(f"{name}: {have} != {want}")
    domain = _domain(case.key, trace["seed"])
    for t, (g, e) in enumerate(zip(got, trace["rounds"]), start=1):
        where = f"round {t}"
        rows = trace["X"][round_rows(trace, case.q, t)]
        if case.pool:
            index = domain.index_of(torch.tensor(g["x"], dtype=torch.float64), atol=1e-8).tolist()
            expected = domain.index_of(torch.tensor(rows, dtype=torch.float64), atol=1e-8).tolist()
            if index != expected:
                out.append(f"{where}: pool points {index} != recorded {expected}")
        else:
            distance = box_distance(domain, g["x"], rows)
            if not distance <= BOX_TOL:
                out.append(f"{where}: points {g['x']} are {distance:.3g} box widths from the recorded {rows} (> {BOX_TOL:.3g})")
        for key in ("selected", "n_candidates", "diagnostics"):
            if g[key] != e[key]:
                out.append(f"{where}: {key} {g[key]} != recorded {e[key]}")
    return out


def test_every_registered_method_has_a_trace():
    traced = {case.method for case in CASES}
    assert set(list_methods()) <= traced, sorted(set(list_methods()) - traced)
    assert {case.key for case in CASES} == set(TRACES)
    for key, traces in TRACES.items():
        assert sorted(traces) == sorted(map(str, SEEDS)), key
        assert all(len(trace["rounds"]) == ROUNDS for trace in traces.values()), key


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_trace_is_unchanged(case, replayed):
    for seed in SEEDS:
        found = differences(case, TRACES[case.key][str(seed)], replayed[(case.key, seed)].result())
        assert not found, f"{case.key}, seed {seed}:\n" + "\n".join(found)


# ------------------------------------------------------------------ the replay can fail
@pytest.fixture(scope="module")
def random_box() -> tuple[Case, dict[str, Any], list[dict[str, Any]]]:
    r"""``random@bird2`` at seed 0 (cheap), its trace and its replay (first 3 rounds)."""
    case = CASES_BY_KEY["random@bird2"]
    trace = TRACES[case.key]["0"]
    trace = {**trace, "rounds": trace["rounds"][:3]}
    return case, trace, replay_trace(case, trace, rounds=3)


def test_replay_matches_its_own_trace(random_box):
    case, trace, got = random_box
    assert differences(case, trace, got) == []


@pytest.mark.parametrize("perturb", ["point", "decision", "n_candidates", "initial"])
def test_a_perturbed_record_is_detected(random_box, perturb):
    case, trace, got = random_box
    trace = json.loads(json.dumps(trace))
    if perturb == "point":  # a box point moved by 2 tolerances
        row = round_rows(trace, case.q, 2).start
        width = float(case.make_problem().domain.bounds[1, 0] - case.make_problem().domain.bounds[0, 0])
        trace["X"][row][0] += 2 * BOX_TOL * width
    elif perturb == "decision":
        trace["rounds"][1]["diagnostics"] = {"played": 1}
        trace["rounds"][2]["selected"] = ["x", ""]
    elif perturb == "n_candidates":
        trace["rounds"][0]["n_candidates"] = 1
    else:
        trace["Y"][0] += 1e-3
    assert differences(case, trace, got) != []


def test_a_perturbed_pool_decision_is_detected():
    r"""A pool trace: a different recorded pool point is a difference."""
    case = CASES_BY_KEY["random@golden-pool"]
    trace = TRACES[case.key]["0"]
    trace = json.loads(json.dumps({**trace, "rounds": trace["rounds"][:2]}))
    got = replay_trace(case, trace, rounds=2)
    assert differences(case, trace, got) == []
    row = round_rows(trace, case.q, 2).start
    trace["X"][row] = trace["X"][0]  # another pool point (the first initial one)
    assert any("pool points" in d for d in differences(case, trace, got))


def test_the_replay_reads_the_recorded_state_and_data():
    r"""The replayed round depends on what was recorded: another generator state moves a random
    point, other observed values move a model-based rule's point."""
    case = CASES_BY_KEY["random@bird2"]
    trace = json.loads(json.dumps(TRACES[case.key]["0"]))
    trace["rounds"] = trace["rounds"][:2]
    generator = torch.Generator().manual_seed(12345)
    torch.rand(7, generator=generator)  # a state unlike any seed's fresh state
    trace["rounds"][1]["start"]["generator"] = [[0, base64.b64encode(bytes(generator.get_state().tolist())).decode()]]
    got = replay_trace(case, trace, rounds=2)
    assert any("box widths" in d and d.startswith("round 2") for d in differences(case, trace, got))

    case = CASES_BY_KEY["mle-gp-ucb@golden-pool"]
    trace = json.loads(json.dumps(TRACES[case.key]["0"]))
    trace["rounds"] = trace["rounds"][:2]
    assert differences(case, trace, replay_trace(case, trace, rounds=2)) == []
    trace["Y"] = [-v for v in trace["Y"]]  # the data say the opposite
    assert any(d.startswith("round 2") for d in differences(case, trace, replay_trace(case, trace, rounds=2)))
