r"""Hyperparameter elimination: HE-GP-UCB over a finite candidate set of any type.

Ziomek, Adachi, Osborne, "Beyond Lengthscales", Algorithm 1. Every surviving candidate
:math:`u \in U_{t-1}` has a GP with fixed hyperparameters on **all** data :math:`D_{t-1}`;
round :math:`t`:

1. (line 7, "doubly optimistic") :math:`(x_t, u_t) = \arg\max_{(x, u)} \mu^u_{t-1}(x) +
   \beta^u_t\sigma^u_{t-1}(x)`, the package's one joint argmax
   (:func:`~botorch_unknown_hypers.acquisition.optimize.joint_ucb_argmax`); on a box its
   ``raw_samples`` Sobol points are drawn once per campaign, and every survivor's posterior at
   them is extended with its factor (:math:`O(Knm)` per round, not :math:`O(Kn^2m)`);
2. (line 8) record :math:`m_t = \mu^{u_t}_{t-1}(x_t)` and the width
   :math:`w_t = \beta^{u_t}_t\sigma^{u_t}_{t-1}(x_t)` **at selection time** (the printed
   :math:`\sigma_i` would be conditioned on :math:`x_i` itself);
3. observe :math:`y_t`; the prequential residual is :math:`\eta_t = y_t - m_t`;
4. (line 12) only :math:`u_t` is tested: it is eliminated iff
   :math:`|\sum_{i \in S^{u_t}} \eta_i| > \sqrt{\xi_t |S^{u_t}|} + \sum_{i \in S^{u_t}} w_i`,
   :math:`\xi_t = 2R^2 \log(|U|\pi^2 t^2/(3\delta))` (Lemma 5.1 with :math:`\delta_B = \delta/2`;
   :math:`|U|` the original set). The last survivor is never eliminated; the event is logged.

:math:`\beta^u_t` is ``"frequentist"`` (Thm 4.1, :math:`B + R\sqrt{2(I^u_{t-1} + 1 + \ln(2/\delta))}`
with :math:`I^u_{t-1}` the information gain of the data under :math:`u`),
``"bayesian-finite"`` (Thm 4.2 A, on a pool), ``"bayesian-continuous"`` (Thm 4.2 B) or a number.
The initial design enters :math:`D_0` but no :math:`S^u`; :math:`t` counts BO rounds. Outputs are
**not** standardised (residuals of different rounds must share units); inputs are scaled to the
unit cube; the GP noise variance is :math:`R^2`. The baselines ``mle-candidates`` and
``expected-ucb`` (:mod:`~botorch_unknown_hypers.policies.elimination.candidate_baselines`) share
:class:`~botorch_unknown_hypers.policies.round.candidate_set.CandidateSetPolicy`. Choices and derivations: ``docs/hyperparameter-elimination.md``.

References:
    J. Ziomek, M. Adachi, M. A. Osborne. Beyond Lengthscales: No-regret Bayesian Optimisation
    With Unknown Hyperparameters Of Any Type.
"""

from __future__ import annotations

from typing import Any

from torch import Tensor

from botorch_unknown_hypers.confidence import elimination_statistics
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.policies.round.candidate_set import CandidateSetPolicy, elimination_xi
from botorch_unknown_hypers.policies.round.candidate_round import CandidateSetRound, RoundRule
from botorch_unknown_hypers.policies.round.shared_pieces import (
    DoublyOptimisticUCB,
    EliminationState,
    FixedCandidates,
    PrequentialElimination,
    UnitCubeModel,
)


class HEGPUCB(RoundRule, CandidateSetPolicy):
    r"""HE-GP-UCB (Alg. 1); see the module docstring and :class:`CandidateSetPolicy` for the args.

    Batches and pending points: slot :math:`j` is the joint :math:`(x, u)` argmax with every
    survivor's variance conditioned on the pending points and the slots before it, its mean
    frozen; what is recorded (:math:`\mu^u_{t-1}(x)`, :math:`\beta^u_t\sigma^u_{t-1}(x)`) is on the
    data observed, a valid confidence width whatever is pending. The elimination test runs once
    every value of the batch has arrived.
    """

    max_batch_size = None
    r"""Any batch (slots filled one at a time)."""
    supports_pending = True

    min_observations = 1
    r"""One observation at least (the candidates' factor path has no empty-data case), as every candidate-set rule."""

    name = "he-gp-ucb"

    def __init__(self, domain: Domain, **kwargs: Any) -> None:
        super().__init__(domain, **kwargs)
        self.state = EliminationState(alive=[True] * len(self.candidates))
        self.candidate_round = CandidateSetRound(
            source=FixedCandidates(self.candidates),  # line 1: the fixed set U; U_{t-1} its survivors
            model=UnitCubeModel(fixed_raw_points=True),  # every survivor's GP on all of D_{t-1}, raw outputs
            betas=self.candidate_betas(),  # beta^u_t: Thm 4.1 / 4.2 A / 4.2 B or a number
            selector=DoublyOptimisticUCB(),  # line 7: (x_t, u_t) = argmax_{x, u} mu^u + beta^u sigma^u
            test=PrequentialElimination(self.noise_std, self.delta),  # lines 10-12, after line 8's record
        )

    def statistics(self, t: int | None = None) -> dict[str, list[float]]:
        r"""Per candidate: :math:`|\sum\eta|` and the threshold at round ``t`` (default: the last);
        a candidate is eliminated once its statistic exceeds its threshold after it is played."""
        st = self.state
        xi_t = elimination_xi(max(st.round if t is None else t, 1), len(st.alive), self.noise_std, self.delta)
        stat, threshold = elimination_statistics(st.play_candidate, st.play_eta, st.play_width, len(st.alive), xi_t)
        return {"statistic": stat, "threshold": threshold}

    def raw_points(self) -> Tensor | None:
        r"""The campaign's ``raw_samples x d`` Sobol raw points on a box (``None`` on a pool and
        before the first suggestion): drawn from the seed :attr:`EliminationState.raw_seed` (taken
        from the policy's generator at the first suggestion on a box and saved with the state), so
        that their posterior under every survivor is kept and extended with the factors instead of
        recomputed each round."""
        return self.campaign_raw_points(self.state.raw_seed)
