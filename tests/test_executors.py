"""Tests of the executors of ``buh run`` (issue 8): same rows everywhere, killed workers and drivers.

Every test uses real processes: a process pool, a ``buh run`` subprocess killed with SIGKILL,
and (if Ray is installed) a real local Ray instance. Rows are compared with a clean in-process
run of the same grid, ``wall_time_s`` aside.
"""

from __future__ import annotations

import importlib.util
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import torch

from botorch_unknown_hypers.cli import CLIError, main, run_grid
from botorch_unknown_hypers.executors import (
    LocalExecutor,
    ProcessExecutor,
    RayExecutor,
    RunLostError,
    RunSpec,
    execute_run,
)

PROBLEMS = ["berkenkamp", "hills", "bird2"]
METHODS = ["random", "mle-gp-ucb"]
SEEDS = 3
ITERATIONS = 3
N_RUNS = len(PROBLEMS) * len(METHODS) * SEEDS
ROW_KEY = ["problem", "method", "seed", "iteration", "batch_index"]
RUN_KEY = ["problem", "method", "seed"]


# ----------------------------------------------------------------- test tasks (run in workers)
class KillOnce:
    r"""Task: the worker running ``victim`` kills itself (SIGKILL) on its first attempt.

    Attempts are counted with files in ``attempts_dir`` (shared by every process).
    """

    def __init__(self, victim: tuple[str, str, int], attempts_dir: str | Path) -> None:
        self.victim = tuple(victim)
        self.attempts_dir = str(attempts_dir)

    def attempts(self) -> int:
        return len(list(Path(self.attempts_dir).glob("attempt-*")))

    def __call__(self, spec: RunSpec) -> pd.DataFrame:
        if spec.key == self.victim:
            n = self.attempts()
            (Path(self.attempts_dir) / f"attempt-{n}-{os.getpid()}").touch()
            if n == 0:
                os.kill(os.getpid(), signal.SIGKILL)
        return execute_run(spec)


class AlwaysKill(KillOnce):
    r"""Task: the worker running ``victim`` kills itself on every attempt."""

    def __call__(self, spec: RunSpec) -> pd.DataFrame:
        if spec.key == self.victim:
            (Path(self.attempts_dir) / f"attempt-{self.attempts()}-{os.getpid()}").touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return execute_run(spec)


# --------------------------------------------------------------------------------- helpers
def rows(out: Path) -> pd.DataFrame:
    r"""The rows of ``out/results.csv`` as written (text), sorted, ``wall_time_s`` dropped."""
    df = pd.read_csv(Path(out) / "results.csv", keep_default_na=False, dtype=str)
    df = df.drop(columns="wall_time_s").astype({"seed": int, "iteration": int, "batch_index": int})
    return df.sort_values(ROW_KEY).reset_index(drop=True)


def assert_every_run_once(out: Path, n_runs: int = N_RUNS) -> None:
    df = pd.read_csv(Path(out) / "results.csv", keep_default_na=False)
    assert not df.duplicated(ROW_KEY).any(), "duplicated rows"
    sizes = df.groupby(RUN_KEY).size()
    assert len(sizes) == n_runs, f"{len(sizes)} runs, expected {n_runs}"
    assert (sizes == df.groupby(RUN_KEY)["run_rows"].first()).all()


def complete_runs(out: Path) -> int:
    r"""Complete runs in ``out/results.csv`` without touching it (a driver may be writing)."""
    path = Path(out) / "results.csv"
    if not path.exists():
        return 0
    text = path.read_text()
    text = text[: text.rfind("\n") + 1]
    if text.count("\n") < 2:
        return 0
    df = pd.read_csv(io.StringIO(text), keep_default_na=False, dtype=str)
    counts = df.groupby(RUN_KEY)["run_rows"].agg(["size", "first"])
    return int((counts["size"] == counts["first"].astype(int)).sum())


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.02)


def _proc_table() -> dict[int, tuple[int, str, str]]:
    r"""``pid -> (ppid, state, cmdline)`` of every process."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        table[int(entry.name)] = (int(fields[1]), fields[0], cmdline)
    return table


def descendants(pid: int) -> list[int]:
    table = _proc_table()
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [p for p, (ppid, _, _) in table.items() if ppid == parent]
        found += children
        frontier += children
    return found


def worker_pids(driver: int) -> list[int]:
    r"""Pool workers under ``driver``: children of its fork server, or spawned workers."""
    table = _proc_table()
    out = []
    for pid in descendants(driver):
        ppid, _, cmdline = table.get(pid, (0, "", ""))
        parent_cmdline = table.get(ppid, (0, "", ""))[2]
        if "spawn_main" in cmdline or (ppid != driver and "forkserver" in parent_cmdline):
            out.append(pid)
    return out


def alive(pid: int, started_at: str | None = None) -> bool:
    r"""Whether ``pid`` runs (not a zombie); with ``started_at`` (see :func:`start_time`), only
    if it is still the same process (not a new one that reuses a freed pid)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[0] not in "ZX" and (started_at is None or fields[19] == started_at)


def start_time(pid: int) -> str | None:
    r"""Field 22 of ``/proc/<pid>/stat`` (the start time): tells a process from a later one with its pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()[19]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> pd.DataFrame:
    r"""The grid's rows from a clean in-process run."""
    out = tmp_path_factory.mktemp("reference")
    run_grid(PROBLEMS, METHODS, SEEDS, ITERATIONS, out, progress=False, executor="local")
    assert_every_run_once(out)
    return rows(out)


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    r"""One torch thread in every process (this one, workers, Ray tasks): bit-identical rows."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OMP_NUM_THREADS", "1")
        yield
    torch.set_num_threads(threads)


# ------------------------------------------------------------------------------------ tests
def test_process_executor_rows_equal_local_rows(reference, tmp_path):
    executor = ProcessExecutor(workers=2)
    run_grid(PROBLEMS, METHODS, SEEDS, ITERATIONS, tmp_path, progress=False, executor=executor)
    assert executor.pools_started == 1
    assert_every_run_once(tmp_path)
    pd.testing.assert_frame_equal(rows(tmp_path), reference)


def test_killed_worker_run_is_retried(reference, tmp_path):
    problems = PROBLEMS[:2]  # the cheap part of the grid
    victim = ("hills", "mle-gp-ucb", 1)
    (tmp_path / "attempts").mkdir()
    task = KillOnce(victim, tmp_path / "attempts")
    executor = ProcessExecutor(workers=2, task=task)
    run_grid(problems, METHODS, SEEDS, ITERATIONS, tmp_path / "out", progress=False, executor=executor)
    assert task.attempts() == 2  # killed once, then run again
    assert executor.pools_started == 2  # the broken pool was replaced
    assert_every_run_once(tmp_path / "out", n_runs=len(problems) * len(METHODS) * SEEDS)
    expected = reference[reference["problem"].isin(problems)].reset_index(drop=True)
    pd.testing.assert_frame_equal(rows(tmp_path / "out"), expected)


def test_retry_cap_ends_the_grid_keeping_finished_runs(tmp_path):
    (tmp_path / "attempts").mkdir()
    task = AlwaysKill(("berkenkamp", "random", 1), tmp_path / "attempts")
    executor = ProcessExecutor(workers=1, max_retries=1, task=task)
    with pytest.raises(CLIError, match=r"lost 2 times.*berkenkamp|berkenkamp.*lost 2 times"):
        run_grid(["berkenkamp"], ["random"], 3, 2, tmp_path / "out", progress=False, executor=executor)
    assert task.attempts() == 2
    df = pd.read_csv(tmp_path / "out" / "results.csv")
    assert sorted(df["seed"].unique()) == [0]  # seed 0 finished before; seed 2 never ran
    with pytest.raises(RunLostError):
        list(executor.run_all([RunSpec("berkenkamp", "random", seed=1, iterations=1)]))


def test_driver_and_worker_killed_mid_grid(reference, tmp_path):
    out = tmp_path / "out"
    args = [
        "run", "--problem", ",".join(PROBLEMS), "--method", ",".join(METHODS), "--seeds", str(SEEDS),
        "--iterations", str(ITERATIONS), "--out", str(out), "--no-progress", "--workers", "2",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    stderr_path = tmp_path / "stderr.txt"
    retry_warning = "a worker process died; retrying"
    with open(stderr_path, "w") as stderr:
        driver = subprocess.Popen(
            [sys.executable, "-m", "botorch_unknown_hypers", *args],
            stdout=subprocess.DEVNULL, stderr=stderr, env=env, cwd=tmp_path,
        )

    def wait_on_driver(condition, what: str) -> None:
        def check() -> bool:
            assert driver.poll() is None, (
                f"the driver exited ({driver.returncode}) before {what}:\n{stderr_path.read_text()}"
            )
            return condition()

        wait_for(check, 180, what)

    started: dict[int, str] = {}  # pid -> start time, of every process seen under the driver

    def note_descendants() -> None:
        for pid in descendants(driver.pid):
            t = start_time(pid)
            if t is not None:  # None: already gone
                started.setdefault(pid, t)

    try:
        wait_on_driver(lambda: complete_runs(out) >= 1, "the first run")
        workers = worker_pids(driver.pid)
        assert workers, "no pool worker found"
        note_descendants()
        os.kill(workers[0], signal.SIGKILL)  # kill -9 of one worker
        # Runs that had finished before the driver noticed the dead worker may still be written
        # after the kill: wait for the driver's retry of the lost runs, then for a run written
        # after it (so by the fresh pool), and only then kill the driver.
        wait_on_driver(lambda: retry_warning in stderr_path.read_text(), "the driver to retry the lost runs")
        after_retry = complete_runs(out)
        wait_on_driver(lambda: complete_runs(out) > after_retry, "a run of the fresh pool")
        note_descendants()
        driver.send_signal(signal.SIGKILL)  # kill -9 of the driver, mid-grid
        driver.wait(30)
        written = complete_runs(out)
        assert 0 < written < N_RUNS, f"{written} runs written: not mid-grid"
        # the orphaned workers (and the fork server) notice and exit
        wait_for(lambda: not any(alive(pid, t) for pid, t in started.items()), 60, "the orphaned workers to exit")
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        for pid, t in started.items():
            if alive(pid, t):
                os.kill(pid, signal.SIGKILL)
    assert retry_warning in stderr_path.read_text()
    # rerun: resumes, skipping the runs already written
    assert main(args) == 0
    assert_every_run_once(out)
    pd.testing.assert_frame_equal(rows(out), reference)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--gpus-per-run", "1.5"], "--gpus-per-run must be a number in [0, 1]"),
        (["--gpus-per-run", "-0.1"], "--gpus-per-run must be a number in [0, 1]"),
        (["--gpus-per-run", "nan"], "--gpus-per-run must be a number in [0, 1]"),
        (["--gpus-per-run", "0.5"], "use it with --executor ray"),
        (["--address", "auto"], "use it with --executor ray"),
        (["--workers", "0"], "--workers must be a positive integer"),
        (["--executor", "local", "--workers", "2"], "--executor process"),
        (["--threads", "0"], "--threads must be a positive integer"),
        (["--threads", "-2", "--workers", "2"], "--threads must be a positive integer"),
        (["--threads", "1", "--executor", "ray"], "do not use it with --executor ray"),
    ],
)
def test_executor_flags_are_validated(tmp_path, capsys, extra, message):
    code = main(["run", "--problem", "berkenkamp", "--method", "random", "--iterations", "1",
                 "--out", str(tmp_path), "--no-progress", *extra])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "results.csv").exists()


def test_ray_missing_names_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    code = main(["run", "--problem", "berkenkamp", "--method", "random", "--iterations", "1",
                 "--out", str(tmp_path), "--no-progress", "--executor", "ray"])
    assert code == 2
    assert 'pip install "botorch-unknown-hypers[ray]"' in capsys.readouterr().err


def test_local_executor_sets_threads_during_runs_and_restores_them():
    before = torch.get_num_threads()
    seen = []
    specs = [RunSpec("berkenkamp", "random", seed=0, iterations=2)]
    list(LocalExecutor(threads=1).run_all(specs, on_round=lambda spec, t: seen.append(torch.get_num_threads())))
    assert seen == [1, 1]
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads must be an integer >= 1, got 0"):
        LocalExecutor(threads=0)


def test_process_executor_threads_default_to_cores_per_worker(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    cores = os.cpu_count() or 1
    assert ProcessExecutor(workers=2).threads_per_worker == max(1, cores // 2)
    assert ProcessExecutor(workers=2, threads_per_worker=3).threads_per_worker == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert ProcessExecutor(workers=1).threads_per_worker == 1


def test_local_executor_reports_every_round():
    seen = []
    specs = [RunSpec("berkenkamp", "random", seed=s, iterations=2) for s in range(2)]
    finished = list(LocalExecutor().run_all(specs, on_round=lambda spec, t: seen.append((spec.seed, t))))
    assert [spec.seed for spec, _ in finished] == [0, 1]
    assert seen == [(0, 1), (0, 2), (1, 1), (1, 2)]


# --------------------------------------------------------------------------------------- Ray
@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason='needs Ray: pip install -e ".[ray]"')
def test_ray_grid_matches_local_and_retries_a_killed_worker(reference, tmp_path):
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        pytest.skip("Ray is already initialised in this process")
    victim = ("bird2", "mle-gp-ucb", 0)
    (tmp_path / "attempts").mkdir()
    task = KillOnce(victim, tmp_path / "attempts")
    # a real local Ray instance, started (and shut down) by the executor
    executor = RayExecutor(num_cpus=2, max_retries=2, task=task, init_kwargs={"log_to_driver": False})
    run_grid(PROBLEMS, METHODS, SEEDS, ITERATIONS, tmp_path / "out", progress=False, executor=executor)
    assert not ray.is_initialized()
    assert task.attempts() == 2  # the killed task was retried by Ray
    assert_every_run_once(tmp_path / "out")
    pd.testing.assert_frame_equal(rows(tmp_path / "out"), reference)
