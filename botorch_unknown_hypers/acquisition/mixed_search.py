r"""Maximising an acquisition over a :class:`~botorch_unknown_hypers.domains.MixedDomain`.

A mixed domain's points carry a categorical as one-hot columns; BoTorch's
``optimize_acqf_mixed_alternating`` takes one column per parameter, a categorical as its choice
index. :class:`CodedAcquisition` evaluates an acquisition of points at *codes*
(:meth:`~botorch_unknown_hypers.domains.MixedDomain.from_codes`), so the optimiser runs on the
codes and the acquisition, its model and its pending points stay in the points' coordinates:

.. math::

    \max_{c \in \mathcal{C}} \alpha(e(c)), \qquad \mathcal{C} = \prod_j \mathcal{C}_j,

with :math:`e` the encoding and :math:`\mathcal{C}_j` an interval (a continuous float), a grid
(an integer or a stepped float, searched by neighbour moves up to BoTorch's
``max_discrete_values`` values and by a rounded continuous relaxation beyond) or a set of codes
(a categorical). Search alternates discrete and continuous steps from ``num_restarts`` starts
picked among ``raw_samples`` random codes (BoTorch's defaults for its steps and tolerances).
The result is a point of the domain (rounded once more), so every rule records exactly the point
that is played. A batch of ``q > 1`` is filled sequentially with each point added to the pending
points, as BoTorch's sequential ``optimize_acqf``. Points to avoid (pending ones, earlier slots
of a batch) are penalised by :data:`EXCLUDE_PENALTY`; if the result is still one of them, a
uniform point of the domain is played instead.

Only the acquisition's host-side search is offered on a mixed domain (``search`` is a box's); the
rules call this through :mod:`~botorch_unknown_hypers.acquisition.optimize` and never directly
(which says which points to avoid, with its
:func:`~botorch_unknown_hypers.acquisition.optimize.near`).

References:
    BoTorch ``botorch.optim.optimize_mixed.optimize_acqf_mixed_alternating``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from torch import Tensor

from botorch_unknown_hypers.domains import MixedDomain

EXCLUDE_PENALTY = 1e10
r"""Subtracted from the acquisition at a point to avoid: its gradient stays the acquisition's,
so a continuous step can leave it."""

class CodedAcquisition(AcquisitionFunction):
    r"""``acqf`` evaluated at the points of codes: ``batch_shape x q x P -> batch_shape``.

    Args:
        acqf: An acquisition of ``batch_shape x q x d`` points of ``domain``.
        domain: The mixed domain.
        avoid: Optional test of ``m x d`` points: which of them to avoid (``m`` bools; penalised
            by :data:`EXCLUDE_PENALTY`).
    """

    def __init__(self, acqf: AcquisitionFunction, domain: MixedDomain, avoid: Callable[[Tensor], Tensor] | None = None) -> None:
        super().__init__(model=acqf.model)
        self.acqf = acqf
        self.domain = domain
        self.avoid = avoid
        self.base_pending = getattr(acqf, "X_pending", None)
        self.X_pending = None  # type: ignore[assignment]  # codes of a batch's earlier points (BoTorch: None when none)

    def forward(self, X: Tensor) -> Tensor:
        points = self.domain.from_codes(X)
        values = self.acqf(points)
        if self.avoid is None:
            return values
        close = self.avoid(points.reshape(-1, points.shape[-1])).reshape(points.shape[:-1]).any(-1)
        return values - EXCLUDE_PENALTY * close.to(values)

    def set_X_pending(self, X_pending: Tensor | None = None) -> None:
        r"""Codes of points being filled in (a sequential batch): the inner acquisition's pending
        points become its own plus their points."""
        self.X_pending = X_pending  # type: ignore[assignment]
        if X_pending is None:
            self.acqf.set_X_pending(self.base_pending)
            return
        points = self.domain.from_codes(X_pending.detach())
        self.acqf.set_X_pending(points if self.base_pending is None else torch.cat([self.base_pending, points], dim=-2))


def maximize_mixed(
    acqf: AcquisitionFunction,
    domain: MixedDomain,
    q: int,
    num_restarts: int,
    raw_samples: int,
    fallback: Tensor,
    avoid: Callable[[Tensor], Tensor] | None = None,
) -> tuple[Tensor, Tensor]:
    r"""The ``q x d`` maximiser of ``acqf`` over ``domain`` and its value (see the module docstring).

    Runs with the global RNG as it is (the caller forks and seeds it). ``fallback``: the ``1 x d``
    point played when the result is one to avoid (``avoid``, :class:`CodedAcquisition`; ``q = 1``).
    """
    from botorch.optim.optimize_mixed import optimize_acqf_mixed_alternating

    bounds, discrete, categorical = domain.code_layout()
    coded = CodedAcquisition(acqf, domain, avoid)
    C, values = optimize_acqf_mixed_alternating(
        coded, bounds, discrete_dims=discrete or None, cat_dims=categorical or None,
        q=q, num_restarts=num_restarts, raw_samples=raw_samples,
    )
    if q > 1:
        acqf.set_X_pending(coded.base_pending)
    X = domain.round(domain.from_codes(C.detach()))
    if avoid is not None and q == 1 and bool(avoid(X).any()):
        X = fallback.to(X)
        with torch.no_grad():
            values = acqf(X.unsqueeze(-2)).reshape(1)
    if values is None:  # BoTorch returns the values unless told not to
        with torch.no_grad():
            values = acqf(X.unsqueeze(-2))
    return X, values.detach().reshape(-1)
