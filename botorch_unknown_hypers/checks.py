r"""Checks of scalar options, shared by every layer.

Each check returns the value (converted where stated) or raises a ``ValueError`` that
names the argument, says what was expected and repeats what was given, before any state
is touched. ``bool`` is rejected where a number is expected (``True`` is an ``int`` in
Python but never a meaningful count or scale here), and so are ``nan`` and ``inf``.

Example:
    >>> num_points = check_int("num_points", 1000, minimum=1)
    >>> delta = check_positive("delta", 0.01, upper=1.0)
"""

from __future__ import annotations

import math
from typing import Any

import torch


def check_int(name: str, value: Any, minimum: int) -> int:
    r"""``value`` as an ``int >= minimum``; ``bool`` and floats are refused."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return value


def check_positive(name: str, value: Any, upper: float | None = None) -> float:
    r"""``value`` as a finite ``float > 0`` (and ``< upper`` when given)."""
    ok = _finite_number(value) and value > 0
    if ok and upper is not None:
        ok = value < upper
    if not ok:
        bound = f" and < {upper}" if upper is not None else ""
        raise ValueError(f"{name} must be a finite number > 0{bound}, got {value!r}.")
    return float(value)


def check_nonnegative(name: str, value: Any) -> float:
    r"""``value`` as a finite ``float >= 0``."""
    if not _finite_number(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}.")
    return float(value)


def check_bool(name: str, value: Any) -> bool:
    r"""``value`` if it is a ``bool`` (``0``/``1`` are refused: a flag is not a count)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be a bool, got {value!r}.")
    return value


def check_device(name: str, value: Any) -> torch.device | None:
    r"""``value`` as a ``torch.device`` that torch can allocate on (``None`` passes through:
    the caller's default); a name torch does not parse, or a device that is absent (e.g.
    ``"cuda"`` without a GPU), is refused."""
    if value is None:
        return None
    if not isinstance(value, (str, torch.device)):
        raise ValueError(f"{name} must be a torch.device, a device string such as 'cpu' or 'cuda:0', or None, got {value!r}.")
    try:
        device = torch.device(value)
        torch.empty(0, device=device)
    except (RuntimeError, AssertionError) as e:  # unknown name / device absent or not compiled in
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"{name} must be a device torch can use, got {value!r} ({first}).") from None
    return device


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


__all__ = ["check_bool", "check_device", "check_int", "check_nonnegative", "check_positive"]
