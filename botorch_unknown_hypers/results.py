r"""Append-only, resumable ``results.csv``.

Each (problem, method, seed) run is appended as one block, in one ``write`` call,
flushed and fsync-ed, once the run has finished. Every row carries ``run_rows``,
the number of rows its run has, so a reader can tell a complete run from a block
cut short by a crash. On opening, a store drops a torn last line and any
incomplete run by rewriting the file atomically (temporary file +
``os.replace``); so a crash loses at most the run in flight and a rerun never
duplicates rows.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pandas as pd

from botorch_unknown_hypers.loop import RESULT_COLUMNS

STORE_COLUMNS = RESULT_COLUMNS + ["horizon", "batch_size", "run_rows"]
RUN_KEY = ["problem", "method", "seed"]
INTEGER_COLUMNS = ["seed", "iteration", "batch_index", "n_candidates", "horizon", "batch_size", "run_rows"]
REAL_COLUMNS = ["y", "f", "simple_regret", "cumulative_regret", "wall_time_s"]
r"""The numeric columns of a results file: every value of them must parse as a number (an
integer where stated; ``nan``, written as an empty field, and ``inf`` are real numbers)."""


class ResultsStore:
    r"""The ``results.csv`` of one output directory.

    Args:
        out_dir: The directory (created if missing, unless ``read_only``).
        read_only: Never write: no directory is created and a torn line or an incomplete
            run is left in the file and skipped by :meth:`read` (what ``buh report`` uses).

    Raises:
        ValueError: If ``out_dir`` is a file or cannot be written (unless ``read_only``),
            or the file is not a readable results file (the message names the file and line).
    """

    def __init__(self, out_dir: str | Path, read_only: bool = False) -> None:
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / "results.csv"
        if self.out_dir.exists() and not self.out_dir.is_dir():
            raise ValueError(f"output directory {str(self.out_dir)!r} is a file, not a directory.")
        if not read_only:
            try:
                self.out_dir.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise ValueError(f"cannot create output directory {str(self.out_dir)!r}: {e.strerror}.") from None
            if not os.access(self.out_dir, os.W_OK | os.X_OK):
                raise ValueError(f"output directory {str(self.out_dir)!r} is not writable.")
        self.repaired_rows = 0 if read_only else self._repair()

    def _read_text(self) -> str:
        if not self.path.exists():
            return ""
        try:
            text = self.path.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"{self.path}: cannot be read as a results file ({e}).") from None
        if text and not text.endswith("\n"):
            text = text[: text.rfind("\n") + 1]  # torn last line
        return text

    def _parse(self, text: str, dtype: type | None = None) -> tuple[pd.DataFrame, pd.Series]:
        r"""The rows of ``text`` and the mask of the rows of complete runs; a ``ValueError``
        naming the file and the line for anything but a results file."""
        try:
            df = pd.read_csv(io.StringIO(text), keep_default_na=False, dtype=dtype)
        except (pd.errors.ParserError, ValueError) as e:
            detail = " ".join(str(e).split())
            raise ValueError(f"{self.path}: damaged results file: {detail}") from None
        missing = set(STORE_COLUMNS) - set(df.columns)
        if missing:
            raise ValueError(f"{self.path}, line 1: not a buh results file (missing columns {sorted(missing)}).")
        run_rows = self._numeric(df, "run_rows", integer=True)
        counts = df.groupby(RUN_KEY)["run_rows"].transform("size")
        return df, counts == run_rows

    def _repair(self) -> int:
        r"""Drop a torn line and incomplete runs; returns the number of rows dropped."""
        if not self.path.exists():
            return 0
        raw = self.path.read_text()
        text = self._read_text()
        if not text.strip():
            if raw:
                self.path.unlink()
            return 0
        # Read every field as text so that the rows kept are written back verbatim
        # (no float re-formatting such as x = "1" -> "1.0").
        df, complete = self._parse(text, dtype=str)
        dropped = int((~complete).sum())
        if dropped or text != raw:
            tmp = self.path.with_suffix(".csv.tmp")
            df[complete].to_csv(tmp, index=False)
            os.replace(tmp, self.path)
        return dropped

    def read(self) -> pd.DataFrame:
        r"""All rows of complete runs (empty frame with the store's columns if there are none).

        Raises:
            ValueError: naming the file, line, column and value, if a value of a numeric
                column (:data:`INTEGER_COLUMNS`, :data:`REAL_COLUMNS`) is not a number.
        """
        text = self._read_text()
        if not text.strip():
            return pd.DataFrame(columns=STORE_COLUMNS)
        df, complete = self._parse(text)
        for column in INTEGER_COLUMNS + REAL_COLUMNS:
            df[column] = self._numeric(df, column, integer=column in INTEGER_COLUMNS)
        return df[complete].reset_index(drop=True)

    def _numeric(self, df: pd.DataFrame, column: str, integer: bool) -> pd.Series:
        r"""``df[column]`` as numbers; a ``ValueError`` naming the file, line and value otherwise."""
        text = df[column].astype(str).str.strip()
        values = pd.to_numeric(text, errors="coerce").astype(float)  # "nan", "inf", "-inf" parse
        if integer:
            bad = ~(values.abs() < float("inf")) | (values != values.round())
        else:
            bad = values.isna() & ~text.str.lower().isin(["", "nan"])  # pandas writes NaN as ""
        if bad.any():
            row = int(bad.to_numpy().argmax())
            kind = "an integer" if integer else "a number"
            raise ValueError(
                f"{self.path}, line {row + 2}: column {column!r} must hold {kind}, got {text.iloc[row]!r}."
            )
        return values.astype("int64") if integer else values.astype(float)

    def completed(self) -> dict[tuple[str, str, int], tuple[int, int]]:
        r"""``(problem, method, seed) -> (horizon, batch_size)`` of every complete run."""
        df = self.read()
        if df.empty:
            return {}
        first = df.groupby(RUN_KEY)[["horizon", "batch_size"]].first()
        return {
            (str(p), str(m), int(s)): (int(h), int(b))
            for (p, m, s), (h, b) in first.iterrows()
        }

    def append_run(self, history: pd.DataFrame, horizon: int, batch_size: int) -> None:
        r"""Append one finished run (a history from :func:`~botorch_unknown_hypers.loop.run`)."""
        block = history.copy()
        block["horizon"] = horizon
        block["batch_size"] = batch_size
        block["run_rows"] = len(block)
        block = block[STORE_COLUMNS]
        write_header = not self.path.exists() or self.path.stat().st_size == 0
        payload = block.to_csv(index=False, header=write_header)
        with open(self.path, "a") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
