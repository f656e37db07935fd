r"""Length scales of the unit cube as balancing candidates: the presets and the shared pieces of
LB-GP-UCB, LNB-GP-UCB and A-GP-UCB.

Ziomek, Adachi, Osborne (NeurIPS 2024), Sec. 5 and Alg. 1: :math:`\theta_0` is the MLE length scale
on the initial design, :math:`g(t) = \max(g_0, t^a)` the growth function, the ladder
:math:`q(i) = \theta_0 r^{-i}` and the norm bound :math:`B(\theta) = (\theta_0/\theta)^{d/2} B`
(Lemma 2.1) or :math:`B`. A preset (:func:`preset_constants`) fixes the constants the paper leaves
open (``docs/length-scale-balancing.md``). :class:`LengthScalePolicy` is the base of the
length-scale rules (its options, :math:`\theta_0`, :math:`g`, the candidates of given length
scales and their norm bounds, Thm 2.3's suspected bound at the preset's kernel); the candidate
sources of the candidate-set round are :class:`LengthScaleLadder` (LB, lines 1-2 and 14-16) and
:class:`ShrinkingLengthScale` (A-GP-UCB, Berkenkamp et al. 2019: the set :math:`\{\theta_0/g(t)\}`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import AUTO_SEARCH
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.checks import check_choice, check_positive
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.host import host_tensor
from botorch_unknown_hypers.kernels import KERNELS, check_kernel
from botorch_unknown_hypers.models.fitted import fit_single_task_gp
from botorch_unknown_hypers.policies.balancing.balancing_pieces import BalancingCandidates
from botorch_unknown_hypers.policies.balancing.balancing_policy import BalancingPolicy, BalancingState
from botorch_unknown_hypers.policies.context import RoundContext
from botorch_unknown_hypers.regret_bounds import norm_bound, suspected_regret_bound

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
    check_choice("preset", preset, PRESETS)
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
    return max(g0, float(float(t) ** exponent))


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



@dataclass(frozen=True)
class LengthScaleFamily:
    r"""Candidates of one kernel over isotropic length scales :math:`\theta` of the unit cube,
    under a preset's constants (module docstring): :math:`g(t)`, the candidates of given length
    scales, their norm bounds :math:`B(\theta)`, :math:`\theta_0` and Thm 2.3's suspected bound at
    the preset's kernel. What the pieces of a length-scale round are configured with.

    Attributes:
        kernel: The candidates' kernel.
        noise: Their GP noise variance (standardised units).
        constants: The preset's constants.
        dim: The input dimension :math:`d`.
        dtype, device: Of the candidates and the norm bounds.
    """

    kernel: str
    noise: float
    constants: BalancingConstants
    dim: int
    dtype: torch.dtype
    device: torch.device

    def g(self, t: float) -> float:
        r"""The growth function :math:`g(t) = \max(g_0, t^a)`."""
        return growth(t, self.constants.g0, self.constants.growth_exponent)

    def candidates(self, theta: list[float]) -> KernelCandidates:
        r"""The candidates of length scales ``theta``."""
        return KernelCandidates.from_values(list(theta), kernel=self.kernel, noise=self.noise, dtype=self.dtype, device=self.device)

    def norm_bounds(self, theta: list[float], theta0: float | None) -> Tensor:
        r""":math:`B(\theta) = (\theta_0/\theta)^{d/2}B` (``scale_norm``, which needs :math:`\theta_0`) or
        :math:`B` of each length scale."""
        c = self.constants
        t = host_tensor(theta, self.dtype, self.device)
        if not c.scale_norm:
            return torch.full_like(t, c.B)
        if theta0 is None:
            raise ValueError("theta0: the scaled norm bound needs theta0 (fitted at the first round), got None.")
        return norm_bound(t, theta0, c.B, self.dim)

    def fit_theta0(self, train_X: Tensor, train_Y: Tensor, bounds: Tensor) -> float:
        r""":math:`\theta_0`: the MLE length scale on the data (unit-cube units, inputs scaled by ``bounds``)."""
        model = fit_single_task_gp(train_X, train_Y, bounds, kernel=self.kernel, noise=self.noise)
        return float(model.covar_module.base_kernel.lengthscale.item())

    def suspected_bounds(self, ctx: RoundContext, state: Any, counts: Tensor) -> Tensor:
        r""":math:`R^\theta(|S^\theta| + 1)` of every candidate ever introduced (Thm 2.3 at the
        preset's kernel; a :data:`~botorch_unknown_hypers.policies.balancing.balancing_pieces.SuspectedBounds`:
        nothing read, the choice checks the values it copies)."""
        kernel = self.constants.bound_kernel or self.kernel
        candidates = state.candidates  # the length scales as they are, without a copy to the host
        theta = host_tensor([], self.dtype, self.device) if candidates is None else candidates.lengthscale[:, 0].to(dtype=self.dtype, device=self.device)
        return suspected_regret_bound(counts + 1, theta, self.dim, kernel, state.norms, checked=False)


def state_lengthscales(state: Any) -> list[float]:
    r"""Every candidate length scale of a length-scale rule's state, in order (kept on the host)."""
    candidates = state.candidates
    return [] if candidates is None else [row[0] for row in candidates.to_dict()["lengthscale"]]


class LengthScalePolicy(BalancingPolicy):
    r"""A balancing rule over length scales of the unit cube under a preset (module docstring).

    Args:
        domain: Box or pool.
        seed, device, dtype, num_restarts, raw_samples, search: As
            :class:`~botorch_unknown_hypers.policies.base.Policy`.
        preset: ``"authors-code"`` (default) or ``"paper"``.
        kernel: Kernel of every candidate (default Matern-5/2).
        noise: GP noise variance (default 1e-4, standardised units).
        growth_exponent: :math:`a` in :math:`g(t) = \max(g_0, t^a)` (ablation: 0.25, 0.5, 0.75).
        width_factor: Override the preset's :math:`c`.
    """

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
        search: str = AUTO_SEARCH,
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
            search=search,
            xi_count=constants.xi_count,
            xi_delta_split=constants.xi_delta_split,
        )
        self.preset = preset
        self.kernel = kernel
        self.noise = noise
        self.family = LengthScaleFamily(kernel, float(noise), constants, self.domain.dim, self.dtype, self.device)

    @property
    def constants(self) -> BalancingConstants:
        r"""The preset's constants (of :attr:`family`)."""
        return self.family.constants

    @property
    def theta0(self) -> float | None:
        r""":math:`\theta_0`, the MLE length scale on the initial design (unit-cube units)."""
        theta0: float | None = self.state.theta0
        return theta0

    @property
    def lengthscales(self) -> list[float]:
        r"""Every candidate length scale in the set, in order (unit-cube units)."""
        return state_lengthscales(self.state)

    def g(self, t: float) -> float:
        r"""The growth function :math:`g(t) = \max(g_0, t^a)` of the preset."""
        return self.family.g(t)

    def norm_bounds(self, theta: list[float]) -> Tensor:
        r""":math:`B(\theta)` of each length scale (:meth:`LengthScaleFamily.norm_bounds` at :math:`\theta_0`)."""
        return self.family.norm_bounds(theta, self.theta0)

    def lengthscale_candidates(self, theta: list[float]) -> KernelCandidates:
        r"""The candidates of length scales ``theta`` (the rule's kernel and noise)."""
        return self.family.candidates(theta)

    def fit_theta0(self, train_X: Tensor, train_Y: Tensor) -> float:
        r""":math:`\theta_0`: the MLE length scale on the initial design (unit-cube units)."""
        return self.family.fit_theta0(train_X, train_Y, self.domain.bounds)

    def suspected_bounds(self, counts: Tensor) -> Tensor:
        r""":math:`R^\theta(|S^\theta| + 1)` of every candidate ever introduced (:meth:`LengthScaleFamily.suspected_bounds`)."""
        return self.family.suspected_bounds(self.context, self.state, counts)


@dataclass(frozen=True)
class LengthScaleLadder(BalancingCandidates):
    r"""LB's set: :math:`a(0)` every :math:`q(i) = \theta_0 r^{-i} > \theta_0/g(1)`; after round
    :math:`t`, :math:`\theta_L/r` joins while above :math:`\theta_0/g(t+1)` (lines 14-16, direction
    corrected; at most one per round), of ``family``."""

    family: LengthScaleFamily

    def start(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor) -> tuple[KernelCandidates, Tensor]:
        f = self.family
        theta0 = state.theta0 = f.fit_theta0(train_X, train_Y, ctx.domain.bounds)
        ladder = initial_ladder(theta0, f.constants.ratio, f.g(1))
        return f.candidates(ladder), f.norm_bounds(ladder, theta0)

    def propose(self, ctx: RoundContext, state: Any, t: int) -> None:
        f = self.family
        nxt = next_candidate(state_lengthscales(state)[-1], state.theta0, f.constants.ratio, f.g(t + 1))
        if nxt is not None:
            state.add(f.candidates([nxt]), f.norm_bounds([nxt], state.theta0))

    def diagnostics(self, ctx: RoundContext, state: Any) -> dict[str, Any]:
        t, lengthscales = state.round + 1, state_lengthscales(state)
        return {
            "theta0": state.theta0,
            "candidates": [round(v, 10) for v in lengthscales],
            "theta_L": lengthscales[-1],
            "theta_lower": state.theta0 / self.family.g(t),
        }


@dataclass(frozen=True)
class ShrinkingLengthScale(BalancingCandidates):
    r"""A-GP-UCB's set of one, :math:`\{\theta_0/g(t)\}` (Berkenkamp et al. 2019, Alg. 1 with
    :math:`g` of the preset), :math:`\theta_0` the initial MLE or ``theta0``; with ``snap``,
    :math:`\theta_t` is replaced by the nearest member of that list (log scale)."""

    family: LengthScaleFamily
    theta0: float | None = None
    snap: tuple[float, ...] | None = None

    def start(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor) -> tuple[KernelCandidates, Tensor]:
        f = self.family
        theta0 = state.theta0 = f.fit_theta0(train_X, train_Y, ctx.domain.bounds) if self.theta0 is None else self.theta0
        return f.candidates([theta0]), f.norm_bounds([theta0], theta0)

    def lengthscale(self, state: Any, t: int) -> float:
        r""":math:`\theta_0 / g(t)`, snapped to the nearest of ``snap`` if set."""
        theta: float = state.theta0 / self.family.g(t)
        if self.snap is not None:
            theta = min(self.snap, key=lambda v: abs(math.log(v / theta)))
        return theta

    def survivors(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor) -> tuple[KernelCandidates, list[int]]:
        super().survivors(ctx, state, train_X, train_Y)
        theta = self.lengthscale(state, state.round + 1)
        state.candidates, state.norms = self.family.candidates([theta]), self.family.norm_bounds([theta], state.theta0)
        return state.candidates, [0]

    def diagnostics(self, ctx: RoundContext, state: Any) -> dict[str, Any]:
        return {"theta0": state.theta0}


__all__ = [
    "PRESETS",
    "BalancingConstants",
    "LengthScaleFamily",
    "LengthScaleLadder",
    "LengthScalePolicy",
    "LengthScaleState",
    "ShrinkingLengthScale",
    "growth",
    "initial_ladder",
    "next_candidate",
    "preset_constants",
    "state_lengthscales",
]
