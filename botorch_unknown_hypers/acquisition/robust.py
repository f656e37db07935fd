r"""Robust (worst-case) values on a pool, for StableOpt-type rules.

With the :math:`\epsilon`-neighbourhood mask of a pool
(:meth:`~botorch_unknown_hypers.domains.FiniteDomain.neighbourhoods`: ``mask[i, j]`` marks the
pool points within :math:`\epsilon` of point ``i``, which clips the perturbations to the domain
by construction), :func:`robust_min` is the batched worst case
:math:`\min_{\delta \in \Delta_\epsilon(x_i)} v(x_i + \delta)` of ``K`` value rows at once
(Bogunovic et al. 2018).
"""

from __future__ import annotations

import torch
from torch import Tensor

def robust_min(values: Tensor, mask: Tensor) -> Tensor:
    r""":math:`\min_{j : mask_{ij}} v_{kj}` for ``K x N`` values -> ``K x N``."""
    big = torch.finfo(values.dtype).max
    return torch.where(mask, values.unsqueeze(-2), torch.full_like(values.unsqueeze(-2), big)).amin(-1)
