r"""Length-scale balancing: LB-GP-UCB and the A-GP-UCB baseline.

Ziomek, Adachi, Osborne (NeurIPS 2024), Algorithm 1. LB-GP-UCB is hyperparameter balancing
(:class:`~botorch_unknown_hypers.policies.balancing.hyperparameter_balancing.HyperparameterBalancing`,
Alg. 2) over length scales from the ladder :math:`q(i) = \theta_0 r^{-i}`, with norm bounds
:math:`B(\theta)` and the proposing function "add :math:`\theta_L / r` while it lies above the
suspected lower bound :math:`\theta_0 / g(t)`" (lines 14-16, with the direction corrected; at
most one per round; :math:`q(1)` is not skipped; eliminated values never come back). Round
:math:`t` plays :math:`\arg\min_\theta R^\theta(|S^\theta_{t-1}| + 1)`,
:math:`R^\theta(T) = \sqrt{T}(B(\theta)\sqrt{\gamma_T(\theta)} + \gamma_T(\theta))`, maximises its
GP-UCB on all data, records the width at play time and eliminates with the test of Alg. 2.

**Presets.** The paper leaves :math:`\sigma_N`, :math:`B` and several constants open; the
authors' code fixes them. ``"authors-code"`` (**default**; the paper's figures were made with
it): ratio :math:`r = e^{1/(d+2\nu)}`, :math:`g(t) = \max(e^{5/(d+5)}, \sqrt t)`,
:math:`R = 10^{-4}`, :math:`\delta = 0.01`, :math:`B = 1`, the RBF rate in the suspected bound,
:math:`\xi_t` with the active count and :math:`\delta`, :math:`\sigma` with the likelihood noise,
``width_factor = 1``. ``"paper"``: :math:`r = e^{1/d}`, :math:`g(t) = \max(e^{5/d}, \sqrt t)`,
the kernel's :math:`\gamma_T`, :math:`B(\theta) = (\theta_0/\theta)^{d/2} N`, :math:`\xi_t` with
:math:`|A|` and :math:`\delta/2`, latent :math:`\sigma`, ``width_factor = 2``,
:math:`\sigma_N = \sqrt{\text{noise}}`. Both: :math:`\theta_0` the MLE on the initial design,
:math:`I_t = \tfrac12\log\det(I + \sigma_N^{-2}K)` under the played length scale, unit-cube
inputs, standardised outputs, output scale 1, noise variance 1e-4, zero mean.

A-GP-UCB (Berkenkamp et al. 2019, as run in the paper): :math:`\theta_t = \theta_0 / g(t)` with
the same :math:`\theta_0`, :math:`g` and :math:`\beta`, no refitting.

Both are configurations of the candidate-set round
(:class:`~botorch_unknown_hypers.policies.round.candidate_round.CandidateSetRound`): LB with the ladder
(:class:`~botorch_unknown_hypers.policies.balancing.length_scales.LengthScaleLadder`) and the pieces of
Alg. 2 (:mod:`~botorch_unknown_hypers.policies.balancing.balancing_pieces`); A-GP-UCB with the set of one
length scale :math:`\theta_0/g(t)`
(:class:`~botorch_unknown_hypers.policies.balancing.length_scales.ShrinkingLengthScale`), UCB and no test.

Full derivations and every choice: ``docs/length-scale-balancing.md``.

References:
    J. Ziomek, M. Adachi, M. A. Osborne. Bayesian Optimisation with Unknown Hyperparameters:
    Regret Bounds Logarithmically Closer to Optimal. NeurIPS 2024.
    F. Berkenkamp, A. P. Schoellig, A. Krause. No-Regret Bayesian Optimization with Unknown
    Hyperparameters. JMLR 2019.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.checks import AT_LEAST_ONE, check_number, check_positive
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.policies.balancing.balancing_pieces import (
    BalancingCandidates,
    BalancingElimination,
    BalancingBetas,
    CountRounds,
    LeastSuspectedBound,
    NoRecord,
    PlayedUCB,
    PlayLedger,
    SoleCandidate,
)
from botorch_unknown_hypers.policies.round.candidate_round import CandidateSetRound
from botorch_unknown_hypers.policies.balancing.length_scales import (
    PRESETS,
    BalancingConstants,
    LengthScaleLadder,
    LengthScalePolicy,
    LengthScaleState,
    ShrinkingLengthScale,
    growth,
    initial_ladder,
    next_candidate,
    preset_constants,
)
from botorch_unknown_hypers.policies.round.shared_pieces import UnitCubeModel


class LBGPUCB(LengthScalePolicy):
    r"""LB-GP-UCB (Ziomek et al. 2024, Alg. 1); see the module docstring.

    Args: as :class:`~botorch_unknown_hypers.policies.balancing.length_scales.LengthScalePolicy`
    (``preset``, ``kernel``, ``noise``, ``growth_exponent``, ``width_factor``, ...).
    """

    name = "lb-gp-ucb"

    def __init__(self, domain: Domain, **kwargs: Any) -> None:
        super().__init__(domain, **kwargs)
        self.candidate_round = self.balancing_round(self.candidate_source())

    def candidate_source(self) -> BalancingCandidates:
        r"""Lines 1-2 and 14-16: the ladder :math:`q(i) = \theta_0 r^{-i}` of the rule's family."""
        return LengthScaleLadder(self.family)

    def balancing_round(self, source: BalancingCandidates) -> CandidateSetRound[CandidateSpec, CandidateGP]:
        r"""Alg. 1's round over the length scales of ``source`` (lines 1-2 and 14-16)."""
        R2 = self.constants.R**2  # I_t at noise variance R^2 (the code's sigma_N = R)
        return CandidateSetRound(
            source=source,
            subset=LeastSuspectedBound(self.family.suspected_bounds),  # line 3: argmin_theta R^theta(|S^theta| + 1), Thm 2.3
            model=UnitCubeModel(standardise=True, info_noise=R2),  # theta_t's GP, factors kept for all
            betas=BalancingBetas(self.noise_std, self.delta, R2),  # line 4's beta_t (Thm 2.1)
            selector=PlayedUCB(),  # line 4: argmax_x UCB of theta_t, slot by slot
            ledger=PlayLedger(self.noisy_sigma),  # w_t = beta_t sigma_{t-1}(x_t), recorded at play time
            test=BalancingElimination(  # lines 9-12, then lines 14-16 of the source
                self.noise_std, self.delta, self.width_factor, self.xi_count, self.xi_delta_split, source
            ),
        )


class AGPUCB(LengthScalePolicy):
    r"""A-GP-UCB (Berkenkamp et al. 2019): :math:`\theta_t = \theta_0 / g(t)`, no refit.

    As run in the length-scale paper by default: :math:`\theta_0` the MLE on the initial design
    and the LB preset's :math:`g(t) = \max(g_0, t^a)`. The hyperparameter elimination paper's
    variant (its task (a)) uses :math:`g(t) = t^{0.9}` and snaps :math:`\theta_t` to the nearest
    member of a finite candidate list: ``growth_exponent=0.9, growth_floor=1,
    snap=[0.3, 0.4, 0.5, 0.7, 1.0], theta0=1.0`` (that paper does not state :math:`\theta_0`;
    the longest candidate is our choice).

    Args:
        theta0: Fixed :math:`\theta_0` (unit-cube units) instead of the initial MLE.
        growth_floor: Override the preset's floor :math:`g_0` of :math:`g`.
        snap: Candidate length scales; :math:`\theta_t` is replaced by the nearest one (in log scale).
        **kwargs: As :class:`LBGPUCB`.
    """

    max_batch_size = 1
    r"""Proposes one point per round."""
    supports_pending = False

    name = "a-gp-ucb"

    def __init__(
        self,
        domain: Domain,
        theta0: float | None = None,
        growth_floor: float | None = None,
        snap: list[float] | None = None,
        **kwargs: Any,
    ) -> None:
        if theta0 is not None:
            check_positive("theta0", theta0)
        if growth_floor is not None:
            check_number("growth_floor", growth_floor, AT_LEAST_ONE)
        if snap is not None and (not snap or not all(float(v) > 0 for v in snap)):
            raise ValueError(f"snap must be a non-empty list of positive length scales, got {snap}.")
        super().__init__(domain, **kwargs)
        if growth_floor is not None:
            self.family = replace(self.family, constants=replace(self.constants, g0=float(growth_floor)))
        self.fixed_theta0 = None if theta0 is None else float(theta0)
        self.snap = None if snap is None else sorted(float(v) for v in snap)
        self.candidate_round = CandidateSetRound(
            source=ShrinkingLengthScale(self.family, self.fixed_theta0, None if self.snap is None else tuple(self.snap)),  # theta_t
            subset=SoleCandidate(),
            model=UnitCubeModel(standardise=True, cache=False),  # a new length scale each round: nothing to keep
            betas=BalancingBetas(self.noise_std, self.delta, self.constants.R**2),  # the LB preset's beta_t
            selector=PlayedUCB(),  # x_t = argmax_x mu + beta_t sigma under theta_t
            ledger=NoRecord(),  # no test reads a record
            test=CountRounds(),  # t counts the rounds of g(t)
        )

    def current_lengthscale(self, t: int) -> float:
        r""":math:`\theta_0 / g(t)`, snapped to the nearest candidate if ``snap`` is set."""
        source = self.candidate_round.source
        assert isinstance(source, ShrinkingLengthScale)
        return source.lengthscale(self.state, t)


__all__ = [
    "PRESETS",
    "AGPUCB",
    "BalancingConstants",
    "LBGPUCB",
    "LengthScaleState",
    "growth",
    "initial_ladder",
    "next_candidate",
    "preset_constants",
]
