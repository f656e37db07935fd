r"""Executors: where the runs of a ``buh run`` grid execute.

A benchmark grid is a list of independent (problem, method, seed) runs. Each run
is deterministic given its seed (the policy draws only from its own generator,
the problem's noise from a generator seeded by the run's seed, see
:mod:`botorch_unknown_hypers.loop`), so a run gives the same rows wherever it
executes: in the driver process, in a worker process, or on a Ray node. Only
the ``wall_time_s`` column differs.

A run is described by a :class:`RunSpec` of plain, picklable data;
:func:`execute_run` builds the problem and the policy from it in whatever process
runs it and calls :func:`~botorch_unknown_hypers.loop.run`. Workers never touch
``results.csv``: every executor yields ``(spec, history)`` pairs back to the driver
as runs finish, and the driver alone appends each finished run with
:meth:`~botorch_unknown_hypers.results.ResultsStore.append_run`. A driver killed
mid-grid thus loses at most the runs in flight, and a rerun skips every run
already written.

Three executors share one interface, :meth:`Executor.run_all`:
:class:`LocalExecutor` (in the driver process, one run after the other;
``--workers 1``), :class:`ProcessExecutor` (a process pool that resubmits the runs
lost when a worker dies, up to a retry cap; ``--workers N``) and
:class:`RayExecutor` (Ray tasks on a local instance or a cluster; ``--executor ray``,
an optional extra). How each recovers from lost workers is in ``docs/harness.md``.

Example:
    >>> specs = [RunSpec("berkenkamp", "random", seed=s, iterations=5) for s in range(4)]
    >>> for spec, history in ProcessExecutor(workers=2).run_all(specs):
    ...     store.append_run(history, horizon=spec.iterations, batch_size=spec.batch_size)
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from abc import ABC, abstractmethod
from collections import Counter, deque
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, Callable, Iterable, Iterator

import pandas as pd
import torch

from botorch_unknown_hypers.checks import check_int
from botorch_unknown_hypers.loop import run
from botorch_unknown_hypers.policies.registry import make_policy
from botorch_unknown_hypers.problems.problem_registry import get_problem, resolve_task_options

logger = logging.getLogger(__name__)

RunKey = tuple[str, str, int]
RoundCallback = Callable[["RunSpec", int], None]
RunTask = Callable[["RunSpec"], pd.DataFrame]

RAY_INSTALL_HINT = 'pip install "botorch-unknown-hypers[ray]"'


class RunSetupError(ValueError):
    r"""A run could not be set up (unknown problem data, options a method rejects).

    Raised by :func:`execute_run` wherever the run executes and passed back to the
    driver unchanged; retrying cannot help, so no executor retries it.
    """


class ExecutorError(RuntimeError):
    r"""An executor cannot run the grid (no GPU for a GPU request, no Ray cluster at an address)."""


class RunLostError(ExecutorError):
    r"""A run's worker died more often than the executor's retry cap allows."""


@dataclass(frozen=True)
class RunSpec:
    r"""One (problem, method, seed) run, as plain data a worker can rebuild it from.

    Args:
        problem: A registered problem name.
        method: A registered method name.
        seed: The run's seed (initial design, noise, the policy's generator).
        iterations: BO rounds ``T``.
        batch_size: Points per round ``q``.
        n_init: Initial design size (``None``: the problem's).
        options: Keyword options of the method's constructor (JSON-safe values).
        label: Name written in the ``method`` column (default: ``method``).
        device: Device name (``"cpu"``, ``"cuda"``), resolved in the worker.
        data_dir: Folder of the materials tables (``None``: ``BUH_DATA_DIR`` or
            the default next to a source checkout, resolved in the worker).
    """

    problem: str
    method: str
    seed: int
    iterations: int
    batch_size: int = 1
    n_init: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    label: str | None = None
    device: str = "cpu"
    data_dir: str | None = None

    @property
    def key(self) -> RunKey:
        r"""``(problem, method label, seed)``: the run's key in ``results.csv``."""
        return (self.problem, self.label or self.method, self.seed)


def execute_run(spec: RunSpec, callback: Callable[[int], None] | None = None) -> pd.DataFrame:
    r"""Build the problem and the policy of ``spec`` in this process and run it.

    Args:
        spec: The run.
        callback: Called with the round number after each round (progress bars).

    Returns:
        The run's history (the columns of
        :data:`~botorch_unknown_hypers.loop.RESULT_COLUMNS`); ``attrs["elapsed_s"]``
        holds the run's wall time in seconds, setup included.

    Raises:
        RunSetupError: if the problem cannot be built or the method rejects the options.
    """
    start = time.perf_counter()
    device = torch.device(spec.device)
    try:
        problem = get_problem(spec.problem, data_dir=spec.data_dir, device=device)
    except (FileNotFoundError, ImportError) as e:
        raise RunSetupError(str(e)) from None
    try:
        options = resolve_task_options(spec.options, problem)
        policy = make_policy(spec.method, problem.domain, seed=spec.seed, device=device, **options)
    except TypeError as e:
        raise RunSetupError(f"method option not accepted by {spec.method}: {e}") from None
    except ValueError as e:
        raise RunSetupError(f"method option for {spec.method}: {e}") from None
    history = run(
        problem,
        policy,
        iterations=spec.iterations,
        seed=spec.seed,
        batch_size=spec.batch_size,
        n_init=spec.n_init,
        method=spec.key[1],
        callback=callback,
    )
    history.attrs["elapsed_s"] = time.perf_counter() - start
    return history


class Executor(ABC):
    r"""Runs a list of :class:`RunSpec` and yields each finished run to the driver."""

    @abstractmethod
    def run_all(
        self, specs: Iterable[RunSpec], on_round: RoundCallback | None = None
    ) -> Iterator[tuple[RunSpec, pd.DataFrame]]:
        r"""Yield ``(spec, history)`` for every run, in the order the runs finish.

        Args:
            specs: The runs.
            on_round: ``on_round(spec, t)`` after round ``t`` of a run, where the
                executor can report rounds (in-process only); pooled executors
                report whole runs only, through what they yield.

        Raises:
            RunSetupError: a run could not be set up (nothing retried).
            RunLostError: a run was lost more often than the retry cap allows.
        """


class LocalExecutor(Executor):
    r"""In the driver process, one run after the other, in the order given.

    Args:
        threads: ``torch.set_num_threads`` while the runs execute (restored after);
            ``None`` keeps the process's setting (torch's default: every core).
    """

    def __init__(self, threads: int | None = None) -> None:
        if threads is not None:
            check_int("threads", threads, 1)
        self.threads = threads

    def run_all(
        self, specs: Iterable[RunSpec], on_round: RoundCallback | None = None
    ) -> Iterator[tuple[RunSpec, pd.DataFrame]]:
        before = torch.get_num_threads()
        try:
            for spec in specs:
                callback = None if on_round is None else (lambda t, spec=spec: on_round(spec, t))
                torch.set_num_threads(self.threads or before)  # the caller may change it between runs
                yield spec, execute_run(spec, callback=callback)
        finally:
            torch.set_num_threads(before)


def _default_start_method() -> str:
    # forkserver: workers fork from a server process that imported the package once, so a
    # fresh pool after a worker died starts in milliseconds, and (unlike fork) no worker
    # inherits the driver's threads or CUDA context. spawn where forkserver is missing.
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def _exit_when_driver_dies(driver_alive: Connection) -> None:
    try:
        driver_alive.recv_bytes()  # nothing is ever sent: returns only at EOF
    except (EOFError, OSError):
        pass
    os._exit(1)


def _init_worker(threads: int | None, driver_alive: Connection) -> None:
    r"""Pool initializer: torch threads, and a watchdog that exits when the driver dies.

    ``driver_alive`` is the read end of a pipe whose only write end the driver holds,
    so it reaches EOF when the driver exits or is killed. (The parent pid is no
    guide: under ``forkserver`` the parent is the fork server, which lives as long
    as its children do.)
    """
    if threads is not None:
        torch.set_num_threads(threads)
    watchdog = threading.Thread(
        target=_exit_when_driver_dies, args=(driver_alive,), name="buh-driver-watchdog", daemon=True
    )
    watchdog.start()


class ProcessExecutor(Executor):
    r"""A process pool that survives workers being killed.

    At most ``workers`` runs are in flight. When a worker dies the pool breaks;
    the runs that had finished are yielded, the lost runs (those in flight) are
    submitted again to a fresh pool, ahead of the rest. Each loss counts
    against the run's cap: a run lost more than ``max_retries`` times raises
    :class:`RunLostError`. Exceptions raised *by* a run are not retried (a
    deterministic run would raise them again); they end the grid.

    Args:
        workers: Number of worker processes.
        max_retries: How often one run may be lost and submitted again.
        task: What a worker calls with a :class:`RunSpec` (default
            :func:`execute_run`); a picklable callable (a module-level function,
            or an instance of a module-level class).
        start_method: ``multiprocessing`` start method (default ``forkserver``,
            else ``spawn``). Methods or problems registered at run time in the
            driver exist in workers only if their module is imported on import
            of this package (or with ``fork``). With ``forkserver`` workers
            inherit the environment of the fork server, i.e. of the driver when
            its first pool started.
        threads_per_worker: ``torch.set_num_threads`` in each worker. Default:
            ``OMP_NUM_THREADS`` if set, else the CPU count divided by ``workers``
            (no oversubscription). For bit-identical rows with another executor,
            give every process the same thread count (e.g. ``OMP_NUM_THREADS=1``;
            Ray sets it to a task's CPUs): large reductions may be summed in
            another order with another number of threads.
    """

    def __init__(
        self,
        workers: int,
        max_retries: int = 3,
        task: RunTask = execute_run,
        start_method: str | None = None,
        threads_per_worker: int | None = None,
    ) -> None:
        check_int("workers", workers, 1)
        check_int("max_retries", max_retries, 0)
        if threads_per_worker is None:
            omp = os.environ.get("OMP_NUM_THREADS", "")
            from_env = int(omp) if omp.isdigit() else 0
            threads_per_worker = from_env if from_env > 0 else max(1, (os.cpu_count() or 1) // workers)
        self.workers = workers
        self.max_retries = max_retries
        self.task = task
        self.start_method = start_method or _default_start_method()
        self.threads_per_worker = threads_per_worker
        self.pools_started = 0
        r"""Pools created by the last :meth:`run_all` (1 + the number of pool breakdowns)."""

    def _context(self) -> multiprocessing.context.BaseContext:
        context = multiprocessing.get_context(self.start_method)
        if self.start_method == "forkserver":
            # Imported once by the fork server (no effect once it is running).
            context.set_forkserver_preload([__name__])
        return context

    def _new_pool(self, driver_alive: Connection) -> ProcessPoolExecutor:
        self.pools_started += 1
        return ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=self._context(),
            initializer=_init_worker,
            initargs=(self.threads_per_worker, driver_alive),
        )

    def run_all(
        self, specs: Iterable[RunSpec], on_round: RoundCallback | None = None
    ) -> Iterator[tuple[RunSpec, pd.DataFrame]]:
        queue = deque(specs)
        losses: Counter[RunKey] = Counter()
        in_flight: dict[Future, RunSpec] = {}
        self.pools_started = 0
        driver_alive, driver_alive_writer = self._context().Pipe(duplex=False)
        pool = self._new_pool(driver_alive)
        finished = False
        try:
            while queue or in_flight:
                broken = False
                while queue and len(in_flight) < self.workers:
                    try:
                        future = pool.submit(self.task, queue[0])
                    except BrokenProcessPool:
                        broken = True
                        break
                    in_flight[future] = queue.popleft()
                if not broken:
                    done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                    broken = any(isinstance(f.exception(), BrokenProcessPool) for f in done)
                if broken:
                    # A dead worker fails every future of the pool: let them all settle.
                    wait(in_flight)
                    done = set(in_flight)
                lost: list[RunSpec] = []
                for future in [f for f in in_flight if f in done]:
                    spec = in_flight.pop(future)
                    error = future.exception()
                    if error is None:
                        yield spec, future.result()
                    elif isinstance(error, BrokenProcessPool):
                        lost.append(spec)
                    else:
                        raise error
                if broken:
                    for spec in lost:
                        losses[spec.key] += 1
                    over = [spec.key for spec in lost if losses[spec.key] > self.max_retries]
                    if over:
                        raise RunLostError(
                            f"run(s) {over} lost {self.max_retries + 1} times: the worker process running "
                            "them died each time (killed, out of memory?). Completed runs are saved; "
                            "rerun to resume."
                        )
                    logger.warning(
                        "a worker process died; retrying %d run(s) on a fresh pool: %s",
                        len(lost),
                        ", ".join(f"{p} | {m} | seed {s}" for p, m, s in (spec.key for spec in lost)) or "none lost",
                    )
                    pool.shutdown(wait=True)
                    queue.extendleft(reversed(lost))
                    pool = self._new_pool(driver_alive)
            finished = True
        finally:
            if finished:
                pool.shutdown(wait=True)
            else:  # an error, Ctrl-C or the consumer stopped: do not wait for runs in flight
                _terminate(pool)
            driver_alive_writer.close()  # any worker still alive now exits
            driver_alive.close()


def _terminate(pool: ProcessPoolExecutor) -> None:
    r"""Stop a pool without waiting for the runs in flight."""
    terminate_workers = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    if callable(terminate_workers):
        terminate_workers()
        return
    # Older Pythons have no public way; the pool's process table is a stable private attribute.
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.is_alive():
            process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def call_task(task: RunTask, spec: RunSpec) -> pd.DataFrame:
    r"""``task(spec)``: the one remote function of :class:`RayExecutor` (``ray.remote``
    takes functions, not callable objects such as a configured task)."""
    return task(spec)


def import_ray() -> Any:
    r"""``import ray``, or an ``ImportError`` saying how to install it."""
    try:
        import ray
    except ImportError as e:
        raise ImportError(f"--executor ray needs Ray, an optional extra: {RAY_INSTALL_HINT} ({e}).") from None
    return ray


class RayExecutor(Executor):
    r"""Runs as Ray tasks, on a local Ray instance or an existing cluster.

    Without ``address`` a local Ray instance is started (and shut down after the
    grid); with one, the driver joins that cluster (``"auto"``, ``"host:6379"``,
    ``"ray://host:10001"``) and only disconnects at the end. If Ray is already
    initialised in this process, that connection is used and kept. Every task
    requests one CPU and ``gpus_per_run`` GPUs; Ray retries a task whose worker
    process died up to ``max_retries`` times. Workers need this package (and the
    materials tables, for those problems) installed where they run.

    Args:
        address: Address of a running cluster; ``None`` starts a local instance.
        gpus_per_run: GPU fraction each run requests (``0.25``: four runs share a card).
        num_cpus: CPUs of a local instance (``None``: all of this machine's).
        max_retries: Ray's ``max_retries`` of each task (lost workers only).
        task: What a task calls with a :class:`RunSpec` (a picklable callable).
        init_kwargs: More keyword arguments of ``ray.init`` (e.g. ``runtime_env``).

    Raises:
        ImportError: if Ray is not installed (the message says how to install it).
    """

    def __init__(
        self,
        address: str | None = None,
        gpus_per_run: float = 0.0,
        num_cpus: int | None = None,
        max_retries: int = 3,
        task: RunTask = execute_run,
        init_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if not 0.0 <= gpus_per_run <= 1.0:
            raise ValueError(f"gpus_per_run must be in [0, 1], got {gpus_per_run}.")
        check_int("max_retries", max_retries, 0)
        if address is not None and num_cpus is not None:
            raise ValueError("num_cpus applies to a local Ray instance only, not to a cluster at an address.")
        self.ray = import_ray()
        self.address = address
        self.gpus_per_run = float(gpus_per_run)
        self.num_cpus = num_cpus
        self.max_retries = max_retries
        self.task = task
        self.init_kwargs = dict(init_kwargs or {})

    def _connect(self) -> bool:
        r"""Initialise Ray unless it already is; returns whether this call did."""
        ray = self.ray
        if ray.is_initialized():
            return False
        if self.address is None:
            ray.init(num_cpus=self.num_cpus, include_dashboard=False, **self.init_kwargs)
            if self.gpus_per_run > 0 and ray.cluster_resources().get("GPU", 0) == 0:
                ray.shutdown()
                raise ExecutorError(
                    f"runs request {self.gpus_per_run} GPU but the local Ray instance has no GPU "
                    "(a CPU-only machine: request 0 GPUs)."
                )
        else:
            try:
                ray.init(address=self.address, **self.init_kwargs)
            except Exception as e:  # ConnectionError, a timeout, a version mismatch, ...
                raise ExecutorError(f"cannot join the Ray cluster at {self.address!r}: {e}") from e
        return True

    def run_all(
        self, specs: Iterable[RunSpec], on_round: RoundCallback | None = None
    ) -> Iterator[tuple[RunSpec, pd.DataFrame]]:
        ray = self.ray
        started = self._connect()
        pending: dict[Any, RunSpec] = {}
        try:
            remote_task = ray.remote(
                num_cpus=1, num_gpus=self.gpus_per_run, max_retries=self.max_retries, retry_exceptions=False
            )(call_task)
            task_ref = ray.put(self.task)
            pending = {remote_task.remote(task_ref, spec): spec for spec in specs}
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    spec = pending.pop(ref)
                    try:
                        history = ray.get(ref)
                    except ray.exceptions.RayTaskError as e:  # raised by the run itself
                        cause = getattr(e, "cause", None)
                        raise (cause if isinstance(cause, Exception) else e) from e
                    except ray.exceptions.RayError as e:  # worker / node lost beyond max_retries
                        raise RunLostError(
                            f"run {spec.key} lost after {self.max_retries} retries ({type(e).__name__}: {e}). "
                            "Completed runs are saved; rerun to resume."
                        ) from e
                    yield spec, history
        finally:
            for ref in pending:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # already finished or gone: nothing to cancel
                    pass
            if started:
                ray.shutdown()
