r"""Length-scale balancing: LB-GP-UCB and the A-GP-UCB baseline.

Ziomek, Adachi, Osborne (NeurIPS 2024), "Bayesian Optimisation with Unknown
Hyperparameters: Regret Bounds Logarithmically Closer to Optimal", Algorithm 1.

LB-GP-UCB treats GP-UCB with each candidate length scale :math:`\theta` as a
base learner and balances their *suspected* regret bounds. Candidates come from
the ladder :math:`q(i) = \theta_0 r^{-i}` and enter while they lie above the
suspected lower bound :math:`\theta_0 / g(t)`. At round :math:`t`:

1. (Alg. 1, line 3) play :math:`\theta_t = \arg\min_\theta R^\theta(|S^\theta_{t-1}| + 1)`,
   where :math:`R^\theta(T) = \sqrt{T}\,(B(\theta)\sqrt{\gamma_T(\theta)} + \gamma_T(\theta))`;
   :math:`R^\theta(1) = 0`, so a fresh candidate is always played next
   (first index, i.e. the longest length scale, on ties);
2. (line 4) :math:`x_t = \arg\max_x \mu^{\theta_t}_{t-1}(x) + \beta_t \sigma^{\theta_t}_{t-1}(x)`
   with the GP on **all** data;
3. record the width :math:`w_t = \beta_t \sigma^{\theta_t}_{t-1}(x_t)` *at play time*
   (posterior before :math:`y_t` enters);
4. (lines 9-12) once every candidate has been played, with
   :math:`\bar y_\theta` the mean (standardised) reward of :math:`\theta`'s plays,
   :math:`L(\theta) = \bar y_\theta - \sqrt{\xi_t/|S^\theta|}`, eliminate
   :math:`\theta` iff

   .. math::

       \bar y_\theta + \sqrt{\xi_t / |S^\theta|} + c\,\frac{1}{|S^\theta|}\sum_{\tau \in S^\theta} w_\tau
       < \max_{\theta'} L(\theta').

   The sign of the :math:`\sqrt{\xi}` term is the proof-supported one (Lemma B.2);
   the printed algorithm has :math:`-\sqrt{\xi}` on the left. :math:`c = 2` in the
   paper, :math:`c = 1` in the authors' code (option ``width_factor``);
5. (lines 14-16, corrected direction) add :math:`\theta_L / r` if it is still
   above :math:`\theta_0 / g(t+1)`; at most one per round, :math:`q(1)` is not
   skipped, eliminated values are never re-added.

**Presets.** The paper leaves :math:`\sigma_N`, :math:`B` and several constants
open; the authors' code fixes them (implementer's note, Sec. 1.6). Two presets:

- ``"authors-code"`` (**default**): ratio :math:`r = e^{1/(d+2\nu)}`,
  :math:`g(t) = \max(e^{5/(d+5)}, \sqrt t)`, :math:`R = 10^{-4}`,
  :math:`\delta = 0.01`, :math:`B = 1`; suspected bound with the RBF-type
  :math:`\gamma_T = \theta^{-d}\ln(T)^{d+1}` and a constant :math:`B`;
  :math:`\beta_t = B + R\sqrt{2(I_{t} + 1 + \ln(2/\delta))}` (:math:`\approx 1`);
  :math:`\xi_t = 2R^2\ln(|\Theta_t|\pi^2t^2/(6\delta))`; recorded :math:`\sigma`
  includes the likelihood noise; ``width_factor = 1``. It is the default because
  the paper's figures were produced by this code, and because the paper's own
  constants (:math:`\sigma_N`, :math:`N^*`) are not stated.
- ``"paper"``: ratio :math:`e^{1/d}`, :math:`g(t) = \max(e^{5/d}, \sqrt t)`
  (five candidates at :math:`g(1)`), suspected bound with the kernel's
  :math:`\gamma_T` (Prop. 2.2) and :math:`B(\theta) = (\theta_0/\theta)^{d/2} N`,
  :math:`\beta^\theta_t = B(\theta) + \sigma_N\sqrt{2(I_t + 1 + \ln(2/\delta))}`,
  :math:`\xi_t = 2\sigma_N^2\ln(|A|\pi^2t^2/(3\delta))` with :math:`|A|` the
  candidates introduced, latent :math:`\sigma`, ``width_factor = 2``, with
  :math:`\sigma_N = \sqrt{\text{noise}}`.

In both, :math:`I_t` is the information gain of the points observed so far under
the played length scale, :math:`\tfrac12\log\det(I + \sigma_N^{-2}K)` (the paper's
:math:`\gamma_{t-1}` is an upper bound on it; the code used an "exact" routine).
Inputs are scaled to the unit cube by the domain bounds, outputs standardised on
all data every round (rewards re-standardised with the current scaler at each
elimination test), output scale 1, noise variance 1e-4, zero mean, and
:math:`\theta_0` is the MLE on the initial design, all as in the code.

All candidates live in one :class:`~botorch_unknown_hypers.models.CandidateGP`;
the bookkeeping (counts, reward sums, recorded widths, :math:`L_t`) is
vectorised over candidates with ``index_add_`` (in the Alg. 2 engine).

A-GP-UCB (Berkenkamp et al. 2019, as run in the paper): :math:`\theta_t = \theta_0 / g(t)`
with the same :math:`\theta_0`, :math:`g` and :math:`\beta` as LB-GP-UCB, no refitting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.ucb import CandidateUCB
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.kernels import KERNELS
from botorch_unknown_hypers.confidence import (
    norm_bound,
    suspected_regret_bound,
)
from botorch_unknown_hypers.policies.baselines import check_gp_options, fit_single_task_gp
from botorch_unknown_hypers.policies.hyperparameter_balancing import (
    HyperparameterBalancing,
    elimination_keep,
)
from botorch_unknown_hypers.domains import Domain

__all__ = [
    "AGPUCB",
    "BalancingConstants",
    "LBGPUCB",
    "PRESETS",
    "elimination_keep",
    "growth",
    "initial_ladder",
    "next_candidate",
    "preset_constants",
]

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
    nu = KERNELS[kernel]
    if preset == "authors-code":
        ratio = math.exp(1.0 / dim) if nu is None else math.exp(1.0 / (dim + 2 * nu))
        return BalancingConstants(
            ratio=ratio,
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


class LBGPUCB(HyperparameterBalancing):
    r"""LB-GP-UCB (Ziomek et al. 2024, Alg. 1); see the module docstring.

    Alg. 1 is Alg. 2 (:class:`~botorch_unknown_hypers.policies.hyperparameter_balancing.HyperparameterBalancing`)
    with length-scale candidates :math:`q(i)`, norm bounds :math:`B(\theta)`, and the
    proposing function "add :math:`\theta_L / r` while above :math:`\theta_0 / g(t)`".

    Args:
        domain: Box or pool.
        seed, device, dtype: As :class:`~botorch_unknown_hypers.policies.base.Policy`.
        preset: ``"authors-code"`` (default) or ``"paper"``.
        kernel: Kernel of every candidate (default Matern-5/2).
        noise: GP noise variance (default 1e-4, standardised units).
        growth_exponent: :math:`a` in :math:`g(t) = \max(g_0, t^a)` (ablation: 0.25, 0.5, 0.75).
        width_factor: Override the preset's :math:`c`.
        num_restarts, raw_samples: Acquisition optimisation on a box.
    """

    name = "lb-gp-ucb"

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
        check_gp_options(kernel, noise, num_restarts, raw_samples)
        if not growth_exponent > 0:
            raise ValueError(f"growth_exponent must be positive, got {growth_exponent}.")
        if width_factor is not None and not width_factor > 0:
            raise ValueError(f"width_factor must be positive, got {width_factor}.")
        constants = preset_constants(preset, domain.dim, kernel, noise, growth_exponent)
        if width_factor is not None:
            constants = BalancingConstants(**{**constants.__dict__, "width_factor": float(width_factor)})
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
        )
        self.preset = preset
        self.kernel = kernel
        self.noise = noise
        self.constants = constants
        self.xi_count = constants.xi_count
        self.xi_delta_split = constants.xi_delta_split
        self.theta0: float | None = None

    # ------------------------------------------------------------------ hooks
    def _g(self, t: float) -> float:
        return growth(t, self.constants.g0, self.constants.growth_exponent)

    @property
    def lengthscales(self) -> list[float]:
        r"""Every candidate length scale ever introduced, in order (unit-cube units)."""
        return [] if self.candidates is None else self.candidates.lengthscale[:, 0].tolist()

    def _norms(self, theta: list[float]) -> Tensor:
        c = self.constants
        t = self._tensor(theta)
        return norm_bound(t, self.theta0, c.B, self.domain.dim) if c.scale_norm else torch.full_like(t, c.B)

    def _spec(self, theta: list[float]) -> KernelCandidates:
        return KernelCandidates.from_lengthscales(self._tensor(theta), kernel=self.kernel, noise=self.noise)

    def _initial_candidates(self, train_X: Tensor, train_Y: Tensor) -> tuple[KernelCandidates, Tensor]:
        r""":math:`\theta_0` = MLE on the initial design; all :math:`q(i) > \theta_0 / g(1)`."""
        self.theta0 = self._fit_theta0(train_X, train_Y)
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
        return suspected_regret_bound(counts + 1, theta, self.domain.dim, kernel, self.norms)

    def _info_spec(self, spec: KernelCandidates) -> KernelCandidates:
        r""":math:`I_t` under the played length scale with noise variance :math:`R^2` (the code's
        :math:`\sigma_N = R`; in the paper preset :math:`R^2` is the GP noise)."""
        return replace(spec, noise=torch.full_like(spec.noise, self.constants.R**2))

    def _diagnostics(self, t: int) -> dict[str, Any]:
        return {
            "theta0": self.theta0,
            "candidates": [round(v, 10) for v in self.lengthscales],
            "theta_L": self.lengthscales[-1],
            "theta_lower": self.theta0 / self._g(t),
        }

    # ----------------------------------------------------------------- state
    def _extra_state(self) -> dict[str, Any]:
        return {**super()._extra_state(), "theta0": self.theta0}

    def _check_extra_state(self, extra: dict[str, Any]) -> None:
        super()._check_extra_state(extra)
        theta0 = extra.get("theta0")
        if (theta0 is None) != (extra["candidates"] is None) or (theta0 is not None and not float(theta0) > 0):
            raise ValueError("state['extra']['theta0'] must be positive once candidates exist.")

    def _load_extra_state(self, extra: dict[str, Any]) -> None:
        super()._load_extra_state(extra)
        self.theta0 = None if extra["theta0"] is None else float(extra["theta0"])


class AGPUCB(LBGPUCB):
    r"""A-GP-UCB (Berkenkamp et al. 2019): :math:`\theta_t = \theta_0 / g(t)`, no refit.

    As run in the length-scale paper by default: :math:`\theta_0` the MLE on the initial
    design and the LB preset's :math:`g(t) = \max(g_0, t^a)`. The hyperparameter
    elimination paper's variant (its task (a)) uses :math:`g(t) = t^{0.9}` and snaps
    :math:`\theta_t` to the nearest member of a finite candidate list:
    ``growth_exponent=0.9, growth_floor=1, snap=[0.3, 0.4, 0.5, 0.7, 1.0], theta0=1.0``
    (that paper does not state :math:`\theta_0`; the longest candidate is our choice).

    Args:
        theta0: Fixed :math:`\theta_0` (unit-cube units) instead of the initial MLE.
        growth_floor: Override the preset's floor :math:`g_0` of :math:`g`.
        snap: Candidate length scales; :math:`\theta_t` is replaced by the nearest one
            (in log scale).
        Other args: as :class:`LBGPUCB`.
    """

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
            self.constants = BalancingConstants(**{**self.constants.__dict__, "g0": float(growth_floor)})
        self.fixed_theta0 = None if theta0 is None else float(theta0)
        self.snap = None if snap is None else sorted(float(v) for v in snap)

    def _initial_candidates(self, train_X: Tensor, train_Y: Tensor) -> tuple[KernelCandidates, Tensor]:
        self.theta0 = self._fit_theta0(train_X, train_Y) if self.fixed_theta0 is None else self.fixed_theta0
        return self._spec([self.theta0]), self._norms([self.theta0])

    def current_lengthscale(self, t: int) -> float:
        r""":math:`\theta_0 / g(t)`, snapped to the nearest candidate if ``snap`` is set."""
        theta = self.theta0 / self._g(t)
        if self.snap is not None:
            theta = min(self.snap, key=lambda v: abs(math.log(v / theta)))
        return theta

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        if q != 1:
            raise ValueError(f"q: A-GP-UCB proposes one point per round (q = 1), got {q}.")
        if self.candidates is None:
            self._start(train_X, train_Y)
        t = self.round + 1
        theta = self.current_lengthscale(t)
        spec = self._spec([theta])
        model = self._build_model(train_X, train_Y, spec)
        beta = self._beta_for(train_X, train_Y, spec, float(self._norms([theta])[0]))
        X = self.maximize(CandidateUCB(model, beta=beta, reduction="select", index=0))
        self.selected = [f"{theta:.6g}"]
        self.n_candidates = 1
        self.diagnostics = {"theta0": self.theta0, "beta": beta}
        return X

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        self.round += 1
