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


class ResultsStore:
    r"""The ``results.csv`` of one output directory.

    Args:
        out_dir: The directory (created if missing).
    """

    def __init__(self, out_dir: str | Path) -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.out_dir / "results.csv"
        self.repaired_rows = self._repair()

    def _read_text(self) -> str:
        if not self.path.exists():
            return ""
        text = self.path.read_text()
        if text and not text.endswith("\n"):
            text = text[: text.rfind("\n") + 1]  # torn last line
        return text

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
        df = pd.read_csv(io.StringIO(text), keep_default_na=False, dtype=str)
        missing = set(STORE_COLUMNS) - set(df.columns)
        if missing:
            raise ValueError(f"{self.path} is not a buh results file (missing columns {sorted(missing)}).")
        try:
            run_rows = df["run_rows"].astype(int)
        except ValueError:
            raise ValueError(f"{self.path} is not a buh results file (non-integer run_rows).") from None
        counts = df.groupby(RUN_KEY)["run_rows"].transform("size")
        complete = counts == run_rows
        dropped = int((~complete).sum())
        if dropped or text != raw:
            tmp = self.path.with_suffix(".csv.tmp")
            df[complete].to_csv(tmp, index=False)
            os.replace(tmp, self.path)
        return dropped

    def read(self) -> pd.DataFrame:
        r"""All complete rows (empty frame with the store's columns if there are none)."""
        text = self._read_text()
        if not text.strip():
            return pd.DataFrame(columns=STORE_COLUMNS)
        return pd.read_csv(io.StringIO(text), keep_default_na=False)

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
