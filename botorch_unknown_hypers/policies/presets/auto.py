r"""The ``auto`` presets: balancing and elimination over candidates proposed from the data.

The theory presets (``lb-gp-ucb``, ``he-gp-ucb``) take their candidates from the papers: a
length-scale ladder below an initial MLE, or a fixed list. The ``auto`` presets keep each rule's
selection (regret balancing, Ziomek et al. 2024, Alg. 2; prequential elimination, Ziomek et al.
2025, Alg. 1) and change what it selects among and how the chosen model is used:

- **Candidates** (:func:`~botorch_unknown_hypers.models.proposals.propose_ard_lengthscales`): the
  MAP length scales :math:`\hat\ell` of BoTorch's default ``SingleTaskGP`` (ARD for HE; one
  shared length scale for LB, chosen on development seeds) times the shrink
  factors :math:`S = (1, \tfrac12, \tfrac14)`, RBF kernel (option ``kernel``), output scale 1, the MAP noise
  variance and a zero mean (the fit's constant mean with ``fitted_mean``), all in **standardised units** (inputs on the unit cube, outputs standardised on all
  data every round). They are proposed on the initial design and **re-proposed** whenever the
  number of observations has doubled since the last proposal: the proposing function :math:`a(t)`
  of Alg. 2, which only adds candidates; old ones leave by the rule's own test.
  Option ``standing``: candidate 0 is BoTorch's default model itself (ARD, fitted noise),
  refitted on all data every round (one MAP fit per round) and left only by the rule's test.
- **Confidence constants**, standardised units: norm bound :math:`B = 1` (a unit-variance function
  under a unit output scale), sub-Gaussian scale :math:`R = 0.1` (a tenth of the outputs' standard
  deviation), :math:`\delta = 0.01`; :math:`\beta^u_t = B + R\sqrt{2(I^u_{t-1} + 1 + \ln(2/\delta))}`
  with :math:`I^u_{t-1}` at noise variance :math:`R^2`. These widths feed the rules' tests only.
- **Acquisition** of the selected candidate(s): ``"logei"``, LogEI with the best observed value as
  :math:`f^+` (in a batch, raised per candidate to its believed values at the pending points and
  earlier slots, the Kriging Believer's incumbent), ``"lognei"``, BoTorch's qLogNEI on the
  candidate's GP with the observed points as baseline and the pending points and earlier slots as
  BoTorch's pending points (no noisy observation as :math:`f^+`;
  :class:`~botorch_unknown_hypers.acquisition.lognei.CandidateLogNEI`), ``"logei-plugin"``, LogEI
  with each candidate's best posterior mean at the observed points as :math:`f^+` (analytic, no
  noisy observation as :math:`f^+`), ``"lognei-if-noisy"``, qLogNEI where the acquired
  candidate's noise variance :math:`\sigma^2_u` exceeds ``noisy_above`` (BoTorch's
  :math:`10^{-4}` floor of an inferred noise variance) and the plug-in LogEI where it does not
  (:func:`acquired`), ``"lognei-if-repeats-differ"``, the same switch decided by a repeated
  evaluation instead (:func:`repeat_evidence`, :func:`repeat_slot`), or ``"ucb"``, :math:`\mu + \beta^{\mathrm{p}}_t\sigma` with the practical
  :math:`\beta^{\mathrm{p}}_t = \sqrt{0.2\,d\log 2t}` (:func:`~botorch_unknown_hypers.confidence.practical_beta`).
  Default LogEI for both presets, chosen on development seeds (``docs/choosing-a-method.md``):
  for LB on seeds 100-101, for HE on seeds 102-111 (LogEI had the lower mean final simple
  regret than UCB on 7 of the 10 problems).
  On a box it is maximised from BoTorch's raw samples and restarts plus two starts: the incumbent
  and the maximiser of the posterior mean (the incumbent alone with ``mean_start=False``).

Both are configurations of the candidate-set round
(:class:`~botorch_unknown_hypers.policies.round.candidate_round.CandidateSetRound`) with the candidate source
:class:`ProposedCandidates`. **LB** (:class:`LBGPUCBAuto`): the played candidate is :math:`\arg\min_u R^u(|S^u|+1)` (Thm 2.3 at
the candidate's geometric-mean length scale) and its recorded width :math:`\beta^u_t\sigma^u_{t-1}(x_t)`
enters the elimination test of Alg. 2 unchanged. **HE** (:class:`HEGPUCBAuto`): the joint argmax
over :math:`(x, u)` of the acquisition over surviving candidates; the played candidate's
prequential residual :math:`\eta_t = y_t - \mu^{u_t}_{t-1}(x_t)` and width are kept in raw units and
tested in the standardised units of the latest round,
:math:`|\sum_{S^u}\eta|/s_t > \sqrt{\xi_t|S^u|} + \sum_{S^u} w/s_t` (:math:`s_t` the outputs'
standard deviation), :math:`\xi_t` with :math:`|U|` every candidate ever proposed.

References:
    J. Ziomek, M. Adachi, M. A. Osborne. Bayesian Optimisation with Unknown Hyperparameters:
    Regret Bounds Logarithmically Closer to Optimal. NeurIPS 2024.
    J. Ziomek, M. Adachi, M. A. Osborne. Beyond Lengthscales: No-regret Bayesian Optimisation
    With Unknown Hyperparameters Of Any Type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, cast

import torch
from botorch.acquisition import LogExpectedImprovement
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.models.utils.gpytorch_modules import MIN_INFERRED_NOISE_LEVEL
from botorch.models.transforms import Normalize, Standardize
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import AUTO_SEARCH
from botorch_unknown_hypers.acquisition.logei import CandidateLogEI, believer_best_f, plugin_best_f
from botorch_unknown_hypers.acquisition.lognei import CandidateLogNEI
from botorch_unknown_hypers.acquisition.optimize import Restarts
from botorch_unknown_hypers.acquisition.thompson import posterior_mean_maximizer
from botorch_unknown_hypers.acquisition.ucb import CandidateUCB
from botorch_unknown_hypers.candidates import CandidateSpec, KernelCandidates
from botorch_unknown_hypers.checks import check_choice, check_positive, check_probability
from botorch_unknown_hypers.confidence import practical_beta
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.host import at_argmax
from botorch_unknown_hypers.kernels import check_kernel
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.fitted import LENGTHSCALE_PRIORS, NOISE_PRIORS
from botorch_unknown_hypers.models.laplace import laplace_hyperposterior
from botorch_unknown_hypers.models.proposals import propose_ard_lengthscales
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.context import RoundContext
from botorch_unknown_hypers.policies.round.candidate_round import CandidateSetRound, CandidateSource, RoundRule, RoundData, Selector, Slot
from botorch_unknown_hypers.policies.round.shared_pieces import EliminationState, FrequentistBetas, PrequentialElimination, UnitCubeModel
from botorch_unknown_hypers.policies.balancing.balancing_pieces import (
    BalancingElimination,
    BalancingBetas,
    LeastSuspectedBound,
    PlayLedger,
    kernel_regret_bounds,
)
from botorch_unknown_hypers.policies.balancing.balancing_policy import BalancingPolicy, BalancingState
from botorch_unknown_hypers.policies.round.candidate_set import XI_DELTA_SPLIT

ACQUISITIONS = ("logei", "lognei", "ucb", "logei-plugin", "lognei-if-noisy", "lognei-if-repeats-differ")
REPEATS = "lognei-if-repeats-differ"
r"""The acquisition option whose switch a repeated evaluation decides (H17 of ``docs/bbob.md``)."""
HE_REDUCTIONS = ("max", "evidence", "map")
LB_DEFAULTS: dict[str, object] = {"ard": False}
r"""LB-auto's defaults that differ from those of :class:`AutoSettings`: one shared MAP length scale,
chosen on development seeds 102-111 (``docs/choosing-a-method.md``)."""
AUTO_SHRINK = (1.0, 0.5, 0.25)
r"""Shrink factors of the MAP ARD vector proposed as candidates."""
AUTO_GROWTH = 2.0
r"""Re-propose once the number of observations has grown by this factor since the last proposal."""
AUTO_B, AUTO_R, AUTO_DELTA = 1.0, 0.1, 0.01
r"""Norm bound, sub-Gaussian scale and failure probability, in standardised units."""
MIN_NOISE = 1e-6
r"""Floor of the proposed noise variance (standardised units)."""


@dataclass(frozen=True)
class AutoSettings:
    r"""The options of both ``auto`` presets (see the module docstring).

    Attributes:
        acquisition: ``"logei"`` (default), ``"lognei"`` (for noisy objectives), ``"ucb"``
            (practical :math:`\beta`) or ``"logei-plugin"`` (LogEI with the plug-in incumbent
            :math:`\max_i \mu_u(x_i)`; H14 of ``docs/bbob.md``) or ``"lognei-if-noisy"``
            (``"lognei"`` where the acquired candidate's noise variance exceeds ``noisy_above``,
            else ``"logei-plugin"``, decided every round; H16 of ``docs/bbob.md``) or
            ``"lognei-if-repeats-differ"`` (``"lognei"`` once two evaluations at one point
            differ, ``"logei-plugin"`` once they agree; before any point is evaluated twice, the
            ``"lognei-if-noisy"`` switch, and HE-auto's rounds make that repeat at the best
            observation in the first round whose noise variance exceeds ``noisy_above``:
            :func:`repeat_slot`; H17 of ``docs/bbob.md``).
        noisy_above: With ``acquisition="lognei-if-noisy"`` or ``"lognei-if-repeats-differ"``,
            the noise variance (standardised
            units) above which a candidate's data count as noisy: BoTorch's
            ``MIN_INFERRED_NOISE_LEVEL`` (:math:`10^{-4}`), the least noise BoTorch's own
            ``SingleTaskGP`` infers.
        shrink: Shrink factors of the MAP ARD vector.
        isotropic: Isotropic length scales proposed as well (unit cube; default none).
        ard: Fit one MAP length scale per input (HE's default) or one shared one (LB's default,
            :data:`LB_DEFAULTS`).
        growth: Re-propose when the data have grown by this factor.
        restart: At a re-proposal, retire the candidates of earlier proposals (epochs of the
            doubling trick: the rule starts afresh on the new candidates, with all data) instead
            of adding to them (:math:`a(t)` of Alg. 2, the default).
        standing: Add one *standing* candidate (index 0): the hyperparameters of BoTorch's
            default model (:func:`standing_candidate`: ARD even where ``ard`` is ``False``),
            refitted on all data at every round, so that the MAP model is never older than one
            round (the proposals of :math:`a(t)` are only made again when the data have grown by
            ``growth``). It keeps its index and its plays (recorded at the hyperparameters it
            had when it played), is never retired by ``restart``, and leaves the set only by the
            rule's test; once eliminated it stays out and is no longer refitted.
        probe: With HE's ``reduction="map"``: the share of rounds that play the doubly optimistic
            pair over the survivors although the MAP candidate survives (round :math:`t` probes
            when :math:`\lfloor t p\rfloor > \lfloor (t-1) p\rfloor`: every ``1/probe``-th round,
            the same rounds for every seed); 0 (default): MAP until the test rejects it.
        probe_evidence: With ``reduction="evidence"``, the probing rounds of ``probe`` play the
            survivors' doubly optimistic pair instead of the likeliest survivor (H15 of
            ``docs/bbob.md``: a bounded search for the narrow peak that the likeliest model
            smooths over); ``False`` (default): ``probe`` acts under ``"map"`` only.
        noise_floor: Lower bound of the MAP fits' noise variance (standardised units), in place
            of BoTorch's :math:`10^{-4}` (prior unchanged; H4's near-zero-noise case,
            ``docs/bbob.md``); ``None`` (default): BoTorch's model as it is.
        mean_start: On a box, start the acquisition's maximisation from the maximiser of the
            played (or likeliest) candidate's posterior mean as well as from the incumbent
            (default), a second multi-start maximisation per round; ``False``: the incumbent
            alone (H7 of ``docs/bbob.md``).
        lengthscale_prior: The MAP fits' length-scale prior (the standing candidate's and every
            proposal's): ``"dim-scaled"`` (default, BoTorch's), ``"gamma"`` (Gamma(3, 6) on
            every length scale, BoTorch's earlier default; H8 of ``docs/bbob.md``) or
            ``"optuna"`` (Optuna ``GPSampler``'s :math:`e^{-0.1(\ell^2 + \ell^{-2})}`; H11).
        noise_prior: The MAP fits' noise-variance prior: ``"lognormal"`` (default, BoTorch's
            :math:`\log\sigma^2 \sim \mathcal N(-4, 1)`) or ``"optuna"`` (Optuna ``GPSampler``'s
            :math:`\sigma^2 \sim \mathrm{Gamma}(1.1, 30)`, nearly flat towards the floor; H12),
            bounded below by ``noise_floor``.
        kernel: The MAP fits' and the candidates' kernel: ``"rbf"`` (default, BoTorch's) or
            another name of :data:`~botorch_unknown_hypers.kernels.KERNELS` (``"matern52"``:
            Optuna ``GPSampler``'s; H13). The Laplace draws need ``"rbf"``.
        laplace_draws: With ``standing`` and ``acquisition="lognei"``, HE-auto only: when the
            standing MAP candidate plays, average its qLogNEI over this many draws from the
            Laplace approximation of BoTorch's hyperposterior at the MAP fit
            (:mod:`~botorch_unknown_hypers.models.laplace`; ``reduction="average"`` of
            :class:`~botorch_unknown_hypers.acquisition.lognei.CandidateLogNEI`), drawn afresh
            every round; the test still judges the MAP candidate itself. 0 (default): the MAP
            point estimate (H3 of ``docs/bbob.md``).
        fitted_mean: Every candidate carries the constant mean :math:`\hat c` of the MAP fit it
            was proposed from (standardised units; the standing candidate's is refitted with it
            every round), as BoTorch's model does, instead of a zero mean (H10 of
            ``docs/bbob.md``); ``False`` (default): zero mean. The Laplace draws take the
            standing fit's :math:`\hat c`.
        B, R, delta: Norm bound, sub-Gaussian scale and :math:`\delta`, standardised units.
    """

    acquisition: str = "logei"
    noisy_above: float = MIN_INFERRED_NOISE_LEVEL
    shrink: tuple[float, ...] = AUTO_SHRINK
    isotropic: tuple[float, ...] = ()
    ard: bool = True
    growth: float = AUTO_GROWTH
    restart: bool = False
    standing: bool = False
    probe: float = 0.0
    probe_evidence: bool = False
    noise_floor: float | None = None
    mean_start: bool = True
    lengthscale_prior: str = "dim-scaled"
    noise_prior: str = "lognormal"
    kernel: str = "rbf"
    laplace_draws: int = 0
    fitted_mean: bool = False
    B: float = AUTO_B
    R: float = AUTO_R
    delta: float = AUTO_DELTA

    @classmethod
    def from_options(cls, **options: Any) -> AutoSettings:
        r"""Checked settings from keyword options (``ValueError`` naming an unknown one)."""
        valid = sorted(cls.__dataclass_fields__)
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise ValueError(f"unknown option(s) {unknown} of an auto preset; valid options: {valid}.")
        for name in ("shrink", "isotropic"):
            if name in options:
                value = options[name]
                if not isinstance(value, (list, tuple)):
                    raise ValueError(f"{name} must be a list of numbers, got {value!r}.")
                options[name] = tuple(value)
        return cls(**options).check()

    def check(self) -> AutoSettings:
        check_choice("acquisition", self.acquisition, ACQUISITIONS)
        check_positive("noisy_above", self.noisy_above)
        for name in ("shrink", "isotropic"):
            values = getattr(self, name)
            if not all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in values):
                raise ValueError(f"{name} must hold finite numbers > 0, got {list(values)!r}.")
        for name in ("ard", "restart", "standing", "mean_start", "fitted_mean", "probe_evidence"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}.")
        if not self.shrink and not self.isotropic:
            raise ValueError("shrink and isotropic must not both be empty: no candidate would be proposed.")
        if not (self.growth > 1 and math.isfinite(self.growth)):
            raise ValueError(f"growth must be a finite number > 1, got {self.growth}.")
        if isinstance(self.probe, bool) or not isinstance(self.probe, (int, float)) or not 0 <= self.probe < 1:
            raise ValueError(f"probe must be a number in [0, 1), got {self.probe!r}.")
        if self.noise_floor is not None:
            check_positive("noise_floor", self.noise_floor, upper=1.0)
        check_choice("lengthscale_prior", self.lengthscale_prior, LENGTHSCALE_PRIORS)
        check_choice("noise_prior", self.noise_prior, NOISE_PRIORS)
        check_kernel(self.kernel)
        if isinstance(self.laplace_draws, bool) or not isinstance(self.laplace_draws, int) or self.laplace_draws < 0:
            raise ValueError(f"laplace_draws must be an integer >= 0, got {self.laplace_draws!r}.")
        if self.laplace_draws and self.kernel != "rbf":
            raise ValueError(f"laplace_draws > 0 needs kernel='rbf' (the Laplace approximation's model), got kernel={self.kernel!r}.")
        if self.laplace_draws and not (self.standing and self.acquisition == "lognei"):
            raise ValueError(
                "laplace_draws > 0 averages the standing candidate's qLogNEI, so it needs standing=true and "
                f"acquisition='lognei'; got standing={self.standing}, acquisition={self.acquisition!r}."
            )
        check_positive("B", self.B)
        check_positive("R", self.R)
        check_probability("delta", self.delta)
        return self


def propose_candidates(
    ctx: RoundContext, settings: AutoSettings, train_X: Tensor, train_Y: Tensor, draws: int = 0
) -> tuple[KernelCandidates, KernelCandidates | None]:
    r"""The ARD proposal on all data (MAP fit inside the context's seeded RNG), noise floored;
    with ``draws``, also that many draws from the Laplace approximation of the fit's
    hyperposterior (:mod:`~botorch_unknown_hypers.models.laplace`, from the context's generator,
    noise floored alike), else ``None``."""
    with ctx.seeded():
        candidates, _, model = propose_ard_lengthscales(
            train_X,
            train_Y,
            ctx.domain.bounds,
            shrink=settings.shrink,
            isotropic=settings.isotropic,
            ard=settings.ard,
            noise_floor=settings.noise_floor,
            lengthscale_prior=settings.lengthscale_prior,
            fitted_mean=settings.fitted_mean,
            noise_prior=settings.noise_prior,
            kernel=settings.kernel,
        )
        spread = laplace_hyperposterior(model).candidates(draws, ctx.generator) if draws else None
    noise = max(float(candidates.noise_variances()[0]), MIN_NOISE)
    candidates = candidates.with_noise(noise).to(device=ctx.device, dtype=ctx.dtype)
    if spread is not None:
        mean = None if candidates.mean_constant is None else candidates.mean_constant[:1].expand(len(spread)).to(spread.noise)
        spread = replace(spread, noise=spread.noise.clamp_min(MIN_NOISE), mean_constant=mean).to(device=ctx.device, dtype=ctx.dtype)
    return candidates, spread


STANDING: dict[str, Any] = {"shrink": (1.0,), "isotropic": (), "ard": True}
r"""What makes :func:`propose_candidates` give the standing candidate: the MAP vector alone, ARD."""


def standing_candidate(
    ctx: RoundContext, settings: AutoSettings, train_X: Tensor, train_Y: Tensor
) -> tuple[KernelCandidates, KernelCandidates | None]:
    r"""The standing candidate on all data: BoTorch's default model (ARD, its priors, fitted
    noise) fitted as :func:`propose_candidates` fits it, its MAP length scales alone, noise
    floored (one candidate; a zero mean, or the fit's constant mean with ``fitted_mean``, as for
    every proposal), and with ``settings.laplace_draws`` that many draws from its hyperposterior's Laplace
    approximation (else ``None``)."""
    return propose_candidates(ctx, replace(settings, **STANDING), train_X, train_Y, draws=settings.laplace_draws)


def with_candidate(spec: KernelCandidates, index: int, new: KernelCandidates) -> KernelCandidates:
    r"""``spec`` with candidate ``index``'s hyperparameters (and constant mean, where ``spec`` has
    means) those of ``new`` (one candidate of the same kernel, length-scale layout and mean
    layout); the others unchanged, in order."""
    fields = {}
    for name in ("lengthscale", "outputscale", "noise") + (("mean_constant",) if spec.mean_constant is not None else ()):
        values = getattr(spec, name).clone()
        values[index] = getattr(new, name)[0].to(values)
        fields[name] = values
    return replace(spec, **fields)


def due(proposed_at: list[int], num_observations: int, growth: float) -> bool:
    r"""Whether :math:`a(t)` proposes now: never yet, or :math:`n \ge` ``growth`` times the last ``n``."""
    return not proposed_at or num_observations >= growth * max(proposed_at[-1], 1)


def acquisition(
    model: CandidateGP,
    settings: AutoSettings,
    t: int,
    train_Y: Tensor,
    reduction: str,
    index: int | None = None,
    fixed: Tensor | None = None,
    ctx: RoundContext | None = None,
) -> AcquisitionFunction:
    r"""LogEI, LogNEI or practical UCB of ``model``'s candidates.

    LogEI's :math:`f^+` is the best observation (``"logei"``) or each candidate's best posterior
    mean at the observed points (``"logei-plugin"``,
    :func:`~botorch_unknown_hypers.acquisition.logei.plugin_best_f`), raised per candidate to its believed values
    :math:`\mu_u(x_j)` at ``fixed`` (``p x d``: the pending points and earlier slots that
    ``model``'s variance is conditioned on; :func:`~botorch_unknown_hypers.acquisition.logei.believer_best_f`).
    LogNEI (:class:`~botorch_unknown_hypers.acquisition.lognei.CandidateLogNEI`) samples jointly at
    the observed points, ``fixed`` and ``x`` instead, on the model without the conditioning on
    ``fixed`` (BoTorch's pending points), with a Sobol seed drawn from ``ctx``'s generator.
    """
    name = acquired(model, settings, index)
    if name == "lognei":
        if ctx is None:
            raise ValueError("ctx must be given for acquisition='lognei' (its generator seeds the samples).")
        observed = model if model.X_pending is None else model.condition_on_pending(None)
        return CandidateLogNEI(
            observed, model.raw_train_X, ctx.next_seed(), reduction=reduction, index=index, X_pending=fixed
        )
    if name in ("logei", "logei-plugin"):
        plugin = name == "logei-plugin"
        best = believer_best_f(model, plugin_best_f(model) if plugin else train_Y.max(), fixed)  # K
        if reduction == "select" and model.num_candidates == 1:
            return LogExpectedImprovement(model.select(0), best_f=best[0])
        vouched = not plugin and (fixed is None or fixed.shape[0] == 0)  # the incumbent is the best checked observation
        return CandidateLogEI(model, best, reduction=reduction, index=index, check_best_f=not vouched)
    beta = float(practical_beta(t, model.raw_train_X.shape[-1]))
    return CandidateUCB(model, beta=beta, reduction=reduction, index=index)


def acquired(model: CandidateGP, settings: AutoSettings, index: int | None = None) -> str:
    r"""The acquisition that ``settings.acquisition`` names for ``model``'s candidates this round.

    ``"lognei-if-noisy"`` resolves, from the candidates' noise variances :math:`\sigma^2_u`
    (standardised units, kept on the host: no read), to ``"lognei"`` when
    :math:`\sigma^2_u > \tau` for the acquired candidate ``index`` (every candidate's
    :math:`\max_u \sigma^2_u` when ``index`` is ``None``: the joint argmax over the survivors),
    :math:`\tau` = ``settings.noisy_above``, and to ``"logei-plugin"`` otherwise: the plug-in
    incumbent where the model interpolates, qLogNEI's integration over the noisy baseline where
    it does not. Every other name is returned as it is.
    """
    if settings.acquisition not in ("lognei-if-noisy", REPEATS):
        return settings.acquisition
    if settings.acquisition == REPEATS:
        differ = repeat_evidence(model.raw_train_X, model.raw_train_Y)
        if differ is not None:
            return "lognei" if differ else "logei-plugin"
    return "lognei" if noise_level(model, index) > settings.noisy_above else "logei-plugin"


def noisiest(model: CandidateGP, index: int | None = None) -> int:
    r"""The candidate whose noise variance :math:`\sigma^2_u` the switch reads: ``index``, or the
    candidate of largest :math:`\sigma^2_u` (kept on the host: no read) when ``index`` is ``None``
    (a joint argmax, which any survivor may attain)."""
    if index is not None:
        return index
    noise = model.candidates.noise_values()
    return max(range(len(noise)), key=noise.__getitem__)


def noise_level(model: CandidateGP, index: int | None = None) -> float:
    r"""The noise variance :math:`\sigma^2_u` (standardised units, kept on the host: no read) of
    :func:`noisiest`'s candidate: ``index``'s, or the largest over the candidates."""
    return model.candidates.noise_values()[noisiest(model, index)]


def repeat_evidence(X: Tensor, Y: Tensor) -> bool | None:
    r"""What exact repeats among the observations say about noise: ``True`` when two
    observations at one point (equal rows of ``X``, ``n x d``) have different values (``Y``,
    ``n x 1``), ``False`` when points were observed more than once and every repeat returned the
    same value (a deterministic objective), ``None`` when no point was observed twice.

    Any difference counts, however small: an objective that does not return the same value twice
    is not deterministic, and qLogNEI (BoTorch's default) is the safe side. One host read per
    call, of whether repeats exist and of the answer.
    """
    unique, inverse = torch.unique(X, dim=0, return_inverse=True)
    if unique.shape[0] == X.shape[0]:
        return None
    y = Y.reshape(-1)
    low = torch.full((unique.shape[0],), math.inf, dtype=y.dtype, device=y.device).scatter_reduce(0, inverse, y, "amin")
    high = torch.full_like(low, -math.inf).scatter_reduce(0, inverse, y, "amax")
    return bool((high > low).any())


def repeat_slot(
    model: CandidateGP, settings: AutoSettings, index: int | None, train_X: Tensor, train_Y: Tensor, fixed: Tensor | None
) -> tuple[Tensor, int] | None:
    r"""With ``acquisition="lognei-if-repeats-differ"``: the ``1 x d`` best observation and the
    candidate that plays it (``index``, or the one of largest noise variance for a joint argmax),
    when the round should evaluate it again: no point has been observed twice
    (:func:`repeat_evidence` is ``None``), that candidate's :math:`\sigma^2_u` exceeds
    ``settings.noisy_above`` (the fit sees noise or misfit and one repeat tells which), and the
    point is not already pending or in the batch (``fixed``, ``p x d``). Else ``None``.

    The repeat is made at most once per run: afterwards the data hold a repeated point and the
    switch of :func:`acquired` reads its values.
    """
    if settings.acquisition != REPEATS or repeat_evidence(train_X, train_Y) is not None:
        return None
    u = noisiest(model, index)
    if noise_level(model, u) <= settings.noisy_above:
        return None
    x = at_argmax(train_Y.reshape(-1), train_X)[2]  # 1 x d
    if fixed is not None and bool((fixed == x).all(-1).any()):
        return None
    return x, u


def extra_starts(
    ctx: RoundContext, model: CandidateGP, index: int, train_X: Tensor, train_Y: Tensor, mean: bool = True
) -> Tensor | None:
    r"""The incumbent and, with ``mean``, the maximiser of candidate ``index``'s posterior mean
    (``maximize`` uses extra starts on a box only; on a pool the mean maximiser is ``None``)."""
    incumbent = at_argmax(train_Y.reshape(-1), train_X)[2]  # on the device, no host read
    if not mean:
        return incumbent
    o = ctx.options
    mean_max = posterior_mean_maximizer(
        model.select(index), ctx.domain, train_X, ctx.generator, o.num_restarts, o.raw_samples, o.search
    )
    return torch.cat([incumbent, mean_max.to(incumbent)]) if mean_max is not None else incumbent


def retire(flags: list[bool], retired_at: dict[int, int], t: int, keep: int | None = None) -> None:
    r"""``restart``: every candidate still in the set but ``keep`` (the standing candidate) leaves
    it at round ``t`` (recorded)."""
    for u, on in enumerate(flags):
        if on and u != keep:
            flags[u] = False
            retired_at[u] = t


def check_retired(flags: list[bool], retired_at: dict[int, int]) -> None:
    r"""Retired candidates exist, left at a round ``>= 0`` and are out of the set."""
    if not all(0 <= u < len(flags) and t >= 0 and not flags[u] for u, t in retired_at.items()):
        raise ValueError("retired_at must map candidates out of the set to rounds >= 0.")


def check_standing(standing: int | None, flags: list[bool], retired_at: dict[int, int]) -> None:
    r"""The standing candidate is ``None`` or a candidate of the set that was never retired."""
    if standing is not None and not (0 <= standing < len(flags) and standing not in retired_at):
        raise ValueError(f"standing must be None or a candidate index in [0, {len(flags)}) never retired, got {standing}.")


def check_standing_option(settings: AutoSettings, state: Any) -> None:
    r"""A loaded state has a standing candidate iff the preset's ``standing`` option asks for one
    (once it holds candidates)."""
    if state.candidates is not None and settings.standing != (state.standing is not None):
        raise ValueError(
            f"state['state']['standing'] is {state.standing!r}, but the preset's option standing is {settings.standing}."
        )


@dataclass
class AutoBalancingState(BalancingState):
    r"""Balancing state plus the number of observations at each proposal, with ``restart`` the
    round at which each earlier candidate was retired, and with ``standing`` the standing
    candidate's index (its current hyperparameters are its row of ``candidates``)."""

    proposed_at: list[int] = field(default_factory=list)
    retired_at: dict[int, int] = field(default_factory=dict)
    standing: int | None = None

    def check(self) -> None:
        super().check()
        check_retired(self.alive, self.retired_at)
        check_standing(self.standing, self.alive, self.retired_at)


@dataclass(frozen=True)
class ProposedCandidates(CandidateSource[CandidateSpec]):
    r"""Candidates proposed from the data (:func:`propose_candidates`), re-proposed once the data
    have grown by ``settings.growth`` (:func:`due`); with ``settings.restart`` the earlier ones
    retire. With ``settings.standing``, candidate 0 is the standing candidate
    (:func:`standing_candidate`), introduced at the first round and refitted on all data at every
    round while it is in the set; its row of the set changes, so the factor caches, keyed by
    hyperparameters, factorise it afresh and drop its old factors, while every other candidate's
    factors are extended. The set lives in the rule's state (``candidates``, ``alive``,
    ``proposed_at``, ``standing``); a balancing state also keeps each candidate's norm bound
    ``settings.B`` (``norms``)."""

    settings: AutoSettings
    norms: bool = False

    def add(self, ctx: RoundContext, state: Any, spec: KernelCandidates) -> None:
        r"""Introduce ``spec``'s candidates into the set, in play (norm bound ``settings.B``)."""
        st = state
        if self.norms:
            st.add(spec, torch.full((len(spec),), self.settings.B, dtype=ctx.dtype, device=ctx.device))
        else:
            st.candidates = spec if st.candidates is None else st.candidates.cat(spec)
            st.alive.extend([True] * len(spec))

    def survivors(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor) -> tuple[KernelCandidates, list[int]]:
        st, n = state, train_X.shape[0]
        if self.settings.standing:  # the standing candidate on D_t, refitted while in the set
            if st.standing is None:
                fitted, draws = standing_candidate(ctx, self.settings, train_X, train_Y)
                self.add(ctx, st, fitted)
                st.standing = len(st.alive) - 1
            elif st.alive[st.standing]:
                fitted, draws = standing_candidate(ctx, self.settings, train_X, train_Y)
                st.candidates = with_candidate(st.candidates, st.standing, fitted)
            else:
                draws = None
            if self.settings.laplace_draws:  # the standing candidate's hyperposterior draws of this round
                st.draws = draws
        if due(st.proposed_at, n, self.settings.growth):  # a(t) on D_t, as round t + 1 starts
            spec, _ = propose_candidates(ctx, self.settings, train_X, train_Y)
            if self.settings.restart:
                retire(st.alive, st.retired_at, st.round, keep=st.standing)
            self.add(ctx, st, spec)
            st.proposed_at.append(n)
        return st.candidates, [u for u, a in enumerate(st.alive) if a]

    def diagnostics(self, ctx: RoundContext, state: Any) -> dict[str, Any]:
        st = state
        out: dict[str, Any] = {"proposed_at": list(st.proposed_at)}
        if st.standing is not None:
            out["standing"] = st.standing
        if self.norms:
            out.update(candidates=st.candidates.labels(), norms=st.norm_bounds())
        return out


@dataclass(frozen=True)
class PlayedAcquisition(Selector[CandidateGP]):
    r"""LogEI, LogNEI or practical UCB (:func:`acquisition`) of the played candidate, the round's one,
    maximised with the incumbent and its posterior-mean maximiser as extra starts (the incumbent
    alone with ``settings.mean_start`` false)."""

    settings: AutoSettings

    def start(self, ctx: RoundContext, data: RoundData[CandidateGP]) -> Tensor | None:
        return extra_starts(ctx, data.model, 0, data.train_X, data.train_Y, self.settings.mean_start)

    def __call__(
        self, ctx: RoundContext, data: RoundData[CandidateGP], prepared: Tensor | None, view: CandidateGP, fixed: Tensor | None, warm: Restarts | None
    ) -> tuple[Slot, Restarts | None]:
        acqf = acquisition(view, self.settings, data.t, data.train_Y, reduction="select", index=0, fixed=fixed, ctx=ctx)
        x, warm = ctx.maximize_slot(acqf, fixed, prepared, warm)
        return Slot(x, 0), warm


class LBGPUCBAuto(BalancingPolicy):
    r"""Length-scale balancing over proposed ARD candidates (see the module docstring): Alg. 2 of
    Ziomek et al. 2024 on the round, with :math:`a(t)` the proposals from the data.

    Args:
        domain: Box or pool.
        seed, device, dtype, num_restarts, raw_samples, search: As
            :class:`~botorch_unknown_hypers.policies.base.Policy`.
        options: The :class:`AutoSettings` (``acquisition``, ``shrink``, ``isotropic``, ``ard``
            (default ``False`` here), ``growth``, ``restart``, ``standing``, ``noise_floor``,
            ``mean_start``, ``lengthscale_prior``, ``noise_prior``, ``kernel``, ``B``, ``R``, ``delta``).
    """

    name = "lb-gp-ucb-auto"
    state_type: ClassVar[type[BalancingState]] = AutoBalancingState

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        num_restarts: int = 10,
        raw_samples: int = 512,
        search: str = AUTO_SEARCH,
        **options: object,
    ) -> None:
        settings = AutoSettings.from_options(**{**LB_DEFAULTS, **options})
        if settings.laplace_draws:
            raise ValueError(f"laplace_draws is an option of HE-auto and auto only, got {settings.laplace_draws} for lb-gp-ucb-auto.")
        if settings.probe_evidence:
            raise ValueError("probe_evidence is an option of HE-auto and auto only, got true for lb-gp-ucb-auto.")
        super().__init__(
            domain, seed=seed, device=device, dtype=dtype, noise_std=settings.R, delta=settings.delta,
            width_factor=2.0, noisy_sigma=False, num_restarts=num_restarts, raw_samples=raw_samples, search=search,
        )
        self.settings = settings
        source = ProposedCandidates(settings, norms=True)  # a(t): MAP length scales, re-proposed as the data double
        R2 = settings.R**2
        self.candidate_round = CandidateSetRound(
            source=source,
            subset=LeastSuspectedBound(kernel_regret_bounds),  # Alg. 2 line 3 (Thm 2.3 at the geometric-mean length scale)
            model=UnitCubeModel(standardise=True, info_noise=R2),  # u_t's GP on D_{t-1}, standardised
            betas=BalancingBetas(settings.R, settings.delta, R2),  # Thm 2.1's beta^u_t, for the test
            selector=PlayedAcquisition(settings),  # line 4 with LogEI / LogNEI / practical UCB
            ledger=PlayLedger(),  # w = beta sigma (latent) at play time
            test=BalancingElimination(settings.R, settings.delta, 2.0, "introduced", XI_DELTA_SPLIT, source),  # lines 9-11
        )

    def _check_state(self, state: AutoBalancingState) -> None:
        check_standing_option(self.settings, state)

    def suspected_bounds(self, counts: Tensor) -> Tensor:
        r""":math:`R^u(|S^u| + 1)` (Thm 2.3 at each candidate's geometric-mean length scale)."""
        return kernel_regret_bounds(self.context, self.state, counts)


@dataclass(frozen=True)
class AcquisitionSlots(Selector[CandidateGP]):
    r"""LogEI, LogNEI or practical UCB of the survivors (:func:`acquisition`), maximised from the
    incumbent and the most likely survivor's posterior-mean maximiser as extra starts (the
    incumbent alone with ``settings.mean_start`` false); with
    ``acquisition="lognei-if-repeats-differ"``, the best observation again in the slot that
    :func:`repeat_slot` names.
    ``"max"``: the doubly optimistic pair, the candidate attaining the max at the maximiser;
    ``"evidence"``: the survivor of highest log marginal likelihood and its maximiser;
    ``"map"``: the standing candidate (BoTorch's MAP model, refitted every round) while it
    survives, and the doubly optimistic pair of the survivors once the test has eliminated it
    (and on the probing rounds of ``settings.probe``); ``"evidence"`` with
    ``settings.probe_evidence``: the pair on the probing rounds as well."""

    settings: AutoSettings
    reduction: str

    def probing(self, t: int) -> bool:
        r"""Whether round ``t`` probes: :math:`\lfloor t p\rfloor > \lfloor (t-1) p\rfloor`."""
        p = self.settings.probe
        return math.floor(t * p) > math.floor((t - 1) * p)

    def standing(self, data: RoundData[CandidateGP]) -> int | None:
        r"""``"map"``: the standing candidate's position among the round's candidates, ``None``
        once it has left the set (or for the other reductions)."""
        standing = getattr(data.state, "standing", None)
        if self.reduction != "map" or standing is None or standing not in data.candidates:
            return None
        if self.probing(data.t):  # a probing round: the survivors' pair
            return None
        return data.candidates.index(standing)

    def pair(self, data: RoundData[CandidateGP]) -> bool:
        r"""Whether the round plays the survivors' doubly optimistic pair (module docstring)."""
        if self.reduction == "max" or (self.reduction == "map" and self.standing(data) is None):
            return True
        return self.reduction == "evidence" and self.settings.probe_evidence and self.probing(data.t)

    def start(self, ctx: RoundContext, data: RoundData[CandidateGP]) -> tuple[int, Tensor | None]:
        r"""The candidate whose mean gives the extra starts (the standing one under ``"map"``
        while it survives, else the most likely survivor) and those starts, once per batch."""
        best = self.standing(data)
        if best is None:
            with torch.no_grad():  # read with the round's widths and scaler
                (likeliest,), = data.host(data.model.log_marginal_likelihood().argmax())
            best = int(likeliest)
        return best, extra_starts(ctx, data.model, best, data.train_X, data.train_Y, self.settings.mean_start)

    def __call__(
        self, ctx: RoundContext, data: RoundData[CandidateGP], prepared: tuple[int, Tensor | None], view: CandidateGP, fixed: Tensor | None, warm: Restarts | None
    ) -> tuple[Slot, Restarts | None]:
        best, starts = prepared
        repeat = repeat_slot(data.model, self.settings, None if self.pair(data) else best, data.train_X, data.train_Y, fixed)
        if repeat is not None:  # the one repeated evaluation that tells noise from misfit (H17)
            return Slot(repeat[0], repeat[1]), warm
        if self.pair(data):
            acqf = acquisition(view, self.settings, data.t, data.train_Y, reduction="max", fixed=fixed, ctx=ctx)
            x, warm = ctx.maximize_slot(acqf, fixed, starts, warm)
            with torch.no_grad():  # the doubly optimistic pair: the candidate that attains the max at x (read by the ledger)
                local = cast(Any, acqf).candidate_values(x).reshape(-1).argmax()  # every acquisition() has candidate_values
        else:  # the most likely survivor
            local = best
            draws = getattr(data.state, "draws", None)
            if draws is not None and data.candidates[best] == data.state.standing:  # H3: the MAP fit's hyperposterior
                acqf = hyperposterior_acquisition(ctx, draws, data.train_X, data.train_Y, fixed)
            else:
                acqf = acquisition(view, self.settings, data.t, data.train_Y, reduction="select", index=best, fixed=fixed, ctx=ctx)
            x, warm = ctx.maximize_slot(acqf, fixed, starts, warm)
        return Slot(x, local), warm


def hyperposterior_acquisition(
    ctx: RoundContext, draws: KernelCandidates, train_X: Tensor, train_Y: Tensor, fixed: Tensor | None
) -> AcquisitionFunction:
    r"""qLogNEI averaged over hyperposterior ``draws`` on :math:`D_{t-1}` (one batched GP of the
    draws, standardised as the round's model, the ``fixed`` points as BoTorch's pending points;
    ``reduction="average"`` of :class:`~botorch_unknown_hypers.acquisition.lognei.CandidateLogNEI`)."""
    bounds = ctx.domain.bounds
    model = CandidateGP(
        train_X, train_Y, draws, input_transform=Normalize(bounds.shape[-1], bounds=bounds), outcome_transform=Standardize(m=1), check_data=False
    )  # drawn afresh every round: no factors or modules to keep
    return CandidateLogNEI(model, train_X, ctx.next_seed(), reduction="average", X_pending=fixed)


@dataclass
class AutoEliminationState(EliminationState):
    r"""HE-auto's memory: HE's (residuals and widths in raw units, each pending selection with the
    outputs' scale of its round), the proposed candidates and the number of observations at
    each proposal."""

    candidates: KernelCandidates | None = None
    proposed_at: list[int] = field(default_factory=list)
    retired_at: dict[int, int] = field(default_factory=dict)
    standing: int | None = None
    draws: KernelCandidates | None = field(default=None, init=False, repr=False, compare=False)
    r"""``laplace_draws``: the standing candidate's hyperposterior draws of the current round
    (drawn again every round before the play; not saved)."""

    def check(self) -> None:
        if self.candidates is None:
            if self.alive or self.play_candidate or self.pending or self.standing is not None:
                raise ValueError("a state without candidates must have no survivors, plays or standing candidate.")
            return
        super().check()
        if len(self.candidates) != len(self.alive):
            raise ValueError(f"candidates ({len(self.candidates)}) and alive ({len(self.alive)}) must have one entry per candidate.")
        check_retired(self.alive, self.retired_at)
        check_standing(self.standing, self.alive, self.retired_at)


class HEGPUCBAuto(RoundRule, Policy):
    r"""Hyperparameter elimination over proposed ARD candidates (see the module docstring).

    Args: as :class:`LBGPUCBAuto`, plus
        reduction: How the acquisition of the survivors is reduced to a play. ``"max"`` (the
            paper's doubly optimistic pair): :math:`(x_t, u_t) = \arg\max_{x, u} a^u(x)` over the
            survivors. ``"evidence"``: :math:`u_t` is the survivor of highest log marginal
            likelihood on :math:`D_{t-1}` and :math:`x_t = \arg\max_x a^{u_t}(x)`; elimination
            still tests every played candidate, so a survivor whose prequential residuals
            exceed its widths hands over to the next most likely one. ``"map"`` (needs
            ``standing=True``): :math:`u_t` is the standing candidate while it survives (MAP
            until the data reject it), then ``"max"`` over the survivors.
        options: The :class:`AutoSettings`.
    """

    max_batch_size = None
    r"""Any batch (slots filled one at a time, as :class:`~botorch_unknown_hypers.policies.elimination.he_gp_ucb.HEGPUCB`)."""
    supports_pending = True

    name = "he-gp-ucb-auto"
    defaults: ClassVar[dict[str, object]] = {}
    r"""Options that differ from :class:`AutoSettings`' defaults (none for HE-auto)."""
    default_reduction: ClassVar[str] = "max"
    r"""The reduction when none is given (``"max"``, the paper's pair, for HE-auto)."""

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        num_restarts: int = 10,
        raw_samples: int = 512,
        search: str = AUTO_SEARCH,
        reduction: str | None = None,
        **options: object,
    ) -> None:
        reduction = self.default_reduction if reduction is None else reduction
        settings = AutoSettings.from_options(**{**self.defaults, **options})
        check_choice("reduction", reduction, HE_REDUCTIONS)
        if reduction == "map" and not settings.standing:
            raise ValueError("reduction: 'map' plays the standing candidate, so it needs standing=true; got standing=false.")
        if settings.probe_evidence and not (reduction == "evidence" and settings.probe > 0):
            raise ValueError(
                "probe_evidence=true probes under reduction='evidence' on the rounds of probe > 0; "
                f"got reduction={reduction!r}, probe={settings.probe}."
            )
        super().__init__(domain, seed, device, dtype, num_restarts, raw_samples, search)
        self.settings = settings
        self.reduction = reduction
        self.state = AutoEliminationState()
        self.candidate_round = CandidateSetRound(
            source=ProposedCandidates(settings),  # a(t): MAP ARD ladders, re-proposed as the data double
            model=UnitCubeModel(standardise=True, info_noise=settings.R**2),  # survivors on D_{t-1}, standardised
            betas=FrequentistBetas(settings.B, settings.R, settings.delta, noise=settings.R**2),  # Thm 4.1's beta
            selector=AcquisitionSlots(settings, reduction),  # Alg. 1 line 7 with LogEI / LogNEI / practical UCB
            test=PrequentialElimination(settings.R, settings.delta),  # Alg. 1 lines 10-12, standardised units
        )

    def _check_state(self, state: AutoEliminationState) -> None:
        check_standing_option(self.settings, state)
        if state.candidates is not None and state.candidates.lengthscale.shape[-1] not in (1, self.domain.dim):
            raise ValueError(f"state['state']['candidates'] has length scales of the wrong dimension for d = {self.domain.dim}.")


AUTO_DEFAULTS: dict[str, object] = {
    "standing": True,
    "acquisition": "logei-plugin",
    "probe": 0.1,
    "noise_floor": 1e-6,
    "kernel": "matern52",
    "lengthscale_prior": "optuna",
    "noise_prior": "optuna",
}
r"""``auto``'s settings that differ from HE-auto's: H14 of ``docs/bbob.md``. H1's standing MAP
candidate, H4's noise floor :math:`10^{-6}` and, with :attr:`Auto.default_reduction`
``"evidence"``, H5's likeliest survivor (together H6); Optuna ``GPSampler``'s Matérn-5/2 kernel
and its length-scale and noise priors (H11-H13); and LogEI at the plug-in incumbent
:math:`\max_i \mu_u(x_i)` (H14), each kept by a round's rule written in ``docs/bbob.md`` before
its runs. ``probe = 0.1`` (H2a, the default before H6) acts only under ``reduction="map"`` or with
``probe_evidence``."""

AUTO_H6: dict[str, object] = {"acquisition": "lognei", "kernel": "rbf", "lengthscale_prior": "dim-scaled", "noise_prior": "lognormal"}
r"""The options that give back H6, ``auto``'s default before H14: ``Auto(domain, **AUTO_H6)``
(spec ``auto[acquisition=lognei&kernel=rbf&lengthscale_prior=dim-scaled&noise_prior=lognormal]``),
BoTorch's model and qLogNEI on the likeliest survivor."""


class Auto(HEGPUCBAuto):
    r"""``auto``: **MAP until the data reject it**, the package's one recommended method.

    Every round the acquisition is LogEI on the survivor of highest log marginal likelihood
    :math:`\log p(y\mid X, u)` (``reduction="evidence"``), at the plug-in incumbent
    :math:`f^+ = \max_i \mu_u(x_i)` (its posterior mean's best value at the observed points, so
    that no noisy observation is the incumbent; ``acquisition="logei-plugin"``). Candidate 0 is the
    MAP model (the standing candidate, refitted on all data every round) with Optuna
    ``GPSampler``'s kernel and priors: Matérn-5/2 ARD, the length-scale prior
    :math:`e^{-0.1(\ell^2 + \ell^{-2})}` and :math:`\sigma^2 \sim \mathrm{Gamma}(1.1, 30)`,
    the noise variance bounded below by :math:`10^{-6}` (standardised units) instead of BoTorch's
    :math:`10^{-4}`. Beside it stand HE-auto's proposed candidates (the MAP length scales times
    :math:`1, \tfrac12, \tfrac14`, re-proposed as the data double). HE's prequential test (Alg. 1
    lines 10-12) checks every played candidate each round: a candidate is eliminated once its
    residuals :math:`|\sum_{S^u}\eta|/s_t` exceed :math:`\sqrt{\xi_t|S^u|} + \sum_{S^u} w/s_t`.
    While MAP is the likeliest survivor this is a MAP loop plus one test per round; once the data
    reject it, the likeliest survivor plays.

    It is :class:`HEGPUCBAuto` with :data:`AUTO_DEFAULTS` (H14) and ``reduction="evidence"``,
    chosen by the rules of ``docs/bbob.md`` on development problems only. On held-out BBOB
    instances 26-35 it is ahead of BoTorch's default (``qlognei``) at d = 2 without noise and level
    with it at d = 2 with noise and at d = 5, at 0.6-0.8x its proposal time; at d = 5 with noise it
    is significantly worse on 4 of 24 functions (``docs/choosing-a-method.md``). Any option may be
    given. ``Auto(domain, **AUTO_H6)`` is the
    default before H14 (H6: BoTorch's model with qLogNEI), and ``reduction="map"`` with
    ``noise_floor=None`` and :data:`AUTO_H6` the one before H6 (H2a).
    """

    name = "auto"
    defaults: ClassVar[dict[str, object]] = AUTO_DEFAULTS
    default_reduction: ClassVar[str] = "evidence"

__all__ = ["ACQUISITIONS", "REPEATS", "AUTO_DEFAULTS", "AUTO_H6", "HE_REDUCTIONS", "AUTO_SHRINK", "Auto", "AutoSettings", "HEGPUCBAuto", "LBGPUCBAuto"]
