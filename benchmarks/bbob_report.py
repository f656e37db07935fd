r"""Aggregates of a BBOB sweep: ECDFs of targets reached, paired tables, average ranks.

Reads the run files of ``benchmarks/bbob.py`` under ``--out`` and writes, per dimension and
noise setting, ``report.md`` with the area under the ECDF and the median wall and CPU time per
run of each method, the average-rank table and the per-function table of mean final simple regret
with paired differences against ``--reference``, the tables as CSV, and the ECDF plots against
evaluations and against wall time (``botorch_unknown_hypers/benchmarks/bbob_report.py`` defines
every quantity; ``docs/bbob.md`` explains them).

``--decide BASELINE --variants A;B`` instead prints the decision rule of ``docs/bbob.md``
("Choosing the `auto` presets") for the variants against the baseline: per variant the paired
difference of the scores, its SE, the functions significantly better and worse, whether it
beats the baseline, and the label kept once every problem of the grid (``--expected``, 240 at
d = 5) has both runs.

``--bars`` prints only the bars of the report (``report_bars``): for each ``auto`` preset against
``qlognei`` and ``optuna-gp``, per dimension and noise setting, the areas under the ECDFs, the
fractions of functions where the preset is lower and significantly worse, the smallest number of
pairs per function, the median proposal times and whether every bar holds.

Usage::

    python benchmarks/bbob_report.py --out runs/bbob-dev --reference qlognei
    python benchmarks/bbob_report.py --out runs/bbob-dev --decide lb-gp-ucb-auto \
        --variants 'lb-gp-ucb-auto[growth=1.01&restart=true];lb-gp-ucb-auto[acquisition=lognei]'
    python benchmarks/bbob_report.py --out runs/bbob-report --bars
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from botorch_unknown_hypers.benchmarks.bbob_report import load_runs, report_bars, runs_frame, variant_decision, write_report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder of the run files")
    p.add_argument("--reference", default="qlognei", help="method of the paired differences (default qlognei)")
    p.add_argument("--report-dir", type=Path, default=None, help="where to write (default OUT/report)")
    p.add_argument("--decide", default=None, metavar="BASELINE", help="print the variants' decision against this method")
    p.add_argument("--variants", default="", help="';'-separated variant labels for --decide")
    p.add_argument("--expected", type=int, default=240, help="problems of the development grid (default 240)")
    p.add_argument("--bars", action="store_true", help="print only the bars of the presets against the peers")
    args = p.parse_args(argv)
    if args.bars:
        frame = runs_frame(load_runs(args.out))
        bars = report_bars(frame) if not frame.empty else frame
        if bars.empty:
            print(f"error: out: no group under {args.out} has a preset and a peer with common runs.", file=sys.stderr)
            return 2
        print(bars.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        return 0
    if args.decide is not None:
        variants = [v for v in args.variants.split(";") if v]
        if not variants:
            print("error: --decide needs --variants", file=sys.stderr)
            return 2
        frame = runs_frame(load_runs(args.out))
        if frame.empty:
            print(f"error: out: no complete BBOB run files under {args.out}.", file=sys.stderr)
            return 2
        table, kept = variant_decision(frame, args.decide, variants, expected_pairs=args.expected)
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        print(f"kept: {kept}" if kept is not None else f"kept: not decided (fewer than {args.expected} paired problems)")
        return 0
    try:
        path = write_report(args.out, reference=args.reference, report_dir=args.report_dir)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
