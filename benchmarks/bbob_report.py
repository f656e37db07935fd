r"""Aggregates of a BBOB sweep: ECDFs of targets reached, paired tables, average ranks.

Reads the run files of ``benchmarks/bbob.py`` under ``--out`` and writes, per dimension and
noise setting, ``report.md`` with the area under the ECDF and the median wall and CPU time per
run of each method, the average-rank table and the per-function table of mean final simple regret
with paired differences against ``--reference``, the tables as CSV, and the ECDF plots against
evaluations and against wall time (``botorch_unknown_hypers/benchmarks/bbob_report.py`` defines
every quantity; ``docs/bbob.md`` explains them).

Usage::

    python benchmarks/bbob_report.py --out runs/bbob-dev --reference qlognei
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from botorch_unknown_hypers.benchmarks.bbob_report import write_report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder of the run files")
    p.add_argument("--reference", default="qlognei", help="method of the paired differences (default qlognei)")
    p.add_argument("--report-dir", type=Path, default=None, help="where to write (default OUT/report)")
    args = p.parse_args(argv)
    try:
        path = write_report(args.out, reference=args.reference, report_dir=args.report_dir)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
