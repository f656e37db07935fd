r"""What a study's runs share: id ranges, the code version and the warnings a record carries.

A study (``benchmarks/bbob.py``, ``benchmarks/practical_suite.py``) takes ranges of ids on its
command line (``"1-24"``, ``"0,3,5"``; :func:`parse_ids`), stamps every record with the commit
that ran it (:func:`code_version`), so that a record says which code it measured, and counts the
warnings of each run instead of printing them (:func:`counted_warnings`).
"""

from __future__ import annotations

import subprocess
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def parse_ids(text: str) -> list[int]:
    r"""``"0-9"`` or ``"0,3,5"`` or ``"1-3,7"`` -> the integers, in the order written.

    Raises:
        ValueError: for a part that is not an integer or a range ``lo-hi`` with ``lo <= hi``.
    """
    ids: list[int] = []
    for part in str(text).split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            first, last = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise ValueError(f"ids: expected integers or ranges like '0-9' separated by commas, got {text!r}.") from None
        if last < first:
            raise ValueError(f"ids: a range must run upwards ('lo-hi' with lo <= hi), got {part!r} in {text!r}.")
        ids.extend(range(first, last + 1))
    return ids


def code_version(root: str | Path | None = None) -> str:
    r"""The commit of the checkout at ``root`` (default: the one holding this package), with
    ``+dirty`` for uncommitted changes to tracked files, or ``"unknown"`` outside a git checkout."""
    root = Path(root) if root is not None else Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


@contextmanager
def counted_warnings() -> Iterator[Counter[str]]:
    r"""Count every warning raised in the block by its category's name instead of printing it.

    A run of a study raises BoTorch's ``OptimizationWarning`` and GPyTorch's ``NumericalWarning``
    by the hundred; printed, they bury a sweep's log, while counted, a run's record says how
    often its acquisition search failed or its Cholesky needed jitter (``warnings`` of a record).
    Every occurrence counts (filter ``"always"``); filters set inside the block (BoTorch's own
    retry on a failed search) act as before. The counter is filled when the block ends.
    """
    counts: Counter[str] = Counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield counts
        finally:
            counts.update(w.category.__name__ for w in caught)


__all__ = ["code_version", "counted_warnings", "parse_ids"]
