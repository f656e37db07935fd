r"""Length-scale balancing: LB-GP-UCB and the A-GP-UCB baseline.

Ziomek, Adachi, Osborne (NeurIPS 2024), Algorithm 1. LB-GP-UCB is hyperparameter balancing
(:class:`~botorch_unknown_hypers.policies.hyperparameter_balancing.HyperparameterBalancing`,
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

Full derivations and every choice: ``docs/length-scale-balancing.md``.

References:
    J. Ziomek, M. Adachi, M. A. Osborne. Bayesian Optimisation with Unknown Hyperparameters:
    Regret Bounds Logarithmically Closer to Optimal. NeurIPS 2024.
    F. Berkenkamp, A. P. Schoellig, A. Krause. No-Regret Bayesian Optimization with Unknown
    Hyperparameters. JMLR 2019.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import torch
from torch import Tensor

from botorch_unknown_hypers.checks import check_positive
from botorch_unknown_hypers.acquisition.ucb import CandidateUCB
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.regret_bounds import norm_bound, suspected_regret_bound
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.kernels import KERNELS, check_kernel
from botorch_unknown_hypers.models.fitted import fit_single_task_gp
from botorch_unknown_hypers.policies.hyperparameter_balancing import BalancingState, HyperparameterBalancing

PRESETS = ("authors-code", "paper")


@dataclass(frozen=True)
class BalancingConstants:
    r"""The constants a preset fixes (see the module docstring)."""

    ratio: float
    g0: float
    growth_exponent: float
    R: float
    delta: float
    B: float
    width_factor: float
    bound_kernel: str | None  # None: the model's kernel
    scale_norm: bool  # B(theta) = (theta0/theta)^{d/2} B
    xi_count: str  # "active" (|Theta_t|) or "introduced" (|A|)
    xi_delta_split: float  # xi uses delta / split
    noisy_sigma: bool


def preset_constants(preset: str, dim: int, kernel: str, noise: float, growth_exponent: float = 0.5) -> BalancingConstants:
    r"""Constants of ``preset`` for input dimension ``dim`` and ``kernel``."""
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}.")
    nu = KERNELS[check_kernel(kernel)]
    if preset == "authors-code":
        return BalancingConstants(
            ratio=math.exp(1.0 / dim) if nu is None else math.exp(1.0 / (dim + 2 * nu)),
            g0=math.exp(5.0 / (dim + 5)),
            growth_exponent=growth_exponent,
            R=1e-4,
            delta=0.01,
            B=1.0,
            width_factor=1.0,
            bound_kernel="rbf",
            scale_norm=False,
            xi_count="active",
            xi_delta_split=1.0,
            noisy_sigma=True,
        )
    return BalancingConstants(
        ratio=math.exp(1.0 / dim),
        g0=math.exp(5.0 / dim),
        growth_exponent=growth_exponent,
        R=math.sqrt(noise),
        delta=0.01,
        B=1.0,
        width_factor=2.0,
        bound_kernel=None,
        scale_norm=True,
        xi_count="introduced",
        xi_delta_split=2.0,
        noisy_sigma=False,
    )


def growth(t: float, g0: float, exponent: float) -> float:
    r"""Growth function :math:`g(t) = \max(g_0, t^a)` (Sec. 5)."""
    return max(g0, float(t) ** exponent)


def initial_ladder(theta0: float, ratio: float, g1: float) -> list[float]:
    r"""All :math:`\theta_0 r^{-i}` strictly above :math:`\theta_0 / g(1)` (the code's start set)."""
    values, value = [], theta0
    while value > theta0 / g1:
        values.append(value)
        value = value / ratio
    return values


def next_candidate(smallest: float, theta0: float, ratio: float, g_next: float) -> float | None:
    r"""Alg. 1 lines 14-16 with the corrected direction: :math:`\theta_L / r` if it is still
    above :math:`\theta_0 / g(t+1)`, else ``None`` (``smallest`` is the last value ever created,
    eliminated or not, so eliminated values are never re-added and :math:`q(1)` is not skipped)."""
    candidate = smallest / ratio
    return candidate if candidate > theta0 / g_next else None


@dataclass
class LengthScaleState(BalancingState):
    r"""Balancing state plus :math:`\theta_0`, the MLE length scale on the initial design."""

    theta0: float | None = None

    def check(self) -> None:
        super().check()
        if (self.theta0 is None) != (self.candidates is None) or (self.theta0 is not None and not self.theta0 > 0):
            raise ValueError("theta0 must be positive once candidates exist, and None before.")


class LBGPUCB(HyperparameterBalancing):
    r"""LB-GP-UCB (Ziomek et al. 2024, Alg. 1); see the module docstring.

    Args:
        domain: Box or pool.
        seed, device, dtype, num_restarts, raw_samples: As
            :class:`~botorch_unknown_hypers.policies.base.Policy`.
        preset: ``"authors-code"`` (default) or ``"paper"``.
        kernel: Kernel of every candidate (default Matern-5/2).
        noise: GP noise variance (default 1e-4, standardised units).
        growth_exponent: :math:`a` in :math:`g(t) = \max(g_0, t^a)` (ablation: 0.25, 0.5, 0.75).
        width_factor: Override the preset's :math:`c`.
    """

    name = "lb-gp-ucb"
    state_type: ClassVar[type[BalancingState]] = LengthScaleState

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        preset: str = "authors-code",
        kernel: str = "matern52",
        noise: float = 1e-4,
        growth_exponent: float = 0.5,
        width_factor: float | None = None,
        num_restarts: int = 10,
        raw_samples: int = 512,
    ) -> None:
        check_kernel(kernel)
        check_positive("noise", noise)
        check_positive("growth_exponent", growth_exponent)
        if width_factor is not None:
            check_positive("width_factor", width_factor)
        constants = preset_constants(preset, domain.dim, kernel, noise, growth_exponent)
        if width_factor is not None:
            constants = replace(constants, width_factor=float(width_factor))
        super().__init__(
            domain,
            seed=seed,
            device=device,
            dtype=dtype,
            noise_std=constants.R,
            delta=constants.delta,
            width_factor=constants.width_factor,
            noisy_sigma=constants.noisy_sigma,
            num_restarts=num_restarts,
            raw_samples=raw_samples,
            xi_count=constants.xi_count,
            xi_delta_split=constants.xi_delta_split,
        )
        self.preset = preset
        self.kernel = kernel
        self.noise = noise
        self.constants = constants

    # ------------------------------------------------------------------ hooks
    def _g(self, t: float) -> float:
        return growth(t, self.constants.g0, self.constants.growth_exponent)

    @property
    def theta0(self) -> float | None:
        r""":math:`\theta_0`, the MLE length scale on the initial design (unit-cube units)."""
        return self.state.theta0

    @property
    def lengthscales(self) -> list[float]:
        r"""Every candidate length scale ever introduced, in order (unit-cube units)."""
        candidates = self.state.candidates
        return [] if candidates is None else candidates.lengthscale[:, 0].tolist()

    def _norms(self, theta: list[float]) -> Tensor:
        c = self.constants
        t = self._tensor(theta)
        return norm_bound(t, self.theta0, c.B, self.domain.dim) if c.scale_norm else torch.full_like(t, c.B)

    def _spec(self, theta: list[float]) -> KernelCandidates:
        return KernelCandidates.from_lengthscales(self._tensor(theta), kernel=self.kernel, noise=self.noise)

    def _initial_candidates(self, train_X: Tensor, train_Y: Tensor) -> tuple[KernelCandidates, Tensor]:
        r""":math:`\theta_0` = MLE on the initial design; all :math:`q(i) > \theta_0 / g(1)`."""
        self.state.theta0 = self._fit_theta0(train_X, train_Y)
        ladder = initial_ladder(self.theta0, self.constants.ratio, self._g(1))
        return self._spec(ladder), self._norms(ladder)

    def _fit_theta0(self, train_X: Tensor, train_Y: Tensor) -> float:
        r""":math:`\theta_0`: the MLE length scale on the initial design (unit-cube units)."""
        model = fit_single_task_gp(train_X, train_Y, self.domain.bounds, kernel=self.kernel, noise=self.noise)
        return float(model.covar_module.base_kernel.lengthscale.item())

    def _propose(self, t: int) -> tuple[KernelCandidates, Tensor] | None:
        r"""Alg. 1 lines 14-16 (corrected direction), at most one new candidate per round."""
        nxt = next_candidate(self.lengthscales[-1], self.theta0, self.constants.ratio, self._g(t + 1))
        return None if nxt is None else (self._spec([nxt]), self._norms([nxt]))

    def suspected_bounds(self, counts: Tensor) -> Tensor:
        r""":math:`R^\theta(|S^\theta| + 1)` of every candidate ever introduced."""
        kernel = self.constants.bound_kernel or self.kernel
        theta = self._tensor(self.lengthscales)
        return suspected_regret_bound(counts + 1, theta, self.domain.dim, kernel, self.state.norms)

    def _info_noise(self) -> float:
        r""":math:`I_t` under the played length scale with noise variance :math:`R^2` (the code's
        :math:`\sigma_N = R`; in the paper preset :math:`R^2` is the GP noise)."""
        return self.constants.R**2

    def _diagnostics(self, t: int) -> dict[str, Any]:
        return {
            "theta0": self.theta0,
            "candidates": [round(v, 10) for v in self.lengthscales],
            "theta_L": self.lengthscales[-1],
            "theta_lower": self.theta0 / self._g(t),
        }


class AGPUCB(LBGPUCB):
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
        if theta0 is not None and not (theta0 > 0 and math.isfinite(theta0)):
            raise ValueError(f"theta0 must be positive and finite, got {theta0}.")
        if growth_floor is not None and not growth_floor >= 1:
            raise ValueError(f"growth_floor must be >= 1, got {growth_floor}.")
        if snap is not None and (not snap or not all(float(v) > 0 for v in snap)):
            raise ValueError(f"snap must be a non-empty list of positive length scales, got {snap}.")
        super().__init__(domain, **kwargs)
        if growth_floor is not None:
            self.constants = replace(self.constants, g0=float(growth_floor))
        self.fixed_theta0 = None if theta0 is None else float(theta0)
        self.snap = None if snap is None else sorted(float(v) for v in snap)

    def _initial_candidates(self, train_X: Tensor, train_Y: Tensor) -> tuple[KernelCandidates, Tensor]:
        self.state.theta0 = self._fit_theta0(train_X, train_Y) if self.fixed_theta0 is None else self.fixed_theta0
        return self._spec([self.theta0]), self._norms([self.theta0])

    def current_lengthscale(self, t: int) -> float:
        r""":math:`\theta_0 / g(t)`, snapped to the nearest candidate if ``snap`` is set."""
        theta = self.theta0 / self._g(t)
        if self.snap is not None:
            theta = min(self.snap, key=lambda v: abs(math.log(v / theta)))
        return theta

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        if self.state.candidates is None:
            self._start(train_X, train_Y)
        theta = self.current_lengthscale(self.state.round + 1)
        model = self._build_model(train_X, train_Y, self._spec([theta]))
        beta = self._beta(model, float(self._norms([theta])[0]))
        X = self.maximize(CandidateUCB(model, beta=beta, reduction="select", index=0))
        self.selected = [f"{theta:.6g}"]
        self.n_candidates = 1
        self.diagnostics = {"theta0": self.theta0, "beta": beta}
        return X

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        self.state.round += 1
