r"""Matching observations to the plays still awaiting them (batches, asynchronous campaigns).

A rule that records something at selection time (the candidate it played, a width
:math:`\beta\sigma`, a posterior mean) keeps one *pending play* per proposed point until that
point's value arrives. Values may arrive in any order and in any grouping (a robot finishing
some reactors before others), so each observed row is matched to the pending play of its point:

- the nearest pending point, in coordinates scaled to the unit cube, within :data:`MATCH_TOL`
  (a point told back as proposed, or after a round trip through float32 or a JSON store);
- a single pending play with no point recorded (a state saved before points were recorded) takes
  a single observed row, whatever its point.

Rows that match no pending play are data without a play: they enter the data set of the next
round but no candidate's record. Each pending play is matched at most once.

This module is the rules' one *ledger*: one dataclass for a play awaiting its value
(:class:`PendingPlay`, saved by the shared JSON codec inside each rule's state), one matching
rule (:func:`match_pending`), one function that takes the matched plays off a state's
``pending`` list with the observed rows and values (:func:`take_observations`, what a round
hands its test as :class:`Observations`) and one that turns an observed play into the record its
test reads (:func:`play_record`: the candidate, the residual :math:`y - m` and the width).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple

import torch
from torch import Tensor

from botorch_unknown_hypers.domains import Domain, check_observations
from botorch_unknown_hypers.host import host_tensor, host_values, split_rows

MATCH_TOL = 1e-9
r"""Largest distance (unit-cube coordinates, max-norm) between an observed row and its play."""


@dataclass
class PendingPlay:
    r"""A play awaiting its observation, with what its rule recorded at selection time.

    Attributes:
        candidate: The candidate (kernel, prior) played, as an index into the rule's set.
        x: The proposed point (``None`` in states saved before points were recorded).
        mean: :math:`m = \mu^u_{t-1}(x)`, the prediction whose residual :math:`y - m` a
            prequential test reads (elimination rules); 0 where nothing is predicted
            (balancing records the observation itself).
        width: :math:`w = \beta^u_t\sigma^u_{t-1}(x)` on the data observed at selection time.
        beta: :math:`\beta^u_t`, the multiplier of :math:`\sigma` in ``width`` (for the prior
            rules the paper's :math:`\sqrt{\beta_t}`).
        y_mean, y_std: The outcome scaler of the play's round (0 and 1 in raw units).
        pessimistic: A second candidate recorded at the same point (HE-StableOpt's pessimistic
            :math:`v_t`, Alg. 2 line 9), or ``None``.
    """

    candidate: int
    x: list[float] | None = None
    mean: float = 0.0
    width: float = 0.0
    beta: float = 0.0
    y_mean: float = 0.0
    y_std: float = 1.0
    pessimistic: PendingPlay | None = None

    def check(self) -> None:
        if not self.y_std > 0:
            raise ValueError(f"y_std must be > 0, got {self.y_std}.")

    def candidates(self) -> list[int]:
        r"""Every candidate the play records (the played one, then the pessimistic one)."""
        return [self.candidate] + ([] if self.pessimistic is None else self.pessimistic.candidates())


def match_pending(points: Sequence[Sequence[float] | None], X: Tensor, domain: Domain) -> list[int | None]:
    r"""For each row of ``X`` (``m x d``), the index of its pending play in ``points`` or ``None``.

    Args:
        points: The pending plays' points, in the order the plays were made (``None`` for a play
            whose point was not recorded).
        X: The observed rows.
        domain: Their domain (its bounds scale the distances).
    """
    return _match(points, X, domain, None)[0]


def _match(
    points: Sequence[Sequence[float] | None], X: Tensor, domain: Domain, values: Tensor | None, verdict: Tensor | None = None
) -> tuple[list[int | None], list[list[float]] | None, bool]:
    r""":func:`match_pending`, the rows of ``values`` (``m x c``, or ``m`` for ``c = 1``) as
    Python floats, and ``verdict`` (a 0-dim flag; ``True`` when ``None``), all in one copy; a
    false verdict matches nothing (``(all None, None, False)``)."""
    out: list[int | None] = [None] * X.shape[0]
    known = [i for i, p in enumerate(points) if p is not None]
    columns = []
    if known:
        width = (domain.bounds[1] - domain.bounds[0]).clamp_min(torch.finfo(X.dtype).tiny)
        P = host_tensor([points[i] for i in known], X.dtype, X.device)
        columns.append(((X.unsqueeze(-2) - P) / width).abs().amax(-1))  # m x |known|
    width_values = 0
    if values is not None:
        values = values.reshape(-1, 1) if values.ndim < 2 else values
        width_values = values.shape[-1]
        columns.append(values.to(X.device))
    table = torch.cat([c.to(torch.float64) for c in columns], dim=-1) if columns else None
    read = host_values(*([] if table is None else [table]), *([] if verdict is None else [verdict]))  # one copy
    if verdict is not None and not read[-1][0]:
        return out, None, False
    rows = [[] for _ in range(X.shape[0])] if table is None else split_rows(read[0], table.shape[-1])
    values_out = None
    if values is not None:
        values_out = [row[len(row) - width_values :] for row in rows]
        rows = [row[: len(row) - width_values] for row in rows]
    if not known:
        if len(points) == 1 and X.shape[0] == 1:
            out[0] = 0
        return out, values_out, True
    taken: set[int] = set()
    for row, near in enumerate(rows):
        for j in sorted(range(len(near)), key=near.__getitem__):  # nearest first; ties: the earlier play
            if near[j] > MATCH_TOL:
                break
            if known[j] not in taken:
                taken.add(known[j])
                out[row] = known[j]
                break
    return out, values_out, True


class ObservedRow(NamedTuple):
    r"""An observed row as Python floats: its pending play (``None`` for data without a play),
    its point and its value."""

    play: PendingPlay | None
    x: list[float]
    y: float


@dataclass(frozen=True)
class Observations:
    r"""What a round's test receives when values arrive: the checked rows ``X`` (``m x d``) and
    values ``Y`` (``m x 1``) on the device, and each row on the host with the play it answers
    (taken off the state's ``pending`` list)."""

    X: Tensor
    Y: Tensor
    rows: list[ObservedRow]

    def plays(self) -> Iterator[tuple[PendingPlay, float]]:
        r"""``(play, y)`` of every row that answers a play, in the rows' order."""
        return ((row.play, row.y) for row in self.rows if row.play is not None)


def take_observations(state: Any, X: Tensor, Y: Tensor, domain: Domain, verdict: Tensor | None = None) -> Observations:
    r"""The rows ``X`` (``m x d``) with their values ``Y`` (``m`` or ``m x 1``), each matched to
    its pending play in ``state.pending`` (:func:`match_pending`; the matched plays leave it, the
    others stay in order; a state without ``pending`` has no plays), the match, the rows and the
    values copied to the host in one read.

    ``verdict`` is the 0-dim flag of :func:`~botorch_unknown_hypers.domains.observation_checks`
    of ``(X, Y)`` (``None``: checked by the caller), read in the same copy: when it is false,
    :func:`~botorch_unknown_hypers.domains.check_observations` raises its named error before
    ``state.pending`` changes."""
    Y = Y.reshape(-1, 1)
    pending: list[PendingPlay] = getattr(state, "pending", [])  # a rule without a ledger keeps none
    matches, values, valid = _match([p.x for p in pending], X, domain, torch.cat([X, Y.to(X)], dim=-1), verdict)
    if not valid:
        check_observations(domain, X, Y, "X", "Y")  # raises the named error
        raise RuntimeError("observations refused by their check but not by check_observations.")
    assert values is not None
    plays = [None if m is None else pending[m] for m in matches]
    taken = {m for m in matches if m is not None}
    if taken:
        state.pending = [p for i, p in enumerate(pending) if i not in taken]
    return Observations(X, Y, [ObservedRow(play, row[:-1], row[-1]) for play, row in zip(plays, values)])


def play_record(play: PendingPlay, y: float) -> tuple[int, float, float]:
    r"""What a test keeps of an observed play: ``(candidate, y - mean, width)``; the residual is
    the observation itself where the play predicted nothing (``mean = 0``)."""
    return play.candidate, y - play.mean, play.width


def upgrade_pending(entry: Any) -> Any:
    r"""One pending entry of a state saved with ``STATE_VERSION`` 3 in the :class:`PendingPlay`
    layout (a copy): a prior rule's ``prior`` / ``sigma`` / ``sqrt_beta`` become ``candidate`` /
    ``width`` :math:`= \sqrt{\beta}\sigma` / ``beta``; elimination's ``scale`` becomes ``y_std``;
    HE-StableOpt's ``u`` / ``v`` records become the play and its ``pessimistic`` record. Entries
    already in the layout, and anything that is not a dict, are returned as they are (the codec
    checks them)."""
    if not isinstance(entry, dict):
        return entry
    entry = dict(entry)
    if "prior" in entry:
        prior, sigma, sqrt_beta = entry.pop("prior"), entry.pop("sigma", None), entry.pop("sqrt_beta", None)
        entry = {"candidate": prior, **{k: v for k, v in entry.items() if v is not None}}
        if sqrt_beta is not None:
            entry["beta"] = sqrt_beta
            if sigma is not None and isinstance(sqrt_beta, (int, float)) and isinstance(sigma, (int, float)):
                entry["width"] = sqrt_beta * sigma
    elif "scale" in entry:
        entry["y_std"] = entry.pop("scale")
    elif "u" in entry and "v" in entry:
        pessimistic = {"candidate": entry.pop("v"), "mean": entry.pop("mean_v", 0.0), "width": entry.pop("width_v", 0.0)}
        entry = {"candidate": entry.pop("u"), "mean": entry.pop("mean_u", 0.0), "width": entry.pop("width_u", 0.0), **entry, "pessimistic": pessimistic}
    return entry


__all__ = [
    "MATCH_TOL",
    "PendingPlay",
    "ObservedRow",
    "Observations",
    "match_pending",
    "play_record",
    "take_observations",
    "upgrade_pending",
]
