r"""The pieces of a balancing round (Ziomek et al. 2024, Alg. 2) for the candidate-set round.

Hyperparameter balancing runs on :class:`~botorch_unknown_hypers.policies.round.candidate_round.CandidateSetRound`
with a :class:`~botorch_unknown_hypers.policies.balancing.balancing_policy.BalancingState`:

- :class:`BalancingCandidates`: the set :math:`U_t` of a balancing rule, :math:`a(0)` at the
  first round (:meth:`~BalancingCandidates.start`) and :math:`a(t)` after each play (line 13,
  :meth:`~botorch_unknown_hypers.policies.round.candidate_round.CandidateSource.propose`);
- :class:`LeastSuspectedBound` (line 3): :math:`u_t = \arg\min_{u \in U_t} R^u(|S^u_{t-1}| + 1)`,
  the counts with the plays still pending; the round's model is :math:`u_t` alone, on factors
  kept for every active candidate; :class:`SoleCandidate`: a set of one (A-GP-UCB);
- :class:`BalancingBetas` (Thm 2.1): :math:`\beta^u_t = B^u + \sigma_N\sqrt{2(I^u_{t-1} + 1 + \ln(2/\delta))}`;
- :class:`PlayedUCB` (line 4): :math:`x_t = \arg\max_x \mu^{u_t}_{t-1}(x) + \beta^{u_t}_t\sigma^{u_t}_{t-1}(x)`,
  slot by slot on the pending-conditioned model;
- :class:`PlayLedger`: each slot waits as a play with :math:`w = \beta\sigma/s_t` (standardised
  units of its round, :math:`\sigma` with the likelihood noise if ``noisy_sigma``) and the round's
  outcome scaler;
- :class:`BalancingElimination` (lines 9-13): per observed play, once every active candidate was
  played, keep :math:`u` iff :func:`~botorch_unknown_hypers.confidence.balancing_keep`, then
  :math:`a(t)`; :class:`CountRounds`: no test (A-GP-UCB), rounds counted.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.optimize import Restarts
from botorch_unknown_hypers.acquisition.ucb import CandidateUCB
from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.checks import check_nonnegative, check_probability
from botorch_unknown_hypers.confidence import balancing_keep, theorem_beta
from botorch_unknown_hypers.host import host_tensor, host_values, split_rows
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.factor_cache import CandidateFactor
from botorch_unknown_hypers.policies.context import RoundContext
from botorch_unknown_hypers.policies.round.candidate_set import elimination_xi
from botorch_unknown_hypers.policies.round.candidate_round import (
    CandidateSource,
    ModelSubset,
    Ledger,
    RoundData,
    Selector,
    Slot,
    Test,
    Betas,
)
from botorch_unknown_hypers.policies.round.pending_plays import Observations, PendingPlay, play_record
from botorch_unknown_hypers.regret_bounds import suspected_regret_bound


class BalancingCandidates(CandidateSource[CandidateSpec]):
    r"""The candidates introduced so far (``state.candidates``), those still active in play;
    :meth:`start` gives :math:`a(0)` at the first round."""

    @abstractmethod
    def start(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor) -> tuple[CandidateSpec, Tensor]:
        r""":math:`a(0)`: the candidates and norm bounds the rule starts from."""

    def survivors(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor) -> tuple[CandidateSpec, list[int]]:
        if state.candidates is None:
            state.add(*self.start(ctx, state, train_X, train_Y))
        return state.candidates, [u for u, a in enumerate(state.alive) if a]


def effective_lengthscale(spec: CandidateSpec) -> Tensor:
    r"""Isotropic :math:`\theta` with :math:`\theta^{-d} = \prod_i \ell_i^{-1}` (geometric mean for ARD)."""
    ls = getattr(spec, "lengthscale", None)
    if not isinstance(ls, Tensor):
        raise ValueError(
            f"candidates: the default suspected bound needs length scales; pass bound=... for a {type(spec).__name__}."
        )
    return ls.log().mean(-1).exp()


SuspectedBounds = Callable[[RoundContext, Any, Tensor], Tensor]
r"""A suspected regret bound: ``(ctx, state, counts) -> K`` values of :math:`R^u(|S^u| + 1)`
for every candidate introduced (``counts``: :math:`|S^u|`, ``K``), computed without a read;
:class:`LeastSuspectedBound` checks the values with its copy."""


def kernel_regret_bounds(ctx: RoundContext, state: Any, counts: Tensor) -> Tensor:
    r"""Thm 2.3's :math:`R^u(|S^u| + 1) = \sqrt T(B^u\sqrt{\gamma_T} + \gamma_T)` of every candidate
    introduced, :math:`\gamma_T` of the candidates' kernel at each one's (geometric-mean) length
    scale (a :data:`SuspectedBounds`)."""
    candidates = state.candidates
    kernel = getattr(candidates, "kernel", "matern52")
    return suspected_regret_bound(
        counts + 1, effective_lengthscale(candidates), ctx.domain.dim, kernel, state.norms, checked=False
    )


@dataclass(frozen=True)
class LeastSuspectedBound(ModelSubset):
    r"""Line 3: the active candidate of least suspected bound ``bounds(ctx, state, counts)``
    (:data:`SuspectedBounds`), the counts :math:`|S^u|` with the plays still pending (first index
    on ties; :math:`R^u(1) = 0`, so a fresh candidate is played next)."""

    bounds: SuspectedBounds = kernel_regret_bounds

    def __call__(self, ctx: RoundContext, state: Any, indices: list[int]) -> tuple[list[int], dict[str, Any]]:
        st = state
        active = host_tensor(st.alive, device=ctx.device)
        counts = st.counts(pending=True)
        bounds = self.bounds(ctx, st, counts)
        least = torch.argmin(torch.where(active, bounds, torch.full_like(bounds, math.inf)))
        (k_value,), counted, bound_values = host_values(least, counts, bounds)  # one host copy
        if not all(v >= 0 for v in bound_values):  # nan fails too
            raise ValueError(f"suspected_bounds: R^u(|S^u| + 1) must be >= 0 for every candidate, got {bound_values}.")
        k = int(k_value)
        return [k], {
            "played": k,
            "active": list(st.alive),
            "counts": counted,
            "suspected_bounds": [v if math.isfinite(v) else None for v in bound_values],
        }

    def diagnostics(self, data: RoundData[CandidateGP], slots: list[Slot]) -> dict[str, Any]:
        return {"beta": data.host_betas()[0]}


@dataclass(frozen=True)
class SoleCandidate(ModelSubset):
    r"""A set of one candidate (A-GP-UCB's :math:`\theta_0/g(t)`): nothing to choose."""

    def __call__(self, ctx: RoundContext, state: Any, indices: list[int]) -> tuple[list[int], dict[str, Any]]:
        return indices, {}

    def diagnostics(self, data: RoundData[CandidateGP], slots: list[Slot]) -> dict[str, Any]:
        return {"beta": data.host_betas()[0]}


@dataclass(frozen=True)
class BalancingBetas(Betas[CandidateGP]):
    r"""Thm 2.1: :math:`\beta^u_t = B^u + \sigma_N\sqrt{2(I^u_{t-1} + 1 + \ln(1/\delta_A))}`,
    :math:`\delta_A = \delta/2` (so the log is :math:`\ln(2/\delta)`), :math:`B^u` the candidate's norm bound (``state.norms``),
    :math:`I^u_{t-1}` at the noise variance ``noise`` (the GP's own where ``None``)."""

    R: float
    delta: float
    noise: float | None = None

    def __post_init__(self) -> None:
        check_nonnegative("R", self.R)
        check_probability("delta", self.delta)

    def __call__(
        self, ctx: RoundContext, state: Any, model: CandidateGP, info: CandidateFactor | None, t: int, candidates: list[int]
    ) -> Tensor:
        gains = ctx.information_gain(model, info, self.noise).reshape(-1).to(torch.float64)
        norms = state.norms
        norms = norms.index_select(0, host_tensor(candidates, torch.long, norms.device)).to(gains)  # a list index waits
        return theorem_beta(gains, B=norms, R=self.R, delta=self.delta, checked=False)  # all K at once, on the device; the round checks them


@dataclass(frozen=True)
class PlayedUCB(Selector[CandidateGP]):
    r"""Line 4: the played candidate's GP-UCB with :math:`\beta^{u_t}_t` on the pending-conditioned
    model (the round's model holds that one candidate). The width stays on the device: the
    round checks it with the ledger's copy (:meth:`RoundData.host`)."""

    def __call__(
        self, ctx: RoundContext, data: RoundData[CandidateGP], prepared: Any, view: CandidateGP, fixed: Tensor | None, warm: Restarts | None
    ) -> tuple[Slot, Restarts | None]:
        acqf = CandidateUCB(view, beta=data.betas, reduction="select", index=0, check_beta=False)  # checked with the record
        x, warm = ctx.maximize_slot(acqf, fixed, prepared, warm)
        return Slot(x, 0), warm


@dataclass(frozen=True)
class PlayLedger(Ledger[CandidateGP]):
    r"""Each slot a play with :math:`w = \beta\sigma_{t-1}(x)/s_t` on the data observed, :math:`s_t`
    (and the mean) of the round's outcome scaler; balancing records the observation, not a
    residual (``mean = 0``). ``noisy_sigma``: :math:`\sigma` with the likelihood noise."""

    noisy_sigma: bool = False

    def record(self, data: RoundData[CandidateGP], slots: list[Slot]) -> list[Slot]:
        X = torch.cat([s.x for s in slots])
        local = [s.local for s in slots]
        with torch.no_grad():  # sigma on the data observed: a valid width for every slot
            _, var = data.model.marginal_mean_variance(X.unsqueeze(0), observation_noise=self.noisy_sigma)
            played = host_tensor(local, torch.long, var.device)  # a list index would copy and wait
            sigma = var[played, torch.arange(len(slots), device=var.device)].sqrt()
        columns = [X, data.betas[played].unsqueeze(-1), sigma.unsqueeze(-1)]
        table = torch.cat([c.to(X.device, torch.float64) for c in columns], dim=-1)
        (flat,) = data.host(table)  # one host copy, exact (the round's values too, the first time)
        rows = split_rows(flat, table.shape[-1])
        d = X.shape[-1]
        for s, row in zip(slots, rows):
            beta = row[d]
            data.state.pending.append(
                PendingPlay(data.candidates[s.local], row[:d], width=beta * row[d + 1] / data.y_std, beta=beta, y_mean=data.y_mean, y_std=data.y_std)
            )
        return slots


@dataclass(frozen=True)
class NoRecord(Ledger[Any]):
    r"""Nothing waits for its value (a rule without a test)."""

    def record(self, data: RoundData[CandidateGP], slots: list[Slot]) -> list[Slot]:
        return slots


@dataclass(frozen=True)
class BalancingElimination(Test):
    r"""Lines 9-13, per observed play: record the observation and width; once every active
    candidate was played, keep :math:`u` iff
    :math:`\bar y_u + \sqrt{\xi_t/|S^u|} + \tfrac{c}{|S^u|}\sum w \ge \max_{u'}\bar y_{u'} - \sqrt{\xi_t/|S^{u'}|}`
    (rewards re-standardised with the scaler of the play just observed), with
    :math:`\xi_t = 2\sigma_N^2\ln(|A|\pi^2t^2/(6\delta_B))`, :math:`|A|` every candidate introduced
    or the active ones (``xi_count``), :math:`\delta_B = \delta/` ``xi_delta_split``; then
    :math:`a(t)` of ``source``."""

    reads: ClassVar[tuple[type[Ledger[Any]], ...]] = (PlayLedger,)

    R: float
    delta: float
    width_factor: float
    xi_count: str
    xi_delta_split: float
    source: CandidateSource[CandidateSpec]

    def __post_init__(self) -> None:
        check_probability("delta", self.delta)

    def __call__(self, ctx: RoundContext, state: Any, observed: Observations) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for play, y in observed.plays():  # rows without a play enter D but no S^u
            out.update(self.play(ctx, state, play, y))
        return out

    def play(self, ctx: RoundContext, state: Any, pending: PendingPlay, y: float) -> dict[str, Any]:
        r"""One observed play: its record, the elimination test and :math:`a(t)`; the diagnostics."""
        st = state
        st.round += 1
        t = st.round
        candidate, observation, width = play_record(pending, y)  # balancing predicts nothing: the observation
        st.play_candidate.append(candidate)
        st.play_y.append(observation)
        st.play_width.append(width)
        out: dict[str, Any] = {}
        xi_t = None
        played = set(st.play_candidate)  # the plays are on the host: no device read
        if all(u in played for u, alive in enumerate(st.alive) if alive):  # lines 9-11 once every current candidate was played
            # the host's lists go to the device without a wait, and the active rows are taken by
            # index_select (a boolean mask index reads its size on the host)
            idx = host_tensor(st.play_candidate, torch.long, ctx.device)
            y_std = (host_tensor(st.play_y, ctx.dtype, ctx.device) - pending.y_mean) / pending.y_std
            zeros = torch.zeros(len(st.alive), dtype=ctx.dtype, device=ctx.device)
            reward_sum = zeros.clone().index_add_(0, idx, y_std)
            width_sum = zeros.clone().index_add_(0, idx, host_tensor(st.play_width, ctx.dtype, ctx.device))
            count = sum(st.alive) if self.xi_count == "active" else len(st.alive)
            xi_t = elimination_xi(t, count, self.R, self.delta, self.xi_delta_split)
            active_idx = [i for i, alive in enumerate(st.alive) if alive]
            rows = host_tensor(active_idx, torch.long, ctx.device)
            keep_flags, lower_bounds = balancing_keep(
                reward_sum.index_select(0, rows), st.counts().index_select(0, rows), width_sum.index_select(0, rows), xi_t, self.width_factor
            )
            keep, lower = host_values(keep_flags, lower_bounds)  # one copy for the decisions and the diagnostics
            for j, i in enumerate(active_idx):
                if not keep[j]:
                    st.alive[i] = False
                    st.eliminated_at[i] = t
            out["lower_bounds"] = dict(zip(active_idx, lower))
        out["xi"] = xi_t
        out["eliminated"] = {str(k): v for k, v in st.eliminated_at.items()}
        self.source.propose(ctx, st, t)  # line 13: optional proposals
        return out


@dataclass(frozen=True)
class CountRounds(Test):
    r"""No test: each observed batch is one more round (A-GP-UCB's schedule :math:`g(t)`)."""

    reads: ClassVar[tuple[type[Ledger[Any]], ...]] = (Ledger,)  # reads no record: any ledger

    def __call__(self, ctx: RoundContext, state: Any, observed: Observations) -> dict[str, Any]:
        state.round += 1
        return {}


__all__ = [
    "BalancingCandidates",
    "BalancingElimination",
    "BalancingBetas",
    "CountRounds",
    "LeastSuspectedBound",
    "NoRecord",
    "PlayLedger",
    "PlayedUCB",
    "SoleCandidate",
    "SuspectedBounds",
    "effective_lengthscale",
    "kernel_regret_bounds",
]
