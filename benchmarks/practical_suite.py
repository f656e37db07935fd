r"""The practical suite: the unknown-hyperparameter rules against BoTorch's default.

Ten problems, one configuration per method, no per-problem settings. The ``auto`` presets' choices
were made on development seeds (100-104) of these same problems, so the suite tells how they do
on the seeds 0-9 of known problems; the BBOB benchmark (``bbob.py``, ``docs/bbob.md``) is the one
too broad to tune to. Boxes run T = 60 rounds and pools T = 50, after 10 initial points (Sobol on a box,
random pool points), one point per round. Each finished (problem, method, seed) becomes a compact
record in ``--records`` (default ``benchmarks/results/practical``, committed:
``{problem}/{method}.jsonl.gz``, the values per evaluation left out) and a full JSON file under
``--out`` (scratch, not committed); a run already recorded or with a file is skipped, so a sweep
resumes on a fresh clone from the committed records. ``--report`` reads the records (and the files
under ``--out``) and writes to ``--report-dir`` ``report.md`` (per problem: final simple regret and
cumulative regret, mean ± SE over the seeds present; the paired difference against ``qlognei``,
``optuna-gp`` and ``mle-gp-ucb``, mean ± SE, marked ``*`` when it exceeds 2 SE; the median wall time per run;
then the issue's bars, with the areas under the ECDFs of BBOB's targets on the simple regret divided
by each problem's spread) and one figure of simple-regret curves with SE bands per problem.

Simple regret after evaluation :math:`i` is :math:`f^* - \max_{j \le i} f(x_j)` (initial design
included); cumulative regret is :math:`\sum_{t=1}^T (f^* - f(x_t))` over BO rounds. A method is
``name`` or ``name[key=value&...]`` (options as for ``buh run --option``, JSON values); ``qlognei``
means BoTorch's default surrogate (``surrogate=fitted``) on every problem, and ``optuna-gp`` Optuna's
``GPSampler`` with its defaults (``botorch_unknown_hypers.integrations.peers``; on the two pools it
plays the nearest pool point not yet observed to each point it asks).

Usage::

    python benchmarks/practical_suite.py --seeds 100-104 --out runs/practical-dev     # development
    python benchmarks/practical_suite.py --seeds 0-9                                  # report seeds
    python benchmarks/practical_suite.py --report --seeds 0-9 --report-dir runs/practical-report
    python benchmarks/practical_suite.py --out runs/search --seeds 100-104 --decide search=torch \
        --problems branin,rosenbrock4,ackley5,hartmann6,griewank8,michalewicz5,berkenkamp,gp-rbf3 \
        --methods 'lb-gp-ucb-auto;he-gp-ucb-auto;lb-gp-ucb;he-gp-ucb;mle-gp-ucb;qlognei'

``--decide KEY=VALUE`` applies the rule for making an option a default (``option_decision``):
every (method, problem) pair's paired difference of final simple regret, ``method[KEY=VALUE]``
minus ``method``, not above 2 SE; no decision while a run is missing.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import platform
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from botorch_unknown_hypers.benchmarks.practical_suite import (  # noqa: F401  (the suite's definition, re-exported)
    BASE_OPTIONS,
    KEY_FIELDS,
    METHODS,
    N_INIT,
    PROBLEMS,
    SPREAD_POINTS,
    T_BOX,
    T_POOL,
    beyond_2se,
    fmt,
    mean_se,
    paired,
    parse_method,
    practical_frame,
    problem_spread,
)
from botorch_unknown_hypers.benchmarks.records import RecordStore
from botorch_unknown_hypers.benchmarks.study import code_version, counted_warnings, parse_ids

DIFFERENCES = (("qlognei", "final_simple_regret"), ("qlognei", "cumulative_regret"), ("optuna-gp", "final_simple_regret"),
               ("mle-gp-ucb", "final_simple_regret"))
r"""The paired differences of the report's table (reference, quantity), in its column order."""
BAR_CUMULATIVE = 0.6
r"""The practical suite's own bar: the cumulative regret at most ``qlognei``'s on this fraction of
the problems (6 of the suite's 10); the others are BBOB's (``bbob_report.BARS``)."""


RECORDS = Path(__file__).resolve().parent / "results" / "practical"


def parse_seeds(text: str) -> list[int]:
    r"""``"0-9"`` or ``"0,3,5"`` -> seeds."""
    return parse_ids(text)


def record_store(root: str | Path = RECORDS) -> RecordStore:
    r"""The suite's records under ``root``, one file per (problem, method)."""
    return RecordStore(root, KEY_FIELDS)


def compact(record: dict[str, Any]) -> dict[str, Any]:
    r"""The study record of a run file: everything but the values per evaluation, plus its key as ``config``."""
    return {"config": {k: record[k] for k in KEY_FIELDS}, **{k: v for k, v in record.items() if k != "f"}}


def run_file(out: Path, problem: str, method: str, seed: int) -> Path:
    return out / problem / method / f"seed{seed}.json"


def run_key(problem: str, method: str, seed: int) -> dict[str, Any]:
    r"""The key fields of a run of the suite (its budget follows from the problem's domain)."""
    from botorch_unknown_hypers.domains import FiniteDomain
    from botorch_unknown_hypers.problems.problem_registry import get_problem

    T = T_POOL if isinstance(get_problem(problem).domain, FiniteDomain) else T_BOX
    return {"problem": problem, "method": method, "seed": seed, "iterations": T, "n_init": N_INIT}


def run_one(out: str, problem_name: str, method: str, seed: int, threads: int, version: str = "unknown") -> str:
    r"""One run in a worker process; writes its JSON (atomically) and returns the path."""
    import torch

    from botorch_unknown_hypers.domains import FiniteDomain
    from botorch_unknown_hypers.integrations.peers import PEERS, import_optuna
    from botorch_unknown_hypers.loop import run
    from botorch_unknown_hypers.policies.registry import make_policy
    from botorch_unknown_hypers.problems.problem_registry import get_problem

    torch.set_num_threads(threads)
    name, options = parse_method(method)
    problem = get_problem(problem_name)
    T = T_POOL if isinstance(problem.domain, FiniteDomain) else T_BOX
    if name in PEERS:  # another library's optimiser, with its defaults (Optuna's INFO line per trial silenced)
        if name.startswith("optuna-"):
            import_optuna().logging.set_verbosity(logging.WARNING)
        policy = PEERS[name](problem.domain, seed=seed, **options)
    else:
        policy = make_policy(name, problem.domain, seed=seed, **options)
    start, cpu_start = time.perf_counter(), time.process_time()
    with counted_warnings() as counts:  # counted in the record, not printed
        df = run(problem, policy, iterations=T, seed=seed, n_init=N_INIT, method=method)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start  # CPU: the worker process's, all its threads
    f_star = float(problem.optimal_value)
    f = [float(v) for v in df["f"]]
    best, simple = -math.inf, []
    for v in f:
        best = max(best, v)
        simple.append(f_star - best)
    record = {
        "problem": problem_name,
        "method": method,
        "seed": seed,
        "iterations": T,
        "n_init": N_INIT,
        "f_star": f_star,
        "f": f,
        "simple_regret": simple,
        "final_simple_regret": simple[-1],
        "cumulative_regret": float(sum(f_star - v for v in f[N_INIT:])),
        "wall_time_s": wall,
        "cpu_s": cpu,
        "warnings": dict(sorted(counts.items())),
        "threads": threads,
        "code": version,
        "machine": f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores".strip(),
    }
    path = run_file(Path(out), problem_name, method, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record))
    tmp.replace(path)
    return str(path)


def sweep(out: Path, problems: list[str], methods: list[str], seeds: list[int], workers: int, threads: int,
          store: RecordStore | None = None) -> None:
    r"""Run every (problem, method, seed) with neither a record in ``store`` nor a file under ``out``;
    each finished run's file is written under ``out`` and its compact record added to ``store``."""
    keys = {p: run_key(p, "", 0) for p in problems}
    todo = [(p, m, s) for s in seeds for p in problems for m in methods
            if not run_file(out, p, m, s).exists()
            and not (store is not None and store.has(p, m, {**keys[p], "method": m, "seed": s}))]
    print(f"{len(todo)} runs to do ({workers} workers x {threads} thread(s)).", flush=True)
    if not todo:
        return
    try:
        from tqdm import tqdm
    except ImportError:  # progress is optional
        tqdm = None
    bar = tqdm(total=len(todo), unit="run") if tqdm is not None else None
    version = code_version()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(run_one, str(out), p, m, s, threads, version): (p, m, s) for p, m, s in todo}
        for future in as_completed(futures):
            p, m, s = futures[future]
            try:
                path = Path(future.result())
                if store is not None:
                    store.add(p, m, compact(json.loads(path.read_text())))
            except Exception as e:  # one failed run must not stop the sweep; it is reported
                print(f"FAILED {p} {m} seed {s}: {type(e).__name__}: {e}", flush=True)
            if bar is not None:
                bar.update(1)
                bar.set_postfix_str(f"{p} {m} {s}")
    if bar is not None:
        bar.close()


# --------------------------------------------------------------------------- report
def load(out: Path | None, store: RecordStore | None = None) -> list[dict[str, Any]]:
    r"""The runs: the run files under ``out`` and the records of ``store`` (either may be ``None``);
    a run present in both is taken once, from its file."""
    runs = [json.loads(p.read_text()) for p in sorted(out.glob("*/*/seed*.json"))] if out is not None else []
    seen = {(r["problem"], r["method"], r["seed"]) for r in runs}
    if store is not None:
        runs += [r for r in store.records() if (r["problem"], r["method"], r["seed"]) not in seen]
    return runs


def with_option(method: str, option: str) -> str:
    r"""The spec of ``method`` with ``option`` (``key=value``) added: ``name[key=value]`` or
    ``name[...&key=value]``."""
    return f"{method[:-1]}&{option}]" if method.endswith("]") else f"{method}[{option}]"


def option_decision(
    records: list[dict[str, Any]], option: str, methods: list[str], problems: list[str], seeds: list[int]
) -> dict[str, Any]:
    r"""Whether ``option`` (e.g. ``search=torch``) may become a default: for every (method,
    problem), the paired difference of final simple regret, ``method[option]`` minus ``method``
    over ``seeds``, must not exceed 2 SE. No decision (``adopt`` is ``None``) while a pair lacks a
    seed. Also the median wall time per run of both.

    Returns:
        ``{"adopt": True | False | None, "missing": [...], "rows": [{"method", "problem", "n",
        "diff", "se", "worse", "wall", "wall_option"}, ...]}``.
    """
    runs = {(r["problem"], r["method"], r["seed"]): r for r in records}
    rows, missing = [], []
    for method in methods:
        variant = with_option(method, option)
        for problem in problems:
            have = [s for s in seeds if (problem, method, s) in runs and (problem, variant, s) in runs]
            missing += [f"{problem}/{m}/seed{s}" for s in seeds for m in (method, variant) if (problem, m, s) not in runs]
            if not have:
                continue
            diffs = [runs[(problem, variant, s)]["final_simple_regret"] - runs[(problem, method, s)]["final_simple_regret"] for s in have]
            mean, se = mean_se(diffs)
            wall = sorted(runs[(problem, method, s)]["wall_time_s"] for s in have)
            wall_option = sorted(runs[(problem, variant, s)]["wall_time_s"] for s in have)
            rows.append({
                "method": method, "problem": problem, "n": len(have), "diff": mean, "se": se, "worse": mean > 2 * se,
                "wall": wall[len(wall) // 2], "wall_option": wall_option[len(wall_option) // 2],
            })
    adopt = None if missing else not any(row["worse"] for row in rows)
    return {"adopt": adopt, "missing": missing, "rows": rows}


def decision_table(decision: dict[str, Any], option: str) -> str:
    r"""The decision of :func:`option_decision` as a markdown table and a verdict."""
    lines = [
        f"| method | problem | seeds | final simple regret, [{option}] minus default | worse (> 2 SE) "
        "| median wall s, default | with the option |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in decision["rows"]:
        lines.append(f"| {r['method']} | {r['problem']} | {r['n']} | {fmt(r['diff'], r['se'])} | "
                     f"{'**yes**' if r['worse'] else 'no'} | {r['wall']:.1f} | {r['wall_option']:.1f} |")
    if decision["adopt"] is None:
        lines.append(f"\nNo decision: {len(decision['missing'])} runs missing (first: {decision['missing'][:3]}).")
    else:
        lines.append(f"\nDecision: {option} {'becomes' if decision['adopt'] else 'does not become'} the default.")
    return "\n".join(lines)


def report(out: Path | None, seeds: list[int] | None = None, spread: Callable[[str], float] = problem_spread,
           store: RecordStore | None = None, report_dir: Path | None = None) -> str:
    r"""``report.md`` of the runs under ``out`` and in ``store`` (the seeds ``seeds``, all when
    ``None``), written with the figures to ``report_dir`` (default ``out``); ``spread``: problem
    name -> the scale of its ECDF targets (:func:`problem_spread`)."""
    records = [r for r in load(out, store) if seeds is None or r["seed"] in seeds]
    if not records:
        raise SystemExit(f"no results under {out} or in {store.root if store is not None else None}")
    report_dir = Path(report_dir) if report_dir is not None else out
    if report_dir is None:
        raise ValueError("report_dir: expected a folder for report.md when out is None, got None.")
    report_dir.mkdir(parents=True, exist_ok=True)
    by_problem: dict[str, dict[tuple[str, int], dict]] = {}
    for r in records:
        by_problem.setdefault(r["problem"], {})[(r["method"], r["seed"])] = r
    problems = [p for p in PROBLEMS if p in by_problem] + sorted(set(by_problem) - set(PROBLEMS))
    methods = sorted({r["method"] for r in records}, key=lambda m: (METHODS.index(m) if m in METHODS else 99, m))
    machines = sorted({r["machine"] for r in records})
    versions = sorted({r.get("code", "unknown") for r in records})
    lines = [
        "# Practical suite report",
        "",
        f"Machine(s): {'; '.join(machines)}; threads per run: {sorted({r['threads'] for r in records})}; code: {', '.join(versions)}.",
        f"Seeds: {sorted({r['seed'] for r in records})}. Regrets: final simple regret (SR) and cumulative regret (CR),"
        " mean ± SE; paired differences method − reference (negative: method better), `*` beyond 2 SE.",
        "",
    ]
    wins: dict[str, dict[str, Any]] = {}
    for p in problems:
        runs = by_problem[p]
        lines += [f"## {p}", "", "| method | n | SR | CR | SR − qlognei | CR − qlognei | SR − optuna-gp | SR − mle-gp-ucb | median wall s |", "|---|---|---|---|---|---|---|---|---|"]
        for m in methods:
            rs = [r for (mm, _), r in runs.items() if mm == m]
            if not rs:
                continue
            cells = [m, str(len(rs)), fmt(*mean_se([r["final_simple_regret"] for r in rs])), fmt(*mean_se([r["cumulative_regret"] for r in rs]))]
            diffs = {(ref, key): paired(runs, m, ref, key) if m != ref else None for ref, key in DIFFERENCES}
            for d in diffs.values():
                cells.append("" if d is None else fmt(d[0], d[1]) + (" *" if beyond_2se(d) else ""))
            walls = sorted(r["wall_time_s"] for r in rs)
            cells.append(f"{walls[len(walls) // 2]:.1f}")
            lines.append("| " + " | ".join(cells) + " |")
            wins.setdefault(m, {})[p] = {"sr": mean_se([r["final_simple_regret"] for r in rs])[0], "diffs": diffs}
        lines.append("")
    lines += bars(wins, problems, practical_frame(records, spread))
    text = "\n".join(lines) + "\n"
    (report_dir / "report.md").write_text(text)
    figures(by_problem, problems, methods, report_dir)
    return text


def bars(wins: dict[str, dict[str, Any]], problems: list[str], frame: Any) -> list[str]:
    r"""The issue's bars for each ``auto`` preset, over the problems present.

    Against each peer of ``bbob_report.PEERS`` (``qlognei``, ``optuna-gp``) that ran, BBOB's bars as
    ``bbob_report.report_bars`` computes them on :func:`practical_frame` (a higher area under the
    ECDF of targets, the lower mean final simple regret on at least 60 % of the problems,
    significantly worse on at most 10 %, at least 10 seeds per problem, the median wall time per
    run at most ``qlognei``'s), and against ``qlognei`` also the mean cumulative regret at most its
    own (over the seeds both ran) on at least :data:`BAR_CUMULATIVE` of the problems. Each line ends with whether its bars hold.
    Then, for the record, the problems where the preset is significantly worse than
    ``mle-gp-ucb`` and the count where it beats its theory rule."""
    from botorch_unknown_hypers.benchmarks.bbob_report import BARS, PRESETS, report_bars

    lines = ["## Bars", ""]
    table = report_bars(frame, presets=PRESETS) if len(frame) else frame
    for auto, theory in zip(PRESETS, ("lb-gp-ucb", "he-gp-ucb")):
        a = wins.get(auto)
        if a is None:
            continue
        for row in (table[table["preset"] == auto].itertuples() if len(table) else []):
            names = sorted(set(frame[frame["method"] == auto]["problem"]) & set(frame[frame["method"] == row.peer]["problem"]))
            line = (f"- **{auto}** against {row.peer} on {row.functions} problems: ECDF area {row.auc_preset:.3f} vs"
                    f" {row.auc_peer:.3f} (bar: higher); lower mean SR on {row.lower} (bar {BARS['lower']:.0%});"
                    f" significantly worse on {row.worse} [{row.worse_functions}] (bar {BARS['worse']:.0%}); at least"
                    f" {row.min_pairs} seeds per problem (bar {BARS['pairs']}); median wall time per run"
                    f" {row.median_time_preset:.1f} s vs qlognei {row.median_time_reference:.1f} s")
            holds = bool(row.holds)
            if row.peer == "qlognei":
                cr = sum((d := a[p]["diffs"][("qlognei", "cumulative_regret")]) is not None and d[0] <= 0 for p in names)  # paired
                holds = holds and cr >= BAR_CUMULATIVE * len(names)
                line += f"; CR <= qlognei's on {cr} (bar {BAR_CUMULATIVE:.0%})"
            lines.append(line + f"; bars {'hold' if holds else 'do not hold'}.")
        shared = [p for p in problems if p in a]
        to_mle = {p: d for p in shared if (d := a[p]["diffs"][("mle-gp-ucb", "final_simple_regret")]) is not None}
        worse_mle = [p for p, d in to_mle.items() if beyond_2se(d) and d[0] > 0]
        mle_record = f"{len(worse_mle)} of {len(to_mle)} {worse_mle}" if to_mle else "n/a (not run)"
        t = wins.get(theory, {})
        with_theory = [p for p in shared if p in t]
        beat_theory = f"{sum(a[p]['sr'] < t[p]['sr'] for p in with_theory)} of {len(with_theory)}" if with_theory else "n/a (not run)"
        lines.append(f"- **{auto}**: significantly worse than mle-gp-ucb on {mle_record}; lower SR than {theory} on {beat_theory}.")
    return lines + [""]


def figures(by_problem: dict, problems: list[str], methods: list[str], out: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no figures.")
        return
    for p in problems:
        runs = by_problem[p]
        fig, ax = plt.subplots(figsize=(6, 4))
        for m in methods:
            curves = [r["simple_regret"] for (mm, _), r in runs.items() if mm == m]
            if not curves:
                continue
            n = min(len(c) for c in curves)
            xs = list(range(1, n + 1))
            stats = [mean_se([max(c[i], 1e-12) for c in curves]) for i in range(n)]
            mean = [s[0] for s in stats]
            ax.plot(xs, mean, label=m)
            ax.fill_between(xs, [max(s[0] - s[1], 1e-12) for s in stats], [s[0] + s[1] for s in stats], alpha=0.2)
        ax.set_yscale("log")
        ax.set_xlabel("evaluations (including 10 initial points)")
        ax.set_ylabel("simple regret f* - best f (mean ± SE)")
        ax.set_title(p)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / f"{p}.png", dpi=120)
        plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/practical"), help="full run files (scratch, not committed)")
    parser.add_argument("--records", type=Path, default=RECORDS, help="the study records (default benchmarks/results/practical)")
    parser.add_argument("--report-dir", type=Path, default=None, help="where --report writes report.md and figures (default OUT)")
    parser.add_argument("--seeds", default=None, help="e.g. 0-9 (report, the default) or 100-104 (development); "
                        "with --report, the seeds reported (default: all present)")
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--methods", default=";".join(METHODS), help="';'-separated method specs")
    parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 1)))
    parser.add_argument("--threads", type=int, default=1, help="torch threads per worker")
    parser.add_argument("--report", action="store_true", help="only write the report from the files present")
    parser.add_argument("--decide", default=None, metavar="KEY=VALUE",
                        help="only apply the rule for making an option a default (e.g. search=torch) to the files "
                             "present, for --methods (without the option), --problems and --seeds")
    args = parser.parse_args()
    seeds = parse_seeds(args.seeds if args.seeds is not None else "0-9")
    if args.decide is not None:
        methods = [m for m in args.methods.split(";") if m]
        decision = option_decision(load(args.out, record_store(args.records)), args.decide, methods, args.problems.split(","), seeds)
        print(decision_table(decision, args.decide))
        return
    if not args.report:
        methods = [m for m in args.methods.split(";") if m]
        for m in methods:
            parse_method(m)
        sweep(args.out, args.problems.split(","), methods, seeds, args.workers, args.threads, record_store(args.records))
    print(report(args.out, seeds if (args.seeds is not None or not args.report) else None, store=record_store(args.records), report_dir=args.report_dir))


if __name__ == "__main__":
    main()
