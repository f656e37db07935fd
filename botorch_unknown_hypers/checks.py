r"""Checks of arguments, shared by every layer: the one place each check is written.

Each check returns the value (converted where stated) or raises a ``ValueError`` that
names the argument, says what was expected and repeats what was given, before any state
is touched. ``bool`` is rejected where a number is expected (``True`` is an ``int`` in
Python but never a meaningful count or scale here), and so are ``nan`` and ``inf``.

A range of real numbers is an :class:`Interval`; it is checked on a Python number (an option
of a rule: :func:`check_number` and its named forms :func:`check_positive`,
:func:`check_nonnegative`, :func:`check_probability`) or on every entry of a tensor (an
argument of a formula that broadcasts: :func:`check_entries`), with one meaning and one
message for both.

Example:
    >>> num_points = check_int("num_points", 1000, minimum=1)
    >>> delta = check_probability("delta", 0.01)          # 0 < delta < 1
    >>> noise = check_positive("noise", 1e-4)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor


@dataclass(frozen=True)
class Interval:
    r"""The finite reals :math:`x` with ``low < x`` (``<=`` if ``closed_low``) and ``x < high``
    (``<=`` if ``closed_high``); an infinite end is no bound."""

    low: float = -math.inf
    high: float = math.inf
    closed_low: bool = False
    closed_high: bool = False

    def describe(self) -> str:
        r"""The interval in words, e.g. ``"a finite number > 0 and < 1"``."""
        bounds = []
        if self.low > -math.inf:
            bounds.append(f"{'>=' if self.closed_low else '>'} {self.low}")
        if self.high < math.inf:
            bounds.append(f"{'<=' if self.closed_high else '<'} {self.high}")
        return "a finite number" + (" " + " and ".join(bounds) if bounds else "")

    def holds(self, x: Tensor) -> Tensor:
        r"""Entrywise membership of a real tensor (``nan`` and ``inf`` are outside)."""
        return self._within(x, torch.isfinite(x))

    def contains(self, x: float) -> bool:
        r"""Membership of a Python number, without a tensor (so without a read of one)."""
        return bool(self._within(x, math.isfinite(x)))

    def _within(self, x: Any, finite: Any) -> Any:
        ok = finite & ((x >= self.low) if self.closed_low else (x > self.low))
        return ok & ((x <= self.high) if self.closed_high else (x < self.high))


POSITIVE = Interval(0)
NONNEGATIVE = Interval(0, closed_low=True)
AT_LEAST_ONE = Interval(1, closed_low=True)
PROBABILITY = Interval(0, 1)
r"""The open unit interval, where every failure probability :math:`\delta` of the package lies."""


def check_number(name: str, value: Any, interval: Interval) -> float:
    r"""``value`` as a ``float`` if it is a real Python number (``int`` or ``float``, not ``bool``)
    in ``interval``."""
    if not _finite_number(value) or not interval.contains(float(value)):
        raise ValueError(f"{name} must be {interval.describe()}, got {value!r}.")
    return float(value)


def check_entries(name: str, value: Tensor, interval: Interval) -> Tensor:
    r"""``value`` itself if every entry of the real tensor lies in ``interval``."""
    if not isinstance(value, Tensor) or value.dtype == torch.bool or value.is_complex():
        raise ValueError(f"{name} must be a real tensor, got {value!r}.")
    require(name, interval.holds(value), f"{interval.describe()} everywhere", value)
    return value


def check_all_entries(*checks: tuple[str, Tensor, Interval], checked: bool = True) -> None:
    r""":func:`check_entries` of every ``(name, value, interval)`` in one host read when all hold;
    otherwise the first that fails, in order, raises its ``ValueError``. ``checked=False``: only
    the values' types are checked (no read); the caller vouches for their entries, as a round does
    for constants checked when its pieces were built, whose results it checks with its own copy."""
    for name, value, _ in checks:
        if not isinstance(value, Tensor) or value.dtype == torch.bool or value.is_complex():
            raise ValueError(f"{name} must be a real tensor, got {value!r}.")
    if not checked:
        return
    if bool(torch.stack([interval.holds(value).all() for _, value, interval in checks]).all()):
        return
    for name, value, interval in checks:
        check_entries(name, value, interval)


def require(name: str, ok: Tensor, requirement: str, value: Tensor) -> None:
    r"""Raise ``ValueError`` naming ``name`` unless ``ok`` holds everywhere.

    ``ok`` must be phrased positively so that ``nan`` entries fail the check. The message shows
    up to 8 of the entries of ``value`` where it fails.
    """
    if not bool(torch.all(ok)):
        ok, value = torch.broadcast_tensors(ok, value)
        shown = value.detach().cpu().flatten()[~ok.detach().cpu().flatten()][:8]
        raise ValueError(f"{name} must be {requirement}, got {shown.tolist()}.")


def check_pair(name: str, value: Any, interval: Interval) -> tuple[float, float]:
    r"""``value`` as a pair of ``float`` s, each in ``interval`` (a tuple or list of two Python numbers)."""
    if not isinstance(value, (tuple, list)) or len(value) != 2 or not all(_finite_number(v) for v in value):
        raise ValueError(f"{name} must be a pair of numbers, each {interval.describe()}, got {value!r}.")
    return check_number(f"{name}[0]", value[0], interval), check_number(f"{name}[1]", value[1], interval)


def check_positive(name: str, value: Any, upper: float | None = None) -> float:
    r"""``value`` as a finite ``float > 0`` (and ``< upper`` when given)."""
    return check_number(name, value, Interval(0, math.inf if upper is None else upper))


def check_nonnegative(name: str, value: Any) -> float:
    r"""``value`` as a finite ``float >= 0``."""
    return check_number(name, value, NONNEGATIVE)


def check_probability(name: str, value: Any, closed_low: bool = False, closed_high: bool = False) -> float:
    r"""``value`` as a ``float`` in :math:`(0, 1)`, each end included where asked (a failure
    probability :math:`\delta` is in the open interval: the default)."""
    return check_number(name, value, Interval(0, 1, closed_low=closed_low, closed_high=closed_high))


def check_int(name: str, value: Any, minimum: int) -> int:
    r"""``value`` as an ``int >= minimum``; ``bool`` and floats are refused."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return value


def check_bool(name: str, value: Any) -> bool:
    r"""``value`` if it is a ``bool`` (``0``/``1`` are refused: a flag is not a count)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be a bool, got {value!r}.")
    return value


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> Any:
    r"""The entry of ``choices`` that ``value`` equals, of the same type (a subclass such as
    ``numpy.str_`` for ``str`` counts; ``bool`` never counts as ``int``); otherwise a
    ``ValueError`` that lists ``choices`` as given (a tuple, or a sorted list of a mapping's
    keys). Unhashable values (a list, a tensor) are refused with the same message rather than
    raising ``TypeError`` from a dict lookup."""
    for choice in choices:
        same_type = type(value) is type(choice) or (isinstance(value, type(choice)) and not isinstance(value, bool))
        if same_type and bool(value == choice):
            return choice
    raise ValueError(f"{name} must be one of {choices!r}, got {value!r}.")


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


__all__ = [
    "AT_LEAST_ONE",
    "Interval",
    "NONNEGATIVE",
    "POSITIVE",
    "PROBABILITY",
    "check_all_entries",
    "check_bool",
    "check_choice",
    "check_device",
    "check_entries",
    "check_int",
    "check_nonnegative",
    "check_number",
    "check_pair",
    "check_positive",
    "check_probability",
    "require",
]
