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
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from botorch_unknown_hypers.domains import Domain

MATCH_TOL = 1e-9
r"""Largest distance (unit-cube coordinates, max-norm) between an observed row and its play."""


def match_pending(points: Sequence[Sequence[float] | None], X: Tensor, domain: Domain) -> list[int | None]:
    r"""For each row of ``X`` (``m x d``), the index of its pending play in ``points`` or ``None``.

    Args:
        points: The pending plays' points, in the order the plays were made (``None`` for a play
            whose point was not recorded).
        X: The observed rows.
        domain: Their domain (its bounds scale the distances).
    """
    out: list[int | None] = [None] * X.shape[0]
    if not points:
        return out
    known = [i for i, p in enumerate(points) if p is not None]
    if len(points) == 1 and not known:
        if X.shape[0] == 1:
            out[0] = 0
        return out
    if not known:
        return out
    width = (domain.bounds[1] - domain.bounds[0]).clamp_min(torch.finfo(X.dtype).tiny)
    P = torch.tensor([points[i] for i in known], dtype=X.dtype, device=X.device)
    dist = ((X.unsqueeze(-2) - P) / width).abs().amax(-1)  # m x |known|
    taken: set[int] = set()
    for row in range(X.shape[0]):
        order = torch.argsort(dist[row]).tolist()
        for j in order:
            if float(dist[row, j]) > MATCH_TOL:
                break
            if known[j] not in taken:
                taken.add(known[j])
                out[row] = known[j]
                break
    return out


__all__ = ["MATCH_TOL", "match_pending"]
