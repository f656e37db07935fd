r"""Compact study records: the memory of a benchmark study, small enough to commit.

A study (the BBOB grid, the practical suite) keeps one record per finished run in
``root/<group>/<method>.jsonl.gz``: gzip'd JSON lines, one line a run, grouped by the study's
group (``d2``, ``d2-noisy``, a practical problem) and by the method's label as a file name. A
record holds the run's configuration (``config``), the best-so-far simple regret after every
evaluation :math:`r(n) = f^* - \max_{j \le n} f(x_j)` (``simple_regret``), the cumulative
proposal time per evaluation (``cumulative_time_s``), the run's wall and CPU time and whatever
scalars the study adds; the points themselves are left out. Floats are kept to
:data:`SIGNIFICANT` significant digits, which changes no regret beyond :math:`10^{-6}` relative,
far below a 2-SE comparison of seeded runs.

A record enters the store only whole: :meth:`RecordStore.add` rewrites its file to a temporary
name and renames it over the old one, so a killed sweep loses only the runs in flight and a
committed store resumes on a fresh clone (:meth:`RecordStore.has`). It reads the file again under
an exclusive lock (``fcntl.flock`` on a hidden ``.lock`` file beside it, where the platform has
it), so that several sweeps may add to one study at once. A study's tables are
computed from the store alone.
"""

from __future__ import annotations

import gzip
import json
from contextlib import contextmanager
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

RECORDS_FORMAT = "buh-study-record"
RECORDS_VERSION = 1
SIGNIFICANT = 7
r"""Significant digits of every float in a record."""


def label_file_name(label: str) -> str:
    r"""A method label as a file name: characters other than letters, digits and ``._=,+-``
    become ``_`` (``auto[probe=0.1]`` -> ``auto_probe=0.1_``)."""
    return re.sub(r"[^A-Za-z0-9._=,+-]", "_", label)


def rounded(value: Any, digits: int = SIGNIFICANT) -> Any:
    r"""``value`` with every float (also inside lists and dicts) kept to ``digits`` significant
    digits; non-finite floats and other types unchanged."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else value
    if isinstance(value, Mapping):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v, digits) for v in value]
    return value


def config_key(config: Mapping[str, Any], fields: Iterable[str]) -> str:
    r"""The identity of a run: its ``fields`` of ``config`` as canonical JSON."""
    return json.dumps({f: config.get(f) for f in fields}, sort_keys=True)


@contextmanager
def _locked(lock: Path) -> Iterator[None]:
    r"""An exclusive lock on the file ``lock`` for the block (no lock where ``fcntl`` is missing)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: one sweep at a time
        yield
        return
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class RecordStore:
    r"""The records of one study under ``root``, keyed by ``key_fields`` of their ``config``.

    Args:
        root: the study's folder (``benchmarks/results/<study>``).
        key_fields: the configuration fields that identify a run (problem, method, seed, ...);
            a run whose key is already stored is not run again.
    """

    def __init__(self, root: str | Path, key_fields: Iterable[str]) -> None:
        self.root = Path(root)
        self.key_fields = tuple(key_fields)
        if not self.key_fields:
            raise ValueError("key_fields must name at least one configuration field, got none.")
        self._cache: dict[Path, list[dict[str, Any]]] = {}

    def path(self, group: str, method: str) -> Path:
        r"""``root/<group>/<method as a file name>.jsonl.gz``."""
        return self.root / label_file_name(group) / f"{label_file_name(method)}.jsonl.gz"

    def _read(self, path: Path) -> list[dict[str, Any]]:
        if path not in self._cache:
            records = []
            if path.exists():
                with gzip.open(path, "rt") as handle:
                    for line in handle:
                        record = json.loads(line)
                        if record.get("format") == RECORDS_FORMAT and record.get("version") == RECORDS_VERSION:
                            records.append(record)
            self._cache[path] = records
        return self._cache[path]

    def files(self, groups: Iterable[str] | None = None) -> list[Path]:
        r"""Every record file of the study (of ``groups`` only, when given), in path order."""
        if groups is None:
            return sorted(self.root.glob("*/*.jsonl.gz"))
        return sorted(path for group in set(groups) for path in (self.root / label_file_name(group)).glob("*.jsonl.gz"))

    def records(self, groups: Iterable[str] | None = None) -> Iterator[dict[str, Any]]:
        r"""Every record of the study (of ``groups`` only, when given), file by file in path order."""
        for path in self.files(groups):
            yield from self._read(path)

    def key(self, config: Mapping[str, Any]) -> str:
        return config_key(config, self.key_fields)

    def has(self, group: str, method: str, config: Mapping[str, Any]) -> bool:
        r"""Whether a run with ``config``'s key is stored under ``(group, method)``."""
        key = self.key(config)
        return any(self.key(r["config"]) == key for r in self._read(self.path(group, method)))

    def add(self, group: str, method: str, record: Mapping[str, Any]) -> Path:
        r"""Store ``record`` (its floats rounded, format and version added) under ``(group, method)``,
        replacing a stored run of the same key; the file is rewritten atomically.

        Raises:
            ValueError: for a record without a ``config`` holding every key field.
        """
        config = record.get("config")
        if not isinstance(config, Mapping) or any(f not in config for f in self.key_fields):
            raise ValueError(f"record: expected a 'config' with the fields {list(self.key_fields)}, got {config!r}.")
        path = self.path(group, method)
        key = self.key(config)
        new = {"format": RECORDS_FORMAT, "version": RECORDS_VERSION, **rounded(dict(record))}
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path.with_name(f".{path.name}.lock")):
            self._cache.pop(path, None)  # another sweep may have added to the file since it was read
            records = [r for r in self._read(path) if self.key(r["config"]) != key] + [new]
            self._write(path, records)
        return path

    def _write(self, path: Path, records: list[dict[str, Any]]) -> None:
        r"""Write ``records`` to ``path`` atomically (a temporary file renamed over it), under the
        caller's lock. ``mtime=0``: the same records give the same bytes, so a rerun changes no
        committed file."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as handle:
            handle.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in records).encode())
        os.replace(tmp, path)
        self._cache[path] = records

    def relabel(self, group: str, old: str, new: str, options: Mapping[str, Any] | None, note: str, field: str = "method") -> int:
        r"""Move every record of ``(group, old)`` to ``(group, new)``: a method whose default changed
        keeps its runs under a label that still names what ran. Each moved record's
        ``config[field]`` (and a top-level ``field``, where a study keeps one) becomes ``new``,
        its ``config["options"]`` becomes ``options`` where the study keeps options (``None``: left
        as it is), and it gains ``relabelled = {"from": old, "note": note}``. The new file is written atomically before the old one is removed.

        Returns:
            The number of records moved (0 where ``(group, old)`` has none).

        Raises:
            ValueError: for ``old == new``, an empty ``note``, or a moved run whose key is already
                stored under ``(group, new)`` (nothing is changed then).
        """
        if old == new:
            raise ValueError(f"new must differ from old, got {new!r} for both.")
        if not isinstance(note, str) or not note.strip():
            raise ValueError(f"note must say why the records are relabelled, got {note!r}.")
        source, target = self.path(group, old), self.path(group, new)
        with _locked(source.with_name(f".{source.name}.lock")), _locked(target.with_name(f".{target.name}.lock")):
            self._cache.pop(source, None)
            self._cache.pop(target, None)
            moved = []
            for record in self._read(source):
                config = {**record["config"], field: new}
                if options is not None and "options" in config:
                    config["options"] = dict(options)
                top = {field: new} if field in record else {}
                moved.append({**record, **top, "config": config, "relabelled": {"from": old, "note": note}})
            if not moved:
                return 0
            kept = self._read(target)
            stored = {self.key(r["config"]) for r in kept}
            clashes = [self.key(r["config"]) for r in moved if self.key(r["config"]) in stored]
            if clashes:
                raise ValueError(f"relabel {old!r} -> {new!r} in {group!r}: {len(clashes)} run(s) already stored under the new label, e.g. {clashes[0]}.")
            self._write(target, kept + moved)
            source.unlink()
            self._cache[source] = []
        return len(moved)

    def labels(self, group: str, field: str = "method") -> list[str]:
        r"""The labels (``config[field]``) of ``group``'s records, sorted."""
        return sorted({r["config"][field] for r in self.records([group])})

    def relabel_all(
        self, group: str, moves: Mapping[str, str], options: Mapping[str, Mapping[str, Any] | None], note: str, field: str = "method"
    ) -> dict[str, int]:
        r"""Move ``group``'s records of every label ``old`` of ``moves`` to ``moves[old]`` at once
        (:meth:`relabel`, with ``options[new]``): a default change moves many labels, and one
        label's target may be another's source (``auto`` moves out before the new default's runs
        move in). Everything is checked before a record moves: no run key may end twice under
        one label, and the moves must not form a cycle.

        Returns:
            The number of records moved per old label that had any.

        Raises:
            ValueError: for a clash or a cycle (nothing is changed then), or as :meth:`relabel`.
        """
        present = set(self.labels(group, field))
        pending = {old: new for old, new in moves.items() if old != new and old in present}
        final: dict[str, list[str]] = {}
        for label in present:
            target = pending.get(label, label)
            records = self._read(self.path(group, label))
            final.setdefault(target, []).extend(self.key({**r["config"], field: target}) for r in records if r["config"][field] == label)
        for label, keys in final.items():
            if len(keys) != len(set(keys)):
                clash = next(k for k in keys if keys.count(k) > 1)
                raise ValueError(f"relabel in {group!r}: a run would be stored twice under {label!r}, e.g. {clash}; nothing was moved.")
        order = []
        left = dict(pending)
        while left:
            ready = [old for old, new in left.items() if new not in left]
            if not ready:
                raise ValueError(f"relabel in {group!r}: the moves form a cycle among {sorted(left)}; nothing was moved.")
            for old in ready:
                order.append(old)
                del left[old]
        return {old: self.relabel(group, old, pending[old], options.get(pending[old]), note, field=field) for old in order}

    def size_bytes(self) -> int:
        r"""The bytes of the study's record files on disk."""
        return sum(p.stat().st_size for p in self.files())


__all__ = ["RECORDS_FORMAT", "RECORDS_VERSION", "SIGNIFICANT", "RecordStore", "config_key", "label_file_name", "rounded"]
