r"""A user's mistakes at the ``buh`` command: exit status 2, a one-line message that names the
option, and never a traceback (a table of bad invocations)."""

from __future__ import annotations

import pytest

from botorch_unknown_hypers.cli import main

RUN = ["run", "--problem", "berkenkamp", "--method", "random", "--iterations", "1", "--no-progress"]
LB = ["run", "--problem", "berkenkamp", "--method", "lb-gp-ucb", "--iterations", "1", "--no-progress"]

# (arguments, text the message must contain); {out} is a fresh folder, {file} an existing file.
BAD = [
    ([], "command"),
    (["fly"], "command"),
    (["run"], "--problem"),
    (["run", "--problem", "berkenkamp", "--iterations", "1"], "--method"),
    (["run", "--problem", "berkenkamp", "--method", "random"], "--iterations"),
    (RUN[:2] + ["nope"] + RUN[3:], "--problem"),
    (RUN[:2] + [""] + RUN[3:], "--problem"),
    (RUN[:4] + ["nope"] + RUN[5:], "--method"),
    (RUN[:4] + ["random,nope"] + RUN[5:], "--method"),
    (RUN + ["--seeds", "0"], "--seeds"),
    (RUN + ["--seeds", "-1"], "--seeds"),
    (RUN + ["--seeds", "abc"], "--seeds"),
    (RUN + ["--seeds", "1.5"], "--seeds"),
    (RUN[:6] + ["-1"] + RUN[7:], "--iterations"),
    (RUN[:6] + ["abc"] + RUN[7:], "--iterations"),
    (RUN[:6] + ["2.5"] + RUN[7:], "--iterations"),
    (RUN + ["--batch-size", "0"], "--batch-size"),
    (RUN + ["--batch-size", "x"], "--batch-size"),
    (RUN[:4] + ["a-gp-ucb", "--iterations", "1", "--no-progress", "--batch-size", "3"], "--batch-size"),
    (RUN + ["--first-seed", "-1"], "--first-seed"),
    (RUN + ["--first-seed", "a"], "--first-seed"),
    (RUN + ["--n-init", "-1"], "--n-init"),
    (RUN + ["--n-init", "x"], "--n-init"),
    (LB + ["--n-init", "0"], "--n-init"),
    (["run", "--problem", "agnp", "--method", "random", "--iterations", "1", "--no-progress", "--n-init", "100000"],
     "--n-init"),
    (RUN + ["--device", "tpu"], "--device"),
    (RUN + ["--workers", "0"], "--workers"),
    (RUN + ["--workers", "abc"], "--workers"),
    (RUN + ["--threads", "0"], "--threads"),
    (RUN + ["--threads", "1", "--executor", "ray"], "--threads"),
    (RUN + ["--executor", "nope"], "--executor"),
    (RUN + ["--executor", "local", "--workers", "2"], "--executor"),
    (RUN + ["--gpus-per-run", "2"], "--gpus-per-run"),
    (RUN + ["--gpus-per-run", "x"], "--gpus-per-run"),
    (RUN + ["--address", "auto"], "--address"),
    (LB + ["--option", "growth_exponent=abc"], "--option"),
    (LB + ["--option", "growth_exponent=-1"], "--option"),
    (LB + ["--option", "growth_exponent"], "--option"),
    (LB + ["--option", "nope=1"], "--option"),
    (LB + ["--option", "=1"], "--option"),
    (LB + ["--option", "preset=nope"], "--option"),
    (RUN + ["--option", "noise=0"], "--option"),
    (["run", "--problem", "agnp", "--method", "random", "--iterations", "1", "--no-progress", "--data-dir", "{out}/none"],
     "--data-dir"),
    (RUN + ["--out", "{file}"], "--out"),
    (["report", "{out}/none"], "buh run --out"),
    (["report", "{file}"], "results.csv"),
    (["demo", "--seeds", "0"], "--seeds"),
    (["demo", "--iterations", "-1"], "--iterations"),
    (["demo", "--threads", "0"], "--threads"),
    (["demo", "--device", "tpu"], "--device"),
]


@pytest.mark.parametrize("args, names", BAD, ids=[" ".join(a)[-60:] or "(none)" for a, _ in BAD])
def test_bad_invocation_exits_2_naming_the_option(args, names, tmp_path, capsys):
    (tmp_path / "file").write_text("")
    args = [a.replace("{out}", str(tmp_path)).replace("{file}", str(tmp_path / "file")) for a in args]
    if args and args[0] in ("run", "demo") and "--out" not in args:
        args += ["--out", str(tmp_path / "out")]
    try:
        code = main(args)
    except SystemExit as e:  # argparse's own errors
        code = e.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert names in err, err
    assert not (tmp_path / "out" / "results.csv").exists()


def test_the_table_has_at_least_40_invocations():
    assert len(BAD) >= 40


def test_report_on_a_non_numeric_value_is_one_line_naming_file_column_and_line(tmp_path, capsys):
    import pandas as pd

    from botorch_unknown_hypers.results import ResultsStore
    from tests.test_results import fake_history

    store = ResultsStore(tmp_path)
    store.append_run(fake_history("p", "m", 0, 3), horizon=3, batch_size=1)
    df = pd.read_csv(store.path, dtype=str, keep_default_na=False)
    df.loc[4, "cumulative_regret"] = "n/a"
    df.to_csv(store.path, index=False)
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"{store.path}, line 6: column 'cumulative_regret' must hold a number, got 'n/a'." in err
    assert not (tmp_path / "summary.csv").exists()
