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
vectorised over candidates with ``scatter_add``.

A-GP-UCB (Berkenkamp et al. 2019, as run in the paper): :math:`\theta_t = \theta_0 / g(t)`
with the same :math:`\theta_0`, :math:`g` and :math:`\beta` as LB-GP-UCB, no refitting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from botorch.models.transforms import Normalize, Standardize
from botorch.optim import optimize_acqf
from torch import Tensor

from botorch_unknown_hypers.acquisition.ucb import CandidateUCB
from botorch_unknown_hypers.candidates import KERNELS, KernelCandidates
from botorch_unknown_hypers.confidence import (
    frequentist_beta,
    information_gain_of_model,
    norm_bound,
    suspected_regret_bound,
    xi,
)
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.baselines import check_gp_options, fit_single_task_gp
from botorch_unknown_hypers.problems.base import Domain, FiniteDomain

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


def elimination_keep(
    reward_sum: Tensor, counts: Tensor, width_sum: Tensor, xi_t: float, width_factor: float
) -> tuple[Tensor, Tensor]:
    r"""Alg. 1 lines 10-12 (proof-supported sign) for candidates that were all played.

    Args:
        reward_sum: ``K`` sums of (standardised) rewards per candidate.
        counts: ``K`` play counts, all ``>= 1``.
        width_sum: ``K`` sums of recorded widths :math:`\beta_\tau\sigma_{\tau-1}(x_\tau)`.
        xi_t: :math:`\xi_t`.
        width_factor: :math:`c` (2 paper, 1 code).

    Returns:
        ``(keep, L)``: ``K`` booleans and the lower bounds :math:`L_t(\theta)`.
    """
    mean = reward_sum / counts
    conf = torch.sqrt(xi_t / counts)
    lower = mean - conf
    upper = mean + conf + width_factor * width_sum / counts
    return upper >= lower.max(), lower


class LBGPUCB(Policy):
    r"""LB-GP-UCB (Ziomek et al. 2024, Alg. 1); see the module docstring.

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
        super().__init__(domain, seed=seed, device=device, dtype=dtype)
        check_gp_options(kernel, noise, num_restarts, raw_samples)
        if not growth_exponent > 0:
            raise ValueError(f"growth_exponent must be positive, got {growth_exponent}.")
        self.preset = preset
        self.kernel = kernel
        self.noise = noise
        self.constants = preset_constants(preset, self.domain.dim, kernel, noise, growth_exponent)
        if width_factor is not None:
            if not width_factor > 0:
                raise ValueError(f"width_factor must be positive, got {width_factor}.")
            self.constants = BalancingConstants(**{**self.constants.__dict__, "width_factor": float(width_factor)})
        self.num_restarts = num_restarts
        self.raw_samples = raw_samples
        # state
        self.theta0: float | None = None
        self.lengthscales: list[float] = []  # every candidate ever introduced, in order
        self.active: list[bool] = []
        self.eliminated_at: dict[int, int] = {}
        self.play_candidate: list[int] = []
        self.play_y: list[float] = []  # raw y of each play
        self.play_width: list[float] = []  # recorded beta * sigma (standardised units)
        self.round = 0
        self.pending: dict[str, Any] | None = None
        self.diagnostics: dict[str, Any] = {}

    # ---------------------------------------------------------------- helpers
    def _g(self, t: float) -> float:
        return growth(t, self.constants.g0, self.constants.growth_exponent)

    def _start(self, train_X: Tensor, train_Y: Tensor) -> None:
        model = fit_single_task_gp(train_X, train_Y, self.domain.bounds, kernel=self.kernel, noise=self.noise)
        self.theta0 = float(model.covar_module.base_kernel.lengthscale.item())
        self.lengthscales = initial_ladder(self.theta0, self.constants.ratio, self._g(1))
        self.active = [True] * len(self.lengthscales)

    def _tensor(self, values: list[float]) -> Tensor:
        return torch.tensor(values, dtype=self.dtype, device=self.device)

    def counts(self) -> Tensor:
        r"""Play counts :math:`|S^\theta|` of every candidate ever introduced."""
        idx = torch.tensor(self.play_candidate, dtype=torch.long, device=self.device)
        return torch.zeros(len(self.lengthscales), dtype=self.dtype, device=self.device).index_add_(
            0, idx, torch.ones_like(idx, dtype=self.dtype)
        )

    def suspected_bounds(self, counts: Tensor) -> Tensor:
        r""":math:`R^\theta(|S^\theta| + 1)` of every candidate ever introduced."""
        c = self.constants
        theta = self._tensor(self.lengthscales)
        kernel = c.bound_kernel or self.kernel
        B = norm_bound(theta, self.theta0, c.B, self.domain.dim) if c.scale_norm else c.B
        return suspected_regret_bound(counts + 1, theta, self.domain.dim, kernel, B)

    def _beta(self, train_X: Tensor, train_Y: Tensor, theta: float) -> float:
        r""":math:`\beta_t = B + R\sqrt{2(I_t + 1 + \ln(2/\delta))}`, :math:`I_t` under ``theta`` with
        :math:`\sigma_N = R` (:math:`B = B(\theta)` in the paper preset)."""
        c = self.constants
        cands = KernelCandidates.from_lengthscales(self._tensor([theta]), kernel=self.kernel, noise=c.R**2)
        info_model = CandidateGP(
            train_X, train_Y, cands, input_transform=Normalize(self.domain.dim, bounds=self.domain.bounds)
        )
        info = float(information_gain_of_model(info_model).reshape(-1)[0])
        B = c.B * (self.theta0 / theta) ** (self.domain.dim / 2) if c.scale_norm else c.B
        return float(frequentist_beta(info, B=B, R=c.R, delta=c.delta / 2))

    def _model(self, train_X: Tensor, train_Y: Tensor, lengthscales: list[float]) -> CandidateGP:
        r"""One batched GP over ``lengthscales``: unit-cube inputs, standardised outputs."""
        cands = KernelCandidates.from_lengthscales(self._tensor(lengthscales), kernel=self.kernel, noise=self.noise)
        return CandidateGP(
            train_X,
            train_Y,
            cands,
            input_transform=Normalize(self.domain.dim, bounds=self.domain.bounds),
            outcome_transform=Standardize(m=1),
        )

    def _maximise(self, acqf: CandidateUCB) -> Tensor:
        r"""Argmax of a one-candidate UCB: exhaustive on a pool, ``optimize_acqf`` on a box."""
        if isinstance(self.domain, FiniteDomain):
            values = acqf.candidate_values(self.domain.points).squeeze(-1)
            return self.domain.points[int(values.argmax())].unsqueeze(0)
        X, _ = optimize_acqf(
            acqf,
            bounds=self.domain.bounds,
            q=1,
            num_restarts=self.num_restarts,
            raw_samples=self.raw_samples,
            options={"seed": self.next_seed()},
        )
        return X.detach()

    # ------------------------------------------------------------------ rule
    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        if q != 1:
            raise ValueError("q: LB-GP-UCB proposes one point per round (q = 1).")
        if self.theta0 is None:
            self._start(train_X, train_Y)
        t = self.round + 1
        active = torch.tensor(self.active, device=self.device)
        counts = self.counts()
        bounds = self.suspected_bounds(counts)
        masked = torch.where(active, bounds, torch.full_like(bounds, float("inf")))
        k = int(torch.argmin(masked))  # Alg. 1 line 3; first index on ties
        theta = self.lengthscales[k]
        active_idx = active.nonzero().flatten().tolist()
        model = self._model(train_X, train_Y, [self.lengthscales[i] for i in active_idx])
        local = active_idx.index(k)
        beta = self._beta(train_X, train_Y, theta)
        acqf = CandidateUCB(model, beta=beta, reduction="select", index=local)
        X = self._maximise(acqf)  # line 4
        # Record the width at play time, standardised units (Alg. 1 line 12, trap 3), from
        # the played candidate's model only (the acquisition's one-candidate view).
        played = acqf.evaluated_model
        with torch.no_grad():
            _, var = played.marginal_mean_variance(X.unsqueeze(0), observation_noise=self.constants.noisy_sigma)
        std_y = float(played.outcome_transform.stdvs.squeeze())
        mean_y = float(played.outcome_transform.means.squeeze())
        sigma = float(var[0, 0].sqrt()) / std_y
        self.pending = {"candidate": k, "width": beta * sigma, "y_mean": mean_y, "y_std": std_y, "beta": beta}
        self.selected = [f"{theta:.6g}"]
        self.n_candidates = len(active_idx)
        self.diagnostics = {
            "theta0": self.theta0,
            "candidates": [round(v, 10) for v in self.lengthscales],
            "active": list(self.active),
            "counts": counts.tolist(),
            "suspected_bounds": [float(v) if math.isfinite(v) else None for v in bounds.tolist()],
            "beta": beta,
            "theta_L": self.lengthscales[-1],
            "theta_lower": self.theta0 / self._g(t),
        }
        return X

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        if self.pending is None:
            return  # data without a play: enters D but no S^theta
        pending, self.pending = self.pending, None
        self.round += 1
        t = self.round
        self.play_candidate.append(pending["candidate"])
        self.play_y.append(float(Y.squeeze()))
        self.play_width.append(pending["width"])
        c = self.constants
        # Alg. 1 lines 9-12: elimination once every current candidate has been played.
        counts = self.counts()
        active = torch.tensor(self.active, device=self.device)
        xi_t = None
        if bool((counts[active] > 0).all()):
            idx = torch.tensor(self.play_candidate, dtype=torch.long, device=self.device)
            y_std = (self._tensor(self.play_y) - pending["y_mean"]) / pending["y_std"]
            zeros = torch.zeros(len(self.lengthscales), dtype=self.dtype, device=self.device)
            reward_sum = zeros.clone().index_add_(0, idx, y_std)
            width_sum = zeros.clone().index_add_(0, idx, self._tensor(self.play_width))
            count_xi = int(active.sum()) if c.xi_count == "active" else len(self.lengthscales)
            xi_t = float(xi(t, count_xi, c.R, c.delta / c.xi_delta_split))
            keep, lower = elimination_keep(
                reward_sum[active], counts[active], width_sum[active], xi_t, c.width_factor
            )
            active_idx = active.nonzero().flatten().tolist()
            for j, i in enumerate(active_idx):
                if not bool(keep[j]):
                    self.active[i] = False
                    self.eliminated_at[i] = t
            self.diagnostics["lower_bounds"] = dict(zip(active_idx, lower.tolist()))
        self.diagnostics["xi"] = xi_t
        self.diagnostics["eliminated"] = {str(k): v for k, v in self.eliminated_at.items()}
        # Alg. 1 lines 14-16, corrected direction; at most one new candidate per round.
        nxt = next_candidate(self.lengthscales[-1], self.theta0, c.ratio, self._g(t + 1))
        if nxt is not None:
            self.lengthscales.append(nxt)
            self.active.append(True)

    # ----------------------------------------------------------------- state
    def _extra_state(self) -> dict[str, Any]:
        return {
            "theta0": self.theta0,
            "lengthscales": list(self.lengthscales),
            "active": list(self.active),
            "eliminated_at": {str(k): v for k, v in self.eliminated_at.items()},
            "play_candidate": list(self.play_candidate),
            "play_y": list(self.play_y),
            "play_width": list(self.play_width),
            "round": self.round,
            "pending": self.pending,
        }

    def _check_extra_state(self, extra: dict[str, Any]) -> None:
        if not isinstance(extra, dict):
            raise ValueError("state['extra'] must be a dict.")
        try:
            n = len(extra["lengthscales"])
            ok = (
                len(extra["active"]) == n
                and len(extra["play_candidate"]) == len(extra["play_y"]) == len(extra["play_width"])
                and all(0 <= int(i) < n for i in extra["play_candidate"])
                and all(float(v) > 0 for v in extra["lengthscales"])
                and int(extra["round"]) >= 0
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"state['extra'] is not an LB-GP-UCB state: {e}") from None
        if not ok:
            raise ValueError("state['extra'] is inconsistent (lengths, indices or values).")

    def _load_extra_state(self, extra: dict[str, Any]) -> None:
        self.theta0 = None if extra["theta0"] is None else float(extra["theta0"])
        self.lengthscales = [float(v) for v in extra["lengthscales"]]
        self.active = [bool(v) for v in extra["active"]]
        self.eliminated_at = {int(k): int(v) for k, v in extra.get("eliminated_at", {}).items()}
        self.play_candidate = [int(v) for v in extra["play_candidate"]]
        self.play_y = [float(v) for v in extra["play_y"]]
        self.play_width = [float(v) for v in extra["play_width"]]
        self.round = int(extra["round"])
        self.pending = extra.get("pending")


class AGPUCB(LBGPUCB):
    r"""A-GP-UCB as run in the length-scale paper: :math:`\theta_t = \theta_0 / g(t)`, no refit."""

    name = "a-gp-ucb"

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        if q != 1:
            raise ValueError("q: A-GP-UCB proposes one point per round (q = 1).")
        if self.theta0 is None:
            self._start(train_X, train_Y)
        t = self.round + 1
        theta = self.theta0 / self._g(t)
        model = self._model(train_X, train_Y, [theta])
        beta = self._beta(train_X, train_Y, theta)
        X = self._maximise(CandidateUCB(model, beta=beta, reduction="select", index=0))
        self.selected = [f"{theta:.6g}"]
        self.n_candidates = 1
        self.diagnostics = {"theta0": self.theta0, "beta": beta}
        return X

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        self.round += 1
