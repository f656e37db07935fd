r"""Batches of the unknown-hyperparameter rules: q in {1, 4, 8} at the same number of evaluations.

Four problems of the practical suite (``hartmann6``, ``ackley5``, ``agnp``, ``michalewicz5``), 10
initial points (Sobol on a box, random pool points) and then 64 evaluations in rounds of ``q``
(64, 16 and 8 rounds). Methods: the batch rules of the package (``lb-gp-ucb``, ``hb-gp-ucb``,
``lnb-gp-ucb``, ``he-gp-ucb``, the two ``auto`` presets, ``pe-gp-ts`` and ``hp-gp-ts``), ``ts-rsr``
and ``qlognei`` (fitted surrogate) at the same q. The problems come with no prior set, so the
prior rules get one fixed family (:func:`prior_set`): zero-mean Matern-5/2 priors with unit
output scale and the length scales ``PRIOR_LENGTHSCALES`` of the unit cube (on a pool, evaluated
on its min-max-scaled points as tabular priors), noise variance ``PRIOR_NOISE``. One JSON per (problem, method, q, seed) under ``--out``; a run whose file
exists is skipped. ``--report`` writes ``report.md``: per problem and method, final simple regret
and cumulative regret (mean ± SE over the seeds) and the wall time per evaluation for each q; then
the check of every method at q = 4 against its own q = 1 run (paired over seeds, ``*`` when worse
by more than 2 SE) and the ratio of wall time per evaluation.

Usage::

    python benchmarks/batch_unknown_hypers.py --seeds 0-9 --out runs/batch --workers 2
    python benchmarks/batch_unknown_hypers.py --out runs/batch --report
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from botorch_unknown_hypers.benchmarks.practical_suite import fmt, mean_se, parse_method
from botorch_unknown_hypers.benchmarks.study import code_version
from botorch_unknown_hypers.benchmarks.study import parse_ids as parse_seeds

PROBLEMS = ("hartmann6", "ackley5", "agnp", "michalewicz5")
METHODS = (
    "lb-gp-ucb", "hb-gp-ucb", "lnb-gp-ucb", "he-gp-ucb", "lb-gp-ucb-auto", "he-gp-ucb-auto", "pe-gp-ts", "hp-gp-ts", "ts-rsr", "qlognei",
)
PRIOR_RULES = ("pe-gp-ts", "hp-gp-ts")
PRIOR_LENGTHSCALES = (0.05, 0.1, 0.2, 0.4, 0.8)
PRIOR_NOISE = 1e-4


def prior_set(domain):
    r"""The benchmark's prior set for ``pe-gp-ts`` / ``hp-gp-ts`` on ``domain`` (see the module docstring)."""
    import torch
    from gpytorch.kernels import MaternKernel

    from botorch_unknown_hypers.candidates import KernelCandidates
    from botorch_unknown_hypers.domains import FiniteDomain
    from botorch_unknown_hypers.models.tabular_priors import TabularPriors

    lengthscales = torch.tensor(PRIOR_LENGTHSCALES, dtype=torch.float64)
    if not isinstance(domain, FiniteDomain):
        return KernelCandidates.from_lengthscales(lengthscales, kernel="matern52", noise=PRIOR_NOISE)
    arms = domain.points
    lo, hi = arms.min(dim=0).values, arms.max(dim=0).values
    unit = (arms - lo) / torch.where(hi > lo, hi - lo, torch.ones_like(hi))

    def matern(ls: float):
        kernel = MaternKernel(nu=2.5).to(arms)
        kernel.lengthscale = ls
        return lambda A, B: kernel(A, B).to_dense().detach()

    return TabularPriors.from_kernels(
        unit, [matern(v) for v in PRIOR_LENGTHSCALES], noise=PRIOR_NOISE, names=[f"matern52 ls={v}" for v in PRIOR_LENGTHSCALES]
    )
QS = (1, 4, 8)
EVALUATIONS, N_INIT = 64, 10


def run_file(out: Path, problem: str, method: str, q: int, seed: int) -> Path:
    return out / problem / method / f"q{q}" / f"seed{seed}.json"


def run_one(out: str, problem_name: str, method: str, q: int, seed: int, threads: int, version: str = "unknown") -> str:
    r"""One run in a worker process; writes its JSON (atomically) and returns the path."""
    import torch

    from botorch_unknown_hypers.loop import run
    from botorch_unknown_hypers.policies.registry import make_policy
    from botorch_unknown_hypers.problems.problem_registry import get_problem

    torch.set_num_threads(threads)
    name, options = parse_method(method)
    problem = get_problem(problem_name)
    if name in PRIOR_RULES and "priors" not in options:
        options["priors"] = prior_set(problem.domain)
    policy = make_policy(name, problem.domain, seed=seed, **options)
    start = time.perf_counter()
    df = run(problem, policy, iterations=EVALUATIONS // q, seed=seed, batch_size=q, n_init=N_INIT, method=method)
    wall = time.perf_counter() - start
    f_star = float(problem.optimal_value)
    f = [float(v) for v in df["f"]]
    simple = [f_star - max(f[: i + 1]) for i in range(len(f))]
    record = {
        "problem": problem_name,
        "method": method,
        "q": q,
        "seed": seed,
        "f": f,
        "simple_regret": simple,
        "final_simple_regret": simple[-1],
        "cumulative_regret": float(sum(f_star - v for v in f[N_INIT:])),
        "wall_time_s": wall,
        "wall_per_evaluation_s": wall / EVALUATIONS,
        "threads": threads,
        "code": version,
        "machine": f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores".strip(),
    }
    path = run_file(Path(out), problem_name, method, q, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record))
    tmp.replace(path)
    return str(path)


def sweep(out: Path, problems: list[str], methods: list[str], qs: list[int], seeds: list[int], workers: int, threads: int) -> None:
    todo = [(p, m, q, s) for s in seeds for p in problems for m in methods for q in qs if not run_file(out, p, m, q, s).exists()]
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
        futures = {pool.submit(run_one, str(out), p, m, q, s, threads, version): (p, m, q, s) for p, m, q, s in todo}
        for future in as_completed(futures):
            p, m, q, s = futures[future]
            try:
                future.result()
            except Exception as e:  # one failed run must not stop the sweep; it is reported
                print(f"FAILED {p} {m} q={q} seed {s}: {type(e).__name__}: {e}", flush=True)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()


def report(out: Path) -> str:
    records = [json.loads(p.read_text()) for p in sorted(out.glob("*/*/q*/seed*.json"))]
    if not records:
        raise SystemExit(f"no results under {out}")
    runs: dict[tuple[str, str, int], dict[int, dict[str, Any]]] = {}
    for r in records:
        runs.setdefault((r["problem"], r["method"], r["q"]), {})[r["seed"]] = r
    problems = [p for p in PROBLEMS if any(k[0] == p for k in runs)]
    methods = [m for m in dict.fromkeys(k[1] for k in runs)]
    qs = sorted({k[2] for k in runs})
    lines = [
        "# Batch report",
        "",
        f"Machine(s): {'; '.join(sorted({r['machine'] for r in records}))}; code: {', '.join(sorted({r['code'] for r in records}))}.",
        f"{N_INIT} initial points, then {EVALUATIONS} evaluations in rounds of q. SR: final simple regret; CR: cumulative"
        " regret; mean ± SE over seeds; wall time per evaluation in seconds.",
        "",
    ]
    checks: list[str] = []
    for p in problems:
        lines += [f"## {p}", "", "| method | q | n | SR | CR | s / evaluation |", "|---|---|---|---|---|---|"]
        for m in methods:
            for q in qs:
                rs = list(runs.get((p, m, q), {}).values())
                if rs:
                    walls = sorted(r["wall_per_evaluation_s"] for r in rs)
                    lines.append(
                        f"| {m} | {q} | {len(rs)} | {fmt(*mean_se([r['final_simple_regret'] for r in rs]))} | "
                        f"{fmt(*mean_se([r['cumulative_regret'] for r in rs]))} | {walls[len(walls) // 2]:.3f} |"
                    )
            one, four = runs.get((p, m, 1), {}), runs.get((p, m, 4), {})
            seeds = sorted(set(one) & set(four))
            if seeds:
                mean, se = mean_se([four[s]["final_simple_regret"] - one[s]["final_simple_regret"] for s in seeds])
                worse = se > 0 and mean > 2 * se
                ratio = mean_se([four[s]["wall_per_evaluation_s"] for s in seeds])[0] / mean_se([one[s]["wall_per_evaluation_s"] for s in seeds])[0]
                checks.append(f"| {p} | {m} | {fmt(mean, se)}{' *' if worse else ''} | {ratio:.2f} |")
        lines.append("")
    lines += ["## q = 4 against q = 1", "", "| problem | method | SR(q=4) − SR(q=1) | wall per evaluation, q=4 / q=1 |", "|---|---|---|---|", *checks, ""]
    text = "\n".join(lines) + "\n"
    (out / "report.md").write_text(text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/batch"))
    parser.add_argument("--seeds", default="0-9")
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--methods", default=";".join(METHODS), help="';'-separated method specs")
    parser.add_argument("--q", default=",".join(map(str, QS)), help="batch sizes, e.g. 1,4,8")
    parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 1)))
    parser.add_argument("--threads", type=int, default=1, help="torch threads per worker")
    parser.add_argument("--report", action="store_true", help="only write the report from the files present")
    args = parser.parse_args()
    if not args.report:
        qs = [int(v) for v in args.q.split(",")]
        if any(q < 1 or EVALUATIONS % q for q in qs):
            raise SystemExit(f"--q: each batch size must divide {EVALUATIONS}, got {qs}.")
        methods = [m for m in args.methods.split(";") if m]
        for m in methods:
            parse_method(m)
        sweep(args.out, args.problems.split(","), methods, qs, parse_seeds(args.seeds), args.workers, args.threads)
    print(report(args.out))


if __name__ == "__main__":
    main()
