r"""Baselines over a finite candidate set: MLE over the candidates and the expected UCB.

The baselines of Ziomek, Adachi, Osborne, "Beyond Lengthscales" (Sec. 7, App. J),
on the same candidate set :math:`U`, GPs and :math:`\beta^u_t` as
:class:`~botorch_unknown_hypers.policies.elimination.he_gp_ucb.HEGPUCB`, on the one round
(:class:`~botorch_unknown_hypers.policies.round.candidate_round.CandidateSetRound`) without a test:

- ``mle-candidates``: :math:`u_t = \arg\max_{u \in U} \log p(D_{t-1} \mid u)` with the
  exact log marginal likelihood of each candidate (one batched call), then GP-UCB
  :math:`\mu^{u_t} + \beta^{u_t}_t\sigma^{u_t}`;
- ``expected-ucb``: :math:`\sum_u w_u\,(\mu^u + \beta^u_t\sigma^u)` with posterior weights
  :math:`w_u = p(D \mid u) / \sum_v p(D \mid v)` under a uniform prior, computed with
  log-sum-exp (``softmax`` of the log marginal likelihoods).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.optimize import Restarts
from botorch_unknown_hypers.acquisition.ucb import CandidateUCB
from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.policies.balancing.balancing_pieces import CountRounds, NoRecord
from botorch_unknown_hypers.policies.round.candidate_set import CandidateSetPolicy, RoundState
from botorch_unknown_hypers.policies.context import RoundContext
from botorch_unknown_hypers.policies.round.candidate_round import CandidateSetRound, CandidateSource, ModelSubset, RoundRule, RoundData, Selector, Slot
from botorch_unknown_hypers.policies.round.shared_pieces import UnitCubeModel


@dataclass(frozen=True)
class EveryCandidate(CandidateSource[CandidateSpec]):
    r"""Every candidate of a fixed list :math:`U`, in play every round (a rule without elimination)."""

    candidates: CandidateSpec

    def survivors(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor) -> tuple[CandidateSpec, list[int]]:
        return self.candidates, list(range(len(self.candidates)))


@dataclass(frozen=True)
class WholeModel(ModelSubset):
    r"""The round's model holds every candidate in play; the selector reports the choice."""

    def __call__(self, ctx: RoundContext, state: Any, indices: list[int]) -> tuple[list[int], dict[str, Any]]:
        return indices, {}


@dataclass(frozen=True)
class MarginalLikelihoodUCB(Selector[CandidateGP]):
    r"""GP-UCB of the candidate of highest log marginal likelihood :math:`\log p(D_{t-1} \mid u)`
    (``weighted=False``) or the posterior-weighted UCB :math:`\sum_u w_u(\mu^u + \beta^u_t\sigma^u)`,
    :math:`w = \mathrm{softmax}(\log p(D_{t-1} \mid u))` (``weighted=True``), maximised over the
    domain; the slot's candidate is the most likely one. One slot (the rules propose one point)."""

    weighted: bool = False

    def __call__(
        self, ctx: RoundContext, data: RoundData[CandidateGP], prepared: Any, view: CandidateGP, fixed: Tensor | None, warm: Restarts | None
    ) -> tuple[Slot, Restarts | None]:
        model, betas = data.model, data.betas
        lml = model.log_marginal_likelihood()
        weights = torch.softmax(lml, dim=0) if self.weighted else None  # p(D|u) / sum_v p(D|v), via log-sum-exp
        (values,) = data.host(lml if weights is None else weights)  # one copy, with the betas and their checks
        k = values.index(max(values))  # the first of equal maxima, as torch.argmax
        info: dict[str, Any]
        if weights is None:
            acqf = CandidateUCB(model, beta=betas, reduction="select", index=k)
            info = {"log_marginal_likelihood": values, "beta": data.host_betas()[k]}
        else:
            acqf = CandidateUCB(model, beta=betas, reduction="weighted", weights=weights)
            info = {"weights": values, "betas": data.host_betas()}
        return Slot(ctx.maximize(acqf), k, info=info), warm

    def diagnostics(self, slots: list[Slot]) -> dict[str, Any]:
        return dict(slots[0].info or {})


class MLECandidates(RoundRule, CandidateSetPolicy):
    r"""GP-UCB with the maximum-marginal-likelihood member of :math:`U`, refreshed every round."""

    max_batch_size = 1
    r"""Proposes one point per round."""

    name = "mle-candidates"
    weighted = False

    def __init__(self, domain: Domain, **kwargs: Any) -> None:
        super().__init__(domain, **kwargs)
        self.state = RoundState()
        self.candidate_round = CandidateSetRound(
            source=EveryCandidate(self.candidates),  # U, every round
            subset=WholeModel(),
            model=UnitCubeModel(),  # every candidate's GP on all of D_{t-1}, raw outputs, cached factors
            betas=self.candidate_betas(),  # beta^u_t as HE's
            selector=MarginalLikelihoodUCB(self.weighted),  # argmax_u log p(D | u), or the weighted UCB
            ledger=NoRecord(),  # no test reads a record
            test=CountRounds(),  # t counts the rounds of beta_t
        )


class ExpectedUCB(MLECandidates):
    r"""Posterior-weighted UCB over :math:`U` (uniform prior); ``selected`` is the MAP candidate."""

    name = "expected-ucb"
    weighted = True


__all__ = ["EveryCandidate", "ExpectedUCB", "MLECandidates", "MarginalLikelihoodUCB", "WholeModel"]
