r"""Policy state files: save a campaign mid-way, resume it in another process.

Every policy has a JSON-safe :meth:`~botorch_unknown_hypers.policies.base.Policy.state_dict`
(the generator state included), so a campaign can stop after any round and a new
process can make the *identical* next suggestion. An
:class:`~botorch_unknown_hypers.loop.AskTellOptimizer` adds the data told so far;
save the optimizer to resume a campaign from the file alone.

A state file is untrusted input: it may be truncated by a crash, edited by hand or
written by someone else. So it is JSON and only JSON, never pickle: reading it
cannot execute anything. :func:`load_policy_state` reads at most ``max_bytes``,
decodes strict UTF-8, parses with :mod:`json` rejecting ``NaN`` / ``Infinity`` /
overflowing numbers, duplicate keys and nesting deeper than ``max_depth``, checks
the envelope, and then lets the policy validate its own state. Any failure raises
a ``ValueError`` naming the file and the problem, and leaves the object as it was.

The file is an envelope around the state::

    {"format": "buh-policy-state", "version": 1, "kind": "policy" | "optimizer",
     "name": "<method name>", "state": {...}}

Writes are atomic (temporary file in the same folder, ``fsync``, ``os.replace``):
a crash mid-save leaves the previous file intact.

Example:
    >>> save_policy_state(opt, "campaign.json")       # after round t
    >>> # ... in a new process:
    >>> opt = AskTellOptimizer(make_policy("lb-gp-ucb", problem.domain))
    >>> load_policy_state(opt, "campaign.json")
    >>> X = opt.ask()                                 # the suggestion of round t + 1
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from botorch_unknown_hypers.loop import AskTellOptimizer
from botorch_unknown_hypers.policies.base import Policy

STATE_FORMAT = "buh-policy-state"
STATE_FILE_VERSION = 1
DEFAULT_MAX_BYTES = 64 * 2**20
r"""Largest state file read (64 MiB): far above a real campaign's state."""
DEFAULT_MAX_DEPTH = 32
r"""Deepest nesting of lists / dicts accepted (real states nest a few levels)."""

Stateful = Policy | AskTellOptimizer


def _kind(target: Stateful) -> str:
    if isinstance(target, AskTellOptimizer):
        return "optimizer"
    if isinstance(target, Policy):
        return "policy"
    raise TypeError(f"expected a Policy or an AskTellOptimizer, got {type(target).__name__}.")


def _policy_name(target: Stateful) -> str:
    return (target.policy if isinstance(target, AskTellOptimizer) else target).name


def save_policy_state(target: Stateful, path: str | Path) -> Path:
    r"""Write the state of a policy (or of an optimizer: data + policy) to a JSON file.

    Args:
        target: A :class:`~botorch_unknown_hypers.policies.base.Policy` or an
            :class:`~botorch_unknown_hypers.loop.AskTellOptimizer`.
        path: The file; replaced atomically.

    Returns:
        The path written.

    Raises:
        ValueError: if the state holds NaN / inf or values JSON cannot hold.
    """
    path = Path(path)
    envelope = {
        "format": STATE_FORMAT,
        "version": STATE_FILE_VERSION,
        "kind": _kind(target),
        "name": _policy_name(target),
        "state": target.state_dict(),
    }
    try:  # floats are written with repr: they read back bit for bit
        text = json.dumps(envelope, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise ValueError(f"the state of {envelope['name']!r} cannot be saved as JSON: {e}") from None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} overflows to {value}")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key[:40]!r}")
        out[key] = value
    return out


def _depth(value: Any) -> int:
    r"""Nesting depth of lists / dicts, without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (list, dict)):
            depth += 1
            deepest = max(deepest, depth)
            stack.extend((child, depth) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def read_state_file(
    path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES, max_depth: int = DEFAULT_MAX_DEPTH
) -> dict[str, Any]:
    r"""Read and check a state file's envelope; returns it (``envelope["state"]`` is a dict).

    Raises:
        ValueError: naming the file and the problem (too large, not UTF-8, not JSON,
            non-finite numbers, duplicate keys, too deep, not a buh state file).
        OSError: if the file cannot be opened (e.g. ``FileNotFoundError``).
    """
    path = Path(path)

    def bad(problem: str) -> ValueError:
        return ValueError(f"policy state file {path}: {problem}; nothing was loaded.")

    with open(path, "rb") as fh:
        raw = fh.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise bad(f"larger than the {max_bytes}-byte limit")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise bad(f"not UTF-8 text ({e.reason} at byte {e.start}); a binary file, e.g. a pickle?") from None
    try:
        envelope = json.loads(
            text, parse_constant=_reject_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys
        )
    except json.JSONDecodeError as e:
        raise bad(f"not valid JSON ({e.msg} at line {e.lineno}, column {e.colno}); truncated or not JSON?") from None
    except RecursionError:
        raise bad(f"nested deeper than {max_depth} levels") from None
    except ValueError as e:  # non-finite or too-long numbers, duplicate keys
        raise bad(f"invalid JSON value: {e}") from None
    if _depth(envelope) > max_depth:
        raise bad(f"nested deeper than {max_depth} levels")
    if not isinstance(envelope, dict) or envelope.get("format") != STATE_FORMAT:
        raise bad(f"not a buh policy state file (no \"format\": \"{STATE_FORMAT}\" envelope)")
    if envelope.get("version") != STATE_FILE_VERSION:
        raise bad(f"file version {envelope.get('version')!r}, this package reads version {STATE_FILE_VERSION}")
    if envelope.get("kind") not in ("policy", "optimizer"):
        raise bad(f"\"kind\" must be \"policy\" or \"optimizer\", got {envelope.get('kind')!r}")
    if not isinstance(envelope.get("state"), dict):
        raise bad(f"\"state\" must be an object, got {type(envelope.get('state')).__name__}")
    return envelope


def load_policy_state(
    target: Stateful,
    path: str | Path,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> None:
    r"""Restore a state saved by :func:`save_policy_state` into ``target``.

    ``target`` must be of the saved kind (a policy for a policy's state, an
    optimizer for an optimizer's) and run the same method. Nothing changes unless
    the whole state is accepted.

    Args:
        target: The policy or optimizer to restore (built with the same method and
            options as the saved one; the seed comes from the file).
        path: The state file.
        max_bytes: Largest file read.
        max_depth: Deepest nesting accepted.

    Raises:
        ValueError: naming the file and the problem; ``target`` is unchanged.
    """
    path = Path(path)
    kind = _kind(target)
    envelope = read_state_file(path, max_bytes=max_bytes, max_depth=max_depth)
    name = _policy_name(target)
    if envelope["kind"] != kind:
        raise ValueError(
            f"policy state file {path}: holds the state of a {envelope['kind']}, not of a {kind}; nothing was loaded."
        )
    if envelope.get("name") != name:
        raise ValueError(
            f"policy state file {path}: holds the state of {envelope.get('name')!r}, not of {name!r}; "
            "nothing was loaded."
        )
    before = target.state_dict()
    try:
        target.load_state_dict(envelope["state"])
    except Exception as e:  # any failure of the policy's own checks (ValueError, TypeError, ...)
        if _as_json(target.state_dict()) != _as_json(before):  # changed before failing: undo
            target.load_state_dict(before)
        raise ValueError(f"policy state file {path}: state rejected by {name!r}: {e}; nothing was loaded.") from None


def _as_json(state: dict[str, Any]) -> str:
    return json.dumps(state, sort_keys=True, allow_nan=True)
