r"""The round of a candidate-set rule, written once, and the pieces it is configured with.

A candidate-set rule keeps a finite set :math:`U` of GP hyperparameters and, every round
:math:`t`, runs the same skeleton (:class:`CandidateSetRound`):

1. **candidates** (:class:`CandidateSource`): the survivors :math:`U_{t-1}` of a fixed list, of a
   ladder, or of candidates proposed from the data (the proposing function :math:`a(t)` of
   Alg. 2 of Ziomek et al. 2024, :meth:`CandidateSource.propose`);
2. **subset** (:class:`ModelSubset`): which survivors the round's model holds, chosen before it is
   built: all of them (:class:`AllCandidates`, the default) or one (balancing's least suspected
   regret bound);
3. **the round's model** (:class:`RoundModel`): one batched
   :class:`~botorch_unknown_hypers.models.CandidateGP` of the chosen candidates on all data
   :math:`D_{t-1}`, on Cholesky factors kept across rounds (those of every survivor kept);
4. **betas** (:class:`Betas`): the width multipliers :math:`\beta^u_t` per chosen candidate (a
   play's width is :math:`\beta^u_t\sigma^u_{t-1}(x)`);
5. **selector and acquisition** (:class:`Selector`): which candidate plays and where, one slot at
   a time on the pending-conditioned model
   (:func:`~botorch_unknown_hypers.policies.round.slots.fill_slots`);
6. **the ledger** (:class:`Ledger`): each slot is a
   :class:`~botorch_unknown_hypers.policies.round.pending_plays.PendingPlay` recording, on the data
   observed (never on the fantasy), :math:`\beta^u_t\sigma^u_{t-1}(x)` and what the test reads
   (:math:`\mu^{u}_{t-1}(x)` for elimination, :class:`PredictionLedger`, the default; the
   round's outcome scaler for balancing);
7. **the test** (:class:`Test`) when values arrive, matched to their plays by point.

A model of every candidate kept across rounds (``RoundModel.whole_set``) and slots drawn
independently with the pending points only excluded (``Selector.conditioned = False``) are
options of the same skeleton (prior elimination); a selector may record its own play
(``Slot.record``, HE-StableOpt's pessimistic candidate).

Every piece receives the rule's :class:`~botorch_unknown_hypers.policies.context.RoundContext`
(domain, generator, search options, factor caches, pending points) and the rule's state (or the
round's :class:`RoundData`, which holds it), never the rule; what configures a piece (the paper's
constants, the candidate family) is given when the rule builds it.

A rule is a configuration: a short module that picks one piece of each kind and names the
paper's lines (:class:`~botorch_unknown_hypers.policies.elimination.he_gp_ucb.HEGPUCB`,
:class:`~botorch_unknown_hypers.policies.presets.auto.HEGPUCBAuto`, the balancing family of
:mod:`~botorch_unknown_hypers.policies.balancing.balancing_pieces`,
:class:`~botorch_unknown_hypers.policies.prior_selection.prior_elimination.PEGPTS` and ``PEGPUCB``,
:class:`~botorch_unknown_hypers.policies.elimination.stableopt.HEStableOpt`); ``docs/architecture.md`` writes
a new rule in a few lines. The shared pieces live in :mod:`~botorch_unknown_hypers.policies.round.shared_pieces`,
those of prior elimination in :mod:`~botorch_unknown_hypers.policies.prior_selection.prior_pieces`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, NamedTuple, Protocol, Self, TypeVar, cast

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.optimize import Restarts
from botorch_unknown_hypers.domains import Domain, check_observations, observation_checks
from botorch_unknown_hypers.host import host_tensor, host_values
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.factor_cache import CandidateFactor
from botorch_unknown_hypers.policies.context import RoundContext
from botorch_unknown_hypers.policies.round.pending_plays import Observations, PendingPlay, take_observations
from botorch_unknown_hypers.policies.round.slots import fill_slots


class CandidateSet(Protocol):
    r"""What the round reads of a rule's candidate set: a
    :class:`~botorch_unknown_hypers.candidates.CandidateSpec` of hyperparameters, or a prior
    rule's :class:`~botorch_unknown_hypers.models.tabular_priors.TabularPriors`."""

    def labels(self) -> list[str]: ...

    def subset(self, indices: list[int]) -> Self: ...


S = TypeVar("S", bound=CandidateSet)
r"""The type of a rule's candidate set (what its :class:`CandidateSource` hands the round's model)."""
M = TypeVar("M")
r"""The type of the round's model: a :class:`~botorch_unknown_hypers.models.CandidateGP`, or a
prior rule's :data:`~botorch_unknown_hypers.models.prior_model.PriorModel` of every prior."""


@dataclass(frozen=True)
class RoundData(Generic[M]):
    r"""What the pieces of one round share.

    Attributes:
        train_X, train_Y: :math:`D_{t-1}` (``n x d``, ``n x 1``).
        t: The round (played rounds so far plus one).
        candidates: Indices, in the rule's set, of the round's candidates (the model's order).
        model: The round's model of them, on the data observed (one batched GP, or the priors' model).
        info: Their factors at the noise of the information gain (``None``: the model's own).
        raw_points: Raw samples fixed for the campaign (box only), else ``None``.
        betas: :math:`\beta^u_t` of the round's candidates (``K``).
        state: The rule's state (its ``round``, ``pending`` plays and survivors), the one play log
            the selectors read and the ledger appends to.
        scaler: The round model's outcome transform (its ``stdvs`` and ``means``), or ``None``
            (raw units).
        q: The batch size of the round.
        copied: What that first copy gave (``y_std``, ``y_mean``, ``betas``), empty before it.
    """

    train_X: Tensor
    train_Y: Tensor
    t: int
    candidates: list[int]
    model: M
    info: CandidateFactor | None
    raw_points: Tensor | None
    betas: Tensor
    state: Any
    scaler: Any = None
    q: int = 1
    copied: dict[str, Any] = field(default_factory=dict, repr=False)

    def host(self, *tensors: Tensor) -> list[list[float]]:
        r""":func:`~botorch_unknown_hypers.host.host_values` of ``tensors``. The round's first call
        copies the scaler's values and the widths in the same copy and checks the widths (finite,
        :math:`\ge 0`: a ``ValueError`` naming ``betas``) before it returns, so that a round reads them with its first decision instead of on their own."""
        if self.copied:
            return host_values(*tensors) if tensors else []
        head = [] if self.scaler is None else [self.scaler.stdvs, self.scaler.means]
        values = host_values(*head, self.betas, *tensors)
        k = len(head)
        betas = values[k]
        if not all(math.isfinite(b) and b >= 0 for b in betas):
            raise ValueError(f"betas: the round's width multipliers beta^u_t must be finite and >= 0, got {betas}.")
        self.copied.update(y_std=values[0][0] if head else 1.0, y_mean=values[1][0] if head else 0.0, betas=betas)
        return values[k + 1 :]

    @property
    def y_std(self) -> float:
        r"""The outputs' scale of the round's model (1 in raw units), from :meth:`host`'s copy."""
        self.host()
        return float(self.copied["y_std"])

    @property
    def y_mean(self) -> float:
        r"""The outputs' mean removed by the round's model (0 in raw units), from :meth:`host`'s copy."""
        self.host()
        return float(self.copied["y_mean"])

    def host_betas(self) -> list[float]:
        r""":attr:`betas` as Python floats, from :meth:`host`'s copy."""
        self.host()
        return list(self.copied["betas"])


class Slot(NamedTuple):
    r"""One slot's choice: the ``1 x d`` point, the played candidate's position in the round's
    model (an ``int``, or a ``0-d`` tensor that :class:`PredictionLedger` copies with its values)
    and, when the selector computed them on the unconditioned model, :math:`\mu` and
    :math:`\sigma` there (else ``None``: the round computes them), as numbers or as ``0-d``
    tensors that the ledger copies to the host with its own values. ``record``: the play as the
    selector recorded it, for a rule that records more than one candidate at the point
    (HE-StableOpt's pessimistic :math:`v_t`; ``None``: the ledger records it); ``info``: what the
    selector reports about the slot (``None``: nothing); ``robust``: the ``1 x d`` point whose
    worst case a robust selector optimised (``None``: not robust)."""

    x: Tensor
    local: int | Tensor
    mean: float | Tensor | None = None
    sigma: float | Tensor | None = None
    record: PendingPlay | None = None
    info: dict[str, Any] | None = None
    robust: Tensor | None = None


class RoundReport(NamedTuple):
    r"""What a round tells its rule: the label of each slot's candidate (``selected``), how many
    candidates were in play (``n_candidates``), the round's JSON-safe ``diagnostics`` and, for a
    robust selector, the ``1 x d`` point whose worst case it optimised (``robust_point``)."""

    selected: list[str]
    n_candidates: int
    diagnostics: dict[str, Any]
    robust_point: Tensor | None = None


class CandidateSource(ABC, Generic[S]):
    r"""Where the round's candidates come from."""

    @abstractmethod
    def survivors(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor) -> tuple[S, list[int]]:
        r"""Update the set for round :math:`t` (e.g. add proposals); every candidate of the set, in
        index order, and the indices in play."""

    def propose(self, ctx: RoundContext, state: Any, t: int) -> None:
        r"""The proposing function :math:`a(t)` after the observed play of round ``t`` (a test
        that runs per play calls it; default: nothing is added)."""

    def diagnostics(self, ctx: RoundContext, state: Any) -> dict[str, Any]:
        return {}


class ModelSubset(ABC):
    r"""Which of the survivors the round's model holds, chosen before the model is built."""

    @abstractmethod
    def __call__(self, ctx: RoundContext, state: Any, indices: list[int]) -> tuple[list[int], dict[str, Any]]:
        r"""The chosen indices (a sub-list of ``indices``, the model's order) and the diagnostics
        of the choice."""

    def diagnostics(self, data: RoundData[Any], slots: list[Slot]) -> dict[str, Any]:
        r"""Diagnostics known once the slots are filled (default none)."""
        return {}


@dataclass(frozen=True)
class AllCandidates(ModelSubset):
    r"""Every survivor (the selector chooses among them slot by slot, e.g. HE's joint argmax)."""

    def __call__(self, ctx: RoundContext, state: Any, indices: list[int]) -> tuple[list[int], dict[str, Any]]:
        return indices, {"alive": list(state.alive)}

    def diagnostics(self, data: RoundData[Any], slots: list[Slot]) -> dict[str, Any]:
        return {"played": data.candidates[slots[0].local], "betas": data.host_betas()}


class RoundModel(ABC, Generic[S, M]):
    r"""The one model of the round.

    ``whole_set``: the model holds every candidate of the rule's set, kept and conditioned across
    rounds, and is handed the whole set instead of the chosen subset (prior elimination's model of
    every prior); the round's candidates then index its rows and ``Slot.local`` their positions
    among the survivors. Such a model's selector records :math:`\mu` and :math:`\sigma` itself.

    ``conditions_on_pending``: :meth:`pending_view` gives the model conditioned on points (a
    :class:`Selector` with ``conditioned = True`` needs it; :class:`CandidateSetRound` refuses the
    pair otherwise)."""

    whole_set: ClassVar[bool] = False
    conditions_on_pending: ClassVar[bool] = False

    @abstractmethod
    def __call__(
        self, ctx: RoundContext, state: Any, spec: S, train_X: Tensor, train_Y: Tensor, keep: S | None = None
    ) -> tuple[M, CandidateFactor | None, Tensor | None]:
        r"""The model of ``spec`` on the data, the factors of its information gain (``None``: its
        own) and the campaign's fixed raw points (``None`` where there are none); ``keep``: the
        survivors whose cached factors stay (``None``: ``spec``'s own; a model without a factor
        cache ignores it)."""

    def pending_view(self, model: M, fixed: Tensor) -> M:
        r"""``model`` with its variance conditioned on ``fixed`` (``p x d``), the mean frozen
        (:func:`~botorch_unknown_hypers.policies.round.slots.fill_slots`); only where
        ``conditions_on_pending``."""
        raise NotImplementedError(f"{type(self).__name__} does not condition its model on pending points.")


class Betas(ABC, Generic[M]):
    r""":math:`\beta^u_t` of the round's candidates.

    The round checks what a piece returns (finite, :math:`\ge 0`) with its first copy to the host
    (:meth:`RoundData.host`), so a piece computes its widths on the device and reads nothing."""

    @abstractmethod
    def __call__(
        self, ctx: RoundContext, state: Any, model: M, info: CandidateFactor | None, t: int, candidates: list[int]
    ) -> Tensor:
        r"""``K`` width multipliers of the model's candidates, ``candidates`` their indices in the
        rule's set (widths that depend on a candidate's own constant, e.g. its norm bound, read them)."""


class Selector(ABC, Generic[M]):
    r"""Which candidate plays and where: one slot on the pending-conditioned model.

    ``conditioned``: the slot is chosen on the model conditioned on the pending points and earlier
    slots (BUCB's fantasy); ``False``: on the round's model itself, those points handed to the
    slot only to be excluded (independent Thompson draws), and the slot's :math:`\mu` and
    :math:`\sigma` are recorded as the selector gives them."""

    conditioned: ClassVar[bool] = True

    def start(self, ctx: RoundContext, data: RoundData[M]) -> Any:
        r"""Work done once per round, before the first slot (e.g. extra starts); what it returns
        is handed to every slot of the round (default ``None``)."""
        return None

    @abstractmethod
    def __call__(
        self, ctx: RoundContext, data: RoundData[M], prepared: Any, view: M, fixed: Tensor | None, warm: Restarts | None
    ) -> tuple[Slot, Restarts | None]:
        r"""One slot on ``view`` (conditioned on ``fixed``) and the warm start of the next;
        ``prepared`` is what :meth:`start` returned."""

    def diagnostics(self, slots: list[Slot]) -> dict[str, Any]:
        return {}


class Ledger(ABC, Generic[M]):
    r"""How each slot of the round waits for its value."""

    @abstractmethod
    def record(self, data: RoundData[M], slots: list[Slot]) -> list[Slot]:
        r"""Append a :class:`~botorch_unknown_hypers.policies.round.pending_plays.PendingPlay` per slot
        to ``data.state.pending`` (the plays awaiting their values); the slots with :math:`\mu` and
        :math:`\sigma` filled in where the ledger computed them."""


@dataclass(frozen=True)
class PredictionLedger(Ledger[CandidateGP]):
    r"""Each slot records :math:`m = \mu^u_{t-1}(x)` and :math:`w = \beta^u_t\sigma^u_{t-1}(x)` (latent
    :math:`\sigma`) on the data observed, in the units of the round's model (a prequential
    test's residual :math:`y - m`)."""

    def record(self, data: RoundData[CandidateGP], slots: list[Slot]) -> list[Slot]:
        out = []
        for s in slots:
            if s.record is not None:  # the selector's own record
                data.state.pending.append(s.record)
                out.append(s)
                continue
            on_device = isinstance(s.local, Tensor)  # a position still on the device: copied with the values
            at = s.local.reshape(1) if isinstance(s.local, Tensor) else host_tensor([s.local], torch.long, data.betas.device)
            parts = [s.x[0], data.betas.index_select(0, at)]
            if s.mean is None:  # on the data observed, not on the fantasy
                with torch.no_grad():
                    mean, variance = data.model.marginal_mean_variance(s.x.unsqueeze(0))
                parts += [mean.index_select(0, at)[:, 0], variance.index_select(0, at)[:, 0].clamp_min(0).sqrt()]
            elif isinstance(s.mean, Tensor) and isinstance(s.sigma, Tensor):  # the selector's, still on the device
                parts += [s.mean.reshape(1), s.sigma.reshape(1)]
            values = [v for part in data.host(*parts, *([at] if on_device else [])) for v in part]  # one host copy (the round's values too, the first time)
            local = int(values.pop()) if on_device else int(s.local)
            d = s.x.shape[-1]
            x, beta = values[:d], values[d]
            if len(values) > d + 1:
                s = s._replace(mean=values[d + 1], sigma=values[d + 2])
            s = s._replace(local=local)
            mean_x, sigma_x = float(cast(float, s.mean)), float(cast(float, s.sigma))  # numbers by now
            data.state.pending.append(PendingPlay(data.candidates[local], x, mean_x, beta * sigma_x, beta, y_std=data.y_std))
            out.append(s)
        return out


class Test(ABC):
    r"""What the rule does when values arrive.

    It receives the observations checked and matched to their plays by the round
    (:meth:`CandidateSetRound.observe`), so that nothing it changes can be changed by input that
    is then refused.
    """

    reads: ClassVar[tuple[type[Ledger[Any]], ...]] = (PredictionLedger,)
    r"""The ledgers whose records the test reads (a prequential test reads :math:`\mu` and
    :math:`w`, :class:`PredictionLedger`): :class:`CandidateSetRound` refuses any other pairing."""

    @abstractmethod
    def __call__(self, ctx: RoundContext, state: Any, observed: Observations) -> dict[str, Any]:
        r"""Record the observed plays and test (changing ``state``); the diagnostics."""


@dataclass(frozen=True)
class CandidateSetRound(Generic[S, M]):
    r"""The skeleton of a round (module docstring), run on a rule's
    :class:`~botorch_unknown_hypers.policies.context.RoundContext` and its state, which has
    ``round`` and ``pending`` (a list of
    :class:`~botorch_unknown_hypers.policies.round.pending_plays.PendingPlay`) and, for the default
    ``subset``, ``alive`` (one flag per candidate). It never sees the rule: what the rule shows
    after a round comes back as a :class:`RoundReport`."""

    source: CandidateSource[S]
    model: RoundModel[S, M]
    betas: Betas[M]
    selector: Selector[M]
    test: Test
    subset: ModelSubset = AllCandidates()
    ledger: Ledger[Any] = PredictionLedger()

    def __post_init__(self) -> None:
        if not isinstance(self.ledger, self.test.reads):
            wanted = " or ".join(t.__name__ for t in self.test.reads)
            raise ValueError(
                f"ledger: {type(self.test).__name__} reads the records of {wanted}, got {type(self.ledger).__name__}."
            )
        if self.selector.conditioned and not self.model.conditions_on_pending:
            raise ValueError(
                f"selector: {type(self.selector).__name__} chooses each slot on the model conditioned on the pending "
                f"points, which {type(self.model).__name__} does not give; use a selector with conditioned = False."
            )

    def suggest(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor, q: int) -> tuple[Tensor, RoundReport]:
        r"""Round :math:`t`'s ``q x d`` batch and its report; records its plays in ``state``."""
        every, indices = self.source.survivors(ctx, state, train_X, train_Y)
        labels = every.labels()
        chosen, chosen_diagnostics = self.subset(ctx, state, indices)
        keep = None if chosen == indices else every.subset(indices)
        spec = every if self.model.whole_set else every.subset(chosen)
        model, info, raw = self.model(ctx, state, spec, train_X, train_Y, keep)
        betas = self.betas(ctx, state, model, info, state.round + 1, chosen)
        scaler = getattr(model, "outcome_transform", None)  # its values and the widths: read with the first decision
        data = RoundData(train_X, train_Y, state.round + 1, chosen, model, info, raw, betas, state, scaler, q)
        drawn = ctx.generator.get_state()  # a failed check after the searches' draws leaves the stream as it was
        try:
            X, slots = self._slots(ctx, data)
        except Exception:
            ctx.generator.set_state(drawn)
            data.host()  # unread widths that fail their check explain the failure: their named error
            raise
        diagnostics = {
            **chosen_diagnostics,
            **self.subset.diagnostics(data, slots),
            **self.selector.diagnostics(slots),
            **self.source.diagnostics(ctx, state),
        }
        report = RoundReport([labels[chosen[s.local]] for s in slots], len(indices), diagnostics, slots[0].robust)
        return X, report

    def _slots(self, ctx: RoundContext, data: RoundData[M]) -> tuple[Tensor, list[Slot]]:
        r"""The selector's ``data.q`` slots on ``data.model`` and the ledger's record of them."""
        prepared = self.selector.start(ctx, data)
        slots: list[Slot] = []

        def slot(view: M, fixed: Tensor | None, warm: Restarts | None) -> tuple[Tensor, Restarts | None]:
            slot, warm = self.selector(ctx, data, prepared, view, fixed, warm)
            if fixed is not None and self.selector.conditioned:  # the ledger records on the data observed
                slot = slot._replace(mean=None, sigma=None)
            slots.append(slot)
            return slot.x, warm

        condition = self.model.pending_view if self.selector.conditioned else None
        X = fill_slots(data.model, ctx.X_pending, data.q, slot, condition=condition)
        return X, self.ledger.record(data, slots)

    def observe(self, ctx: RoundContext, state: Any, X: Tensor, Y: Tensor, verdict: Tensor | None = None) -> dict[str, Any]:
        r"""The test on the observed rows (``m x d``, ``m x 1``), matched to their plays (taken off
        ``state.pending``) in one host read with ``verdict``, the rows' unread check
        (:func:`~botorch_unknown_hypers.domains.observation_checks`; ``None``: checked by the
        caller): refused rows raise before anything changes. The test's diagnostics."""
        return self.test(ctx, state, take_observations(state, X, Y, ctx.domain, verdict))


class RoundRule:
    r"""Mixin (listed before :class:`~botorch_unknown_hypers.policies.base.Policy`) of a rule whose
    round is its ``candidate_round``: ``suggest`` and ``observe``
    delegate to the :class:`CandidateSetRound` with the rule's context and state; the round's
    report sets ``selected``, ``n_candidates``, ``diagnostics`` and ``robust_point``."""

    candidate_round: CandidateSetRound[Any, Any]
    context: RoundContext
    domain: Domain
    state: Any
    selected: list[str]
    n_candidates: int
    num_observed: int
    diagnostics: dict[str, Any]
    robust_point: Tensor | None

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        X, report = self.candidate_round.suggest(self.context, self.state, train_X, train_Y, q)
        self.selected, self.n_candidates, self.diagnostics = report.selected, report.n_candidates, report.diagnostics
        if report.robust_point is not None:
            self.robust_point = report.robust_point
        return X

    def observe(self, X: Tensor, Y: Tensor) -> None:
        r"""Record the observations of the last batch (``q x d``, ``q`` or ``q x 1``).

        Validation happens before anything changes, so a rejected call leaves the policy's
        state untouched: the values' check is read in the round's one copy of the match
        (:meth:`CandidateSetRound.observe`), before a play is taken.
        """
        X, Y, verdict = observation_checks(self.domain, X, Y, "X", "Y")
        if verdict is None:  # Y's shape does not match X's: the named error, nothing read
            X, Y = check_observations(self.domain, X, Y)
        self.diagnostics.update(self.candidate_round.observe(self.context, self.state, X, Y, verdict))
        self.num_observed += X.shape[0]


__all__ = [
    "AllCandidates",
    "CandidateSet",
    "RoundReport",
    "CandidateSetRound",
    "RoundRule",
    "ModelSubset",
    "Ledger",
    "PredictionLedger",
    "CandidateSource",
    "RoundData",
    "RoundModel",
    "Selector",
    "Slot",
    "Test",
    "Betas",
]
