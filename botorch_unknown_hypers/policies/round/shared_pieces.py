r"""The shared pieces of :class:`~botorch_unknown_hypers.policies.round.candidate_round.CandidateSetRound`.

Each piece does one job of a round of a candidate-set rule and is configured by the rule's
module, which names the paper's line it implements:

- :class:`FixedCandidates`: the survivors of a fixed list :math:`U` (``state.alive``);
- :class:`UnitCubeModel`: one batched GP of the survivors on :math:`D_{t-1}`, inputs on the unit
  cube, raw or standardised outputs, on factors kept across rounds, optionally with the
  campaign's fixed raw points (HE's box argmax) and the factors of the information gain at a
  noise of its own;
- :class:`~botorch_unknown_hypers.policies.round.candidate_set.CandidateSetBetas`: :math:`\beta^u_t` of a
  candidate set (frequentist, Bayesian or fixed), and
  :class:`~botorch_unknown_hypers.policies.round.candidate_set.FrequentistBetas`, Thm 4.1's at given constants, which it uses;
- :class:`DoublyOptimisticUCB`: :math:`(x_t, u_t) = \arg\max_{x, u}\mu^u_{t-1}(x) + \beta^u_t\sigma^u_{t-1}(x)`
  (:func:`~botorch_unknown_hypers.acquisition.optimize.joint_ucb_argmax`);
- :class:`PrequentialElimination`: Alg. 1 lines 10-12 of Ziomek et al. 2025
  (:func:`record_plays`) with
  :math:`\xi_t` of :func:`~botorch_unknown_hypers.policies.round.candidate_set.elimination_xi`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

from botorch.models.transforms import Normalize, Standardize
from torch import Tensor

from botorch_unknown_hypers.acquisition.optimize import Restarts, draw_raw_seed, joint_ucb_argmax
from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.checks import check_probability
from botorch_unknown_hypers.confidence import elimination_statistics
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.factor_cache import CandidateFactor
from botorch_unknown_hypers.policies.round.candidate_set import CandidateSetBetas, FrequentistBetas, SurvivorState, elimination_xi
from botorch_unknown_hypers.policies.context import RoundContext
from botorch_unknown_hypers.policies.round.candidate_round import CandidateSource, RoundData, RoundModel, Selector, Slot, Test
from botorch_unknown_hypers.policies.round.pending_plays import Observations, PendingPlay, play_record


@dataclass(frozen=True)
class FixedCandidates(CandidateSource[CandidateSpec]):
    r"""The survivors of a fixed list :math:`U` (``candidates``; flags ``state.alive``)."""

    candidates: CandidateSpec

    def survivors(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor) -> tuple[CandidateSpec, list[int]]:
        return self.candidates, [u for u, a in enumerate(state.alive) if a]


@dataclass(frozen=True)
class UnitCubeModel(RoundModel[CandidateSpec, CandidateGP]):
    r"""One batched GP on cached factors: inputs on the unit cube (the domain's bounds), outputs
    raw or standardised on all data every round (``standardise``).

    Attributes:
        standardise: Standardise the outputs (else raw units: residuals of different rounds
            share units).
        info_noise: Noise variance of the information gain's factors (``None``: the GP's own).
        fixed_raw_points: On a box, raw samples drawn once per campaign from the seed
            ``state.raw_seed`` (drawn from the context's generator at the first round), whose
            posterior every factor keeps up to date.
        cache: Keep the factors across rounds (else the model factorises itself: a candidate
            that changes every round, A-GP-UCB's :math:`\theta_0/g(t)`, gains nothing from a cache).
    """

    conditions_on_pending: ClassVar[bool] = True

    standardise: bool = False
    info_noise: float | None = None
    fixed_raw_points: bool = False
    cache: bool = True

    def pending_view(self, model: CandidateGP, fixed: Tensor) -> CandidateGP:
        return model.condition_on_pending(fixed)

    def __call__(
        self, ctx: RoundContext, state: Any, spec: CandidateSpec, train_X: Tensor, train_Y: Tensor, keep: CandidateSpec | None = None
    ) -> tuple[CandidateGP, CandidateFactor | None, Tensor | None]:
        raw = None
        if self.fixed_raw_points:
            if state.raw_seed is None:
                state.raw_seed = draw_raw_seed(ctx.domain, ctx.generator)
            raw = ctx.campaign_raw_points(state.raw_seed)
        keys = ctx.candidate_keys(spec)
        keep_keys = None if keep is None or keys is None or not self.cache else ctx.candidate_keys(keep)  # once for both caches
        factors = info = None
        if self.cache:  # the GP's factors and the information gain's, their reads in one copy
            noises = [None] if self.info_noise is None else [None, self.info_noise]
            sets = ctx.candidate_factor_sets(spec, train_X, noises, keep=keep_keys, points=raw, keys=keys)
            if sets is not None:
                factors, info = sets[0], (sets[1] if self.info_noise is not None else None)
        model = CandidateGP(
            train_X,
            train_Y,
            spec,
            input_transform=Normalize(ctx.domain.dim, bounds=ctx.domain.bounds),
            outcome_transform=Standardize(m=1) if self.standardise else None,
            check_data=False,
            factor=factors,
            modules=ctx.candidate_modules(spec, keys, train_X),
        )
        return model, info, raw


@dataclass(frozen=True)
class DoublyOptimisticUCB(Selector[CandidateGP]):
    r"""The doubly optimistic pair :math:`(x, u) = \arg\max_{x, u}\mu^u(x) + \beta^u_t\sigma^u(x)` of
    the survivors (exhaustive on a pool; batched L-BFGS-B from the round's raw points on a box,
    later slots warm-started from the previous slot's refined pairs)."""

    def __call__(
        self, ctx: RoundContext, data: RoundData[CandidateGP], prepared: Any, view: CandidateGP, fixed: Tensor | None, warm: Restarts | None
    ) -> tuple[Slot, Restarts | None]:
        o = ctx.options
        x, local, mean, sigma, warm = joint_ucb_argmax(
            view, data.betas, ctx.domain, ctx.generator, o.num_restarts, o.raw_samples,
            exclude=fixed, warm=warm, raw_points=data.raw_points, search=o.search,
            check_values=False,  # the widths' checks are the round's (RoundData), its raw points drawn in the box
        )
        return Slot(x, local, mean, sigma), warm

    def diagnostics(self, slots: list[Slot]) -> dict[str, Any]:
        sigma = slots[0].sigma  # a number once a ledger has copied it
        return {"sigma": float(sigma) if isinstance(sigma, Tensor) else sigma}


@dataclass
class EliminationState(SurvivorState):
    r"""HE-GP-UCB's memory: the surviving set and, per played round, the candidate, the
    prequential residual :math:`\eta` and the recorded width; the selections awaiting their
    observations, and the candidates recorded but not yet tested (a batch is tested once all its
    values have arrived); on a box, the seed of the campaign's raw points (``None`` on a pool, or
    before the first suggestion)."""

    play_candidate: list[int] = field(default_factory=list)
    play_eta: list[float] = field(default_factory=list)
    play_width: list[float] = field(default_factory=list)
    round: int = 0
    pending: list[PendingPlay] = field(default_factory=list)
    untested: list[int] = field(default_factory=list)
    test_scale: float = 1.0
    raw_seed: int | None = None

    def check(self) -> None:
        super().check()
        if self.raw_seed is not None and not 0 <= self.raw_seed < 2**63:
            raise ValueError(f"raw_seed must be None or an int in [0, 2**63), got {self.raw_seed}.")
        n = len(self.alive)
        if not len(self.play_candidate) == len(self.play_eta) == len(self.play_width) == self.round:
            raise ValueError("play_candidate, play_eta and play_width must hold one entry per round.")
        if not all(0 <= u < n for u in [*self.play_candidate, *(p.candidate for p in self.pending), *self.untested]):
            raise ValueError(f"candidate indices must lie in [0, {n}).")
        if not self.test_scale > 0:
            raise ValueError(f"test_scale must be > 0, got {self.test_scale}.")


def record_plays(state: EliminationState, observed: Observations, xi_of: Callable[[int], float]) -> dict[str, Any]:
    r"""Lines 10-12 for the observed rows: each row that answers a pending selection (matched by
    the round, :func:`~botorch_unknown_hypers.policies.round.pending_plays.take_observations`)
    records :math:`\eta_t = y_t - m_t` and its width; once no selection is pending (the whole
    batch has arrived), every candidate played since the last test is tested, residuals and
    widths divided by the outputs' scale of the latest selection (the units of the test), and
    eliminated if it fails. Returns the diagnostics of the last play and test; rows without a
    play (data) record nothing."""
    out: dict[str, Any] = {}
    for p, y in observed.plays():
        candidate, eta, width = play_record(p, y)
        state.round += 1
        state.play_candidate.append(candidate)
        state.play_eta.append(eta)
        state.play_width.append(width)
        state.untested.append(candidate)
        state.test_scale = p.y_std
        out["eta"] = eta
    if state.pending or not state.untested:
        return out
    t = state.round
    xi_t = xi_of(t)
    residuals = [e / state.test_scale for e in state.play_eta]
    widths = [w / state.test_scale for w in state.play_width]
    stats, thresholds = elimination_statistics(state.play_candidate, residuals, widths, len(state.alive), xi_t)  # on the host
    for u in dict.fromkeys(state.untested):  # line 12: only the played candidates are tested
        if stats[u] > thresholds[u]:
            state.eliminate(u, t)
    last = state.untested[-1]
    state.untested = []
    return {
        **out,
        "xi": xi_t,
        "statistic": stats[last],
        "threshold": thresholds[last],
        "eliminated": {str(k): v for k, v in state.eliminated_at.items()},
        "kept_last_survivor": list(state.kept_last),
    }


@dataclass(frozen=True)
class EliminationTest(Test):
    r"""A test at :math:`\xi_t = 2R^2\log(|U|\pi^2t^2/(3\delta_B))` (Lemma 5.1 of Ziomek et al.
    2025, :math:`\delta_B = \delta/2`), :math:`R` the sub-Gaussian scale of the noise."""

    R: float
    delta: float

    def __post_init__(self) -> None:
        check_probability("delta", self.delta)

    def xi(self, t: int, num_candidates: int) -> float:
        r""":math:`\xi_t` for :math:`|U|` = ``num_candidates``."""
        return elimination_xi(t, num_candidates, self.R, self.delta)


@dataclass(frozen=True)
class PrequentialElimination(EliminationTest):
    r"""Prequential elimination (Ziomek et al. 2025, Alg. 1 lines 10-12): each observed play
    records :math:`\eta = y - \mu^{u}_{t-1}(x)` and its width; once the batch is in, every
    candidate played is eliminated iff :math:`|\sum_{S^u}\eta| > \sqrt{\xi_t|S^u|} + \sum_{S^u} w`,
    :math:`\xi_t` with :math:`|U|` every candidate ever in the set."""

    def __call__(self, ctx: RoundContext, state: EliminationState, observed: Observations) -> dict[str, Any]:
        return record_plays(state, observed, lambda t: self.xi(t, len(state.alive)))


__all__ = [
    "CandidateSetBetas",
    "DoublyOptimisticUCB",
    "EliminationState",
    "EliminationTest",
    "FixedCandidates",
    "FrequentistBetas",
    "PrequentialElimination",
    "UnitCubeModel",
    "record_plays",
]
