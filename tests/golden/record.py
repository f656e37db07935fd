r"""Record the golden traces: ``python -m tests.golden.record [METHOD@PROBLEM ...]``.

Writes ``tests/golden/traces.json`` (all cases, or updates the named ones). Run it only
for a deliberate change of behaviour, in its own commit that says why.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

from tests.golden.cases import CASES, SEEDS, trace

PATH = Path(__file__).with_name("traces.json")


def main(keys: list[str]) -> None:
    torch.set_num_threads(1)
    traces = json.loads(PATH.read_text()) if PATH.exists() else {}
    for case in CASES:
        if keys and case.key not in keys:
            continue
        start = time.perf_counter()
        traces[case.key] = {str(seed): trace(case, seed) for seed in SEEDS}
        print(f"{case.key}: {time.perf_counter() - start:.1f} s", flush=True)
    PATH.write_text(json.dumps(traces, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
