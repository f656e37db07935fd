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
    python benchmarks/bbob_report.py --out benchmarks/results/bbob --instances 1-5 --dims 2 \
        --admissible qlognei --variants 'auto;auto[probe=0.1]'

``--out`` may be a folder of run files or a study's record store (``benchmarks/results/bbob``);
``--instances`` and ``--dims`` keep only those runs. ``--admissible REFERENCE --variants A;B``
prints the ``auto`` decision rule of ``docs/bbob.md`` (``admissible_variants``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from botorch_unknown_hypers.benchmarks.bbob_report import (
    admissible_variants,
    load_runs,
    report_bars,
    runs_frame,
    variant_decision,
    write_report,
)
from botorch_unknown_hypers.benchmarks.study import parse_ids


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder of the run files")
    p.add_argument("--reference", default="qlognei", help="method of the paired differences (default qlognei)")
    p.add_argument("--report-dir", type=Path, default=None, help="where to write (default OUT/report)")
    p.add_argument("--decide", default=None, metavar="BASELINE", help="print the variants' decision against this method")
    p.add_argument("--variants", default="", help="';'-separated variant labels for --decide")
    p.add_argument("--expected", type=int, default=240, help="problems of the development grid (default 240)")
    p.add_argument("--bars", action="store_true", help="print only the bars of the presets against the peers")
    p.add_argument("--admissible", default=None, metavar="REFERENCE",
                   help="print the auto rule (admissible variants against REFERENCE) for --variants")
    p.add_argument("--instances", default=None, help="only these instances, e.g. 1-5 or 16-25")
    p.add_argument("--dims", default=None, help="only these dimensions, e.g. 2 or 2,5")
    args = p.parse_args(argv)
    try:
        instances = parse_ids(args.instances) if args.instances is not None else None
        dims = set(parse_ids(args.dims)) if args.dims is not None else None
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    def frame_of_runs():
        runs = load_runs(args.out, instances=instances)
        if dims is not None:
            runs = [r for r in runs if r["config"]["dim"] in dims]
        return runs_frame(runs)

    if args.admissible is not None:
        variants = [v for v in args.variants.split(";") if v]
        frame = frame_of_runs()
        if not variants or frame.empty:
            print("error: --admissible needs --variants and runs under --out", file=sys.stderr)
            return 2
        table, kept = admissible_variants(frame, args.admissible, variants, expected_pairs=args.expected)
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        print(f"kept: {kept}" if kept is not None else f"kept: not decided (fewer than {args.expected} paired problems)")
        return 0
    if args.bars:
        frame = frame_of_runs()
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
        frame = frame_of_runs()
        if frame.empty:
            print(f"error: out: no complete BBOB run files under {args.out}.", file=sys.stderr)
            return 2
        table, kept = variant_decision(frame, args.decide, variants, expected_pairs=args.expected)
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        print(f"kept: {kept}" if kept is not None else f"kept: not decided (fewer than {args.expected} paired problems)")
        return 0
    try:
        path = write_report(args.out, reference=args.reference, report_dir=args.report_dir, instances=instances,
                            dims=sorted(dims) if dims is not None else None)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
