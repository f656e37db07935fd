"""Tests of the append-only, resumable ``results.csv`` store."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from botorch_unknown_hypers.loop import RESULT_COLUMNS
from botorch_unknown_hypers.results import STORE_COLUMNS, ResultsStore


def fake_history(problem: str, method: str, seed: int, iterations: int, n_init: int = 3) -> pd.DataFrame:
    r"""A history with awkward values: long floats, empty and ';'-joined labels."""
    rows = []
    cumulative, best = 0.0, -1.0
    for i in range(n_init + iterations):
        it = 0 if i < n_init else i - n_init + 1
        f = 0.1 + 0.123456789012345678 * ((7 * i + seed) % 5) / 3.0
        best = max(best, f)
        if it > 0:
            cumulative += 1.0 - f
        rows.append(
            {
                "problem": problem,
                "method": method,
                "seed": seed,
                "iteration": it,
                "batch_index": 0,
                "y": f + 1e-3 / 7.0,
                "f": f,
                "simple_regret": 1.0 - best,
                "cumulative_regret": cumulative,
                "selected": "" if it == 0 else f"{0.1 * (i + 1):.6g};{1.0 / (i + 3):.6g}",
                "n_candidates": 0 if it == 0 else 2,
                "wall_time_s": 0.0 if it == 0 else 0.001 * i / 3.0,
                "x": f"{i / 11.0:.10g};{1 - i / 13.0:.10g}",
            }
        )
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)


def test_append_and_completed(tmp_path):
    store = ResultsStore(tmp_path / "out")
    assert store.path == tmp_path / "out" / "results.csv"
    assert store.completed() == {}
    assert list(store.read().columns) == STORE_COLUMNS
    store.append_run(fake_history("p", "m", 0, 4), horizon=4, batch_size=1)
    store.append_run(fake_history("p", "m", 1, 4), horizon=4, batch_size=1)
    store.append_run(fake_history("q", "other", 0, 2), horizon=2, batch_size=1)
    assert store.completed() == {("p", "m", 0): (4, 1), ("p", "m", 1): (4, 1), ("q", "other", 0): (2, 1)}
    df = store.read()
    assert list(df.columns) == STORE_COLUMNS
    assert len(df) == 7 + 7 + 5
    assert (df.groupby(["problem", "method", "seed"])["run_rows"].first() == [7, 7, 5]).all()
    # Exactly one header line.
    assert store.path.read_text().count("problem,method,seed") == 1
    # A fresh store on an intact file neither drops nor rewrites anything.
    before = store.path.read_text()
    reopened = ResultsStore(tmp_path / "out")
    assert reopened.repaired_rows == 0
    assert store.path.read_text() == before
    assert reopened.completed() == store.completed()


def _data_lines(text: str) -> list[str]:
    return text.splitlines()[1:]


def test_torn_last_line_is_dropped_and_complete_runs_kept_exactly(tmp_path):
    store = ResultsStore(tmp_path)
    store.append_run(fake_history("p", "m", 0, 3), horizon=3, batch_size=1)
    store.append_run(fake_history("p", "m", 1, 3), horizon=3, batch_size=1)
    intact = store.path.read_text()
    # A crash in the middle of the next run's write: half a line, no newline.
    torn_block = fake_history("p", "m", 2, 3).assign(horizon=3, batch_size=1, run_rows=6)[STORE_COLUMNS]
    half_line = torn_block.to_csv(index=False, header=False).splitlines()[0]
    with open(store.path, "a") as fh:
        fh.write(half_line[: len(half_line) // 2])
    reopened = ResultsStore(tmp_path)
    text = store.path.read_text()
    assert text == intact  # byte for byte: the complete runs are untouched
    assert set(reopened.completed()) == {("p", "m", 0), ("p", "m", 1)}
    assert len(reopened.read()) == 12


def test_incomplete_run_block_is_dropped_and_complete_runs_kept_exactly(tmp_path):
    store = ResultsStore(tmp_path)
    store.append_run(fake_history("p", "m", 0, 3), horizon=3, batch_size=1)
    store.append_run(fake_history("p", "m", 1, 3), horizon=3, batch_size=1)
    intact = store.path.read_text()
    expected = store.read()
    # Only the first 4 of the 6 rows of run (p, m, 2) reached the disk, then a torn line.
    block = fake_history("p", "m", 2, 3).assign(horizon=3, batch_size=1, run_rows=6)[STORE_COLUMNS]
    lines = block.to_csv(index=False, header=False).splitlines()
    with open(store.path, "a") as fh:
        fh.write("\n".join(lines[:4]) + "\n" + lines[4][:10])
    reopened = ResultsStore(tmp_path)
    assert reopened.repaired_rows == 4
    assert store.path.read_text() == intact
    pd.testing.assert_frame_equal(reopened.read(), expected)
    assert set(reopened.completed()) == {("p", "m", 0), ("p", "m", 1)}
    # The run can be appended again afterwards, without duplicates or a second header.
    reopened.append_run(fake_history("p", "m", 2, 3), horizon=3, batch_size=1)
    again = ResultsStore(tmp_path)
    assert again.repaired_rows == 0
    assert set(again.completed()) == {("p", "m", 0), ("p", "m", 1), ("p", "m", 2)}
    assert len(again.read()) == 18
    assert store.path.read_text().count("problem,method,seed") == 1


def test_incomplete_block_in_the_middle_is_dropped(tmp_path):
    store = ResultsStore(tmp_path)
    store.append_run(fake_history("p", "m", 0, 2), horizon=2, batch_size=1)
    block = fake_history("p", "m", 1, 2).assign(horizon=2, batch_size=1, run_rows=5)[STORE_COLUMNS]
    with open(store.path, "a") as fh:
        fh.write(block.iloc[:2].to_csv(index=False, header=False))
    store.append_run(fake_history("p", "x", 0, 2), horizon=2, batch_size=1)
    reopened = ResultsStore(tmp_path)
    assert reopened.repaired_rows == 2
    assert set(reopened.completed()) == {("p", "m", 0), ("p", "x", 0)}
    assert len(reopened.read()) == 10


def test_only_a_torn_header_leaves_an_empty_store(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text("problem,method,se")
    store = ResultsStore(tmp_path)
    assert store.completed() == {}
    store.append_run(fake_history("p", "m", 0, 1), horizon=1, batch_size=1)
    assert set(ResultsStore(tmp_path).completed()) == {("p", "m", 0)}


def test_foreign_file_raises(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(ValueError, match="not a buh results file"):
        ResultsStore(tmp_path)
    assert path.read_text() == "a,b,c\n1,2,3\n"  # left alone
    # Results columns without the store's bookkeeping columns are foreign too.
    fake_history("p", "m", 0, 1).to_csv(path, index=False)
    with pytest.raises(ValueError, match="run_rows"):
        ResultsStore(tmp_path)


def test_repair_keeps_one_dimensional_rows_verbatim(tmp_path):
    # 1-d points such as "1" and "0" look like integers to a CSV parser; a repair
    # must not rewrite them (e.g. as "1.0") nor re-round any float.
    hist = fake_history("p", "m", 0, 4)
    hist["x"] = ["0.475107193", "1", "0", "0.9877832402", "1", "0.3333333333", "0"]
    hist["y"] = [0.1 + k / 3.0 + 1e-17 for k in range(7)]
    hist["selected"] = ["", "", "", "0.0712", "1", "1e-05", "2.5"]
    store = ResultsStore(tmp_path)
    store.append_run(hist, horizon=4, batch_size=1)
    intact = store.path.read_text()
    with open(store.path, "a") as fh:
        fh.write("p,m,1,0,0,0.5")
    reopened = ResultsStore(tmp_path)
    assert store.path.read_text() == intact
    assert len(reopened.read()) == 7
    assert set(reopened.completed()) == {("p", "m", 0)}


def test_read_only_store_skips_incomplete_runs_and_leaves_the_file_byte_identical(tmp_path):
    store = ResultsStore(tmp_path)
    store.append_run(fake_history("p", "m", 0, 3), horizon=3, batch_size=1)
    expected = store.read()
    block = fake_history("p", "m", 1, 3).assign(horizon=3, batch_size=1, run_rows=6)[STORE_COLUMNS]
    lines = block.to_csv(index=False, header=False).splitlines()
    with open(store.path, "a") as fh:
        fh.write("\n".join(lines[:4]) + "\n" + lines[4][:10])
    before = store.path.read_bytes()
    reader = ResultsStore(tmp_path, read_only=True)
    pd.testing.assert_frame_equal(reader.read(), expected)
    assert reader.repaired_rows == 0 and store.path.read_bytes() == before


def test_read_only_store_creates_nothing(tmp_path):
    reader = ResultsStore(tmp_path / "missing", read_only=True)
    assert reader.read().empty and not (tmp_path / "missing").exists()


def test_damaged_file_error_names_the_file_and_the_line(tmp_path):
    store = ResultsStore(tmp_path)
    store.append_run(fake_history("p", "m", 0, 3), horizon=3, batch_size=1)
    lines = store.path.read_text().splitlines()
    lines[3] += ",1,2"  # line 4 of the file has two fields too many
    store.path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"results\.csv: damaged results file: .*line 4"):
        ResultsStore(tmp_path, read_only=True).read()
    lines = store.path.read_text().splitlines()
    lines[3] = lines[3].rsplit(",", 2)[0]
    fields = lines[5].split(",")
    fields[-1] = "x"  # run_rows of line 6 is not an integer
    lines[5] = ",".join(fields)
    store.path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"results\.csv, line 6: column .run_rows. must hold an integer, got .x.\.$"):
        ResultsStore(tmp_path, read_only=True).read()


def test_output_directory_that_is_a_file_or_unwritable(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="is a file, not a directory"):
        ResultsStore(tmp_path / "file")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root ignores permissions
            pytest.skip("this user can write anywhere")
        with pytest.raises(ValueError, match="not writable"):
            ResultsStore(locked)
    finally:
        locked.chmod(0o700)


@pytest.mark.parametrize(
    "column, value, kind",
    [("simple_regret", "abc", "a number"), ("y", "1.0.0", "a number"), ("seed", "1.5", "an integer"), ("iteration", "x", "an integer")],
)
def test_a_non_numeric_value_is_named_by_file_line_and_column(tmp_path, column, value, kind):
    store = ResultsStore(tmp_path)
    store.append_run(fake_history("p", "m", 0, 2), horizon=2, batch_size=1)
    df = pd.read_csv(store.path, dtype=str, keep_default_na=False)
    df.loc[2, column] = value
    df.to_csv(store.path, index=False)
    with pytest.raises(ValueError) as info:
        ResultsStore(tmp_path, read_only=True).read()
    assert str(info.value) == f"{store.path}, line 4: column {column!r} must hold {kind}, got {value!r}."


def test_nan_and_inf_are_numbers_in_a_results_file(tmp_path):
    store = ResultsStore(tmp_path)
    history = fake_history("p", "m", 0, 2)
    history.loc[1, "y"] = float("nan")
    history.loc[2, "f"] = float("-inf")
    store.append_run(history, horizon=2, batch_size=1)
    df = ResultsStore(tmp_path, read_only=True).read()
    assert pd.isna(df.loc[1, "y"]) and df.loc[2, "f"] == float("-inf") and df["seed"].dtype == "int64"
