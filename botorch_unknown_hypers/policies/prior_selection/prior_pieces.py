r"""The pieces of the prior-selection rounds on :class:`~botorch_unknown_hypers.policies.round.candidate_round.CandidateSetRound`.

Sandberg & Haghir Chehreghani, Algorithm 1 (PE-GP-TS), and PE-GP-UCB (Ziomek et al. 2024b), on
the rule's one model of all K priors, conditioned on every observation and kept across rounds
(``whole_set``); the math and constants are in :mod:`~botorch_unknown_hypers.policies.prior_selection.prior_elimination`.

- :class:`ActivePriors`: the active set :math:`\mathcal{P}_{t-1}`; :class:`PriorsOnData`: the model on :math:`D_{t-1}`;
- :class:`PriorEliminationBetas`: :math:`\sqrt{\beta_t}` of Theorem 4.1, one for every active prior;
- :class:`JointThompson` (lines 3-4 per slot, the batch drawn in one call, pending points
  excluded) or :class:`DoublyOptimisticPrior` (PE-GP-UCB, one slot); both record lines 7-8's
  :math:`\mu_{t,p_t}(x_t)` and :math:`\sqrt{\beta_t}\sigma_{t,p_t}(x_t)` on the data observed;
- :class:`PriorEliminationTest`: lines 5-10 per value as it arrives, only :math:`p_t` tested;
- :class:`SelectedPrior`: the round's diagnostics (the played prior in the prior set).

Algorithm 2 (HP-GP-TS, MAP-GP-TS; the math in
:mod:`~botorch_unknown_hypers.policies.prior_selection.hyperprior`) keeps every prior in play
(:class:`EveryPrior`, no widths: :class:`NoWidths`) and takes :class:`HyperposteriorThompson`
(line 2 by a :class:`SampledPrior` or :class:`LikeliestPrior` draw, lines 3-4 per slot) and
:class:`HyperposteriorUpdate` (line 6 for every observation, as the model conditions on it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.optimize import Restarts, random_argmax
from botorch_unknown_hypers.acquisition.prior_acquisition import thompson_prior_batch, ucb_prior_argmax
from botorch_unknown_hypers.checks import POSITIVE, check_pair, check_probability
from botorch_unknown_hypers.confidence import box_num_arms, elimination_statistics, pe_beta
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.host import host_values, split_rows
from botorch_unknown_hypers.models.box_priors import BoxPriors
from botorch_unknown_hypers.models.factor_cache import CandidateFactor
from botorch_unknown_hypers.models.prior_model import PriorModel, Priors
from botorch_unknown_hypers.policies.context import RoundContext
from botorch_unknown_hypers.policies.round.candidate_set import elimination_xi
from botorch_unknown_hypers.policies.round.candidate_round import (
    CandidateSource,
    AllCandidates,
    RoundData,
    RoundModel,
    Selector,
    Slot,
    Test,
    Betas,
)
from botorch_unknown_hypers.policies.round.pending_plays import Observations, PendingPlay, play_record


@dataclass(frozen=True)
class PriorModels:
    r"""The model of every prior that a prior-selection rule keeps across rounds (built once its
    priors are known, conditioned on every observation), as the pieces reach it.

    Attributes:
        ensure: The model (built, and the rule's state started, if it was not yet).
        sync: The model made to condition on exactly ``(train_X, train_Y)`` (rows it has not seen
            added by rank-one updates; data that do not extend its own rebuild it).
        condition_plays: Condition on the observed rows (matched to their plays by the round) in
            order, handing each row that answers a play, with its value, to ``play`` before it
            is conditioned on.
        noise_std: The known noise standard deviation :math:`\sigma` of the priors.
    """

    ensure: Callable[[], PriorModel]
    sync: Callable[[Tensor, Tensor], PriorModel]
    condition_plays: Callable[[Observations, Callable[[PendingPlay, float], None] | None], None]
    noise_std: Callable[[], float]

    def priors(self) -> Priors:
        r"""The model's priors, as one prior set."""
        model = self.ensure()
        return model.candidates if isinstance(model, BoxPriors) else model.priors


@dataclass(frozen=True)
class ActivePriors(CandidateSource[Priors]):
    r""":math:`\mathcal{P}_{t-1}`: the model's priors flagged in ``state.alive``."""

    models: PriorModels

    def survivors(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor) -> tuple[Priors, list[int]]:
        return self.models.priors(), [p for p, alive in enumerate(state.alive) if alive]


@dataclass(frozen=True)
class EveryPrior(CandidateSource[Priors]):
    r"""Every prior of the model, in every round (Algorithm 2 zeroes none)."""

    models: PriorModels

    def survivors(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor) -> tuple[Priors, list[int]]:
        priors = self.models.priors()
        return priors, list(range(len(priors)))


@dataclass(frozen=True)
class PriorsOnData(RoundModel[Priors, PriorModel]):
    r"""The model of every prior, made to condition on exactly :math:`D_{t-1}` (rows it has not
    seen are added by rank-one updates; data that do not extend its own rebuild it)."""

    whole_set: ClassVar[bool] = True

    models: PriorModels

    def __call__(
        self, ctx: RoundContext, state: Any, spec: Priors, train_X: Tensor, train_Y: Tensor, keep: Any = None
    ) -> tuple[PriorModel, None, None]:
        return self.models.sync(train_X, train_Y), None, None


@dataclass(frozen=True)
class PriorEliminationBetas(Betas[PriorModel]):
    r""":math:`\sqrt{\beta_t}` (Theorem 4.1, a *square* root of :func:`~botorch_unknown_hypers.confidence.pe_beta`)
    for every active prior, :math:`|\mathcal{P}|` the model's priors.

    Attributes:
        delta: :math:`\delta` (0.05 in the paper).
        num_arms_equivalent: Replaces :math:`|\mathcal{X}|` (``None``: the pool size, or on a box
            :func:`~botorch_unknown_hypers.confidence.box_num_arms` at round :math:`t`).
        lipschitz: ``(a, b)`` of ``box_num_arms``.
    """

    delta: float
    num_arms_equivalent: float | None = None
    lipschitz: tuple[float, float] = (1.0, 1.0)

    def __post_init__(self) -> None:
        check_probability("delta", self.delta)
        check_pair("lipschitz", self.lipschitz, POSITIVE)

    def num_arms(self, domain: Domain, t: int) -> float:
        r""":math:`|\mathcal{X}|` in :math:`\beta_t` at round ``t``."""
        if self.num_arms_equivalent is not None:
            return self.num_arms_equivalent
        size = domain.size
        return size if math.isfinite(size) else box_num_arms(t, domain.dim, self.delta, *self.lipschitz)

    def sqrt_beta(self, domain: Domain, num_priors: int, t: int) -> float:
        r""":math:`\sqrt{\beta_t}` for ``num_priors`` priors."""
        return math.sqrt(pe_beta(t, self.num_arms(domain, t), num_priors, self.delta))

    def __call__(
        self, ctx: RoundContext, state: Any, model: PriorModel, info: CandidateFactor | None, t: int, candidates: list[int]
    ) -> Tensor:
        sqrt_beta = self.sqrt_beta(ctx.domain, model.num_priors, t)
        return torch.full((sum(state.alive),), sqrt_beta, dtype=torch.float64)


def recorded_slots(data: RoundData[PriorModel], X: Tensor, locals_: list[int]) -> list[Slot]:
    r"""Lines 7-8: the slots ``X`` (``q x d``) of the active priors at ``locals_`` with
    :math:`\mu_{t,p}(x)` and :math:`\sigma_{t,p}(x)` on the data observed, every slot in one
    posterior call (``K' x q``). The values stay on the device: the ledger copies each slot's
    with its point and width (one read per slot)."""
    mean, variance = data.model.mean_variance_points(X, data.candidates)
    slot = torch.arange(len(locals_), device=mean.device)
    local = torch.tensor(locals_, device=mean.device)
    means, sigmas = mean[local, slot], variance[local, slot].clamp_min(0).sqrt()
    return [Slot(X[j : j + 1], p, means[j], sigmas[j]) for j, p in enumerate(locals_)]


@dataclass(frozen=True)
class JointThompson(Selector[PriorModel]):
    r"""Alg. 1 lines 3-4 per slot: the whole batch is drawn at the round's start (independent
    samples per (slot, active prior) in one call,
    :func:`~botorch_unknown_hypers.acquisition.prior_acquisition.thompson_prior_batch`, pending
    points excluded, ``num_features`` random Fourier features per sample path on a box); the slots
    hand out its rows."""

    conditioned: ClassVar[bool] = False

    num_features: int = 1024

    def start(self, ctx: RoundContext, data: RoundData[PriorModel]) -> Iterator[Slot]:
        o = ctx.options
        X, locals_, _ = thompson_prior_batch(
            data.model, [data.candidates] * data.q, ctx.generator, o.num_restarts, o.raw_samples,
            num_features=self.num_features, exclude=ctx.X_pending, search=o.search,
        )
        return iter(recorded_slots(data, X, locals_))

    def __call__(
        self, ctx: RoundContext, data: RoundData[PriorModel], prepared: Iterator[Slot], view: Any, fixed: Tensor | None, warm: Restarts | None
    ) -> tuple[Slot, Restarts | None]:
        return next(prepared), warm


@dataclass(frozen=True)
class DoublyOptimisticPrior(Selector[PriorModel]):
    r"""PE-GP-UCB's selection: :math:`\arg\max_{(x, p)} \mu_{t,p}(x) + \sqrt{\beta_t}\sigma_{t,p}(x)`
    over the active priors (:func:`~botorch_unknown_hypers.acquisition.prior_acquisition.ucb_prior_argmax`);
    one slot with nothing pending (the rule proposes one point per round)."""

    conditioned: ClassVar[bool] = False

    def __call__(
        self, ctx: RoundContext, data: RoundData[PriorModel], prepared: Any, view: Any, fixed: Tensor | None, warm: Restarts | None
    ) -> tuple[Slot, Restarts | None]:
        if fixed is not None:
            raise ValueError("DoublyOptimisticPrior fills one slot with nothing pending; got points to exclude.")
        o = ctx.options
        X, local = ucb_prior_argmax(
            data.model, data.candidates, data.host_betas()[0], ctx.generator, o.num_restarts, o.raw_samples, o.search,
        )
        return recorded_slots(data, X, [local])[0], warm


@dataclass(frozen=True)
class PriorEliminationTest(Test):
    r"""Alg. 1 lines 5-10 on each value as it arrives (before the model conditions on it), with
    :math:`\xi_t` (Theorem 4.1) at the priors' noise :math:`\sigma` and the model's :math:`|\mathcal{P}|`."""

    delta: float
    models: PriorModels

    def __post_init__(self) -> None:
        check_probability("delta", self.delta)

    def xi(self, t: int) -> float:
        r""":math:`\xi_t = 2\sigma^2 \log(|\mathcal{P}| \pi^2 t^2 / (3\delta))`."""
        return elimination_xi(t, self.models.ensure().num_priors, self.models.noise_std(), self.delta)

    def play(self, state: Any, pending: PendingPlay, y: float) -> dict[str, Any]:
        r"""Lines 5-10 for the play of round ``state.round``; its diagnostics."""
        st = state
        t = st.round
        prior, eta, width = play_record(pending, y)  # line 7: eta = y - mu_{t,p_t}(x_t)
        st.play_prior.append(prior)  # line 5: t joins S_{p_t}
        st.play_eta.append(eta)
        st.play_width.append(width)
        xi_t = self.xi(t)
        stats, thresholds = elimination_statistics(st.play_prior, st.play_eta, st.play_width, self.models.ensure().num_priors, xi_t)
        statistic, threshold = stats[prior], thresholds[prior]  # line 8
        eliminated, kept_last = None, False
        if statistic > threshold:  # lines 9-10: strict, only p_t is tested
            if st.eliminate(prior, t):
                eliminated = st.prior_ids[prior]
            else:
                kept_last = True  # the last active prior is never eliminated
        return {"eta": eta, "xi": xi_t, "statistic": statistic, "threshold": threshold,
                "eliminated": eliminated, "kept_last": kept_last}

    def __call__(self, ctx: RoundContext, state: Any, observed: Observations) -> dict[str, Any]:
        out: dict[str, Any] = {}
        self.models.condition_plays(observed, lambda pending, y: out.update(self.play(state, pending, y)))
        alive = state.alive
        return {**out, "active": list(alive), "n_active": sum(alive)}


@dataclass(frozen=True)
class NoWidths(Betas[PriorModel]):
    r"""No confidence width: a rule that records no width (Algorithm 2) plays with
    :math:`\beta = 0` for every candidate."""

    def __call__(
        self, ctx: RoundContext, state: Any, model: PriorModel, info: CandidateFactor | None, t: int, candidates: list[int]
    ) -> Tensor:
        return torch.zeros(len(candidates), dtype=torch.float64)


@dataclass(frozen=True)
class SampledPrior:
    r"""Alg. 2 line 2: :math:`p_t \sim P_{t-1}`, a categorical draw with the generator:
    :math:`p_t = \arg\max_p P_{t-1}(p) / e_p` with :math:`e_p \sim \mathrm{Exp}(1)` i.i.d., which
    is :math:`p` with probability :math:`P_{t-1}(p)` (the exponential race). It is what
    ``torch.multinomial(P, 1)`` computes, draw for draw from the same generator (the tests check
    it), without the two checks that read the probabilities back: the log posterior is on the
    host and is checked there."""

    def __call__(self, log_posterior: list[float], generator: torch.Generator) -> int:
        if not log_posterior or any(math.isnan(v) or v == math.inf for v in log_posterior) or max(log_posterior) == -math.inf:
            raise ValueError(f"log_posterior must be log probabilities, neither NaN nor +inf, not all -inf; got {log_posterior!r}.")
        probabilities = torch.tensor(log_posterior, dtype=torch.float64).exp()
        race = torch.empty_like(probabilities).exponential_(1, generator=generator)
        return int((probabilities / race).argmax())


@dataclass(frozen=True)
class LikeliestPrior:
    r"""MAP-GP-TS: :math:`p_t = \arg\max_p P_{t-1}(p)`, exact ties broken with the generator
    (:func:`~botorch_unknown_hypers.acquisition.optimize.random_argmax` of the host values)."""

    def __call__(self, log_posterior: list[float], generator: torch.Generator) -> int:
        return random_argmax(log_posterior, generator)


@dataclass(frozen=True)
class HyperposteriorThompson(Selector[PriorModel]):
    r"""Alg. 2 lines 2-4 per slot: :math:`p_t` from ``state.log_hyperposterior`` by ``choose``,
    then **one** posterior sample of :math:`p_t` only and its argmax; every slot's sample drawn
    in one call (:func:`~botorch_unknown_hypers.acquisition.prior_acquisition.thompson_prior_batch`,
    ``num_features`` random Fourier features per path on a box), pending points excluded. Each slot
    records its prior and point (no prediction: the update of line 6 needs none)."""

    conditioned: ClassVar[bool] = False

    choose: Callable[[list[float], torch.Generator], int]
    num_features: int = 1024

    def start(self, ctx: RoundContext, data: RoundData[PriorModel]) -> Iterator[Slot]:
        o = ctx.options
        priors = [self.choose(data.state.log_hyperposterior, ctx.generator) for _ in range(data.q)]  # line 2, per slot
        X, _, rows = thompson_prior_batch(
            data.model, [[p] for p in priors], ctx.generator, o.num_restarts, o.raw_samples,
            num_features=self.num_features, exclude=ctx.X_pending, search=o.search,
        )
        if rows is None:  # not copied with the values (a pool, a uniform point): the slots' points in one copy
            (flat,) = host_values(X)
            rows = split_rows(flat, X.shape[-1])
        return iter([Slot(X[j : j + 1], p, record=PendingPlay(p, row)) for j, (p, row) in enumerate(zip(priors, rows))])

    def __call__(
        self, ctx: RoundContext, data: RoundData[PriorModel], prepared: Iterator[Slot], view: Any, fixed: Tensor | None, warm: Restarts | None
    ) -> tuple[Slot, Restarts | None]:
        return next(prepared), warm


@dataclass(frozen=True)
class HyperposteriorUpdate(Test):
    r"""Alg. 2 line 6 for every observed row, as the model conditions on it (the rule's
    conditioning step updates :math:`\log P_t` and the evidence); diagnostics: :math:`P_t`, its
    entropy and the log evidence per prior, from the host values."""

    models: PriorModels

    def __call__(self, ctx: RoundContext, state: Any, observed: Observations) -> dict[str, Any]:
        self.models.condition_plays(observed, None)
        log_p = state.log_hyperposterior
        probabilities = [math.exp(v) for v in log_p]
        return {
            "hyperposterior": probabilities,
            "entropy": -math.fsum(p * v for p, v in zip(probabilities, log_p)),
            "log_evidence": list(state.log_evidence),
        }


@dataclass(frozen=True)
class PlayedPrior(AllCandidates):
    r"""Every prior in play (the selector chooses); reports the first slot's prior (its index in
    the prior set) and :math:`p^*` of a bound task."""

    def __call__(self, ctx: RoundContext, state: Any, indices: list[int]) -> tuple[list[int], dict[str, Any]]:
        return indices, {}

    def diagnostics(self, data: RoundData[PriorModel], slots: list[Slot]) -> dict[str, Any]:
        return {"prior": data.state.prior_ids[data.candidates[slots[0].local]], "true_prior": data.state.true_prior}


@dataclass(frozen=True)
class SelectedPrior(PlayedPrior):
    r""":class:`PlayedPrior`'s report, with the first slot's :math:`\sigma` and :math:`\sqrt{\beta_t}`
    (prior elimination)."""

    def diagnostics(self, data: RoundData[PriorModel], slots: list[Slot]) -> dict[str, Any]:
        first = slots[0]
        return {**super().diagnostics(data, slots), "sigma": first.sigma, "sqrt_beta": data.host_betas()[first.local]}


__all__ = [
    "ActivePriors",
    "DoublyOptimisticPrior",
    "EveryPrior",
    "HyperposteriorThompson",
    "HyperposteriorUpdate",
    "JointThompson",
    "LikeliestPrior",
    "NoWidths",
    "PlayedPrior",
    "PriorEliminationTest",
    "PriorEliminationBetas",
    "PriorModels",
    "PriorsOnData",
    "SampledPrior",
    "SelectedPrior",
    "recorded_slots",
]
