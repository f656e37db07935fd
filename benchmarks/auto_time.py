r"""Where `auto`'s proposal time goes, against BoTorch's default, paired in one run.

The BBOB reports compare median proposal times of runs made in different sweeps, under different
loads. This script runs ``auto`` and ``qlognei`` on the same BBOB problems one after the other in
one process (the order alternating from problem to problem), and prints per problem the process
CPU time of each run's proposals, then the median of the per-problem ratios ``auto / qlognei``.
With ``--profile`` each run also runs under ``cProfile``, and the CPU seconds of its parts are
summed: BoTorch's MAP fits (``fit_default_single_task_gp``: ``qlognei``'s model every round;
``auto``'s standing candidate every round and its proposals as the data double), the
acquisition's maximisation (``maximize_acquisition``, which includes ``auto``'s posterior-mean
maximiser), the posterior-mean maximiser alone, the candidates' log marginal likelihoods, and the
rest of the proposals. The profiler slows every run (the parts' shares, not their seconds, are
the result then)::

    OMP_NUM_THREADS=1 python benchmarks/auto_time.py --functions 1-24 --instances 1
    OMP_NUM_THREADS=1 python benchmarks/auto_time.py --functions 1,8,15,21 --instances 1 --profile

Only development instances (1-5) are accepted: timing chooses nothing, but it reads no report
instance either.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time

from botorch_unknown_hypers.benchmarks.bbob import grid, run_bbob
from botorch_unknown_hypers.benchmarks.study import parse_ids

PARTS = {
    "MAP fits": ("fitted.py", "fit_default_single_task_gp"),
    "acquisition search": ("multistart.py", "maximize_acquisition"),
    "posterior-mean maximiser": ("thompson.py", "posterior_mean_maximizer"),
    "log marginal likelihoods": ("candidate_gp.py", "log_marginal_likelihood"),
    "suggest": ("base.py", "suggest"),
}
r"""Part -> (file, function) whose cumulative time is the part's."""


def parts(profile: cProfile.Profile) -> dict[str, float]:
    r"""Cumulative seconds of each of :data:`PARTS` in ``profile`` (0 for a part never called; of
    two functions of one name in the file, nested in each other, the outer one's)."""
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    out = dict.fromkeys(PARTS, 0.0)
    for (filename, _, name), (_, _, _, cumulative, _) in stats.items():
        for part, (file, function) in PARTS.items():
            if name == function and filename.endswith(file):
                out[part] = max(out[part], cumulative)
    return out


def timed(spec, profile: bool) -> dict[str, object]:
    r"""One run: the CPU seconds of its proposals (and of its parts, profiled)."""
    profiler = cProfile.Profile(time.process_time) if profile else None
    if profiler is not None:
        profiler.enable()
    history = run_bbob(spec)
    if profiler is not None:
        profiler.disable()
    if history.attrs.get("error"):
        raise RuntimeError(history.attrs["error"])
    first = history.drop_duplicates("iteration")
    out: dict[str, object] = {"cpu": float(history.attrs["cpu_s"]), "proposal_wall": float(first["wall_time_s"].sum())}
    if profiler is not None:
        out["parts"] = parts(profiler)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--functions", default="1-24")
    parser.add_argument("--instances", default="1", help="development instances only (1-5)")
    parser.add_argument("--dim", type=int, default=2)
    parser.add_argument("--noisy", action="store_true")
    parser.add_argument("--methods", default="auto,qlognei", help="two methods: the second is the reference of the ratios")
    parser.add_argument("--profile", action="store_true", help="also time the parts of each run under cProfile")
    args = parser.parse_args(argv)
    methods = args.methods.split(",")
    if len(methods) != 2:
        raise SystemExit(f"--methods: expected two methods, got {methods}.")
    specs = grid(functions=parse_ids(args.functions), instances=parse_ids(args.instances), dims=(args.dim,),
                 methods=methods, noise=(args.noisy,))
    pairs = [specs[i:i + 2] for i in range(0, len(specs), 2)]
    rows, ratios = [], []
    print(f"| problem | {methods[0]} CPU s | {methods[1]} CPU s | ratio | {methods[0]} proposals wall s | {methods[1]} proposals wall s |")
    print("|---|---|---|---|---|---|")
    for i, pair in enumerate(pairs):
        order = pair if i % 2 == 0 else pair[::-1]
        result = {spec.key[1]: timed(spec, args.profile) for spec in order}
        a, b = (result[m] for m in methods)
        ratio = a["cpu"] / b["cpu"]
        ratios.append(ratio)
        rows.append(result)
        print(f"| {pair[0].problem} | {a['cpu']:.2f} | {b['cpu']:.2f} | {ratio:.2f} | {a['proposal_wall']:.2f} | {b['proposal_wall']:.2f} |",
              flush=True)
    medians = [statistics.median(float(r[m]["cpu"]) for r in rows) for m in methods]
    print(f"\n{len(rows)} problems: median CPU s per run {methods[0]} {medians[0]:.2f}, {methods[1]} {medians[1]:.2f}; "
          f"median of the per-problem ratios {statistics.median(ratios):.2f} (range {min(ratios):.2f}-{max(ratios):.2f})")
    if args.profile:
        print("\nProfiled CPU seconds per run, mean over the problems (the profiler's overhead included):\n")
        print("| part | " + " | ".join(methods) + " |")
        print("|---|" + "---|" * len(methods))
        for part in PARTS:
            print(f"| {part} | " + " | ".join(f"{statistics.fmean(r[m]['parts'][part] for r in rows):.2f}" for m in methods) + " |")


if __name__ == "__main__":
    main()
