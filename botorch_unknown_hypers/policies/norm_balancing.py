r"""LNB-GP-UCB: balancing over (length scale, norm) pairs when both are unknown.

Ziomek, Adachi, Osborne (NeurIPS 2024), Appendix F, Algorithm 3. Candidates are
pairs :math:`u = (\theta, N)` from two ladders,

.. math::

    q(i) = \theta_0 r^{-i}, \qquad v(i) = N_0 e^{i},

with norm bound :math:`B(\theta, N) = (\theta_0/\theta)^{d/2} N` (Lemma 2.1), width
:math:`\beta^u_t = B(\theta, N) + \sigma_N\sqrt{2(I^\theta_{t-1} + 1 + \ln(2/\delta))}`
and suspected bound :math:`R^u(T) = \sqrt T(B(\theta, N)\sqrt{\gamma_T(\theta)} + \gamma_T(\theta))`.
Selection, play-time widths and elimination are those of Alg. 2
(:class:`~botorch_unknown_hypers.policies.hyperparameter_balancing.HyperparameterBalancing`).
After round :math:`t`:

- (lines 14-16) if the next length scale :math:`\theta_L / r` is still above
  :math:`\theta_0 / g(t+1)`, it joins :math:`\Theta` and is paired with **every**
  norm in :math:`\mathcal B`;
- (lines 18-20) if the next norm :math:`v(|\mathcal B|)` is below :math:`N_0\, b(t+1)`,
  it joins :math:`\mathcal B` and is paired with **every** length scale in
  :math:`\Theta` (including one added in the same round, so that pair appears once).

:math:`\Theta` and :math:`\mathcal B` never shrink; only pairs are eliminated.

Printed typos fixed (implementer's note, Sec. 1.4 and trap 20): the length-scale
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
from typing import Any

from torch import Tensor

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.confidence import norm_bound
from botorch_unknown_hypers.policies.balancing import LBGPUCB, growth, initial_ladder, next_candidate
from botorch_unknown_hypers.domains import Domain


def next_norm(num_norms: int, N0: float, b_next: float) -> float | None:
    r"""Alg. 3 lines 18-19: :math:`v(m) = N_0 e^m` for :math:`m = |\mathcal B|` if below
    :math:`N_0\, b(t+1)`, else ``None``."""
    value = N0 * math.exp(num_norms)
    return value if value < N0 * b_next else None


class LNBGPUCB(LBGPUCB):
    r"""LNB-GP-UCB (Ziomek et al. 2024, Alg. 3); see the module docstring.

    Args:
        domain: Box or pool.
        N0: Initial norm :math:`N_0 > 0` (norm bound under :math:`\theta_0`).
        norm_growth_exponent: :math:`a_b` in :math:`b(t) = \max(1, t^{a_b})`.
        **kwargs: The options of :class:`~botorch_unknown_hypers.policies.balancing.LBGPUCB`
            (``seed``, ``preset``, ``kernel``, ``noise``, ``growth_exponent``, ...).
    """

    name = "lnb-gp-ucb"

    def __init__(self, domain: Domain, N0: float = 1.0, norm_growth_exponent: float = 0.5, **kwargs: Any) -> None:
        if not (N0 > 0 and math.isfinite(N0)):
            raise ValueError(f"N0 must be positive and finite, got {N0}.")
        if not norm_growth_exponent > 0:
            raise ValueError(f"norm_growth_exponent must be positive, got {norm_growth_exponent}.")
        super().__init__(domain, **kwargs)
        self.N0 = float(N0)
        self.norm_growth_exponent = float(norm_growth_exponent)
        self.thetas: list[float] = []  # Theta_t, every length scale introduced
        self.norm_values: list[float] = []  # B_t, every norm introduced
        self.pair_theta: list[int] = []  # per candidate: index into thetas
        self.pair_norm: list[int] = []  # per candidate: index into norm_values

    def _b(self, t: float) -> float:
        return growth(t, 1.0, self.norm_growth_exponent)

    def _pairs(self, theta_idx: list[int], norm_idx: list[int]) -> tuple[KernelCandidates, Tensor]:
        r"""Candidates and norm bounds :math:`B(\theta, N)` for the given index pairs (recorded)."""
        self.pair_theta.extend(theta_idx)
        self.pair_norm.extend(norm_idx)
        theta = self._tensor([self.thetas[i] for i in theta_idx])
        N = self._tensor([self.norm_values[j] for j in norm_idx])
        return self._spec(theta.tolist()), norm_bound(theta, self.theta0, N, self.domain.dim)

    def _initial_candidates(self, train_X: Tensor, train_Y: Tensor) -> tuple[KernelCandidates, Tensor]:
        super()._initial_candidates(train_X, train_Y)  # sets theta0
        self.thetas = initial_ladder(self.theta0, self.constants.ratio, self._g(1))
        self.norm_values = [self.N0]
        return self._pairs(list(range(len(self.thetas))), [0] * len(self.thetas))

    def _propose(self, t: int) -> tuple[KernelCandidates, Tensor] | None:
        theta_idx: list[int] = []
        norm_idx: list[int] = []
        nxt = next_candidate(self.thetas[-1], self.theta0, self.constants.ratio, self._g(t + 1))
        if nxt is not None:  # lines 14-16: new theta x every norm
            self.thetas.append(nxt)
            theta_idx += [len(self.thetas) - 1] * len(self.norm_values)
            norm_idx += list(range(len(self.norm_values)))
        new_norm = next_norm(len(self.norm_values), self.N0, self._b(t + 1))
        if new_norm is not None:  # lines 18-20: new norm x every theta (incl. one just added)
            self.norm_values.append(new_norm)
            theta_idx += list(range(len(self.thetas)))
            norm_idx += [len(self.norm_values) - 1] * len(self.thetas)
        return self._pairs(theta_idx, norm_idx) if theta_idx else None

    def _diagnostics(self, t: int) -> dict[str, Any]:
        return {
            **super()._diagnostics(t),
            "thetas": list(self.thetas),
            "norm_values": list(self.norm_values),
            "pairs": [[i, j] for i, j in zip(self.pair_theta, self.pair_norm)],
            "norm_lower": self.N0 * self._b(t),
        }

    # ----------------------------------------------------------------- state
    def _extra_state(self) -> dict[str, Any]:
        return {
            **super()._extra_state(),
            "thetas": list(self.thetas),
            "norm_values": list(self.norm_values),
            "pair_theta": list(self.pair_theta),
            "pair_norm": list(self.pair_norm),
        }

    def _check_extra_state(self, extra: dict[str, Any]) -> None:
        super()._check_extra_state(extra)
        try:
            n = len(extra["active"])
            ok = (
                len(extra["pair_theta"]) == len(extra["pair_norm"]) == n
                and all(0 <= int(i) < len(extra["thetas"]) for i in extra["pair_theta"])
                and all(0 <= int(j) < len(extra["norm_values"]) for j in extra["pair_norm"])
                and all(float(v) > 0 for v in extra["thetas"] + extra["norm_values"])
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"state['extra'] is not an lnb-gp-ucb state: {e}") from None
        if not ok:
            raise ValueError("state['extra'] has inconsistent (theta, N) pairs.")

    def _load_extra_state(self, extra: dict[str, Any]) -> None:
        super()._load_extra_state(extra)
        self.thetas = [float(v) for v in extra["thetas"]]
        self.norm_values = [float(v) for v in extra["norm_values"]]
        self.pair_theta = [int(v) for v in extra["pair_theta"]]
        self.pair_norm = [int(v) for v in extra["pair_norm"]]
