r"""Filling a batch one slot at a time on the pending-conditioned model.

Every candidate-set rule that takes batches (hyperparameter balancing, hyperparameter
elimination, the ``auto`` presets) fills slot :math:`j` of a batch of :math:`q` on the round's
one model with its variance conditioned on :math:`Q_j`, the pending points and the slots before
:math:`j` (the mean frozen: BUCB's fantasy, Desautels et al. 2014):

.. math::

    x_{t,j} = \arg\max_x a\big(x \mid Q_j\big), \qquad Q_j = X_{\mathrm{pending}} \cup \{x_{t,1}, \dots, x_{t,j-1}\}.

The slots are sequential by construction (slot :math:`j` conditions on slot :math:`j - 1`), so
this is the one Python loop over slots; each slot's maximisation is batched over restarts and
candidates. The conditioned view shares the model's factors
(:meth:`~botorch_unknown_hypers.models.candidate_gp.CandidateGP.condition_on_pending`), and a
slot's optimiser may warm-start from the previous slot's restarts. What a rule records about a
slot (the played candidate, :math:`\mu` and :math:`\beta\sigma` on the data observed) is its
own: the loop only hands each slot the conditioned view and the points it conditions on.

References:
    T. Desautels, A. Krause, J. W. Burdick. Parallelizing Exploration-Exploitation Tradeoffs in
    Gaussian Process Bandit Optimization. JMLR 2014.
"""

from __future__ import annotations

from typing import Callable, TypeVar

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.optimize import stack_points

M = TypeVar("M")
W = TypeVar("W")

SlotMaximiser = Callable[[M, "Tensor | None", "W | None"], "tuple[Tensor, W | None]"]
r"""``(view, fixed, warm) -> (x, warm)``: one slot's ``1 x d`` point on ``view`` (the model
conditioned on ``fixed``, the ``p x d`` pending points and earlier slots, ``None`` when there are
none; no point of ``fixed`` may be proposed again) and the warm start of the next slot."""


def fill_slots(
    model: M, X_pending: Tensor | None, q: int, maximise: SlotMaximiser[M, W], condition: Callable[[M, Tensor], M] | None
) -> Tensor:
    r"""The ``q x d`` batch: slot :math:`j` maximised by ``maximise`` on ``model`` conditioned on
    ``X_pending`` (``p x d`` or ``None``) and the slots before :math:`j`.

    Args:
        model: The round's model, on the data observed.
        X_pending: Points still being evaluated (``p x d``) or ``None``.
        q: Batch size.
        maximise: One slot (:data:`SlotMaximiser`); the first slot gets ``warm = None``.
        condition: ``(model, fixed) -> view``, the model conditioned on ``fixed`` for each slot
            (:meth:`~botorch_unknown_hypers.models.candidate_gp.CandidateGP.condition_on_pending`);
            ``None``: the model itself (a rule whose slots are independent draws, ``fixed`` only
            excluded).
    """
    slots: list[Tensor] = []
    warm: W | None = None  # a later slot restarts from the previous slot's local optima
    for _ in range(q):  # sequential by construction: slot j conditions on slots < j
        fixed = stack_points(X_pending, *slots)
        view = model if fixed is None or condition is None else condition(model, fixed)
        x, warm = maximise(view, fixed, warm)
        slots.append(x)
    return torch.cat(slots)


__all__ = ["SlotMaximiser", "fill_slots"]
