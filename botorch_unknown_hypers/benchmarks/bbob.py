r"""The BBOB benchmark harness: a grid of runs, one JSON per run, resumable, on any executor.

A grid is functions x instances x dimensions x seeds x methods x noise
(:class:`~botorch_unknown_hypers.problems.bbob_problems.BBOBProblem`, names ``bbob-f{k}-i{i}-d{d}`` and
``...-noisy``). Every run has the same budget at dimension :math:`d` (:func:`budget`):
:math:`2d` scrambled Sobol points, then :math:`10d` BO rounds of one point (``docs/bbob.md``
says why). Methods are the registered rules plus the peers of
:mod:`~botorch_unknown_hypers.integrations.peers`, registered only while a benchmark runs
(:func:`bbob_registered`), so that neither ``import botorch_unknown_hypers`` nor this module
imports a peer library or changes the registries; ``qlognei`` runs on
BoTorch's default model (``surrogate="fitted"``, :data:`METHOD_OPTIONS`).

Runs execute through :mod:`~botorch_unknown_hypers.executors` with :func:`run_bbob` as the task
(it registers the run's problem and the peers in whatever process runs it): local processes
(:class:`~botorch_unknown_hypers.executors.ProcessExecutor`, a fixed number of torch threads
per worker) or Ray (:class:`~botorch_unknown_hypers.executors.RayExecutor`). The driver alone
writes the files, atomically (a temporary file renamed over the target), so a killed sweep
loses only the runs in flight; :func:`pending_specs` skips every run whose file is complete
(:func:`is_complete`). A run that raises is recorded in ``failures.jsonl`` and the grid goes on.

A run file (:func:`run_record`, format ``buh-bbob-run`` version 1) holds the run's
configuration and, per evaluation :math:`j` (initial design first): the noiseless value
:math:`f(x_j)`, the observation :math:`y_j`, the best-so-far :math:`\max_{i \le j} f(x_i)`, the
simple regret :math:`f^* - \max_{i \le j} f(x_i)`, the proposal time of its round and the
cumulative proposal time up to it, and :math:`x_j`; per run the wall time, the worker's
CPU time and the count of its warnings by category (``warnings``; not printed, and absent from
records made before 2026-12-01).

Report instances (:data:`~botorch_unknown_hypers.problems.bbob_problems.REPORT_INSTANCES`) are refused
unless asked for explicitly (:func:`check_instances`).
"""

from __future__ import annotations

import json
import logging
import os
import platform
import time
import traceback
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from botorch_unknown_hypers.benchmarks.records import RecordStore, label_file_name
from botorch_unknown_hypers.benchmarks.study import counted_warnings
from botorch_unknown_hypers.executors import Executor, ProcessExecutor, RayExecutor, RunSpec, execute_run
from botorch_unknown_hypers.integrations.peers import PEERS, import_optuna
from botorch_unknown_hypers.policies.registry import METHODS, list_methods, parse_method_spec, register_method
from botorch_unknown_hypers.problems.bbob_problems import (
    BBOB_FUNCTIONS,
    DEV_INSTANCES,
    NOISE_FRACTION,
    bbob_name,
    bbob_problem,
    parse_bbob_name,
)
from botorch_unknown_hypers.problems.problem_registry import PROBLEMS, list_problems, register_problem

logger = logging.getLogger(__name__)

RECORD_FORMAT = "buh-bbob-run"
RECORD_VERSION = 1
DEFAULT_METHODS = ("qlognei", "optuna-gp", "random")
r"""The development baseline: BoTorch's default, Optuna's GPSampler, random search."""
METHOD_OPTIONS: dict[str, dict[str, Any]] = {"qlognei": {"surrogate": "fitted"}}
r"""Options every run of a method gets (``qlognei`` on BoTorch's default ``SingleTaskGP``)."""
INIT_PER_DIM = 2
ROUNDS_PER_DIM = 10


def budget(dim: int) -> tuple[int, int]:
    r"""``(n_init, iterations)`` at dimension ``dim``: :math:`2d` Sobol points, :math:`10d` rounds of q = 1."""
    return INIT_PER_DIM * dim, ROUNDS_PER_DIM * dim


@contextmanager
def bbob_registered(problems: Iterable[str] = ()) -> Iterator[None]:
    r"""Within the block, the peers (:data:`~botorch_unknown_hypers.integrations.peers.PEERS`) are
    registered methods and the BBOB ``problems`` registered problems; on exit the entries this
    call added are removed again, so that the registries outside a benchmark stay as they were.

    Raises:
        ValueError: for a name that is not a BBOB problem name.
    """
    names = sorted(set(problems))
    for name in names:
        parse_bbob_name(name)
    added_methods = [name for name in PEERS if name not in set(list_methods())]
    added_problems = [name for name in names if name not in set(list_problems())]
    try:
        for name in added_methods:
            register_method(name, PEERS[name])
        for name in added_problems:
            register_problem(name, lambda data_dir=None, name=name: bbob_problem(name))
        yield
    finally:
        for name in added_methods:
            METHODS.pop(name, None)
        for name in added_problems:
            PROBLEMS.pop(name, None)


def check_instances(instances: Iterable[int], allow_report: bool = False) -> list[int]:
    r"""The instances, refusing any outside the development instances unless ``allow_report``.

    Raises:
        ValueError: for an instance outside :data:`DEV_INSTANCES` without ``allow_report``.
    """
    instances = list(instances)
    outside = [i for i in instances if i not in DEV_INSTANCES]
    if outside and not allow_report:
        raise ValueError(
            f"instances {outside} are not development instances {list(DEV_INSTANCES)}; report instances are run "
            "once, for the report, with allow_report=True (--allow-report-instances)."
        )
    return instances


def grid(
    functions: Sequence[int] = BBOB_FUNCTIONS,
    instances: Sequence[int] = DEV_INSTANCES,
    dims: Sequence[int] = (5,),
    seeds: Sequence[int] = (0,),
    methods: Sequence[str] = DEFAULT_METHODS,
    noise: Sequence[bool] = (False,),
    allow_report: bool = False,
) -> list[RunSpec]:
    r"""The runs of a grid, ordered so that a partial sweep covers every function early:
    dimension, noise, seed, instance, function, method (the last varies fastest).

    Raises:
        ValueError: for a function id outside 1..24, report instances without
            ``allow_report``, or an unknown method.
    """
    check_instances(instances, allow_report)
    parsed = [parse_method_spec(m) for m in methods]
    bad = [m for m, (name, _) in zip(methods, parsed) if name not in set(list_methods()) | set(PEERS)]
    if bad:
        raise ValueError(f"unknown method(s) {bad}; valid methods: {', '.join(list_methods())}.")
    files = [run_file_name(m) for m in methods]
    clash = sorted({m for m, f in zip(methods, files) if files.count(f) > 1})
    if clash:
        raise ValueError(f"methods {clash} would share one run file name; spell each once.")
    specs = []
    for dim in dims:
        n_init, iterations = budget(dim)
        for noisy in noise:
            for seed in seeds:
                for instance in instances:
                    for function in functions:
                        name = bbob_name(function, instance, dim, noisy)
                        parse_bbob_name(name)
                        for spelled, (method, options) in zip(methods, parsed):
                            specs.append(
                                RunSpec(
                                    name,
                                    method,
                                    seed=seed,
                                    iterations=iterations,
                                    n_init=n_init,
                                    options={**METHOD_OPTIONS.get(method, {}), **options},
                                    label=spelled if options else None,
                                )
                            )
    return specs


def run_file_name(label: str) -> str:
    r"""A method label as a file name (:func:`~botorch_unknown_hypers.benchmarks.records.label_file_name`):
    ``lb-gp-ucb-auto[growth=1.01&restart=true]`` -> ``lb-gp-ucb-auto_growth=1.01_restart=true_``."""
    return label_file_name(label)


KEY_FIELDS = ("problem", "method", "seed", "n_init", "iterations", "batch_size", "options")
r"""The configuration fields that identify a BBOB run, in a run file and in a study record."""
COMPACT_FIELDS = ("config", "simple_regret", "final_simple_regret", "cumulative_time_s", "elapsed_s", "cpu_s", "warnings")
r"""What a study record keeps of a run file (the points, values and observations are left out)."""


def record_store(root: str | Path) -> RecordStore:
    r"""The BBOB study's records under ``root`` (``benchmarks/results/bbob``), one file per
    (group, method), the group being ``d{d}`` or ``d{d}-noisy``."""
    return RecordStore(root, KEY_FIELDS)


def group_name(dim: int, noisy: bool) -> str:
    r"""A study group's name: ``d{dim}``, or ``d{dim}-noisy`` for the noisy variants."""
    return f"d{dim}" + ("-noisy" if noisy else "")


def spec_group(spec: RunSpec) -> str:
    r"""The study group of a run (:func:`group_name`)."""
    _, _, dim, noisy = parse_bbob_name(spec.problem)
    return group_name(dim, noisy)


def spec_config(spec: RunSpec) -> dict[str, Any]:
    r"""The key fields (:data:`KEY_FIELDS`) of a run's configuration."""
    return {"problem": spec.problem, "method": spec.key[1], "seed": spec.seed, "n_init": spec.n_init,
            "iterations": spec.iterations, "batch_size": spec.batch_size, "options": spec.options}


def compact_record(record: dict[str, Any]) -> dict[str, Any]:
    r"""The study record of a run file: its :data:`COMPACT_FIELDS`."""
    return {k: record.get(k) for k in COMPACT_FIELDS}


def run_path(out: str | Path, spec: RunSpec) -> Path:
    r"""``out/d{d}/{problem}/{method label as a file name}-seed{seed}.json``; the label itself is
    in the file's ``config``."""
    _, _, dim, _ = parse_bbob_name(spec.problem)
    return Path(out) / f"d{dim}" / spec.problem / f"{run_file_name(spec.key[1])}-seed{spec.seed}.json"


def is_complete(path: Path, spec: RunSpec) -> bool:
    r"""Whether ``path`` holds a finished run of ``spec`` (format, version, configuration and length)."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT or record.get("version") != RECORD_VERSION:
        return False
    config = record.get("config", {})
    expected = spec_config(spec)
    if any(config.get(k) != v for k, v in expected.items()) or not record.get("complete"):
        return False
    return len(record.get("f", [])) == spec.n_init + spec.iterations * spec.batch_size


def pending_specs(specs: Iterable[RunSpec], out: str | Path | None = None, store: RecordStore | None = None) -> list[RunSpec]:
    r"""The runs of ``specs`` with neither a record in ``store`` nor a complete file under ``out``
    (either may be ``None``)."""

    def done(spec: RunSpec) -> bool:
        if store is not None and store.has(spec_group(spec), spec.key[1], spec_config(spec)):
            return True
        return out is not None and is_complete(run_path(out, spec), spec)

    return [spec for spec in specs if not done(spec)]


def run_bbob(spec: RunSpec) -> pd.DataFrame:
    r"""The executors' task: register the run's problem (and the peers) in this process, run it.

    ``attrs["cpu_s"]`` is the process's CPU time over the run (all its threads), a cost that
    other processes on the machine do not inflate as they do the wall time; ``attrs["warnings"]``
    counts the run's warnings by category (:func:`~botorch_unknown_hypers.benchmarks.study.counted_warnings`),
    which are not printed. A run that raises returns an empty frame with ``attrs["error"]`` (the traceback), so that
    one failing run is recorded and the grid goes on.
    """
    try:
        if spec.method.startswith("optuna-"):
            import_optuna().logging.set_verbosity(logging.WARNING)  # one INFO line per trial otherwise
        with bbob_registered([spec.problem]), counted_warnings() as counts:
            cpu_start = time.process_time()
            history = execute_run(spec)
            history.attrs["cpu_s"] = time.process_time() - cpu_start
        history.attrs["warnings"] = dict(sorted(counts.items()))
        return history
    except Exception:
        failed = pd.DataFrame()
        failed.attrs["error"] = traceback.format_exc()
        return failed


@lru_cache(maxsize=256)
def problem_info(name: str) -> dict[str, Any]:
    r"""The configuration of the BBOB problem ``name`` a run file records."""
    problem = bbob_problem(name)
    function, instance, dim, noisy = parse_bbob_name(name)
    return {
        "function": function,
        "instance": instance,
        "dim": dim,
        "noisy": noisy,
        "noise_fraction": NOISE_FRACTION if noisy else 0.0,
        "noise_std": problem.noise_std,
        "spread": problem.spread,
        "f_star": problem.optimal_value,
        "g_star": problem.metadata["minimum"],
        "function_name": problem.metadata["function_name"],
    }


def run_record(spec: RunSpec, history: pd.DataFrame, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    r"""The JSON of a finished run (the module docstring lists its fields)."""
    info = problem_info(spec.problem)
    f_star = info["f_star"]
    f = [float(v) for v in history["f"]]
    best, best_f = -float("inf"), []
    for v in f:
        best = max(best, v)
        best_f.append(best)
    round_wall = [float(v) for v in history["wall_time_s"]]
    cumulative, seen, total = [], set(), 0.0
    for iteration, wall in zip(history["iteration"].tolist(), round_wall):
        if iteration not in seen:  # every row of a round carries the round's proposal time
            seen.add(iteration)
            total += wall
        cumulative.append(total)
    config = {
        "problem": spec.problem,
        "method": spec.key[1],
        "seed": spec.seed,
        "n_init": spec.n_init,
        "iterations": spec.iterations,
        "batch_size": spec.batch_size,
        "options": spec.options,
        **info,
        **(extra or {}),
    }
    return {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "complete": True,
        "config": config,
        "f": f,
        "y": [float(v) for v in history["y"]],
        "best_f": best_f,
        "simple_regret": [f_star - b for b in best_f],
        "final_simple_regret": f_star - best_f[-1],
        "round_wall_time_s": round_wall,
        "cumulative_time_s": cumulative,
        "elapsed_s": history.attrs.get("elapsed_s"),  # None where an executor did not time it
        "cpu_s": history.attrs.get("cpu_s"),
        "warnings": history.attrs.get("warnings"),
        "x": [[float(v) for v in row.split(";")] for row in history["x"]],
    }


def write_json(path: Path, record: dict[str, Any]) -> None:
    r"""Write ``record`` to ``path`` atomically (a temporary file in the same folder, renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, path)


def make_executor(executor: str = "local", workers: int = 1, threads: int = 1, ray_address: str | None = None) -> Executor:
    r"""``"local"``: a process pool of ``workers`` workers with ``threads`` torch threads each;
    ``"ray"``: Ray tasks (one CPU each) on a local instance of ``workers`` CPUs or the cluster at
    ``ray_address``. Either runs :func:`run_bbob`.

    Raises:
        ValueError: for an unknown executor or a non-positive ``workers`` / ``threads``.
    """
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}.")
    if executor == "local":
        return ProcessExecutor(workers=workers, task=run_bbob, threads_per_worker=threads)
    if executor == "ray":
        if not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive integer, got {workers!r}.")
        return RayExecutor(address=ray_address, num_cpus=None if ray_address else workers, task=run_bbob)
    raise ValueError(f"executor must be 'local' or 'ray', got {executor!r}.")


def machine() -> str:
    r"""A one-line description of this machine (architecture, processor, core count)."""
    return f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores".replace("  ", " ")


def sweep(
    specs: Sequence[RunSpec],
    out: str | Path | None,
    executor: Executor,
    extra: dict[str, Any] | None = None,
    progress: bool = True,
    store: RecordStore | None = None,
) -> Iterator[tuple[RunSpec, Path | None]]:
    r"""Run the specs with neither a record in ``store`` nor a complete file under ``out``; yield
    ``(spec, path)`` as each finishes, ``path`` being the run file (or, without ``out``, the record
    file) and ``None`` for a failed run, whose traceback goes to ``failures.jsonl`` (under ``out``,
    else under the store's root). ``extra`` is added to every record's configuration.

    Raises:
        ValueError: when both ``out`` and ``store`` are ``None`` (nothing would be kept).
    """
    from tqdm.auto import tqdm

    if out is None and store is None:
        raise ValueError("out and store: expected a run-file folder, a record store or both, got neither.")
    out = Path(out) if out is not None else None
    todo = pending_specs(specs, out, store)
    extra = {"machine": machine(), "torch": torch.__version__, **(extra or {})}
    bar = tqdm(total=len(todo), unit="run", disable=not progress, desc=f"{len(specs) - len(todo)} done before")
    with bbob_registered(spec.problem for spec in todo):  # for an executor in this process (LocalExecutor)
        try:
            for spec, history in executor.run_all(todo):
                path = _write_run(out, spec, history, extra, store)
                bar.update(1)
                bar.set_postfix_str(f"{spec.problem} {spec.key[1]}" + (" FAILED" if path is None else ""))
                yield spec, path
        finally:
            bar.close()


def _write_run(out: Path | None, spec: RunSpec, history: pd.DataFrame, extra: dict[str, Any],
               store: RecordStore | None) -> Path | None:
    r"""Write a finished run's file and record, or append a failed run's traceback to ``failures.jsonl``."""
    error = history.attrs.get("error")
    if error is None:
        record = run_record(spec, history, extra)
        path = None
        if store is not None:
            path = store.add(spec_group(spec), spec.key[1], compact_record(record))
        if out is not None:
            path = run_path(out, spec)
            write_json(path, record)
        return path
    out = out if out is not None else store.root  # type: ignore[union-attr]  # sweep refuses both None
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "failures.jsonl", "a") as handle:
        handle.write(json.dumps({"problem": spec.problem, "method": spec.key[1], "seed": spec.seed, "error": error}) + "\n")
    logger.warning("run %s failed: %s", spec.key, error.strip().splitlines()[-1])
    return None


__all__ = [
    "COMPACT_FIELDS",
    "DEFAULT_METHODS",
    "KEY_FIELDS",
    "METHOD_OPTIONS",
    "RECORD_FORMAT",
    "RECORD_VERSION",
    "budget",
    "check_instances",
    "grid",
    "group_name",
    "is_complete",
    "make_executor",
    "pending_specs",
    "problem_info",
    "bbob_registered",
    "compact_record",
    "record_store",
    "run_bbob",
    "run_path",
    "run_record",
    "spec_config",
    "spec_group",
    "sweep",
    "write_json",
]
