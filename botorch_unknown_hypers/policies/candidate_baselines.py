r"""Baselines over a finite candidate set: MLE over the candidates and the expected UCB.

The baselines of Ziomek, Adachi, Osborne, "Beyond Lengthscales" (Sec. 7, App. J),
on the same candidate set :math:`U`, GPs and :math:`\beta^u_t` as
:class:`~botorch_unknown_hypers.policies.elimination.HEGPUCB`:

- ``mle-candidates``: :math:`u_t = \arg\max_{u \in U} \log p(D_{t-1} \mid u)` with the
  exact log marginal likelihood of each candidate (one batched call), then GP-UCB
  :math:`\mu^{u_t} + \beta^{u_t}_t\sigma^{u_t}`;
- ``expected-ucb``: :math:`\sum_u w_u\,(\mu^u + \beta^u_t\sigma^u)` with posterior weights
  :math:`w_u = p(D \mid u) / \sum_v p(D \mid v)` under a uniform prior, computed with
  log-sum-exp (``softmax`` of the log marginal likelihoods).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.ucb import CandidateUCB
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.policies.candidate_set import CandidateSetPolicy, RoundState


class MLECandidates(CandidateSetPolicy):
    r"""GP-UCB with the maximum-marginal-likelihood member of :math:`U`, refreshed every round."""

    max_batch_size = 1
    r"""Proposes one point per round."""

    name = "mle-candidates"

    def __init__(self, domain: Domain, **kwargs: Any) -> None:
        super().__init__(domain, **kwargs)
        self.state = RoundState()

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        everyone = list(range(len(self.candidates)))
        model = self._model(train_X, train_Y, everyone)
        lml = model.log_marginal_likelihood()
        betas = self._betas(model, self.state.round + 1)
        acqf, k = self._acquisition(model, lml, betas)
        X = self.maximize(acqf)
        self.selected = self._labels([k])
        self.n_candidates = len(everyone)
        return X

    def _acquisition(self, model: Any, lml: Tensor, betas: Tensor) -> tuple[CandidateUCB, int]:
        r"""The acquisition and the candidate reported as ``selected``; sets the diagnostics."""
        k = int(lml.argmax())
        self.diagnostics = {"log_marginal_likelihood": lml.tolist(), "beta": float(betas[k])}
        return CandidateUCB(model, beta=betas, reduction="select", index=k), k

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        self.state.round += 1


class ExpectedUCB(MLECandidates):
    r"""Posterior-weighted UCB over :math:`U` (uniform prior); ``selected`` is the MAP candidate."""

    name = "expected-ucb"

    def _acquisition(self, model: Any, lml: Tensor, betas: Tensor) -> tuple[CandidateUCB, int]:
        weights = torch.softmax(lml, dim=0)  # p(D|u) / sum_v p(D|v), via log-sum-exp
        self.diagnostics = {"weights": weights.tolist(), "betas": betas.tolist()}
        return CandidateUCB(model, beta=betas, reduction="weighted", weights=weights), int(weights.argmax())
