r"""Hyperparameter balancing GP-UCB: the general rule behind LB- and LNB-GP-UCB.

Ziomek, Adachi, Osborne (NeurIPS 2024), App. B, Algorithm 2. Every candidate :math:`u` (a kernel
:math:`k^u` with a norm bound :math:`B^u`) is a GP-UCB base learner on all data; with
:math:`S^u_t` the rounds it was played, round :math:`t`:

1. (line 3) :math:`u_t = \arg\min_{u \in U_t} R^u(|S^u_{t-1}| + 1)`, the *suspected* regret bound,
   by default :math:`R^u(T) = \sqrt T\,(B^u\sqrt{\gamma_T(k^u)} + \gamma_T(k^u))` (Thm 2.3);
   :math:`R^u(1) = 0`, so a fresh candidate is played next (first index on ties);
2. (line 4) :math:`x_t = \arg\max_x \mu^{u_t}_{t-1}(x) + \beta^{u_t}_t\sigma^{u_t}_{t-1}(x)` with
   :math:`\beta^u_t = B^u + \sigma_N\sqrt{2(I^u_{t-1} + 1 + \ln(2/\delta))}` (Thm 2.1), and the width
   :math:`w_t = \beta^{u_t}_t\sigma^{u_t}_{t-1}(x_t)` recorded at play time;
3. (lines 9-11) once every :math:`u \in U_t` was played, keep :math:`u` iff

   .. math::

       \bar y_u + \sqrt{\xi_t/|S^u_t|} + \frac{c}{|S^u_t|}\sum_{\tau\in S^u_t} w_\tau
       \ge \max_{u'} \Big(\bar y_{u'} - \sqrt{\xi_t/|S^{u'}_t|}\Big),

   :math:`\xi_t = 2\sigma_N^2\ln(|A|\pi^2t^2/(6\delta_B))` (Lemma B.1; the sign of :math:`\sqrt\xi` on
   the left is the one the proof of Lemma B.2 supports), :math:`c = 2`;
4. (line 13) optionally :math:`U_{t+1} = U_{t+1} \cup a(t)`, a user-supplied proposing function.

A round is a configuration of the candidate-set round
(:class:`~botorch_unknown_hypers.policies.round.candidate_round.CandidateSetRound`) with the pieces of
:mod:`~botorch_unknown_hypers.policies.balancing.balancing_pieces`; it builds **one**
:class:`~botorch_unknown_hypers.models.CandidateGP`, of the played candidate on factors kept for
every active one: it gives the information gain :math:`I^u_{t-1}` (its kernel matrix), the
acquisition and the recorded width. Inputs are scaled to the unit cube by the domain bounds; outputs are
standardised on all data every round and recorded rewards re-standardised with the scaler in
force at the test (recorded widths stay in the units of their round, as in the authors' code).
The bookkeeping is vectorised over candidates; the state is :class:`BalancingState`.

The derivations, every constant and every printed typo corrected: ``docs/length-scale-balancing.md``.

References:
    J. Ziomek, M. Adachi, M. A. Osborne. Bayesian Optimisation with Unknown Hyperparameters:
    Regret Bounds Logarithmically Closer to Optimal. NeurIPS 2024.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import AUTO_SEARCH
from botorch_unknown_hypers.candidates import CandidateSpec, KernelCandidates
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.policies.balancing.balancing_pieces import (
    BalancingCandidates,
    BalancingElimination,
    BalancingBetas,
    LeastSuspectedBound,
    PlayedUCB,
    PlayLedger,
    kernel_regret_bounds,
)
from botorch_unknown_hypers.policies.balancing.balancing_policy import (
    XI_COUNTS,
    BalancingPolicy,
    BalancingState,
    standardised_candidate_gp,
)
from botorch_unknown_hypers.policies.context import RoundContext
from botorch_unknown_hypers.policies.round.candidate_set import XI_DELTA_SPLIT
from botorch_unknown_hypers.policies.round.candidate_round import CandidateSetRound
from botorch_unknown_hypers.policies.round.shared_pieces import UnitCubeModel

Proposal = Optional[tuple[CandidateSpec, Tensor]]
r"""What a proposing function returns: new candidates and their norm bounds, or ``None``."""


def checked_candidates(
    spec: CandidateSpec, norms: float | Tensor, name: str, dtype: torch.dtype, device: torch.device
) -> tuple[CandidateSpec, Tensor]:
    r"""``spec`` on ``device`` and in ``dtype`` with its norm bounds (a scalar broadcast), checked
    (``ValueError`` naming ``name``)."""
    if not isinstance(spec, CandidateSpec):
        raise ValueError(f"{name} must be a CandidateSpec, got {type(spec).__name__}.")
    if len(spec) < 1:
        raise ValueError(f"{name} must hold at least one candidate.")
    spec = spec.to(device=device, dtype=dtype)
    n = torch.as_tensor(norms, dtype=dtype, device=device)
    if n.ndim == 0:
        n = n.expand(len(spec)).clone()
    if n.shape != (len(spec),) or not torch.isfinite(n).all() or (n < 0).any():
        raise ValueError(f"norms of {name} must be a finite non-negative scalar or {len(spec)} values, got {n.tolist()}.")
    return spec, n


@dataclass(frozen=True)
class GivenCandidates(BalancingCandidates):
    r""":math:`a(0)` given (``initial``: candidates and norm bounds), :math:`a(t)` a function
    ``proposing(t)`` returning ``None`` or ``(spec, norms)`` (line 13)."""

    initial: tuple[CandidateSpec, Tensor]
    proposing: Callable[[int], Proposal] | None = None

    def start(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor) -> tuple[CandidateSpec, Tensor]:
        return self.initial

    def propose(self, ctx: RoundContext, state: Any, t: int) -> None:
        out = None if self.proposing is None else self.proposing(t)
        if out is not None:
            state.add(*checked_candidates(out[0], out[1], "propose(...)", ctx.dtype, ctx.device))

    def diagnostics(self, ctx: RoundContext, state: Any) -> dict[str, Any]:
        return {"candidates": state.candidates.labels(), "norms": state.norm_bounds()}


class HyperparameterBalancing(BalancingPolicy):
    r"""Hyperparameter balancing GP-UCB (Ziomek et al. 2024, Alg. 2); see the module docstring.

    **Batches and pending points.** A batch of :math:`q` points plays one candidate, chosen by
    line 3 with the plays still awaiting their values counted in :math:`|S^u|`; slot :math:`j`
    maximises that candidate's UCB

    .. math::

        x_{t,j} = \arg\max_x \mu^u_{t-1}(x) + \beta^u_t\sigma^u_{t-1}(x \mid Q_j),

    with :math:`Q_j` the pending points and the slots before :math:`j` (the mean frozen, the
    variance as if :math:`Q_j` had been observed at its posterior mean: BUCB's fantasy). The
    bookkeeping counts **per point**: each slot is one play of :math:`u` with its own recorded
    width :math:`w = \beta^u_t\sigma^u_{t-1}(x_{t,j})` on the data actually observed (not the
    fantasy), and each arriving value runs lines 9-13 as a round of its own. Why per point rather
    than per round with an inflated :math:`\beta` (Desautels et al. 2014): the elimination test
    and Lemma B.1 need valid confidence widths :math:`|f(x) - \mu_{t-1}(x)| \le \beta\sigma_{t-1}(x)`
    for the posterior the rule holds when the value arrives; the unconditioned :math:`\sigma_{t-1}`
    is such a width for every slot of the batch (it is at least the width after any further
    data), whereas the fantasy's :math:`\sigma(x \mid Q)` is not unless :math:`\beta` is
    inflated by Desautels' :math:`C = \exp(\max I(f; y_Q))`, a constant that depends on the
    batch and is loose. The fantasy only spreads the batch; the record stays that of sequential
    play, and :math:`q = 1` is Alg. 2 exactly.

    Args:
        domain: Box or pool.
        seed, device, dtype, num_restarts, raw_samples, search: As
            :class:`~botorch_unknown_hypers.policies.base.Policy`.
        candidates: The initial set :math:`a(0)`; defaults to eight Matern-5/2 length scales
            :math:`2^{0}, 2^{-1/2}, \dots` of the unit cube, noise 1e-4.
        norms: Norm bounds :math:`B^u` of the initial candidates (scalar or ``K``).
        propose: Optional :math:`a(t)`: called after round ``t`` as ``propose(t, policy)``;
            returns ``None`` or ``(spec, norms)`` of new candidates (same family as
            ``candidates``). It must be deterministic given the policy's state.
        bound: Optional suspected bound: ``bound(T, policy) -> K`` values of :math:`R^u(T_u)` for
            every candidate introduced (``T`` is ``K``, the play counts plus one). Default:
            Thm 2.3 with the candidate's kernel rate :math:`\gamma_T` at its (geometric-mean)
            length scale.
        noise_std, delta, width_factor, noisy_sigma, xi_count, xi_delta_split: As
            :class:`~botorch_unknown_hypers.policies.balancing.balancing_policy.BalancingPolicy`.
    """

    name = "hb-gp-ucb"

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        candidates: CandidateSpec | None = None,
        norms: float | Tensor = 1.0,
        propose: Callable[[int, HyperparameterBalancing], Proposal] | None = None,
        bound: Callable[[Tensor, HyperparameterBalancing], Tensor] | None = None,
        noise_std: float = 1e-2,
        delta: float = 0.01,
        width_factor: float = 2.0,
        noisy_sigma: bool = False,
        num_restarts: int = 10,
        raw_samples: int = 512,
        search: str = AUTO_SEARCH,
        xi_count: str = "introduced",
        xi_delta_split: float = XI_DELTA_SPLIT,
    ) -> None:
        super().__init__(
            domain, seed, device, dtype, noise_std, delta, width_factor, noisy_sigma, num_restarts, raw_samples, search,
            xi_count, xi_delta_split,
        )
        if propose is not None and not callable(propose):
            raise ValueError("propose must be callable (t, policy) -> (spec, norms) | None.")
        if bound is not None and not callable(bound):
            raise ValueError("bound must be callable (T, policy) -> Tensor.")
        self._bound_fn = bound
        self._propose_fn = propose
        if candidates is None:
            ladder = 2.0 ** (-0.5 * torch.arange(8, dtype=dtype))
            candidates = KernelCandidates.from_lengthscales(ladder, kernel="matern52", noise=1e-4)
        initial = checked_candidates(candidates, norms, "candidates", self.dtype, self.device)
        source = GivenCandidates(initial, None if propose is None else self.proposal)  # a(0), a(t)
        self.candidate_round = CandidateSetRound(
            source=source,
            subset=LeastSuspectedBound(self.bounds_of_state),  # line 3: argmin_u R^u(|S^u| + 1), pending plays counted
            model=UnitCubeModel(standardise=True),  # u_t's GP on D_{t-1}, factors kept for every active u
            betas=BalancingBetas(self.noise_std, self.delta),  # Thm 2.1's beta^u_t, I at u_t's own noise
            selector=PlayedUCB(),  # line 4: argmax_x mu^u + beta^u sigma^u, slot by slot
            ledger=PlayLedger(self.noisy_sigma),  # w = beta sigma at play time, standardised units
            test=BalancingElimination(  # lines 9-11, then line 13's a(t)
                self.noise_std, self.delta, self.width_factor, self.xi_count, self.xi_delta_split, source
            ),
        )

    def proposal(self, t: int) -> Proposal:
        r""":math:`a(t)`: the user's ``propose(t, policy)`` (a bound method, so that a copy of the rule
        proposes for the copy)."""
        assert self._propose_fn is not None
        return self._propose_fn(t, self)

    def suspected_bounds(self, counts: Tensor) -> Tensor:
        r""":math:`R^u(|S^u| + 1)` of every candidate ever introduced (``bound`` or Thm 2.3); a
        ``bound`` has its shape checked, the values are checked where the choice copies them."""
        return self.bounds_of_state(self.context, self.state, counts)

    def bounds_of_state(self, ctx: RoundContext, state: Any, counts: Tensor) -> Tensor:
        r""":meth:`suspected_bounds` as the round's
        :data:`~botorch_unknown_hypers.policies.balancing.balancing_pieces.SuspectedBounds` (the user's
        ``bound`` is called with the policy, as documented)."""
        if self._bound_fn is None:
            return kernel_regret_bounds(ctx, state, counts)
        T = counts + 1
        out = torch.as_tensor(self._bound_fn(T, self), dtype=self.dtype, device=self.device)
        if out.shape != T.shape:
            raise ValueError(f"bound must return {tuple(T.shape)} values, got {tuple(out.shape)}.")
        return out


__all__ = ["XI_COUNTS", "BalancingState", "HyperparameterBalancing", "Proposal", "standardised_candidate_gp"]
