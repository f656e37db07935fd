r"""Perturbation sets and robust (worst-case) values on a pool, for StableOpt-type rules.

:math:`\Delta_\epsilon(x) = \{x' - x : x' \in X,\ d(x, x') \le \epsilon\}` (Bogunovic et al.
2018) on a finite domain: ``mask[i, j]`` marks the pool points within :math:`\epsilon`
of point ``i`` under :math:`d = L_\infty` (``"box"``) or :math:`L_2` (``"ball"``), which
clips the perturbations to the domain by construction; :func:`robust_min` is the
batched worst case :math:`\min_{\delta \in \Delta_\epsilon(x_i)} v(x_i + \delta)`.
"""

from __future__ import annotations

import torch
from torch import Tensor

PERTURBATIONS = ("box", "ball")


def neighbourhoods(points: Tensor, epsilon: float, kind: str = "box") -> Tensor:
    r"""``N x N`` mask: ``mask[i, j]`` iff :math:`d(x_i, x_j) \le \epsilon` (:math:`L_\infty` or :math:`L_2`)."""
    if kind not in PERTURBATIONS:
        raise ValueError(f"perturbation must be one of {PERTURBATIONS}, got {kind!r}.")
    p = 2.0 if kind == "ball" else float("inf")
    return torch.cdist(points, points, p=p) <= epsilon * (1 + 1e-12)


def robust_min(values: Tensor, mask: Tensor) -> Tensor:
    r""":math:`\min_{j : mask_{ij}} v_{kj}` for ``K x N`` values -> ``K x N``."""
    big = torch.finfo(values.dtype).max
    return torch.where(mask, values.unsqueeze(-2), torch.full_like(values.unsqueeze(-2), big)).amin(-1)
