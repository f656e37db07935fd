r"""Prior elimination: PE-GP-TS, PE-GP-UCB and the oracle baselines.

Sandberg & Haghir Chehreghani, Algorithm 1. An active set :math:`\mathcal{P}_{t-1}`
(:math:`\mathcal{P}_0 = \mathcal{P}`) and per prior the rounds :math:`S_p` it was played. Round
:math:`t`:

- lines 3-4: one independent posterior sample :math:`\tilde f_{t,p}` per active prior and
  :math:`(x_t, p_t) = \arg\max_{(x, p)} \tilde f_{t,p}(x)`
  (:func:`~botorch_unknown_hypers.acquisition.prior_acquisition.thompson_prior_batch`);
  PE-GP-UCB (Ziomek et al. 2024b) takes the doubly optimistic
  :math:`\arg\max_{(x, p)} \mu_{t,p}(x) + \sqrt{\beta_t}\sigma_{t,p}(x)` instead;
- line 5: :math:`S_{p_t} \leftarrow S_{p_t} \cup \{t\}`;
- lines 7-8: :math:`\eta_t = y_t - \mu_{t,p_t}(x_t)` and the width :math:`\sqrt{\beta_t}\sigma_{t,p_t}(x_t)`,
  both taken at selection time (latent :math:`\sigma`);
- lines 9-10: only :math:`p_t` is tested, eliminated iff (strict)
  :math:`|\sum_{i \in S_{p_t}} \eta_i| > \sqrt{\xi_t |S_{p_t}|} + \sum_{i \in S_{p_t}} \sqrt{\beta_i}\sigma_{i,p_t}(x_i)`
  (:func:`~botorch_unknown_hypers.confidence.elimination_statistics`); the last active prior is
  never eliminated (the round is logged).

The round is the candidate-set round
(:class:`~botorch_unknown_hypers.policies.round.candidate_round.CandidateSetRound`) configured with the pieces
of :mod:`~botorch_unknown_hypers.policies.prior_selection.prior_pieces`, one per line above.

A batch of :math:`q` slots (PE-GP-TS and its oracle) takes lines 3-4 once per slot with
independent samples drawn in one call, none within ``EXCLUDE_TOL`` of a pending point or an
earlier slot; each arriving value is one play (lines 5-10), in any order.

Constants (Theorem 4.1, :math:`\delta = 0.05`): :math:`\beta_t = 2\log(2|\mathcal{X}||\mathcal{P}|\pi^2t^2/(3\delta))`
(:func:`~botorch_unknown_hypers.confidence.pe_beta`; a *square*, used as :math:`\sqrt{\beta_t}`) and
:math:`\xi_t = 2\sigma^2\log(|\mathcal{P}|\pi^2t^2/(3\delta))`, with the original sizes. On a box
:math:`|\mathcal{X}|` is Srinivas et al.'s discretisation size
(:func:`~botorch_unknown_hypers.confidence.box_num_arms`), a documented substitute. The oracles
run the rule with :math:`\mathcal{P} = \{p^*\}`, learnt from the task. Details:
``docs/prior-selection.md``.

References:
    J. Sandberg, M. Haghir Chehreghani. Efficient Prior Selection in Gaussian Process Bandits
    with Thompson Sampling. arXiv:2502.01226 v1, 2025.
    J. Ziomek, M. Adachi, M. A. Osborne. Time-Varying Gaussian Process Bandits with Unknown Prior.
    arXiv:2402.01632, 2024.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from botorch_unknown_hypers.checks import POSITIVE, check_pair, check_probability
from botorch_unknown_hypers.confidence import box_num_arms, elimination_statistics
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.models.prior_model import PriorModel
from botorch_unknown_hypers.policies.round.candidate_set import SurvivorState
from botorch_unknown_hypers.policies.round.candidate_round import CandidateSetRound, RoundRule, Selector
from botorch_unknown_hypers.policies.prior_selection.prior_pieces import (
    ActivePriors,
    DoublyOptimisticPrior,
    JointThompson,
    PriorEliminationTest,
    PriorEliminationBetas,
    PriorsOnData,
    SelectedPrior,
)
from botorch_unknown_hypers.policies.prior_selection.prior_selection_policy import PriorSelectionPolicy, PriorState


@dataclass
class PriorEliminationState(PriorState, SurvivorState):
    r"""Prior-selection state plus the active set (``alive``, ``eliminated_at``, ``kept_last``:
    the survivor layout of every candidate-set rule, empty until the priors are known) and, per
    played round, :math:`p_t`, :math:`\eta_t` and the width :math:`\sqrt{\beta_t}\sigma_{t,p_t}(x_t)`
    stored at the time."""

    play_prior: list[int] = field(default_factory=list)
    play_eta: list[float] = field(default_factory=list)
    play_width: list[float] = field(default_factory=list)

    def check(self) -> None:
        PriorState.check(self)
        if self.alive:
            SurvivorState.check(self)
        if not len(self.play_prior) == len(self.play_eta) == len(self.play_width) == self.round:
            raise ValueError("play_prior, play_eta and play_width must hold one entry per played round.")


class PEGPTS(RoundRule, PriorSelectionPolicy):
    r"""PE-GP-TS (Alg. 1): joint Thompson sampling over (point, active prior), prior elimination.

    Args:
        domain: A pool of the priors' arms, or a box (``priors`` a ``CandidateSpec``).
        delta: :math:`\delta` of the Theorem 4.1 constants (0.05 in the paper).
        num_arms_equivalent: Replaces :math:`|\mathcal{X}|` in :math:`\beta_t` (e.g. the size of a
            grid that resolves the box); ``None`` (default): the pool size, or on a box
            :func:`~botorch_unknown_hypers.confidence.box_num_arms`.
        lipschitz: ``(a, b)`` of ``box_num_arms`` (box only), for :math:`f` on the unit cube.
        **kwargs: As :class:`~botorch_unknown_hypers.policies.prior_selection.prior_selection_policy.PriorSelectionPolicy`.

    Example:
        >>> problem = get_problem("gp-kernel")
        >>> history = run(problem, PEGPTS(problem.domain), iterations=20)  # priors from the task
    """

    max_batch_size: ClassVar[int | None] = None
    r"""Any batch: one joint Thompson sample per (slot, active prior), all drawn in one batched call."""
    supports_pending = True

    name = "pe-gp-ts"
    state_type: ClassVar[type[PriorState]] = PriorEliminationState

    def __init__(
        self,
        domain: Domain,
        delta: float = 0.05,
        num_arms_equivalent: float | None = None,
        lipschitz: tuple[float, float] = (1.0, 1.0),
        **kwargs: Any,
    ) -> None:
        check_probability("delta", delta)
        if num_arms_equivalent is not None and not (
            isinstance(num_arms_equivalent, (int, float))
            and math.isfinite(num_arms_equivalent)
            and num_arms_equivalent >= 1
        ):
            raise ValueError(f"num_arms_equivalent must be None or a finite number >= 1, got {num_arms_equivalent!r}.")
        self.delta = float(delta)
        self.num_arms_equivalent = None if num_arms_equivalent is None else float(num_arms_equivalent)
        self.lipschitz = check_pair("lipschitz", lipschitz, POSITIVE)
        box_num_arms(1, domain.dim, self.delta, *self.lipschitz)  # rejects bad (a, b) early
        super().__init__(domain, **kwargs)
        models = self.prior_models()
        self.betas = PriorEliminationBetas(self.delta, self.num_arms_equivalent, self.lipschitz)  # sqrt(beta_t), Thm 4.1
        self.test = PriorEliminationTest(self.delta, models)  # lines 5-10, per value as it arrives
        self.candidate_round = CandidateSetRound(
            source=ActivePriors(models),  # P_{t-1}, P_0 = P
            model=PriorsOnData(models),  # every prior conditioned on every observation, kept across rounds
            betas=self.betas,
            selector=self.selection(),  # lines 3-4 (or PE-GP-UCB's doubly optimistic pair), line 7-8's record
            test=self.test,
            subset=SelectedPrior(),
        )

    def selection(self) -> Selector[PriorModel]:
        r"""Alg. 1 lines 3-4: joint Thompson sampling over (point, active prior), per slot."""
        return JointThompson(self.num_features)

    def _start(self, num_priors: int) -> None:
        st = self.state
        st.alive, st.eliminated_at, st.kept_last = [True] * num_priors, {}, []
        st.play_prior, st.play_eta, st.play_width = [], [], []

    def num_arms(self, t: int) -> float:
        r""":math:`|\mathcal{X}|` in :math:`\beta_t`: ``num_arms_equivalent`` if given, else the pool
        size, or on a box Srinivas' discretisation size at round ``t`` (:math:`r = 1`)."""
        return self.betas.num_arms(self.domain, t)

    def sqrt_beta(self, t: int) -> float:
        r""":math:`\sqrt{\beta_t}` with :meth:`num_arms` and the model's :math:`|\mathcal{P}|`."""
        return self.betas.sqrt_beta(self.domain, self._ensure_model().num_priors, t)

    def xi(self, t: int) -> float:
        r""":math:`\xi_t = 2\sigma^2 \log(|\mathcal{P}| \pi^2 t^2 / (3\delta))` (Theorem 4.1)."""
        return self.test.xi(t)

    def statistics(self, t: int | None = None) -> dict[str, list[float]]:
        r"""Per model prior: :math:`|\sum_{i \in S_p} \eta_i|` and the threshold at round ``t``
        (default: the last played round)."""
        model = self._ensure_model()
        st = self.state
        t = max(st.round if t is None else t, 1)
        stat, threshold = elimination_statistics(st.play_prior, st.play_eta, st.play_width, model.num_priors, self.xi(t))
        return {"statistic": stat, "threshold": threshold}

    def _check_rule_state(self, state: PriorEliminationState, num_priors: int) -> None:
        if len(state.alive) != num_priors:
            raise ValueError(f"state['state']['alive'] must have {num_priors} flags.")
        if not all(0 <= p < num_priors for p in state.play_prior):
            raise ValueError(f"state['state']['play_prior'] must hold prior indices in [0, {num_priors}).")


class PEGPUCB(PEGPTS):
    r"""PE-GP-UCB: Alg. 1 with the doubly optimistic UCB selection (Theorem 4.1 constants)."""

    max_batch_size = 1
    r"""Proposes one point per round (the UCB selection has no batch rule here)."""
    supports_pending = False

    name = "pe-gp-ucb"
    needs_paths = False

    def selection(self) -> Selector[PriorModel]:
        r"""The doubly optimistic pair :math:`\arg\max_{(x, p)} \mu_{t,p}(x) + \sqrt{\beta_t}\sigma_{t,p}(x)`."""
        return DoublyOptimisticPrior()


class _Oracle(PEGPTS):
    r"""The rule run with :math:`\mathcal{P} = \{p^*\}`, :math:`p^*` from the bound task."""

    needs_true_prior = True

    def _model_prior_ids(self) -> list[int]:
        true_prior = self.state.true_prior
        if true_prior is None:
            raise ValueError(
                f"{self.name} needs the true prior: run it with loop.run on a prior-selection problem "
                "(which binds its task), or call bind_task(problem.task_info()) before suggest."
            )
        priors = self._require_priors()
        if not 0 <= true_prior < len(priors):
            raise ValueError(f"true prior {true_prior} is not one of the {len(priors)} priors.")
        return [true_prior]


class OracleGPTS(_Oracle, PEGPTS):
    r"""Oracle GP-TS: PE-GP-TS with the true prior only (:math:`|\mathcal{P}| = 1`)."""

    name = "oracle-gp-ts"


class OracleGPUCB(_Oracle, PEGPUCB):
    r"""Oracle GP-UCB: PE-GP-UCB with the true prior only (:math:`|\mathcal{P}| = 1`)."""

    name = "oracle-gp-ucb"
