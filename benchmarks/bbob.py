r"""The BBOB benchmark: a grid of runs, kept as compact study records, resumable from them.

Functions x instances x dimensions x seeds x methods x noise, each run with the budget of
``docs/bbob.md`` (at dimension d: 2d Sobol points, then 10d rounds of one point). Every finished
run becomes a record in ``--records`` (default ``benchmarks/results/bbob``, committed:
``d{d}[-noisy]/{method}.jsonl.gz``, see ``botorch_unknown_hypers/benchmarks/records.py``); with
``--out`` it also gets a full JSON run file there (points included, not committed). Runs already
recorded (or with a complete run file) are skipped, so a sweep resumes on a fresh clone from the
committed records. Instances 1-5 are for development; the others (report instances) are refused
without ``--allow-report-instances``.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bbob.py --dims 2 --noise both \
        --functions 1-24 --instances 1-5 --seeds 0 --methods qlognei,optuna-gp,random
    python benchmarks/bbob.py --executor ray --workers 8 ...        # on Ray
    python benchmarks/bbob.py --dry-run ...                         # count only
    python benchmarks/bbob.py --methods 'lb-gp-ucb-auto[growth=1.01&restart=true]' ...  # a variant

Needs ``pip install "botorch-unknown-hypers[bbob,optuna]"``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from botorch_unknown_hypers.benchmarks.bbob import (
    DEFAULT_METHODS,
    budget,
    grid,
    make_executor,
    pending_specs,
    record_store,
    sweep,
)
from botorch_unknown_hypers.benchmarks.study import code_version
from botorch_unknown_hypers.benchmarks.study import parse_ids as parse_seeds

RECORDS = Path(__file__).resolve().parent / "results" / "bbob"


def split_methods(text: str) -> list[str]:
    r"""``"a,b[k=[1,2]&j=x],c"`` -> ``["a", "b[k=[1,2]&j=x]", "c"]``: commas split methods only outside brackets."""
    methods, depth, start = [], 0, 0
    for i, ch in enumerate(text + ","):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            methods.append(text[start:i].strip())
            start = i + 1
    return [m for m in methods if m]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=Path, default=RECORDS,
                   help="the study's record store (default: benchmarks/results/bbob, committed)")
    p.add_argument("--out", type=Path, default=None,
                   help="also write full run files (points included) to this folder, outside the repository")
    p.add_argument("--functions", default="1-24", help="BBOB function ids, e.g. 1-24 or 1,3,5 (default 1-24)")
    p.add_argument("--instances", default="1-5", help="instance ids (default: the development instances 1-5)")
    p.add_argument("--dims", default="5", help="dimensions, e.g. 2,5,10 (default 5)")
    p.add_argument("--seeds", default="0", help="run seeds, e.g. 0-4 (default 0)")
    p.add_argument("--methods", default=",".join(DEFAULT_METHODS),
                   help="comma-separated methods, each name or name[key=value&...] (a variant with options, "
                        "e.g. 'lb-gp-ucb-auto[growth=1.01&restart=true]'; commas inside brackets stay in the option)")
    p.add_argument("--noise", choices=("none", "noisy", "both"), default="none",
                   help="noise-free problems, the noisy variants, or both (default none)")
    p.add_argument("--executor", choices=("local", "ray"), default="local")
    p.add_argument("--workers", type=int, default=1, help="worker processes (local) or CPUs of a local Ray instance")
    p.add_argument("--threads", type=int, default=1, help="torch threads per worker (default 1)")
    p.add_argument("--ray-address", default=None, help="address of a running Ray cluster (default: start one)")
    p.add_argument("--allow-report-instances", action="store_true",
                   help="allow instances outside 1-5 (the report; never during development)")
    p.add_argument("--code-version", default=None,
                   help="commit recorded in every run file (default: this checkout's, from git)")
    p.add_argument("--dry-run", action="store_true", help="print the grid's size and the runs left, run nothing")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    noise = {"none": (False,), "noisy": (True,), "both": (False, True)}[args.noise]
    try:
        specs = grid(
            functions=parse_seeds(args.functions),
            instances=parse_seeds(args.instances),
            dims=parse_seeds(args.dims),
            seeds=parse_seeds(args.seeds),
            methods=split_methods(args.methods),
            noise=noise,
            allow_report=args.allow_report_instances,
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    store = record_store(args.records)
    todo = pending_specs(specs, args.out, store)
    budgets = ", ".join(f"d={d}: {budget(d)[0]} + {budget(d)[1]}" for d in parse_seeds(args.dims))
    print(f"{len(specs)} runs in the grid, {len(todo)} to do; budget (n_init + rounds of q = 1) {budgets}; "
          f"{args.executor} executor, {args.workers} worker(s) x {args.threads} thread(s).", flush=True)
    if args.dry_run or not todo:
        return 0
    executor = make_executor(args.executor, workers=args.workers, threads=args.threads, ray_address=args.ray_address)
    extra = {"threads": args.threads, "executor": args.executor, "workers": args.workers, "code": args.code_version or code_version()}
    runs = sweep(specs, args.out, executor, extra=extra, progress=not args.no_progress, store=store)
    failed = sum(path is None for _, path in runs)
    where = args.out if args.out is not None else args.records
    print(f"done: {len(todo) - failed} run(s) recorded, {failed} failed (see {where / 'failures.jsonl'}).", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
