r"""Hyperprior Thompson sampling: HP-GP-TS and MAP-GP-TS.

Sandberg & Haghir Chehreghani, Algorithm 2. A distribution :math:`P_{t-1}` over the K priors
(:math:`P_0` the hyperprior, uniform by default). Round :math:`t`:

- line 2: :math:`p_t \sim P_{t-1}` (a categorical draw with the rule's generator);
- lines 3-4: **one** posterior sample, from :math:`p_t` only, and its argmax
  (:func:`~botorch_unknown_hypers.acquisition.prior_acquisition.thompson_prior_argmax`);
- line 6: for **all** :math:`p`, with the one-step predictive likelihood taken before
  conditioning,

  .. math::

      \log P_t(p) = \log P_{t-1}(p) + \log \mathcal{N}\big(y_t; \mu_{t,p}(x_t),
          \sigma_{t,p}^2(x_t) + \sigma^2\big) - \log \textstyle\sum_{p'} (\cdot),

  normalised by a log-sum-exp (on the host). By the chain rule :math:`P_t(p) \propto P_0(p)\,
  \mathcal{N}(y_{1:t}; m_p[S], C_p[S, S] + \sigma^2 I)`, the exact Bayes posterior over the
  priors; no prior is ever zeroed.

MAP-GP-TS takes :math:`p_t = \arg\max_p P_{t-1}(p)` instead (type-II maximum likelihood over the
prior set under a uniform hyperprior; ties broken at random). Every observation updates the
hyperposterior, also one told without a selection. Details: ``docs/prior-selection.md``.

References:
    J. Sandberg, M. Haghir Chehreghani. Efficient Prior Selection in Gaussian Process Bandits
    with Thompson Sampling. arXiv:2502.01226 v1, 2025.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch
from torch import Tensor

from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.host import host_values
from botorch_unknown_hypers.policies.prior_selection.prior_pieces import (
    EveryPrior,
    HyperposteriorThompson,
    HyperposteriorUpdate,
    LikeliestPrior,
    NoWidths,
    PlayedPrior,
    PriorsOnData,
    SampledPrior,
)
from botorch_unknown_hypers.policies.round.candidate_round import CandidateSetRound, RoundRule
from botorch_unknown_hypers.policies.prior_selection.prior_selection_policy import PriorSelectionPolicy, PriorState


@dataclass
class HyperpriorState(PriorState):
    r"""Prior-selection state plus :math:`\log P_0`, :math:`\log P_t` and the log evidence per prior
    (float64 values; the evidence is the running sum of the one-step predictive log-likelihoods)."""

    log_hyperprior: list[float] = field(default_factory=list)
    log_hyperposterior: list[float] = field(default_factory=list)
    log_evidence: list[float] = field(default_factory=list)

    def check(self) -> None:
        super().check()
        if not len(self.log_hyperprior) == len(self.log_hyperposterior) == len(self.log_evidence):
            raise ValueError("log_hyperprior, log_hyperposterior and log_evidence must be equally long.")


def _float64(values: list[float]) -> Tensor:
    return torch.tensor(values, dtype=torch.float64)


def _log_normalised(values: list[float]) -> list[float]:
    r""":math:`v_p - \log \sum_q e^{v_q}` of finite Python floats, on the host (a log-sum-exp
    shifted by the largest value, the sum correctly rounded)."""
    top = max(values)
    log_total = top + math.log(math.fsum(math.exp(v - top) for v in values))
    return [v - log_total for v in values]


class HPGPTS(RoundRule, PriorSelectionPolicy):
    r"""HP-GP-TS (Alg. 2): sample a prior from the hyperposterior, then Thompson-sample it.

    The round is the candidate-set round configured with the pieces of
    :mod:`~botorch_unknown_hypers.policies.prior_selection.prior_pieces`: every prior in play, the
    prior of each slot drawn by :meth:`choice`, one sample of it, and line 6 on every observation.

    Args:
        domain: A pool of the priors' arms, or a box (``priors`` a ``CandidateSpec``).
        hyperprior: :math:`P_0` as K positive weights (normalised); ``None``: uniform.
        **kwargs: As :class:`~botorch_unknown_hypers.policies.prior_selection.prior_selection_policy.PriorSelectionPolicy`.
    """

    max_batch_size = None
    r"""Any batch: each slot draws its prior from the hyperposterior and one sample of it, all
    samples in one batched call."""
    supports_pending = True

    name = "hp-gp-ts"
    state_type: ClassVar[type[PriorState]] = HyperpriorState

    def __init__(self, domain: Domain, hyperprior: Sequence[float] | Tensor | None = None, **kwargs: Any) -> None:
        if hyperprior is not None:
            weights = torch.as_tensor(hyperprior, dtype=torch.float64).reshape(-1)
            if weights.numel() == 0 or not torch.isfinite(weights).all() or not (weights > 0).all():
                raise ValueError(f"hyperprior must be None or positive finite weights, got {hyperprior!r}.")
            hyperprior = (weights / weights.sum()).tolist()
        self.hyperprior_option = hyperprior
        super().__init__(domain, **kwargs)
        models = self.prior_models()
        self.candidate_round = CandidateSetRound(
            source=EveryPrior(models),  # no prior is ever zeroed
            model=PriorsOnData(models),  # every prior conditioned on every observation, kept across rounds
            betas=NoWidths(),
            selector=HyperposteriorThompson(self.choice(), self.num_features),  # lines 2-4, per slot
            test=HyperposteriorUpdate(models),  # line 6, as the model conditions on each row (_condition)
            subset=PlayedPrior(),
        )

    def choice(self) -> Callable[[list[float], torch.Generator], int]:
        r"""Alg. 2 line 2: :math:`p_t \sim P_{t-1}`."""
        return SampledPrior()

    @property
    def log_hyperposterior(self) -> Tensor:
        r"""``K`` normalised :math:`\log P_t(p)` (float64, CPU)."""
        return _float64(self.state.log_hyperposterior)

    @property
    def log_evidence(self) -> Tensor:
        r"""``K`` :math:`\log \mathcal{N}(y_{1:t}; m_p[S], C_p[S, S] + \sigma^2 I)` (float64, CPU)."""
        return _float64(self.state.log_evidence)

    @property
    def hyperposterior(self) -> Tensor:
        r"""``K`` probabilities :math:`P_t(p)`."""
        return self.log_hyperposterior.exp()

    def _start(self, num_priors: int) -> None:
        if self.hyperprior_option is None:
            log_prior = torch.full((num_priors,), -math.log(num_priors), dtype=torch.float64)
        elif len(self.hyperprior_option) != num_priors:
            raise ValueError(
                f"hyperprior must have one weight per prior ({num_priors}), got {len(self.hyperprior_option)}."
            )
        else:
            log_prior = _float64(self.hyperprior_option).log()
        self.state.log_hyperprior = log_prior.tolist()
        self._restart()

    def _restart(self) -> None:
        st = self.state
        st.log_hyperposterior = list(st.log_hyperprior)
        st.log_evidence = [0.0] * len(st.log_hyperprior)

    def _condition(self, x: Tensor, y: Tensor, x_host: list[float], y_host: float) -> None:
        # Alg. 2 line 6: every prior's one-step predictive likelihood, before conditioning
        st = self.state
        (log_likelihood,) = host_values(self._ensure_model().predictive_log_likelihood_at(x, y))  # one read
        st.log_evidence = [e + v for e, v in zip(st.log_evidence, log_likelihood)]
        st.log_hyperposterior = _log_normalised([p + v for p, v in zip(st.log_hyperposterior, log_likelihood)])
        super()._condition(x, y, x_host, y_host)

    def _check_rule_state(self, state: HyperpriorState, num_priors: int) -> None:
        if len(state.log_hyperprior) != num_priors:
            raise ValueError(f"state['state'] log-probabilities must be {num_priors} numbers each.")


class MAPGPTS(HPGPTS):
    r"""MAP-GP-TS: HP-GP-TS with the most probable prior, ties broken at random (seeded)."""

    name = "map-gp-ts"

    def choice(self) -> Callable[[list[float], torch.Generator], int]:
        r""":math:`p_t = \arg\max_p P_{t-1}(p)`, ties broken with the rule's generator."""
        return LikeliestPrior()
