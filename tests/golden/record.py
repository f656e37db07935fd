r"""Record the golden traces: ``python -m tests.golden.record [--check] [METHOD@PROBLEM ...]``.

Writes ``tests/golden/traces.json`` (all cases, or updates the named ones) with
:func:`~tests.golden.replay.record_trace`, one intra-op thread. Run it only for a deliberate
change of behaviour, in its own commit that says why.

``--check`` records nothing: it replays every named case (all by default) from the stored
traces on this machine and prints, per case, the largest distance between a replayed and a
recorded box point (box widths) and whether every decision is identical. On the machine
and thread count that recorded the traces, a policy whose ``load_state_dict`` restores
everything its next ``suggest`` depends on replays its continuous run exactly (distance 0).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import torch

from tests.golden.cases import CASES, SEEDS
from tests.golden.replay import record_trace, replay_trace, round_rows

PATH = Path(__file__).with_name("traces.json")


def write(traces: dict[str, Any]) -> None:
    r"""One line per case (readable diffs), keys sorted, compact JSON."""
    lines = [f"{json.dumps(key)}: {json.dumps(traces[key], separators=(',', ':'), sort_keys=True)}" for key in sorted(traces)]
    PATH.write_text("{\n" + ",\n".join(lines) + "\n}\n")


def check(keys: list[str]) -> bool:
    traces = json.loads(PATH.read_text())
    exact = True
    for case in CASES:
        if keys and case.key not in keys:
            continue
        start = time.perf_counter()
        worst, same = 0.0, True
        width = (case.make_problem().domain.bounds[1] - case.make_problem().domain.bounds[0]).tolist()
        for seed in SEEDS:
            trace = traces[case.key][str(seed)]
            for t, (got, want) in enumerate(zip(replay_trace(case, trace), trace["rounds"]), start=1):
                rows = trace["X"][round_rows(trace, case.q, t)]
                worst = max([worst] + [abs(a - b) / w for g, r in zip(got["x"], rows) for a, b, w in zip(g, r, width)])
                same &= all(got[k] == want[k] for k in ("selected", "n_candidates", "diagnostics"))
        exact &= worst == 0.0 and same
        print(f"{case.key}: max |x - x_rec| = {worst:.3g} box widths, decisions identical: {same} "
              f"({time.perf_counter() - start:.1f} s)", flush=True)
    return exact


def main(argv: list[str]) -> int:
    torch.set_num_threads(1)
    keys = [a for a in argv if a != "--check"]
    if "--check" in argv:
        return 0 if check(keys) else 1
    traces = json.loads(PATH.read_text()) if PATH.exists() else {}
    traces = {k: v for k, v in traces.items() if "rounds" in next(iter(v.values()), {})}  # drop the old layout
    for case in CASES:
        if keys and case.key not in keys:
            continue
        start = time.perf_counter()
        traces[case.key] = {str(seed): record_trace(case, seed) for seed in SEEDS}
        print(f"{case.key}: {time.perf_counter() - start:.1f} s", flush=True)
    write(traces)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
