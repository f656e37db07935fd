r"""LNB-GP-UCB: balancing over (length scale, norm) pairs when both are unknown.

Ziomek, Adachi, Osborne (NeurIPS 2024), Appendix F, Algorithm 3. Candidates are
pairs :math:`u = (\theta, N)` from two ladders,

.. math::

    q(i) = \theta_0 r^{-i}, \qquad v(i) = N_0 e^{i},

with norm bound :math:`B(\theta, N) = (\theta_0/\theta)^{d/2} N` (Lemma 2.1), width
:math:`\beta^u_t = B(\theta, N) + \sigma_N\sqrt{2(I^\theta_{t-1} + 1 + \ln(2/\delta))}`
and suspected bound :math:`R^u(T) = \sqrt T(B(\theta, N)\sqrt{\gamma_T(\theta)} + \gamma_T(\theta))`.
Selection, play-time widths and elimination are those of Alg. 2: the round of
:class:`~botorch_unknown_hypers.policies.balancing.lb_gp_ucb.LBGPUCB` with the set of pairs
(:class:`LengthScaleNormPairs`) as its source.
After round :math:`t`:

- (lines 14-16) if the next length scale :math:`\theta_L / r` is still above
  :math:`\theta_0 / g(t+1)`, it joins :math:`\Theta` and is paired with **every**
  norm in :math:`\mathcal B`;
- (lines 18-20) if the next norm :math:`v(|\mathcal B|)` is below :math:`N_0\, b(t+1)`,
  it joins :math:`\mathcal B` and is paired with **every** length scale in
  :math:`\Theta` (including one added in the same round, so that pair appears once).

:math:`\Theta` and :math:`\mathcal B` never shrink; only pairs are eliminated.

Printed typos fixed: the length-scale
test is printed with ``<`` (inverted, as in Alg. 1); line 20 pairs
:math:`v(|\mathcal B_{t+1}| + 1)` where the value just added is meant; and the
counters start at :math:`|\Theta_1| = |\mathcal B_1| = 1`, which would skip
:math:`q(1)` and :math:`v(1)`: we add :math:`q(1)` and :math:`v(1)` first.

Choices where the paper is silent (LNB is not run in any experiment):
:math:`b(t) = \max(1, t^{a_b})` with :math:`a_b = 1/2` (so :math:`v(1) = eN_0` enters
after round 7, :math:`v(2)` after round 54, :math:`v(3)` after round 403);
:math:`N_0 = 1`; the start set is the LB start set (all :math:`q(i) > \theta_0/g(1)`)
crossed with :math:`\{N_0\}`; the other constants come from the LB preset, except
that the norm is always the :math:`\theta`-scaled :math:`B(\theta, N)` (the point of
LNB), also under ``"authors-code"``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch
from torch import Tensor

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.checks import check_positive
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.policies.balancing.lb_gp_ucb import LBGPUCB
from botorch_unknown_hypers.policies.balancing.balancing_policy import BalancingState
from botorch_unknown_hypers.policies.context import RoundContext
from botorch_unknown_hypers.policies.balancing.length_scales import (
    LengthScaleLadder,
    LengthScaleState,
    growth,
    initial_ladder,
    next_candidate,
)
from botorch_unknown_hypers.regret_bounds import norm_bound


def next_norm(num_norms: int, N0: float, b_next: float) -> float | None:
    r"""Alg. 3 lines 18-19: :math:`v(m) = N_0 e^m` for :math:`m = |\mathcal B|` if below
    :math:`N_0\, b(t+1)`, else ``None``."""
    value = N0 * math.exp(num_norms)
    return value if value < N0 * b_next else None


@dataclass
class NormBalancingState(LengthScaleState):
    r"""Length-scale balancing state plus the two ladders and each candidate's (theta, N) pair.

    Attributes:
        thetas: :math:`\Theta_t`, every length scale introduced.
        norm_values: :math:`\mathcal B_t`, every norm introduced.
        pair_theta, pair_norm: Per candidate, its index into ``thetas`` and ``norm_values``.
    """

    thetas: list[float] = field(default_factory=list)
    norm_values: list[float] = field(default_factory=list)
    pair_theta: list[int] = field(default_factory=list)
    pair_norm: list[int] = field(default_factory=list)

    def check(self) -> None:
        super().check()
        if not len(self.pair_theta) == len(self.pair_norm) == len(self.alive):
            raise ValueError("pair_theta and pair_norm must have one entry per candidate.")
        if not (
            all(0 <= i < len(self.thetas) for i in self.pair_theta)
            and all(0 <= j < len(self.norm_values) for j in self.pair_norm)
            and all(v > 0 for v in self.thetas + self.norm_values)
        ):
            raise ValueError("the (theta, N) pairs must index positive ladder values.")


@dataclass(frozen=True)
class LengthScaleNormPairs(LengthScaleLadder):
    r"""LNB's set of pairs :math:`(\theta, N)`: :math:`a(0)` the LB start set crossed with
    :math:`\{N_0\}`; after round :math:`t`, a new length scale (lines 14-16) pairs with every norm
    and a new norm :math:`v(|\mathcal B|)` below :math:`N_0 b(t+1)` (lines 18-20) with every length
    scale, :math:`b(t) = \max(1, t^{a_b})`."""

    N0: float = 1.0
    norm_growth_exponent: float = 0.5

    def b(self, t: float) -> float:
        return growth(t, 1.0, self.norm_growth_exponent)

    def pairs(self, state: NormBalancingState, theta_idx: list[int], norm_idx: list[int]) -> tuple[KernelCandidates, Tensor]:
        r"""Candidates and norm bounds :math:`B(\theta, N)` for the given index pairs (recorded)."""
        st, f = state, self.family
        assert st.theta0 is not None  # a(0) fits it first
        st.pair_theta.extend(theta_idx)
        st.pair_norm.extend(norm_idx)
        theta = torch.tensor([st.thetas[i] for i in theta_idx], dtype=f.dtype, device=f.device)
        N = torch.tensor([st.norm_values[j] for j in norm_idx], dtype=f.dtype, device=f.device)
        return f.candidates(theta.tolist()), norm_bound(theta, st.theta0, N, f.dim)

    def start(self, ctx: RoundContext, state: NormBalancingState, train_X: Tensor, train_Y: Tensor) -> tuple[KernelCandidates, Tensor]:
        super().start(ctx, state, train_X, train_Y)  # sets theta0
        st, f = state, self.family
        assert st.theta0 is not None  # set by the ladder's start
        st.thetas = initial_ladder(st.theta0, f.constants.ratio, f.g(1))
        st.norm_values = [self.N0]
        return self.pairs(st, list(range(len(st.thetas))), [0] * len(st.thetas))

    def propose(self, ctx: RoundContext, state: NormBalancingState, t: int) -> None:
        st, f = state, self.family
        theta_idx: list[int] = []
        norm_idx: list[int] = []
        assert st.theta0 is not None  # a(t) after a(0)
        nxt = next_candidate(st.thetas[-1], st.theta0, f.constants.ratio, f.g(t + 1))
        if nxt is not None:  # lines 14-16: new theta x every norm
            st.thetas.append(nxt)
            theta_idx += [len(st.thetas) - 1] * len(st.norm_values)
            norm_idx += list(range(len(st.norm_values)))
        new_norm = next_norm(len(st.norm_values), self.N0, self.b(t + 1))
        if new_norm is not None:  # lines 18-20: new norm x every theta (incl. one just added)
            st.norm_values.append(new_norm)
            theta_idx += list(range(len(st.thetas)))
            norm_idx += [len(st.norm_values) - 1] * len(st.thetas)
        if theta_idx:
            st.add(*self.pairs(st, theta_idx, norm_idx))

    def diagnostics(self, ctx: RoundContext, state: NormBalancingState) -> dict[str, Any]:
        st = state
        return {
            **super().diagnostics(ctx, st),
            "thetas": list(st.thetas),
            "norm_values": list(st.norm_values),
            "pairs": [[i, j] for i, j in zip(st.pair_theta, st.pair_norm)],
            "norm_lower": self.N0 * self.b(st.round + 1),
        }


class LNBGPUCB(LBGPUCB):
    r"""LNB-GP-UCB (Ziomek et al. 2024, Alg. 3): LB's round over the pairs of
    :class:`LengthScaleNormPairs`; see the module docstring.

    Args:
        domain: Box or pool.
        N0: Initial norm :math:`N_0 > 0` (norm bound under :math:`\theta_0`).
        norm_growth_exponent: :math:`a_b` in :math:`b(t) = \max(1, t^{a_b})`.
        **kwargs: The options of :class:`~botorch_unknown_hypers.policies.balancing.lb_gp_ucb.LBGPUCB`
            (``seed``, ``preset``, ``kernel``, ``noise``, ``growth_exponent``, ...).
    """

    name = "lnb-gp-ucb"
    state_type: ClassVar[type[BalancingState]] = NormBalancingState

    def __init__(self, domain: Domain, N0: float = 1.0, norm_growth_exponent: float = 0.5, **kwargs: Any) -> None:
        if not (N0 > 0 and math.isfinite(N0)):
            raise ValueError(f"N0 must be positive and finite, got {N0}.")
        check_positive("norm_growth_exponent", norm_growth_exponent)
        self.N0 = float(N0)
        self.norm_growth_exponent = float(norm_growth_exponent)
        super().__init__(domain, **kwargs)

    def candidate_source(self) -> LengthScaleNormPairs:
        r"""Alg. 3's set: the pairs :math:`(\theta, N)` of the two ladders."""
        return LengthScaleNormPairs(self.family, self.N0, self.norm_growth_exponent)


__all__ = ["LNBGPUCB", "LengthScaleNormPairs", "NormBalancingState", "next_norm"]
