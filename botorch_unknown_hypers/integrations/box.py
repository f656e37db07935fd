r"""Named float parameters, some on a log scale, as the columns of a box.

Every integration maps a framework's float parameters to a
:class:`~botorch_unknown_hypers.domains.BoxDomain` the same way: parameter :math:`j` with bounds
:math:`[l_j, u_j]` is column :math:`j` of the box, holding :math:`x_j` on a linear scale and
:math:`z_j = \log x_j \in [\log l_j, \log u_j]` on a log scale, so that a rule's unit-cube
coordinates (and its GP's length scales) are relative changes of a log-scale parameter. A point
goes back as :math:`x_j = e^{z_j}`, clamped to :math:`[l_j, u_j]` (:math:`e^{\log u}` may exceed
:math:`u` by an ulp, and frameworks refuse a value outside the bounds). The round trip moves a
point by at most an ulp of :math:`z`, far below the tolerance with which the rules match an
observed row to the play that proposed it
(:data:`~botorch_unknown_hypers.policies.pending_plays.MATCH_TOL`).

Example:
    >>> box = ParameterBox(names=("lr", "x"), log_scale=(True, False), lower=(1e-4, 0.0), upper=(1e-1, 1.0))
    >>> box.bounds()
    tensor([[-9.2103,  0.0000],
            [-2.3026,  1.0000]], dtype=torch.float64)
    >>> box.to_values(box.bounds()[1])
    {'lr': 0.1, 'x': 1.0}
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

__all__ = ["ParameterBox"]


@dataclass(frozen=True)
class ParameterBox:
    r"""Named float parameters to and from the rows of a ``BoxDomain`` (module docstring).

    Attributes:
        names: The parameters, in the domain's column order.
        log_scale: Per parameter, whether its column holds :math:`\log x`.
        lower: Per parameter, its lower bound (natural units).
        upper: Per parameter, its upper bound (natural units).
    """

    names: tuple[str, ...]
    log_scale: tuple[bool, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]

    @property
    def dim(self) -> int:
        r"""The number of parameters (columns)."""
        return len(self.names)

    def bounds(self, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> Tensor:
        r"""``2 x d`` bounds of the domain (log bounds for log-scale parameters)."""
        lows = [math.log(v) if log else v for v, log in zip(self.lower, self.log_scale)]
        highs = [math.log(v) if log else v for v, log in zip(self.upper, self.log_scale)]
        return torch.tensor([lows, highs], dtype=dtype, device=device)

    def to_row(self, values: Mapping[str, Any]) -> list[float]:
        r"""A ``d``-list of domain coordinates of one assignment ``name -> value``."""
        return [math.log(float(values[n])) if log else float(values[n]) for n, log in zip(self.names, self.log_scale)]

    def to_values(self, x: Tensor) -> dict[str, float]:
        r"""``name -> value`` of a ``d``-dim domain point (clamped to the bounds)."""
        out: dict[str, float] = {}
        for name, log, low, high, v in zip(self.names, self.log_scale, self.lower, self.upper, x.tolist()):
            v = math.exp(v) if log else v
            out[name] = min(max(float(v), low), high)  # exp(log(u)) may exceed u by an ulp
        return out
