"""Tests of the ``buh`` command line (the contract of DESIGN.md Sec. 4)."""

from __future__ import annotations

import hashlib
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from botorch_unknown_hypers.cli import main
from botorch_unknown_hypers.policies.registry import list_methods
from botorch_unknown_hypers.problems.problem_registry import list_problems
from tests.contract import CONTRACT_COLUMNS



def buh(capsys, *args: str) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def parse_list(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.endswith(":") and not line.startswith(" "):
            current = line[:-1]
            sections[current] = []
        else:
            assert current is not None, f"name before any heading: {line!r}"
            assert len(line.split()) == 1, f"one name per line: {line!r}"
            sections[current].append(line.strip())
    return sections


def test_list(capsys):
    code, out, _ = buh(capsys, "list")
    assert code == 0
    sections = parse_list(out)
    assert list(sections)[:2] == ["problems", "methods"]
    assert sections["problems"] == list_problems()
    assert sections["methods"] == list_methods()
    batch, pending = sections["batch methods (--batch-size above 1)"], sections["methods that take pending points (X_pending)"]
    assert {"ts-rsr", "qlognei", "lb-gp-ucb", "hb-gp-ucb", "lnb-gp-ucb", "he-gp-ucb", "lb-gp-ucb-auto", "he-gp-ucb-auto"} <= set(batch)
    assert "a-gp-ucb" not in batch and "nuts-gp-ucb" not in batch
    assert {"lb-gp-ucb", "he-gp-ucb", "lb-gp-ucb-auto", "he-gp-ucb-auto"} <= set(pending) <= set(batch)
    assert {"berkenkamp", "michalewicz5", "crossed-barrel", "agnp"} <= set(sections["problems"])
    assert {"random", "mle-gp-ucb", "gp-ts"} <= set(sections["methods"])


def test_console_script_list(capsys):
    script = Path(sys.executable).with_name("buh")
    if script.exists():
        cmd = [str(script), "list"]
    elif shutil.which("buh"):
        cmd = [shutil.which("buh"), "list"]
    else:
        cmd = [sys.executable, "-m", "botorch_unknown_hypers", "list"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    main(["list"])
    assert proc.stdout == capsys.readouterr().out


def test_list_into_a_closed_pipe_stops_quietly():
    # `buh list | head -1`: the reader leaves before reading everything. Here it leaves before the
    # first line (`true` exits while the interpreter still imports): no traceback, exit 141 (SIGPIPE).
    proc = subprocess.run(
        f"set -o pipefail; {sys.executable} -m botorch_unknown_hypers list | true", shell=True,
        capture_output=True, text=True, timeout=120, executable="/bin/bash",
    )
    assert (proc.returncode, proc.stderr) == (141, "")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    code = main(
        ["run", "--problem", "berkenkamp", "--method", "mle-gp-ucb", "--seeds", "2",
         "--iterations", "10", "--out", str(out), "--no-progress"]
    )
    assert code == 0
    return out


def test_run_writes_results(run_dir):
    df = pd.read_csv(run_dir / "results.csv", keep_default_na=False)
    assert set(CONTRACT_COLUMNS) <= set(df.columns)
    assert len(df) == 2 * (3 + 10)
    assert sorted(df["seed"].unique().tolist()) == [0, 1]
    assert (df["problem"] == "berkenkamp").all() and (df["method"] == "mle-gp-ucb").all()
    for _, g in df.groupby("seed"):
        assert g["iteration"].tolist() == [0, 0, 0] + list(range(1, 11))
        assert g["batch_index"].tolist() == [0, 1, 2] + [0] * 10
        assert (g["simple_regret"] >= -1e-12).all()
        assert g["simple_regret"].is_monotonic_decreasing
        assert g["cumulative_regret"].iloc[:3].eq(0).all()
        initial = g[g["iteration"] == 0]
        assert (initial["selected"].astype(str) == "").all()
        later = g[g["iteration"] > 0]
        assert all(float(s) > 0 for s in later["selected"])  # fitted length scale
        assert (later["n_candidates"] == 1).all()
        assert (g["y"] == g["f"]).all()  # berkenkamp is noiseless


def test_rerun_adds_no_rows(run_dir, capsys):
    before = (run_dir / "results.csv").read_text()
    code, out, err = buh(
        capsys, "run", "--problem", "berkenkamp", "--method", "mle-gp-ucb", "--seeds", "2",
        "--iterations", "10", "--out", run_dir, "--no-progress",
    )
    assert code == 0
    assert "skipping 2" in err
    assert (run_dir / "results.csv").read_text() == before


def test_rerun_with_another_budget_exits_2(run_dir, capsys):
    before = (run_dir / "results.csv").read_text()
    code, _, err = buh(
        capsys, "run", "--problem", "berkenkamp", "--method", "mle-gp-ucb", "--seeds", "2",
        "--iterations", "5", "--out", run_dir, "--no-progress",
    )
    assert code == 2
    assert "iterations=10" in err and "another --out" in err
    assert (run_dir / "results.csv").read_text() == before


def test_report(run_dir, capsys):
    code, out, _ = buh(capsys, "report", run_dir)
    assert code == 0
    summary = pd.read_csv(run_dir / "summary.csv")
    assert len(summary) == 1
    row = summary.iloc[0]
    assert row["problem"] == "berkenkamp" and row["method"] == "mle-gp-ucb"
    assert row["seeds"] == 2 and row["iterations"] == 10
    df = pd.read_csv(run_dir / "results.csv")
    last = df[df["iteration"] == 10]
    assert row["simple_regret_mean"] == pytest.approx(last["simple_regret"].mean())
    assert row["cumulative_regret_mean"] == pytest.approx(last["cumulative_regret"].mean())
    for name in ("regret_berkenkamp.png", "selected_berkenkamp.png"):
        path = run_dir / name
        assert path.exists() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert str(path) in out
    assert "mle-gp-ucb" in out


def test_report_leaves_results_byte_identical(run_dir, capsys):
    before = hashlib.sha256((run_dir / "results.csv").read_bytes()).hexdigest()
    with open(run_dir / "results.csv", "a") as fh:  # a torn last line: report must not repair it
        fh.write("berkenkamp,mle-gp-ucb,9,0")
    torn = hashlib.sha256((run_dir / "results.csv").read_bytes()).hexdigest()
    assert torn != before
    code, _, _ = buh(capsys, "report", run_dir)
    assert code == 0
    assert hashlib.sha256((run_dir / "results.csv").read_bytes()).hexdigest() == torn
    with open(run_dir / "results.csv", "rb+") as fh:  # restore for the other tests of the module
        fh.truncate(fh.seek(0, 2) - len("berkenkamp,mle-gp-ucb,9,0"))
    assert hashlib.sha256((run_dir / "results.csv").read_bytes()).hexdigest() == before


def test_report_after_zero_iterations(tmp_path, capsys):
    code, _, _ = buh(capsys, "run", "--problem", "berkenkamp", "--method", "random", "--iterations", "0",
                     "--out", tmp_path, "--no-progress")
    assert code == 0
    before = (tmp_path / "results.csv").read_bytes()
    code, _, err = buh(capsys, "report", tmp_path)
    assert code == 0, err
    assert (tmp_path / "results.csv").read_bytes() == before


@pytest.mark.parametrize("flag, value, kind", [("--problem", "nope", "problem"), ("--method", "nope", "method")])
def test_unknown_names_exit_2_listing_valid_names(tmp_path, capsys, flag, value, kind):
    args = {"--problem": "berkenkamp", "--method": "random"}
    args[flag] = value
    code, _, err = buh(
        capsys, "run", "--problem", args["--problem"], "--method", args["--method"],
        "--iterations", "1", "--out", tmp_path / "o", "--no-progress",
    )
    assert code == 2
    assert "nope" in err
    valid = list_problems() if kind == "problem" else list_methods()
    for name in valid:
        assert name in err
    assert not (tmp_path / "o" / "results.csv").exists()


def test_report_on_empty_dir_exits_2(tmp_path, capsys):
    code, _, err = buh(capsys, "report", tmp_path)
    assert code == 2
    assert "results.csv" in err
    # A results file without any complete run is no better.
    (tmp_path / "results.csv").write_text("")
    code, _, err = buh(capsys, "report", tmp_path)
    assert code == 2
    assert not (tmp_path / "summary.csv").exists()


def test_missing_materials_data_exits_2_naming_the_file(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("BUH_DATA_DIR", raising=False)
    code, _, err = buh(
        capsys, "run", "--problem", "agnp", "--method", "random", "--iterations", "1",
        "--data-dir", "/nonexistent", "--out", tmp_path, "--no-progress",
    )
    assert code == 2
    assert "AgNP_dataset.csv" in err and "/nonexistent" in err
    assert "Traceback" not in err


def test_comma_separated_and_repeated_names(tmp_path, capsys):
    code, _, _ = buh(
        capsys, "run", "--problem", "berkenkamp,berkenkamp-noisy", "--method", "random, mle-gp-ucb",
        "--iterations", "2", "--out", tmp_path / "a", "--no-progress",
    )
    assert code == 0
    code, _, _ = buh(
        capsys, "run", "--problem", "berkenkamp", "--problem", "berkenkamp-noisy",
        "--method", "random", "--method", "mle-gp-ucb", "--iterations", "2", "--out", tmp_path / "b", "--no-progress",
    )
    assert code == 0
    a = pd.read_csv(tmp_path / "a" / "results.csv", keep_default_na=False)
    b = pd.read_csv(tmp_path / "b" / "results.csv", keep_default_na=False)
    for df in (a, b):
        runs = set(df.groupby(["problem", "method", "seed"]).size().items())
        assert runs == {
            (("berkenkamp", "random", 0), 5),
            (("berkenkamp", "mle-gp-ucb", 0), 5),
            (("berkenkamp-noisy", "random", 0), 5),
            (("berkenkamp-noisy", "mle-gp-ucb", 0), 5),
        }
    # Same seeds, same runs: identical results except timings.
    key = ["problem", "method", "seed", "iteration", "batch_index"]
    cols = [c for c in a.columns if c != "wall_time_s"]
    pd.testing.assert_frame_equal(
        a.sort_values(key)[cols].reset_index(drop=True), b.sort_values(key)[cols].reset_index(drop=True)
    )


def test_batch_size_option(tmp_path, capsys):
    code, _, _ = buh(
        capsys, "run", "--problem", "berkenkamp", "--method", "random", "--iterations", "2",
        "--batch-size", "3", "--seeds", "2", "--out", tmp_path, "--no-progress",
    )
    assert code == 0
    df = pd.read_csv(tmp_path / "results.csv")
    assert len(df) == 2 * (3 + 2 * 3)
    assert df[df["iteration"] > 0]["batch_index"].tolist() == [0, 1, 2] * 4


@pytest.mark.parametrize("method", ["lb-gp-ucb", "he-gp-ucb-auto"])
def test_unknown_hyperparameter_rules_run_batches(tmp_path, capsys, method):
    code, _, err = buh(
        capsys, "run", "--problem", "berkenkamp", "--method", method, "--iterations", "2",
        "--batch-size", "3", "--seeds", "1", "--out", tmp_path, "--no-progress",
        "--option", "num_restarts=2", "--option", "raw_samples=32",
    )
    assert code == 0, err
    df = pd.read_csv(tmp_path / "results.csv")
    rounds = df[df["iteration"] > 0]
    assert rounds["batch_index"].tolist() == [0, 1, 2] * 2
    for _, batch in rounds.groupby("iteration"):
        assert batch["selected"].notna().all() and batch["x"].nunique() == 3  # three distinct points


def test_demo(tmp_path, capsys):
    code, out, _ = buh(capsys, "demo", "--seeds", "1", "--iterations", "3", "--out", tmp_path)
    assert code == 0
    df = pd.read_csv(tmp_path / "results.csv")
    assert set(df["method"]) == {"lb-gp-ucb", "a-gp-ucb", "mle-gp-ucb"}
    assert set(df["problem"]) == {"berkenkamp"}
    assert len(df) == 3 * (3 + 3)
    assert (tmp_path / "summary.csv").exists()
    assert (tmp_path / "regret_berkenkamp.png").exists()
    assert "simple_regret_mean" in out and "mle-gp-ucb" in out and "lb-gp-ucb" in out


def test_method_options_are_passed_and_labelled(tmp_path, capsys):
    code, _, _ = buh(
        capsys, "run", "--problem", "berkenkamp", "--method", "lb-gp-ucb", "--iterations", "3",
        "--option", "preset=paper", "--option", "width_factor=2", "--out", tmp_path, "--no-progress",
    )
    assert code == 0
    df = pd.read_csv(tmp_path / "results.csv")
    assert set(df["method"]) == {"lb-gp-ucb[preset=paper,width_factor=2]"}
    # the paper preset's ratio e^{1/d} = e for d = 1 shows in the start ladder
    theta = sorted({float(v) for v in df[df["iteration"] > 0]["selected"]}, reverse=True)
    assert theta[0] / theta[1] == pytest.approx(math.e, rel=1e-4)


@pytest.mark.parametrize(
    "option, message",
    [("bogus=1", "not accepted by lb-gp-ucb"), ("preset=nope", "preset must be one of"), ("=3", "KEY=VALUE")],
)
def test_bad_method_option_exits_2(tmp_path, capsys, option, message):
    code, _, err = buh(
        capsys, "run", "--problem", "berkenkamp", "--method", "lb-gp-ucb", "--iterations", "2",
        "--option", option, "--out", tmp_path, "--no-progress",
    )
    assert code == 2 and message in err
    assert not (tmp_path / "results.csv").exists() or pd.read_csv(tmp_path / "results.csv").empty


def test_first_seed_splits_a_grid(tmp_path, capsys):
    args = ["run", "--problem", "berkenkamp", "--method", "random", "--iterations", "1", "--out", tmp_path,
            "--no-progress"]
    assert buh(capsys, *args, "--seeds", "2", "--first-seed", "3")[0] == 0
    df = pd.read_csv(tmp_path / "results.csv")
    assert sorted(df["seed"].unique()) == [3, 4]
    assert buh(capsys, *args, "--seeds", "1", "--first-seed", "-1")[0] == 2


def test_report_merges_directories(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    base = ["run", "--problem", "berkenkamp", "--method", "random", "--iterations", "2", "--no-progress"]
    assert buh(capsys, *base, "--seeds", "2", "--out", a)[0] == 0
    assert buh(capsys, *base, "--seeds", "1", "--first-seed", "2", "--out", b)[0] == 0
    code, out, _ = buh(capsys, "report", a, b)
    assert code == 0
    summary = pd.read_csv(a / "summary.csv")
    assert summary.loc[0, "seeds"] == 3
    assert buh(capsys, "report", a, tmp_path / "missing")[0] == 2


def test_paper_budgets_per_problem(tmp_path, capsys):
    out = tmp_path / "paper"
    args = ["run", "--problem", "bird2,gp-rbf2", "--method", "random", "--seeds", "1",
            "--iterations", "paper", "--batch-size", "paper", "--out", str(out), "--no-progress"]
    assert main(args) == 0
    df = pd.read_csv(out / "results.csv")
    # bird2: m = 5, T = 50; gp-rbf2: m = 20, T = 20; 15 initial points each
    for problem, (T, q) in {"bird2": (50, 5), "gp-rbf2": (20, 20)}.items():
        sub = df[df.problem == problem]
        assert sub.iteration.max() == T and sub[sub.iteration > 0].batch_index.max() == q - 1
        assert len(sub) == 15 + T * q
    assert main(args) == 0  # resumable with the same per-problem budgets
    assert len(pd.read_csv(out / "results.csv")) == len(df)
    assert main(["run", "--problem", "berkenkamp", "--method", "random", "--iterations", "paper",
                 "--out", str(tmp_path / "x"), "--no-progress"]) == 2
    assert "no paper setting" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "--problem", "bird2", "--method", "random", "--iterations", "many", "--out", str(out)])
