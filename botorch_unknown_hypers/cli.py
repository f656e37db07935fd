r"""The ``buh`` command: ``list``, ``run``, ``report`` and ``demo``.

``buh run`` runs the grid problems x methods x seeds with a progress bar and
appends each finished run to ``DIR/results.csv`` (see
:mod:`botorch_unknown_hypers.results`); a rerun skips complete runs. The runs
execute in-process (``--workers 1``, the default), in a process pool
(``--workers N``) or on Ray (``--executor ray [--address ADDR]``); see
:mod:`botorch_unknown_hypers.executors`. Only this process writes ``results.csv``.
``buh report DIR`` writes ``summary.csv`` and plots. ``buh demo`` is a short
comparison on the embedded Berkenkamp problem.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from pathlib import Path
from typing import Any, Sequence

import pandas as pd
import torch
from tqdm.auto import tqdm

from botorch_unknown_hypers.executors import (
    Executor,
    ExecutorError,
    LocalExecutor,
    ProcessExecutor,
    RayExecutor,
    RunSetupError,
    RunSpec,
)
from botorch_unknown_hypers.policies.registry import METHODS, list_methods, make_policy, method_limits
from botorch_unknown_hypers.problems.problem_registry import get_problem, list_problems, resolve_task_options
from botorch_unknown_hypers.report import SOLVED_TOLERANCE, write_report
from botorch_unknown_hypers.results import ResultsStore

DEMO_PROBLEM = "berkenkamp"
DEMO_METHODS = ["lb-gp-ucb", "a-gp-ucb", "mle-gp-ucb"]


class CLIError(Exception):
    """A user error: printed without a traceback, exit status 2."""


def _split(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out.extend(p.strip() for p in v.split(",") if p.strip())
    return out


def _check_names(kind: str, names: list[str], valid: list[str]) -> None:
    if not names:
        raise CLIError(f"give at least one --{kind}; valid {kind}s: {', '.join(valid)}")
    bad = [n for n in names if n not in valid]
    if bad:
        raise CLIError(f"--{kind}: unknown {kind} {', '.join(map(repr, bad))}; valid {kind}s: {', '.join(valid)}")


def _device(name: str) -> torch.device:
    if name == "cuda" and not torch.cuda.is_available():
        raise CLIError("--device cuda was asked for but no CUDA device is available.")
    return torch.device(name)


def parse_options(items: list[str] | None) -> dict[str, object]:
    r"""``KEY=VALUE`` strings to policy keyword options (values parsed as JSON, else text)."""
    options: dict[str, object] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise CLIError(f"--option expects KEY=VALUE with a Python identifier as KEY, got {item!r}")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


def _int_or_paper(text: str) -> int | None:
    r"""``argparse`` type: an integer, or ``paper`` (``None``: the problem's paper setting)."""
    if text == "paper":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'paper', got {text!r}") from None


def method_label(method: str, options: dict[str, object]) -> str:
    r"""Name of a method run with options in ``results.csv``: ``name[k=v,...]``."""
    if not options:
        return method
    return method + "[" + ",".join(f"{k}={v}" for k, v in sorted(options.items())) + "]"


EXECUTORS = ["local", "process", "ray"]


def make_executor(
    executor: str = "process",
    workers: int | None = None,
    address: str | None = None,
    gpus_per_run: float = 0.0,
    device: str = "cpu",
    threads: int | None = None,
) -> Executor:
    r"""The executor of ``buh run --executor E --workers N --address A --gpus-per-run G --threads K``.

    ``process`` with one worker (the default) runs in-process, as ``local`` does. ``threads``
    is torch's intra-op threads per worker; by default ``workers x threads <= cores``
    (:class:`~botorch_unknown_hypers.executors.ProcessExecutor` gives each of ``N`` workers
    ``cores // N`` threads, or ``OMP_NUM_THREADS``; in-process runs keep torch's setting).
    Ray sets each task's threads to its CPUs.
    """
    if executor not in EXECUTORS:
        raise CLIError(f"unknown executor {executor!r}; valid executors: {', '.join(EXECUTORS)}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise CLIError(f"--workers must be a positive integer, got {workers!r}.")
    if not isinstance(gpus_per_run, (int, float)) or not (math.isfinite(gpus_per_run) and 0 <= gpus_per_run <= 1):
        raise CLIError(f"--gpus-per-run must be a number in [0, 1] (a fraction of one GPU), got {gpus_per_run!r}.")
    if executor != "ray":
        if address is not None:
            raise CLIError("--address joins a Ray cluster: use it with --executor ray.")
        if gpus_per_run > 0:
            raise CLIError("--gpus-per-run is a Ray resource request: use it with --executor ray.")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise CLIError(f"--threads must be a positive integer, got {threads!r}.")
    if executor == "local":
        if workers not in (None, 1):
            raise CLIError("--executor local runs one run at a time in-process; use --executor process for --workers N.")
        return LocalExecutor(threads)
    if executor == "process":
        return LocalExecutor(threads) if workers in (None, 1) else ProcessExecutor(workers, threads_per_worker=threads)
    if threads is not None:
        raise CLIError("--threads is set per worker by Ray (a task's CPUs): do not use it with --executor ray.")
    if device == "cuda" and gpus_per_run == 0:
        raise CLIError("--device cuda with --executor ray needs --gpus-per-run > 0 so that Ray gives runs a GPU.")
    if address is not None and workers is not None:
        raise CLIError("--workers sets the CPUs of a local Ray instance; a cluster at --address has its own.")
    try:
        return RayExecutor(address=address, gpus_per_run=gpus_per_run, num_cpus=workers)
    except ImportError as e:
        raise CLIError(str(e)) from None


def _check_setup(
    problems: dict[str, Any],
    methods: list[str],
    budget: dict[str, tuple[int, int]],
    n_init: int | None,
    options: dict[str, object],
    seed: int,
) -> None:
    r"""Refuse, before any run starts, what a run would fail on: a batch size or initial design
    a method cannot take, an initial design larger than a pool, or method options the method
    rejects (each method is built once on each problem, as its runs will build it)."""
    for p, problem in problems.items():
        n = problem.n_init if n_init is None else n_init
        size = problem.domain.size
        if n_init is not None and math.isfinite(size) and n > size:
            raise CLIError(f"--n-init {n} exceeds the {int(size)} points of problem {p!r}.")
        for m in methods:
            max_batch_size, min_observations = method_limits(m)
            q = budget[p][1]
            if max_batch_size is not None and q > max_batch_size:
                raise CLIError(f"--batch-size {q}: {m} proposes at most {max_batch_size} point(s) per round.")
            if n < min_observations:
                raise CLIError(f"--n-init {n}: {m} needs at least {min_observations} initial observation(s).")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    make_policy(m, problem.domain, seed=seed, **resolve_task_options(options, problem))
            except (TypeError, ValueError) as e:
                given = ", ".join(f"{k}={v!r}" for k, v in options.items())
                raise CLIError(f"--option {given}: not accepted by {m}: {e}") from None


def run_grid(
    problems: list[str],
    methods: list[str],
    seeds: int,
    iterations: int | None,
    out: Path,
    batch_size: int | None = 1,
    device: str = "cpu",
    data_dir: str | None = None,
    n_init: int | None = None,
    progress: bool = True,
    options: dict[str, object] | None = None,
    first_seed: int = 0,
    executor: str | Executor = "process",
    workers: int | None = None,
    address: str | None = None,
    gpus_per_run: float = 0.0,
    threads: int | None = None,
) -> ResultsStore:
    r"""Run every (problem, method, seed) not yet complete in ``out/results.csv``.

    ``options`` go to every method's constructor (e.g. ``{"preset": "paper"}``); the
    runs are then stored under ``method[k=v,...]``. ``iterations`` / ``batch_size``
    ``None`` take each problem's paper setting (``metadata["paper_iterations"]`` /
    ``metadata["paper_batch_size"]``, e.g. the TS-RSR benchmarks' T and m).

    ``executor`` is a name (with ``workers``, ``address`` and ``gpus_per_run``, see
    :func:`make_executor`) or an :class:`~botorch_unknown_hypers.executors.Executor`.
    Whatever executes the runs, this process alone appends each run to
    ``results.csv`` as soon as it finishes, and the rows do not depend on the
    executor (only ``wall_time_s`` does).
    """
    _check_names("problem", problems, list_problems())
    _check_names("method", methods, list_methods())
    for flag, value, minimum in (
        ("--seeds", seeds, 1), ("--iterations", iterations, 0), ("--batch-size", batch_size, 1),
        ("--first-seed", first_seed, 0), ("--n-init", n_init, 0),
    ):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < minimum):
            raise CLIError(f"{flag} must be an integer >= {minimum}, got {value!r}.")
    options = dict(options or {})
    if isinstance(executor, str):
        executor = make_executor(executor, workers, address, gpus_per_run, device, threads)
    if not isinstance(executor, RayExecutor):
        _device(device)  # Ray workers may have the GPU that this driver lacks
    problem_cache: dict[str, Any] = {}
    budget: dict[str, tuple[int, int]] = {}
    for p in problems:
        try:  # the driver only checks the problem and reads its metadata; runs build their own
            problem_cache[p] = get_problem(p, data_dir=data_dir)
        except (FileNotFoundError, ImportError) as e:
            raise CLIError(str(e)) from None
        meta = problem_cache[p].metadata
        T, q = iterations, batch_size
        for flag, key, value in (("--iterations", "paper_iterations", T), ("--batch-size", "paper_batch_size", q)):
            if value is None and key not in meta:
                raise CLIError(f"{flag} paper: problem {p!r} has no paper setting; give a number.")
        budget[p] = (int(meta["paper_iterations"]) if T is None else T, int(meta["paper_batch_size"]) if q is None else q)
    _check_setup(problem_cache, methods, budget, n_init, options, first_seed)
    try:
        store = ResultsStore(out)
    except ValueError as e:
        raise CLIError(f"--out: {e}") from None
    if store.repaired_rows:
        print(f"dropped {store.repaired_rows} rows of an interrupted run from {store.path}", file=sys.stderr)
    done = store.completed()
    todo = []
    for p in problems:
        for m in methods:
            for s in range(first_seed, first_seed + seeds):
                key = (p, method_label(m, options), s)
                if key in done:
                    if done[key] != budget[p]:
                        raise CLIError(
                            f"{store.path} already holds run {key} with iterations={done[key][0]}, "
                            f"batch size={done[key][1]}; use another --out for a different budget."
                        )
                    continue
                todo.append(key)
    skipped = len(problems) * len(methods) * seeds - len(todo)
    if skipped:
        print(f"skipping {skipped} complete runs already in {store.path}", file=sys.stderr)
    specs = [
        RunSpec(
            problem=p,
            method=label.split("[")[0],
            seed=s,
            iterations=budget[p][0],
            batch_size=budget[p][1],
            n_init=n_init,
            options=options,
            label=label,
            device=device,
            # resolved here: workers may not share this process's environment
            data_dir=str(data_dir) if data_dir is not None else os.environ.get("BUH_DATA_DIR"),
        )
        for p, label, s in todo
    ]
    total = sum(spec.iterations for spec in specs)
    bar = tqdm(total=total, disable=not progress, unit="round", dynamic_ncols=True)
    rounds_shown: dict[tuple[str, str, int], int] = {}

    def on_round(spec: RunSpec, t: int) -> None:  # in-process runs report every round
        if t == 1:
            bar.set_description(f"{spec.problem} | {spec.key[1]} | seed {spec.seed}")
        rounds_shown[spec.key] = t
        bar.update(1)

    runs = executor.run_all(specs, on_round=on_round)
    try:
        for finished, (spec, history) in enumerate(runs, start=1):
            store.append_run(history, horizon=spec.iterations, batch_size=spec.batch_size)
            if not isinstance(executor, LocalExecutor):
                bar.set_description(f"{finished}/{len(specs)} runs", refresh=False)
            bar.update(spec.iterations - rounds_shown.pop(spec.key, 0))  # pooled runs: whole runs
            if not progress:
                elapsed = history.attrs.get("elapsed_s", float("nan"))
                print(f"done {spec.problem} {spec.key[1]} seed {spec.seed} in {elapsed:.1f}s", file=sys.stderr)
    except (RunSetupError, ExecutorError) as e:
        raise CLIError(str(e)) from None
    finally:
        getattr(runs, "close", lambda: None)()  # stop a pool at once if the loop ended early
        bar.close()
    return store


def report(out: Path, extra: Sequence[Path] = (), solved_tol: float = SOLVED_TOLERANCE) -> tuple[pd.DataFrame, list[Path]]:
    r"""Report on ``out/results.csv`` merged with the results of the ``extra`` directories
    (``solved_tol``: see :func:`~botorch_unknown_hypers.report.summarize`)."""
    if isinstance(solved_tol, bool) or not isinstance(solved_tol, (int, float)) or not (
        math.isfinite(solved_tol) and solved_tol >= 0
    ):
        raise CLIError(f"--solved-tol must be a finite number >= 0, got {solved_tol!r}.")
    frames = []
    for d in [Path(out), *map(Path, extra)]:
        store_path = d / "results.csv"
        if not store_path.exists():
            raise CLIError(f"{store_path} does not exist; run `buh run --out {d}` first.")
        try:
            frames.append(ResultsStore(d, read_only=True).read())
        except ValueError as e:
            raise CLIError(str(e)) from None
    df = pd.concat(frames, ignore_index=True)
    df = df.drop_duplicates(["problem", "method", "seed", "iteration", "batch_index"], keep="first")
    if df.empty:
        raise CLIError(f"{Path(out) / 'results.csv'} holds no complete run.")
    return write_report(df, out, solved_tol)


def _print_summary(summary: pd.DataFrame, solved_tol: float = SOLVED_TOLERANCE) -> None:
    cols = [
        "problem",
        "method",
        "seeds",
        "iterations",
        "simple_regret_mean",
        "simple_regret_se",
        "cumulative_regret_mean",
        "cumulative_regret_se",
        "solved_seeds",
        "wall_time_per_run_s",
    ]
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4g}".format):
        print(summary[cols].to_string(index=False))
    print(f"solved_seeds: runs whose final simple regret is at most {solved_tol:g} (--solved-tol)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="buh",
        description="Bayesian optimisation with unknown GP hyperparameters: run and report benchmarks.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the registered problems and methods")

    p_run = sub.add_parser("run", help="run a grid of problems x methods x seeds (resumable)")
    p_run.add_argument("--problem", action="append", required=True, help="problem name(s), comma-separated or repeated")
    p_run.add_argument("--method", action="append", required=True, help="method name(s), comma-separated or repeated")
    p_run.add_argument("--seeds", type=int, default=1, help="number of seeds (first-seed .. first-seed + N - 1)")
    p_run.add_argument("--first-seed", type=int, default=0, help="first seed (split a grid over processes)")
    p_run.add_argument(
        "--iterations", type=_int_or_paper, required=True, help="BO rounds T per run, or 'paper' (each problem's T)"
    )
    p_run.add_argument(
        "--batch-size", type=_int_or_paper, default=1, help="points per round q, or 'paper' (each problem's m)"
    )
    p_run.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p_run.add_argument("--out", type=Path, default=Path("runs"), help="output directory (results.csv)")
    p_run.add_argument("--data-dir", default=None, help="materials tables directory (or BUH_DATA_DIR)")
    p_run.add_argument("--n-init", type=int, default=None, help="initial design size (default: the problem's)")
    p_run.add_argument("--no-progress", action="store_true", help="no progress bar")
    p_run.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="process",
        help="where runs execute: in-process (local), a process pool (process, the default) or Ray (ray)",
    )
    p_run.add_argument(
        "--workers",
        type=int,
        default=None,
        help="runs in parallel: worker processes of the pool (default 1: in-process), or CPUs of a local Ray",
    )
    p_run.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch intra-op threads per worker (default: cores // workers, or OMP_NUM_THREADS)",
    )
    p_run.add_argument(
        "--address", default=None, help="join the Ray cluster at ADDR (e.g. auto); default: start a local Ray"
    )
    p_run.add_argument(
        "--gpus-per-run",
        type=float,
        default=0.0,
        help="GPU fraction each Ray run requests, in [0, 1] (0.25: four runs share a card)",
    )
    p_run.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="method option, e.g. preset=paper or growth_exponent=0.25 (repeatable; JSON values)",
    )

    p_rep = sub.add_parser("report", help="write summary.csv and plots for a results directory")
    p_rep.add_argument("out", type=Path, help="results directory; summary.csv and plots are written here")
    p_rep.add_argument("more", type=Path, nargs="*", help="more results directories to merge (e.g. runs split over processes)")
    p_rep.add_argument(
        "--solved-tol",
        type=float,
        default=SOLVED_TOLERANCE,
        help=f"a run is solved when its final simple regret is at most this (default {SOLVED_TOLERANCE:g})",
    )

    p_demo = sub.add_parser("demo", help=f"short comparison of {' vs '.join(DEMO_METHODS)} on {DEMO_PROBLEM}")
    p_demo.add_argument("--out", type=Path, default=Path("buh-demo"))
    p_demo.add_argument("--seeds", type=int, default=10)
    p_demo.add_argument("--iterations", type=int, default=40)
    p_demo.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p_demo.add_argument(
        "--threads", type=int, default=None, help="torch threads per worker (default: 1, one worker per core)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "list":
            print("problems:")
            for name in list_problems():
                print(f"  {name}")
            print("methods:")
            for name in list_methods():
                print(f"  {name}")
            print("batch methods (--batch-size above 1):")
            for name in list_methods():
                if method_limits(name)[0] is None:
                    print(f"  {name}")
            print("methods that take pending points (X_pending):")
            for name in list_methods():
                if getattr(METHODS[name], "supports_pending", False):
                    print(f"  {name}")
            return 0
        if args.command == "run":
            run_grid(
                _split(args.problem),
                _split(args.method),
                seeds=args.seeds,
                iterations=args.iterations,
                out=args.out,
                batch_size=args.batch_size,
                device=args.device,
                data_dir=args.data_dir,
                n_init=args.n_init,
                progress=not args.no_progress,
                options=parse_options(args.option),
                first_seed=args.first_seed,
                executor=args.executor,
                workers=args.workers,
                address=args.address,
                gpus_per_run=args.gpus_per_run,
                threads=args.threads,
            )
            print(f"results: {args.out / 'results.csv'}")
            return 0
        if args.command == "report":
            summary, plots = report(args.out, args.more, args.solved_tol)
            _print_summary(summary, args.solved_tol)
            print(f"summary: {args.out / 'summary.csv'}")
            if (args.out / "prior_selection.csv").exists():
                print(f"prior selection metrics: {args.out / 'prior_selection.csv'}")
            for path in plots:
                print(f"plot: {path}")
            return 0
        if args.command == "demo":
            print(
                f"buh demo: {' vs '.join(DEMO_METHODS)} on {DEMO_PROBLEM} "
                f"({args.seeds} seeds, {args.iterations} rounds, {args.device})"
            )
            # One single-threaded worker per core: the demo's GPs are small, so runs in parallel
            # beat threads within a run, and workers x threads never exceeds the cores.
            runs = len(DEMO_METHODS) * max(args.seeds, 1)
            workers = 1 if args.device == "cuda" else max(1, min(os.cpu_count() or 1, runs))
            threads = args.threads if args.threads is not None else (None if workers == 1 else 1)
            run_grid(
                [DEMO_PROBLEM], DEMO_METHODS, args.seeds, args.iterations, args.out, device=args.device,
                workers=workers, threads=threads,
            )
            summary, plots = report(args.out)
            _print_summary(summary)
            for path in plots:
                print(f"plot: {path}")
            return 0
    except CLIError as e:
        print(f"buh: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader closed the pipe (``buh list | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush cannot fail again
        return 141  # 128 + SIGPIPE, as a shell reports a command stopped by it
    return 1  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
