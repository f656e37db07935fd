r"""Prior selection in GP bandits: the machinery shared by PE-GP-TS, HP-GP-TS and their baselines.

Sandberg & Haghir Chehreghani look for the best of N arms when :math:`f` was drawn from one of
K candidate GP priors :math:`p \in \mathcal{P}` (mean :math:`m_p`, covariance :math:`C_p`),
observed with known Gaussian noise :math:`\sigma^2`. Instead of fitting hyperparameters, the
rules *select a prior*. Every rule keeps **one** model of all K priors
(:func:`~botorch_unknown_hypers.models.prior_model.prior_model`: a
:class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP` on a pool of arms, conditioned by
rank-one updates; a :class:`~botorch_unknown_hypers.models.box_priors.BoxPriors` on a box, whose
K-wide ``CandidateGP`` stands on factors extended by one row per observation), conditioned in ``observe`` on **every**
observation whichever prior was used: :math:`\mu_{t,p}, \sigma_{t,p}` at round :math:`t`
condition on the :math:`t - 1` earlier observations.

The rules are :mod:`~botorch_unknown_hypers.policies.prior_selection.prior_elimination` (PE-GP-TS, PE-GP-UCB and
the oracles) and :mod:`~botorch_unknown_hypers.policies.prior_selection.hyperprior` (HP-GP-TS, MAP-GP-TS); their
selections live in :mod:`~botorch_unknown_hypers.acquisition.prior_acquisition`. Conventions where
the paper is silent: :math:`t` counts the rule's rounds; data told without a selection (an initial
design) condition every prior but join no play record; an observation at another point than the
suggested one is data, not a play. The priors come as an object (``priors=``) or from the task
(:meth:`PriorSelectionPolicy.bind_task`); the oracles learn :math:`p^*` there. The observation
history is part of the state and the model is rebuilt from it on load, so a restored policy makes
the same next suggestion. Every choice, the box variant and the constants:
``docs/prior-selection.md``.

References:
    J. Sandberg, M. Haghir Chehreghani. Efficient Prior Selection in Gaussian Process Bandits
    with Thompson Sampling. arXiv:2502.01226 v1, 2025.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import AUTO_SEARCH
from botorch_unknown_hypers.acquisition.prior_sampling import check_pathwise_kernel
from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.host import host_values, split_rows
from botorch_unknown_hypers.models.prior_model import (
    PriorModel,
    Priors,
    check_priors_available,
    prepare_priors,
    prior_model,
    prior_noise_std,
)
from botorch_unknown_hypers.models.tabular_priors import TabularPriors
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.prior_selection.prior_pieces import PriorModels
from botorch_unknown_hypers.policies.round.pending_plays import Observations, PendingPlay
from botorch_unknown_hypers.policies.json_state import JSONValue
from botorch_unknown_hypers.policies.tasks import TaskInfo


def describe_priors(priors: Priors, noise_variance: float, task: str | None) -> dict[str, Any]:
    r"""A fingerprint of a prior set for saved states (the ``K x N x N`` covariances are not stored)."""
    if isinstance(priors, TabularPriors):
        return {
            "task": task,
            "num_priors": len(priors),
            "num_arms": priors.num_arms,
            "noise": noise_variance,
            "names": priors.labels(),
            "checksum": [float(priors.means.double().sum()), float(priors.covariances.double().abs().sum())],
        }
    try:
        spec = priors.to_dict()
    except ValueError:  # e.g. MeanFunctionCandidates hold a Python function
        spec = None
    return {"task": task, "num_priors": len(priors), "names": priors.labels(), "noise": noise_variance, "spec": spec}


def same_priors(own: dict[str, Any], other: Any) -> bool:
    r"""Whether a saved fingerprint describes the same priors (numbers to a relative ``1e-6``)."""
    if not isinstance(other, dict) or set(other) != set(own):
        return False
    for key, value in own.items():
        if key == "task":
            continue
        if key == "noise" or key == "checksum":
            values = [value] if key == "noise" else value
            got = [other[key]] if key == "noise" else other[key]
            if not isinstance(got, list) or len(got) != len(values) or not all(
                isinstance(b, (int, float)) and math.isclose(a, float(b), rel_tol=1e-6, abs_tol=1e-9)
                for a, b in zip(values, got)
            ):
                return False
        elif other[key] != value:
            return False
    return True


@dataclass
class PriorState:
    r"""Memory of a prior-selection rule.

    Attributes:
        priors: Fingerprint of the prior set (``None`` until the priors are known).
        prior_ids: Index, in the prior set, of each of the model's priors (an oracle: ``[p*]``).
        true_prior: :math:`p^*` of a bound task (diagnostics and oracles), else ``None``.
        train_X, train_Y: Every observation so far (the model is rebuilt from them).
        round: Played rounds :math:`t` (one per observed play: a batch of q points is q plays).
        pending: The selections awaiting their observations, in the order they were made (the
            candidate is the model's prior; a PE rule records :math:`\mu_{t,p}(x)` and the width
            :math:`\sqrt{\beta_t}\sigma_{t,p}(x)`, ``beta`` holding :math:`\sqrt{\beta_t}`).
    """

    priors: JSONValue = None
    prior_ids: list[int] | None = None
    true_prior: int | None = None
    train_X: list[list[float]] = field(default_factory=list)
    train_Y: list[float] = field(default_factory=list)
    round: int = 0
    pending: list[PendingPlay] = field(default_factory=list)

    def check(self) -> None:
        if len(self.train_X) != len(self.train_Y):
            raise ValueError("train_X and train_Y must be equally long.")
        if self.priors is None and (self.prior_ids is not None or self.train_X or self.pending):
            raise ValueError("a state without priors must have no data and no selection.")
        if self.prior_ids is not None and (not self.prior_ids or len(set(self.prior_ids)) != len(self.prior_ids)):
            raise ValueError("prior_ids must be distinct indices.")
        if not all(0 <= p.candidate < len(self.prior_ids or []) for p in self.pending):
            raise ValueError("pending['candidate'] must index the model's priors.")
        if self.round < 0:
            raise ValueError(f"round must be >= 0, got {self.round}.")


class PriorSelectionPolicy(Policy):
    r"""Shared machinery of the prior-selection rules: one model holding all K priors.

    The rules run on the candidate-set round, whose pieces reach the model through
    :meth:`prior_models`; they implement the hooks :meth:`_start` (fresh rule state for K priors)
    and :meth:`_condition` (conditioning on one observation; a rule may update first). A test of
    the plays runs in :meth:`condition_plays`.

    Args:
        domain: A pool whose points are the priors' arms (in order), or a box.
        seed, device, dtype, num_restarts, raw_samples, search: As
            :class:`~botorch_unknown_hypers.policies.base.Policy` (box: the multi-start settings
            and the refinement of every sample-path or UCB maximisation).
        priors: On a pool: :class:`~botorch_unknown_hypers.models.tabular_priors.TabularPriors`
            over its points; ``None``: taken from the task in :meth:`bind_task` (``loop.run``
            calls it), required before the first ``suggest`` otherwise. On a box (required): K
            (mean, kernel) pairs as one :class:`~botorch_unknown_hypers.candidates.CandidateSpec`
            (length scales in unit-cube units).
        noise_std: The known noise standard deviation :math:`\sigma`; ``None`` (default): the
            priors' own noise.
        num_features: Box only: random Fourier features of each sample path.

    Attributes:
        model: The model of the priors and the data (``None`` until the priors are known).
        priors: The prior set; ``noise_std``: :math:`\sigma`.
    """

    min_observations = 0
    r"""Starts from its prior: no observation is needed."""

    name = "prior-selection"
    state_type: ClassVar[type[PriorState]] = PriorState
    needs_true_prior: ClassVar[bool] = False
    needs_paths: ClassVar[bool] = True  # Thompson sampling: box priors need random Fourier features

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        priors: Priors | None = None,
        noise_std: float | None = None,
        num_restarts: int = 10,
        raw_samples: int = 512,
        search: str = AUTO_SEARCH,
        num_features: int = 1024,
    ) -> None:
        super().__init__(domain, seed, device, dtype, num_restarts, raw_samples, search)
        check_priors_available(priors, self.domain, self.name)
        if noise_std is not None and not (
            isinstance(noise_std, (int, float)) and math.isfinite(noise_std) and noise_std > 0
        ):
            raise ValueError(f"noise_std must be None or finite and > 0, got {noise_std!r}.")
        if not (type(num_features) is int and num_features >= 2 and num_features % 2 == 0):
            raise ValueError(f"num_features must be a positive even int, got {num_features!r}.")
        self.num_features = num_features
        self.noise_std_option = None if noise_std is None else float(noise_std)
        self.priors: Priors | None = None
        self.prior_task: str | None = None
        self.noise_std: float | None = None
        self.model: PriorModel | None = None
        self.state = self.state_type()
        if priors is not None:
            self._set_priors(self._prepare(priors), None)
            if not self.needs_true_prior:
                self._ensure_model()

    # ------------------------------------------------------------------ priors
    def _prepare(self, priors: Priors) -> Priors:
        priors = prepare_priors(priors, self.domain, self.noise_std_option)
        if self.needs_paths and isinstance(priors, CandidateSpec):
            check_pathwise_kernel(priors.build(self.domain.dim)[1], self.domain.dim)
        return priors

    def _set_priors(self, priors: Priors, task: str | None) -> None:
        self.priors, self.prior_task, self.noise_std = priors, task, prior_noise_std(priors)

    def _require_priors(self) -> Priors:
        if self.priors is None:
            raise ValueError(
                f"priors: {self.name} needs the candidate priors: pass priors=<TabularPriors or a "
                "CandidateSpec>, or run it with loop.run on a prior-selection problem (which binds its task)."
            )
        return self.priors

    def _model_prior_ids(self) -> list[int]:
        r"""Which of the prior set's priors the model holds: all of them (oracles: :math:`p^*`)."""
        return list(range(len(self._require_priors())))

    def known_noise_std(self) -> float:
        r""":math:`\sigma`, known once the priors are (``ValueError`` before)."""
        priors = self._require_priors()
        return prior_noise_std(priors) if self.noise_std is None else self.noise_std

    def _describe(self) -> dict[str, Any]:
        return describe_priors(self._require_priors(), self.known_noise_std() ** 2, self.prior_task)

    def _new_model(self, prior_ids: list[int]) -> PriorModel:
        priors = self._require_priors()
        return prior_model(priors if prior_ids == list(range(len(priors))) else priors.subset(prior_ids), self.domain)

    def _ensure_model(self) -> PriorModel:
        if self.model is None:
            ids = self._model_prior_ids()
            model = self._new_model(ids)
            self._start(len(ids))  # may reject an option (a hyperprior of the wrong length)
            self.state.priors, self.state.prior_ids, self.model = self._describe(), ids, model
        return self.model

    def bind_task(self, task: TaskInfo) -> None:
        r"""Take the task's priors (when none were given) and its true prior :math:`p^*` (oracles,
        diagnostics). :func:`~botorch_unknown_hypers.loop.run` calls this once per run."""
        if self.needs_true_prior and task.true_prior is None:
            raise ValueError(f"bind_task: {self.name} needs the task's true prior (a prior-selection task).")
        priors, source = self.priors, self.prior_task
        if priors is None and task.priors is not None:
            priors, source = self._prepare(task.priors), task.name
        true_prior = task.true_prior
        if true_prior is not None and priors is not None and not true_prior < len(priors):
            raise ValueError(f"bind_task: true prior {true_prior} is not one of the {len(priors)} priors.")
        if self.needs_true_prior and self.model is not None and self.state.prior_ids != [true_prior]:
            raise ValueError(f"bind_task: {self.name} already runs with true prior {self.state.prior_ids[0]}.")
        previous = (self.priors, self.prior_task, self.noise_std, self.state.true_prior)
        if priors is not None:
            self._set_priors(priors, source)
        self.state.true_prior = true_prior
        if self.priors is not None:
            try:
                self._ensure_model()
            except ValueError:  # e.g. a hyperprior of the wrong length: leave the policy as it was
                self.priors, self.prior_task, self.noise_std, self.state.true_prior = previous
                raise

    # -------------------------------------------------------------------- data
    def _sync(self, train_X: Tensor, train_Y: Tensor) -> PriorModel:
        r"""Make the model condition on exactly ``train_X, train_Y``: rows it has not seen (an
        initial design) are added; data that do not extend its own rebuild it from scratch."""
        model = self._ensure_model()
        targets = train_Y.reshape(-1)
        seen = model.num_observations
        if not (
            seen <= targets.shape[0]
            and bool(  # one read for both: the inputs to 1e-9, the values exactly
                ((train_X[:seen] - model.observed_X).abs() <= 1e-9).all() & (targets[:seen] == model.observed_Y).all()
            )
        ):
            self.model = model = model.without_data()
            self.state.train_X, self.state.train_Y = [], []
            self._restart()
            seen = 0
        if seen < targets.shape[0]:
            X_new, Y_new = train_X[seen:], targets[seen:]
            flat_X, flat_Y = host_values(X_new, Y_new)  # the history's rows in one copy
            rows = split_rows(flat_X, X_new.shape[-1])
            for x, y, x_host, y_host in zip(X_new, Y_new, rows, flat_Y):  # one update per row: each depends on the last
                self._condition(x, y, x_host, y_host)
        return model

    def condition_plays(self, observed: Observations, play: Callable[[PendingPlay, float], None] | None = None) -> None:
        r"""Condition every prior on the observed rows in order (matched to their plays, the rows
        and their values copied to the host by the round); a row that answers a pending play is
        round :math:`t` (``state.round``), handed with its value to ``play`` (a test) before the
        row is conditioned on."""
        self._ensure_model()
        st = self.state
        for x, y, (pending, x_host, y_host) in zip(observed.X, observed.Y.reshape(-1), observed.rows):
            if pending is not None:  # a told point that was not suggested is data, not a play
                st.round += 1
                if play is not None:
                    play(pending, y_host)
            self._condition(x, y, x_host, y_host)

    def _condition(self, x: Tensor, y: Tensor, x_host: list[float], y_host: float) -> None:
        r"""Condition every prior on one observation ``(x, y)`` and record it in the history
        (``x_host``, ``y_host``: the same values as Python floats, copied by the caller)."""
        self._ensure_model().condition_at(x, y)
        self.state.train_X.append(x_host)
        self.state.train_Y.append(y_host)

    def prior_models(self) -> PriorModels:
        r"""The model as the round's pieces reach it (bound methods: a copy of the rule copies them)."""
        return PriorModels(self._ensure_model, self._sync, self.condition_plays, self.known_noise_std)

    # ------------------------------------------------------------ rule hooks
    def _start(self, num_priors: int) -> None:
        r"""Fresh rule state for the model's ``num_priors`` priors."""

    def _restart(self) -> None:
        r"""The model was rebuilt from scratch: reset what depends on its data."""

    def _check_rule_state(self, state: Any, num_priors: int) -> None:
        r"""Rule-specific checks of a loaded state against its ``num_priors`` model priors."""

    # ------------------------------------------------------------------- state
    def _check_state(self, state: PriorState) -> None:
        if state.priors is None:
            return
        if self.priors is None:
            raise ValueError(
                f"state['state']['priors']: construct {self.name} with priors=... or bind its task "
                "(bind_task) before loading a state with priors."
            )
        own = self._describe()
        if not same_priors(own, state.priors):
            raise ValueError(
                f"state['state']['priors'] describes other priors than {self.name}'s "
                f"({state.priors.get('names') if isinstance(state.priors, dict) else state.priors} vs {own['names']})."
            )
        num_total = len(self.priors)
        ids = state.prior_ids or []
        expected = [state.true_prior] if self.needs_true_prior else list(range(num_total))
        if ids != expected:
            raise ValueError(f"state['state']['prior_ids'] must be {expected} for {self.name}, got {ids}.")
        if state.true_prior is not None and not state.true_prior < num_total:
            raise ValueError(f"state['state']['true_prior'] must be None or an int in [0, {num_total}).")
        points = [*state.train_X, *(p.x for p in state.pending if p.x is not None)]
        if points:
            X = torch.tensor(points, dtype=torch.float64)
            if X.shape[-1] != self.domain.dim or not bool(self.domain.to(dtype=torch.float64, device="cpu").contains(X).all()):
                raise ValueError("state['state']['train_X'] and the pending point must be points of the domain.")
        self._check_rule_state(state, len(ids))

    def _after_load(self) -> None:
        st = self.state
        if st.priors is None:
            self.model = None
            if self.priors is not None and not self.needs_true_prior:
                self._ensure_model()
            return
        self.model = self._new_model(st.prior_ids)
        history = list(zip(st.train_X, st.train_Y))
        st.train_X, st.train_Y = [], []
        # Replaying the same updates in the same order rebuilds the model bit for bit.
        for x, y in history:
            self.model.condition_at(torch.tensor(x, dtype=self.dtype, device=self.device), y)
            st.train_X.append(x)
            st.train_Y.append(y)
