r"""Hyperparameter balancing GP-UCB: the general rule behind LB- and LNB-GP-UCB.

Ziomek, Adachi, Osborne (NeurIPS 2024), Appendix B, Algorithm 2. Every
candidate hyperparameter :math:`u` (a kernel :math:`k^u` with a norm bound
:math:`B^u`) defines a GP-UCB base learner; all learners share all data. With
:math:`S^u_t` the rounds in which :math:`u` was played:

1. (line 3) :math:`u_t = \arg\min_{u \in U_t} R^u(|S^u_{t-1}| + 1)` with a
   *suspected* regret bound :math:`R^u`, by default
   :math:`R^u(T) = \sqrt T\,(B^u\sqrt{\gamma_T(k^u)} + \gamma_T(k^u))` (Thm 2.3).
   :math:`R^u(1) = 0`: a fresh candidate is always played next (first index on ties);
2. (line 4) :math:`x_t = \arg\max_x \mu^{u_t}_{t-1}(x) + \beta^{u_t}_t\sigma^{u_t}_{t-1}(x)`,
   :math:`\beta^u_t = B^u + \sigma_N\sqrt{2(I^u_{t-1} + 1 + \ln(1/\delta_A))}` (Thm 2.1);
3. the width :math:`w_t = \beta^{u_t}_t\sigma^{u_t}_{t-1}(x_t)` is recorded *at play time*;
4. (lines 9-11) once every :math:`u \in U_t` was played, with
   :math:`L_t(u) = \bar y_u - \sqrt{\xi_t/|S^u_t|}`, keep :math:`u` iff

   .. math::

       \bar y_u + \sqrt{\xi_t/|S^u_t|} + \frac{c}{|S^u_t|}\sum_{\tau\in S^u_t} w_\tau
       \ge \max_{u'} L_t(u'),

   with :math:`\xi_t = 2\sigma_N^2\ln(|A|\pi^2t^2/(6\delta_B))` (Lemma B.1). The
   sign of :math:`\sqrt{\xi}` on the left is the one the proof of Lemma B.2
   supports (the printed line has :math:`-\sqrt\xi`); :math:`c = 2` is the
   paper's factor (``width_factor``);
5. (line 13) optionally :math:`U_{t+1} = U_{t+1} \cup a(t)` with a user-supplied
   proposing function :math:`a`.

Defaults: :math:`\delta_A = \delta_B = \delta/2` (Thm 4.1's split), :math:`|A|` the
number of candidates introduced so far, :math:`I^u_{t-1}` the information gain
:math:`\tfrac12\log\det(I + \sigma_u^{-2}K^u)` of the data under the candidate's own
kernel and noise variance, latent (noise-free) :math:`\sigma`. Printed line 5 omits
the noise (:math:`y_t = f(x_t)`); the rule uses the noisy observation.

Rewards are compared on one scale: outputs are standardised on all data every
round and the recorded rewards re-standardised with the scaler in force at the
elimination test; recorded widths stay in the units of their round (as in the
authors' code). Inputs are scaled to the unit cube by the domain bounds.

All active candidates live in one :class:`~botorch_unknown_hypers.models.CandidateGP`
(``batch_shape = (K,)``); the bookkeeping (counts, reward sums, recorded widths,
:math:`L_t`) is vectorised over candidates. :class:`HyperparameterBalancing` takes
any :class:`~botorch_unknown_hypers.candidates.CandidateSpec`, so users can balance
kernels, output scales, noise levels or prior means, not only length scales.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

import torch
from botorch.models.transforms import Normalize, Standardize
from torch import Tensor

from botorch_unknown_hypers.acquisition.ucb import CandidateUCB
from botorch_unknown_hypers.candidates import CandidateSpec, KernelCandidates
from botorch_unknown_hypers.confidence import (
    frequentist_beta,
    information_gain_of_model,
    suspected_regret_bound,
    xi,
)
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.policies.base import Policy, check_optimizer_options
from botorch_unknown_hypers.domains import Domain

Proposal = Optional[tuple[CandidateSpec, Tensor]]
r"""What a proposing function returns: new candidates and their norm bounds, or ``None``."""


def elimination_keep(
    reward_sum: Tensor, counts: Tensor, width_sum: Tensor, xi_t: float, width_factor: float
) -> tuple[Tensor, Tensor]:
    r"""Alg. 1/2 elimination test (proof-supported sign) for candidates that were all played.

    Args:
        reward_sum: ``K`` sums of (standardised) rewards per candidate.
        counts: ``K`` play counts, all ``>= 1``.
        width_sum: ``K`` sums of recorded widths :math:`\beta_\tau\sigma_{\tau-1}(x_\tau)`.
        xi_t: :math:`\xi_t`.
        width_factor: :math:`c` (2 paper, 1 authors' code).

    Returns:
        ``(keep, L)``: ``K`` booleans and the lower bounds :math:`L_t(u)`.
    """
    mean = reward_sum / counts
    conf = torch.sqrt(xi_t / counts)
    lower = mean - conf
    upper = mean + conf + width_factor * width_sum / counts
    return upper >= lower.max(), lower


def _effective_lengthscale(spec: CandidateSpec) -> Tensor:
    r"""Isotropic :math:`\theta` with :math:`\theta^{-d} = \prod_i \ell_i^{-1}` (geometric mean for ARD)."""
    ls = getattr(spec, "lengthscale", None)
    if not isinstance(ls, Tensor):
        raise ValueError(
            "candidates: the default suspected bound needs length scales; pass bound=... "
            f"for a {type(spec).__name__}."
        )
    return ls.log().mean(-1).exp()


class HyperparameterBalancing(Policy):
    r"""Hyperparameter balancing GP-UCB (Ziomek et al. 2024, Alg. 2); see the module docstring.

    Args:
        domain: Box or pool.
        seed, device, dtype: As :class:`~botorch_unknown_hypers.policies.base.Policy`.
        candidates: The initial set :math:`a(0)`; defaults to eight Matern-5/2
            length scales :math:`2^{0}, 2^{-1/2}, \dots` of the unit cube, noise 1e-4.
        norms: Norm bounds :math:`B^u` of the initial candidates (scalar or ``K``).
        propose: Optional :math:`a(t)`: called after round ``t`` as ``propose(t, policy)``;
            returns ``None`` or ``(spec, norms)`` of new candidates (same family as
            ``candidates``). It must be deterministic given the policy's state.
        bound: Optional suspected bound: ``bound(T, policy) -> K`` values of
            :math:`R^u(T_u)` for every candidate introduced (``T`` is ``K``, the play
            counts plus one). Default: Thm 2.3 with the candidate's kernel rate
            :math:`\gamma_T` at its (geometric-mean) length scale.
        noise_std: :math:`\sigma_N`, the sub-Gaussian noise scale in :math:`\beta`
            and :math:`\xi` (standardised units).
        delta: :math:`\delta`, split as :math:`\delta_A = \delta_B = \delta/2`.
        width_factor: :math:`c` in the elimination test (paper: 2).
        noisy_sigma: Record :math:`\sigma` including the likelihood noise (the
            authors' code) instead of the latent one.
        num_restarts, raw_samples: Acquisition optimisation on a box.
    """

    name = "hb-gp-ucb"
    xi_count = "introduced"  # |A| in xi_t: "introduced" (Lemma B.1) or "active" (authors' code)
    xi_delta_split = 2.0  # delta_B = delta / 2 (Thm 4.1); the authors' code uses delta itself

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        candidates: CandidateSpec | None = None,
        norms: float | Tensor = 1.0,
        propose: Callable[[int, HyperparameterBalancing], Proposal] | None = None,
        bound: Callable[[Tensor, HyperparameterBalancing], Tensor] | None = None,
        noise_std: float = 1e-2,
        delta: float = 0.01,
        width_factor: float = 2.0,
        noisy_sigma: bool = False,
        num_restarts: int = 10,
        raw_samples: int = 512,
    ) -> None:
        super().__init__(domain, seed=seed, device=device, dtype=dtype)
        if not (noise_std >= 0 and math.isfinite(noise_std)):
            raise ValueError(f"noise_std must be finite and >= 0, got {noise_std}.")
        if not 0 < delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {delta}.")
        if not width_factor > 0:
            raise ValueError(f"width_factor must be positive, got {width_factor}.")
        check_optimizer_options(num_restarts, raw_samples)
        if propose is not None and not callable(propose):
            raise ValueError("propose must be callable (t, policy) -> (spec, norms) | None.")
        if bound is not None and not callable(bound):
            raise ValueError("bound must be callable (T, policy) -> Tensor.")
        self.noise_std = float(noise_std)
        self.delta = float(delta)
        self.width_factor = float(width_factor)
        self.noisy_sigma = bool(noisy_sigma)
        self.num_restarts = num_restarts
        self.raw_samples = raw_samples
        self._propose_fn = propose
        self._bound_fn = bound
        if candidates is None:
            ladder = 2.0 ** (-0.5 * torch.arange(8, dtype=dtype))
            candidates = KernelCandidates.from_lengthscales(ladder, kernel="matern52", noise=1e-4)
        self._initial = self._check_proposal(candidates, norms, "candidates")
        # state
        self.candidates: CandidateSpec | None = None  # every candidate ever introduced, in order
        self.norms: Tensor | None = None  # B^u of every candidate introduced
        self.active: list[bool] = []
        self.eliminated_at: dict[int, int] = {}
        self.play_candidate: list[int] = []
        self.play_y: list[float] = []  # raw y of each play
        self.play_width: list[float] = []  # recorded beta * sigma (standardised units)
        self.round = 0
        self.pending: dict[str, Any] | None = None
        self.diagnostics: dict[str, Any] = {}

    # ------------------------------------------------------------------ hooks
    def _check_proposal(self, spec: CandidateSpec, norms: float | Tensor, name: str) -> tuple[CandidateSpec, Tensor]:
        if not isinstance(spec, CandidateSpec):
            raise ValueError(f"{name} must implement CandidateSpec, got {type(spec).__name__}.")
        if len(spec) < 1:
            raise ValueError(f"{name} must hold at least one candidate.")
        if hasattr(spec, "to"):
            spec = spec.to(device=self.device, dtype=self.dtype)
        n = torch.as_tensor(norms, dtype=self.dtype, device=self.device)
        if n.ndim == 0:
            n = n.expand(len(spec)).clone()
        if n.shape != (len(spec),) or not torch.isfinite(n).all() or (n < 0).any():
            raise ValueError(
                f"norms of {name} must be a finite non-negative scalar or {len(spec)} values, "
                f"got {n.tolist()}."
            )
        return spec, n

    def _initial_candidates(self, train_X: Tensor, train_Y: Tensor) -> tuple[CandidateSpec, Tensor]:
        r""":math:`a(0)`: the candidates and norm bounds the rule starts from."""
        return self._initial

    def _propose(self, t: int) -> Proposal:
        r""":math:`a(t)` after round ``t`` (Alg. 2 line 13); ``None`` adds nothing."""
        if self._propose_fn is None:
            return None
        out = self._propose_fn(t, self)
        if out is None:
            return None
        return self._check_proposal(out[0], out[1], "propose(...)")

    def suspected_bounds(self, counts: Tensor) -> Tensor:
        r""":math:`R^u(|S^u| + 1)` of every candidate ever introduced."""
        T = counts + 1
        if self._bound_fn is not None:
            out = torch.as_tensor(self._bound_fn(T, self), dtype=self.dtype, device=self.device)
            if out.shape != T.shape:
                raise ValueError(f"bound must return {tuple(T.shape)} values, got {tuple(out.shape)}.")
            return out
        kernel = getattr(self.candidates, "kernel", "matern52")
        theta = _effective_lengthscale(self.candidates)
        return suspected_regret_bound(T, theta, self.domain.dim, kernel, self.norms)

    def _info_spec(self, spec: CandidateSpec) -> CandidateSpec:
        r"""The candidate whose information gain enters :math:`\beta` (itself by default)."""
        return spec

    def _beta_for(self, train_X: Tensor, train_Y: Tensor, spec: CandidateSpec, B: float) -> float:
        r""":math:`\beta_t = B + \sigma_N\sqrt{2(I_{t-1} + 1 + \ln(2/\delta))}` for the one-candidate ``spec``,
        :math:`I_{t-1}` the information gain of the data under :meth:`_info_spec` of it."""
        info_model = CandidateGP(
            train_X,
            train_Y,
            self._info_spec(spec),
            input_transform=Normalize(self.domain.dim, bounds=self.domain.bounds),
        )
        info = float(information_gain_of_model(info_model).reshape(-1)[0])
        return float(frequentist_beta(info, B=B, R=self.noise_std, delta=self.delta / 2))

    def _beta(self, train_X: Tensor, train_Y: Tensor, k: int) -> float:
        r""":math:`\beta^u_t = B^u + \sigma_N\sqrt{2(I^u_{t-1} + 1 + \ln(2/\delta))}`."""
        return self._beta_for(train_X, train_Y, self.candidates.subset([k]), float(self.norms[k]))

    def _xi(self, t: int) -> float:
        r""":math:`\xi_t = 2\sigma_N^2\ln(|A|\pi^2t^2/(6\delta_B))`, :math:`\delta_B = \delta` / ``xi_delta_split``."""
        count = sum(self.active) if self.xi_count == "active" else len(self.active)
        return float(xi(t, count, self.noise_std, self.delta / self.xi_delta_split))

    def _label(self, k: int) -> str:
        return self.candidates.subset([k]).labels()[0]

    # ---------------------------------------------------------------- helpers
    def _tensor(self, values: list[float]) -> Tensor:
        return torch.tensor(values, dtype=self.dtype, device=self.device)

    def _add(self, spec: CandidateSpec, norms: Tensor) -> None:
        self.candidates = spec if self.candidates is None else self.candidates.cat(spec)
        self.norms = norms if self.norms is None else torch.cat([self.norms, norms])
        self.active.extend([True] * len(spec))

    def counts(self) -> Tensor:
        r"""Play counts :math:`|S^u|` of every candidate ever introduced."""
        idx = torch.tensor(self.play_candidate, dtype=torch.long, device=self.device)
        return torch.zeros(len(self.active), dtype=self.dtype, device=self.device).index_add_(
            0, idx, torch.ones_like(idx, dtype=self.dtype)
        )

    def _build_model(self, train_X: Tensor, train_Y: Tensor, spec: CandidateSpec) -> CandidateGP:
        r"""One batched GP over ``spec``: unit-cube inputs, standardised outputs."""
        return CandidateGP(
            train_X,
            train_Y,
            spec,
            input_transform=Normalize(self.domain.dim, bounds=self.domain.bounds),
            outcome_transform=Standardize(m=1),
        )

    def _model(self, train_X: Tensor, train_Y: Tensor, indices: list[int]) -> CandidateGP:
        r"""One batched GP over the candidates at ``indices``."""
        return self._build_model(train_X, train_Y, self.candidates.subset(indices))

    def _start(self, train_X: Tensor, train_Y: Tensor) -> None:
        spec, norms = self._initial_candidates(train_X, train_Y)
        self._add(spec, norms)

    def _diagnostics(self, t: int) -> dict[str, Any]:
        r"""Rule-specific entries of the per-round diagnostics."""
        return {"candidates": self.candidates.labels(), "norms": self.norms.tolist()}

    # ------------------------------------------------------------------ rule
    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        if q != 1:
            raise ValueError(f"q: {self.name} proposes one point per round (q = 1), got {q}.")
        if self.candidates is None:
            self._start(train_X, train_Y)
        t = self.round + 1
        active = torch.tensor(self.active, device=self.device)
        counts = self.counts()
        bounds = self.suspected_bounds(counts)
        masked = torch.where(active, bounds, torch.full_like(bounds, float("inf")))
        k = int(torch.argmin(masked))  # line 3; first index on ties
        active_idx = active.nonzero().flatten().tolist()
        model = self._model(train_X, train_Y, active_idx)
        beta = self._beta(train_X, train_Y, k)
        acqf = CandidateUCB(model, beta=beta, reduction="select", index=active_idx.index(k))
        X = self.maximize(acqf)  # line 4
        # Width at play time from the played candidate's model (the posterior on D_{t-1}),
        # in the standardised units of this round.
        played = acqf.evaluated_model
        with torch.no_grad():
            _, var = played.marginal_mean_variance(X.unsqueeze(0), observation_noise=self.noisy_sigma)
        std_y = float(played.outcome_transform.stdvs.squeeze())
        mean_y = float(played.outcome_transform.means.squeeze())
        sigma = float(var[0, 0].sqrt()) / std_y
        self.pending = {"candidate": k, "width": beta * sigma, "y_mean": mean_y, "y_std": std_y, "beta": beta}
        self.selected = [self._label(k)]
        self.n_candidates = len(active_idx)
        self.diagnostics = {
            **self._diagnostics(t),
            "played": k,
            "active": list(self.active),
            "counts": counts.tolist(),
            "suspected_bounds": [float(v) if math.isfinite(v) else None for v in bounds.tolist()],
            "beta": beta,
        }
        return X

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        if self.pending is None:
            return  # data without a play: enters D but no S^u
        pending, self.pending = self.pending, None
        self.round += 1
        t = self.round
        self.play_candidate.append(pending["candidate"])
        self.play_y.append(float(Y.squeeze()))
        self.play_width.append(pending["width"])
        # lines 9-11: elimination once every current candidate has been played.
        counts = self.counts()
        active = torch.tensor(self.active, device=self.device)
        xi_t = None
        if bool((counts[active] > 0).all()):
            idx = torch.tensor(self.play_candidate, dtype=torch.long, device=self.device)
            y_std = (self._tensor(self.play_y) - pending["y_mean"]) / pending["y_std"]
            zeros = torch.zeros(len(self.active), dtype=self.dtype, device=self.device)
            reward_sum = zeros.clone().index_add_(0, idx, y_std)
            width_sum = zeros.clone().index_add_(0, idx, self._tensor(self.play_width))
            xi_t = self._xi(t)
            keep, lower = elimination_keep(
                reward_sum[active], counts[active], width_sum[active], xi_t, self.width_factor
            )
            active_idx = active.nonzero().flatten().tolist()
            for j, i in enumerate(active_idx):
                if not bool(keep[j]):
                    self.active[i] = False
                    self.eliminated_at[i] = t
            self.diagnostics["lower_bounds"] = dict(zip(active_idx, lower.tolist()))
        self.diagnostics["xi"] = xi_t
        self.diagnostics["eliminated"] = {str(k): v for k, v in self.eliminated_at.items()}
        # line 13: optional proposals.
        new = self._propose(t)
        if new is not None:
            self._add(*new)

    # ----------------------------------------------------------------- state
    def _extra_state(self) -> dict[str, Any]:
        return {
            "candidates": None if self.candidates is None else self.candidates.to_dict(),
            "norms": None if self.norms is None else self.norms.tolist(),
            "active": list(self.active),
            "eliminated_at": {str(k): v for k, v in self.eliminated_at.items()},
            "play_candidate": list(self.play_candidate),
            "play_y": list(self.play_y),
            "play_width": list(self.play_width),
            "round": self.round,
            "pending": self.pending,
        }

    def _spec_from_dict(self, state: dict[str, Any]) -> CandidateSpec:
        r"""Rebuild the candidate set from :meth:`_extra_state` (``KernelCandidates`` by default)."""
        return KernelCandidates.from_dict(state, dtype=self.dtype, device=self.device)

    def _check_extra_state(self, extra: dict[str, Any]) -> None:
        if not isinstance(extra, dict):
            raise ValueError("state['extra'] must be a dict.")
        try:
            n = len(extra["active"])
            if extra["candidates"] is None:
                ok = n == 0 and not extra["play_candidate"]
            else:
                spec = self._spec_from_dict(extra["candidates"])
                norms = [float(v) for v in extra["norms"]]
                ok = len(spec) == n == len(norms) and all(v >= 0 for v in norms)
            ok = (
                ok
                and len(extra["play_candidate"]) == len(extra["play_y"]) == len(extra["play_width"])
                and all(0 <= int(i) < n for i in extra["play_candidate"])
                and int(extra["round"]) >= 0
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"state['extra'] is not a {self.name} state: {e}") from None
        if not ok:
            raise ValueError("state['extra'] is inconsistent (lengths, indices or values).")

    def _load_extra_state(self, extra: dict[str, Any]) -> None:
        if extra["candidates"] is None:
            self.candidates, self.norms = None, None
        else:
            self.candidates = self._spec_from_dict(extra["candidates"])
            self.norms = self._tensor([float(v) for v in extra["norms"]])
        self.active = [bool(v) for v in extra["active"]]
        self.eliminated_at = {int(k): int(v) for k, v in extra.get("eliminated_at", {}).items()}
        self.play_candidate = [int(v) for v in extra["play_candidate"]]
        self.play_y = [float(v) for v in extra["play_y"]]
        self.play_width = [float(v) for v in extra["play_width"]]
        self.round = int(extra["round"])
        self.pending = extra.get("pending")
