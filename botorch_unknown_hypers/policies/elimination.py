r"""Hyperparameter elimination: HE-GP-UCB over a finite candidate set of any type.

Ziomek, Adachi, Osborne, "Beyond Lengthscales: No-regret Bayesian Optimisation
With Unknown Hyperparameters Of Any Type", Algorithm 1. Every surviving
candidate :math:`u \in U_{t-1}` has a GP fitted (with fixed hyperparameters) to
**all** data :math:`D_{t-1}`. At round :math:`t`:

1. (line 7, "doubly optimistic") :math:`(x_t, u_t) = \arg\max_{(x, u) \in X \times U_{t-1}}
   \mu^u_{t-1}(x) + \beta^u_t \sigma^u_{t-1}(x)`: one multi-start problem over
   (point, candidate) pairs (:func:`~botorch_unknown_hypers.acquisition.optimize.optimize_ucb_joint`;
   every (point, candidate) on a pool);
2. record :math:`m_t = \mu^{u_t}_{t-1}(x_t)` and the width
   :math:`w_t = \beta^{u_t}_t\sigma^{u_t}_{t-1}(x_t)` **at selection time** (ambiguity A2:
   the printed :math:`\sigma_i` would be conditioned on :math:`x_i` itself);
3. observe :math:`y_t`; the prequential residual :math:`\eta_t = y_t - m_t`;
4. (line 12) only :math:`u_t` is tested: it is eliminated iff

   .. math::

       \Big|\sum_{i \in S^{u_t}} \eta_i\Big| > \sqrt{\xi_t |S^{u_t}|} + \sum_{i \in S^{u_t}} w_i,
       \qquad \xi_t = 2R^2 \log\frac{|U|\pi^2 t^2}{3\delta}

   (Lemma 5.1 with :math:`\delta_B = \delta/2`, :math:`\pi^2` as in Lemma 5.1 and
   Thm 4.2, ambiguity A3; :math:`|U|` the original set). The last survivor is never
   eliminated; the event is logged in the diagnostics instead.

Confidence multipliers :math:`\beta^u_t` (``beta``):

- ``"frequentist"`` (Thm 4.1): :math:`B + R\sqrt{2(I^u_{t-1} + 1 + \ln(2/\delta))}` with
  :math:`I^u_{t-1} = \tfrac12\log\det(I + R^{-2}K^u)` the information gain of the data
  under :math:`u` (a lower bound of the MIG :math:`\gamma^u_{t-1}`, 0 at :math:`t = 1`);
- ``"bayesian-finite"`` (Thm 4.2 A): :math:`\sqrt{2\log(|X|\pi^2t^2/(3\delta))}` on a pool;
- ``"bayesian-continuous"`` (Thm 4.2 B): the continuous-domain form with
  Lipschitz constants ``a``, ``b`` (:func:`~botorch_unknown_hypers.confidence.bayesian_beta_continuous`);
- a number: a fixed multiplier.

Conventions (ambiguity A6): the initial design enters :math:`D_0` but no
:math:`S^u`, and :math:`t` counts BO rounds only. Outputs are **not** standardised
(residuals stored at different rounds must share units); inputs are scaled to the
unit cube by the domain bounds, so length-scale candidates are in unit-cube units.
The GP noise variance is :math:`R^2`, the known noise level.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from botorch.models.transforms import Normalize
from torch import Tensor

from botorch_unknown_hypers.acquisition.optimize import joint_ucb_argmax
from botorch_unknown_hypers.candidates import CandidateSpec, KernelCandidates
from botorch_unknown_hypers.confidence import (
    bayesian_beta_continuous,
    bayesian_beta_finite,
    frequentist_beta,
    information_gain_of_model,
)
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.policies.base import Policy, check_optimizer_options
from botorch_unknown_hypers.domains import Domain

BETAS = ("frequentist", "bayesian-finite", "bayesian-continuous")
DEFAULT_LENGTHSCALES = (0.3, 0.4, 0.5, 0.7, 1.0)  # the paper's length-scale task (a)


def he_xi(t: int, num_candidates: int, R: float, delta: float) -> float:
    r""":math:`\xi_t = 2R^2\log(|U|\pi^2t^2/(3\delta))` (Lemma 5.1, :math:`\delta_B = \delta/2`)."""
    return 2.0 * R**2 * math.log(num_candidates * math.pi**2 * t**2 / (3.0 * delta))


def elimination_statistics(
    played: list[int], eta: list[float], width: list[float], num_candidates: int, xi_t: float
) -> tuple[Tensor, Tensor]:
    r"""Every candidate's statistic :math:`|\sum_{i \in S^u}\eta_i|` and threshold
    :math:`\sqrt{\xi_t |S^u|} + \sum_{i \in S^u} w_i` from the per-round records (``K`` each)."""
    idx = torch.tensor(played, dtype=torch.long)
    zeros = torch.zeros(num_candidates, dtype=torch.float64)
    counts = zeros.index_add(0, idx, torch.ones(len(played), dtype=torch.float64))
    eta_sum = zeros.index_add(0, idx, torch.tensor(eta, dtype=torch.float64))
    width_sum = zeros.index_add(0, idx, torch.tensor(width, dtype=torch.float64))
    return eta_sum.abs(), (xi_t * counts).sqrt() + width_sum


class EliminationMixin:
    r"""The surviving set of an elimination rule and its log.

    A subclass keeps ``alive`` (one flag per candidate), ``eliminated_at``
    (candidate -> round) and ``kept_last`` (rounds where the last survivor failed
    its test). Shared by HE-GP-UCB, HE-StableOpt and the prior-elimination rules
    (:mod:`~botorch_unknown_hypers.policies.prior_selection`).
    """

    alive: list[bool]
    eliminated_at: dict[int, int]
    kept_last: list[int]

    def _eliminate(self, u: int, t: int) -> None:
        r"""Remove ``u`` at round ``t`` unless it is the last survivor (then log the round)."""
        if not self.alive[u]:
            return
        if sum(self.alive) > 1:
            self.alive[u] = False
            self.eliminated_at[u] = t
        else:
            self.kept_last.append(t)


class CandidateSetPolicy(EliminationMixin, Policy):
    r"""Shared machinery of rules over a fixed finite candidate set :math:`U`.

    Args:
        domain: Box or pool.
        seed, device, dtype: As :class:`~botorch_unknown_hypers.policies.base.Policy`.
        candidates: The set :math:`U` (any :class:`~botorch_unknown_hypers.candidates.CandidateSpec`),
            or the name of a task's set (``"lengthscale"``, ``"period"``, ``"additive3d"``,
            ``"hills"``, see :func:`~botorch_unknown_hypers.problems.elimination_tasks.task_candidates`);
            default: Matern-5/2 length scales 0.3, 0.4, 0.5, 0.7, 1.0 (task (a)), output scale 1.
        noise_std: :math:`R`; the GPs use noise variance :math:`R^2` unless the candidates set one.
        beta: ``"frequentist"``, ``"bayesian-finite"``, ``"bayesian-continuous"`` or a number.
        B: RKHS norm bound of the frequentist :math:`\beta`.
        delta: :math:`\delta` (0.1 in the paper).
        lipschitz: ``(a, b)`` of Assumption B.1 for ``"bayesian-continuous"``.
        num_restarts, raw_samples: Acquisition optimisation on a box (per candidate).
    """

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        candidates: CandidateSpec | str | None = None,
        noise_std: float = 0.01,
        beta: str | float = "frequentist",
        B: float = 1.0,
        delta: float = 0.1,
        lipschitz: tuple[float, float] = (1.0, 1.0),
        num_restarts: int = 10,
        raw_samples: int = 512,
    ) -> None:
        super().__init__(domain, seed=seed, device=device, dtype=dtype)
        if not (noise_std > 0 and math.isfinite(noise_std)):
            raise ValueError(f"noise_std must be positive and finite, got {noise_std}.")
        if isinstance(beta, str):
            if beta not in BETAS:
                raise ValueError(f"beta must be one of {BETAS} or a number, got {beta!r}.")
            if beta == "bayesian-finite" and not math.isfinite(domain.size):
                raise ValueError("beta='bayesian-finite' needs a finite domain (a pool).")
        elif not (float(beta) >= 0 and math.isfinite(float(beta))):
            raise ValueError(f"beta must be a finite non-negative number, got {beta}.")
        if not 0 < delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {delta}.")
        if not B >= 0:
            raise ValueError(f"B must be >= 0, got {B}.")
        check_optimizer_options(num_restarts, raw_samples)
        if candidates is None:
            ls = torch.tensor(DEFAULT_LENGTHSCALES, dtype=dtype)
            candidates = KernelCandidates.from_lengthscales(ls, kernel="matern52", noise=noise_std**2)
        elif isinstance(candidates, str):
            from botorch_unknown_hypers.problems.elimination_tasks import task_candidates

            candidates = task_candidates(candidates, noise_std, dtype=dtype)
        if not isinstance(candidates, CandidateSpec) or len(candidates) < 1:
            raise ValueError("candidates must be a non-empty CandidateSpec.")
        self.candidates = candidates.to(device=self.device, dtype=dtype) if hasattr(candidates, "to") else candidates
        self.noise_std = float(noise_std)
        self.beta = beta if isinstance(beta, str) else float(beta)
        self.B = float(B)
        self.delta = float(delta)
        self.lipschitz = (float(lipschitz[0]), float(lipschitz[1]))
        self.num_restarts = num_restarts
        self.raw_samples = raw_samples
        self.round = 0
        self.diagnostics: dict[str, Any] = {}

    def _model(self, train_X: Tensor, train_Y: Tensor, indices: list[int]) -> CandidateGP:
        return CandidateGP(
            train_X,
            train_Y,
            self.candidates.subset(indices),
            input_transform=Normalize(self.domain.dim, bounds=self.domain.bounds),
        )

    def _betas(self, model: CandidateGP, t: int) -> Tensor:
        r""":math:`\beta^u_t` of the model's candidates (``K``)."""
        K = model.num_candidates
        if not isinstance(self.beta, str):
            return torch.full((K,), self.beta, dtype=self.dtype, device=self.device)
        if self.beta == "frequentist":
            info = information_gain_of_model(model).reshape(K)
            return frequentist_beta(info, B=self.B, R=self.noise_std, delta=self.delta / 2).to(self.dtype)
        if self.beta == "bayesian-finite":
            value = bayesian_beta_finite(t, self.domain.size, self.delta / 2)
        else:
            a, b = self.lipschitz  # of f on the unit cube the GPs see, so r = 1
            value = bayesian_beta_continuous(t, self.domain.dim, self.delta / 2, a, b, 1.0)
        return torch.full((K,), float(value), dtype=self.dtype, device=self.device)

    def _labels(self, indices: list[int]) -> list[str]:
        labels = self.candidates.labels()
        return [labels[i] for i in indices]

    def _elimination_state(self) -> dict[str, Any]:
        return {
            "alive": list(self.alive),
            "eliminated_at": {str(k): v for k, v in self.eliminated_at.items()},
            "kept_last": list(self.kept_last),
            "round": self.round,
            "pending": self.pending,
        }

    def _check_elimination_state(self, extra: dict[str, Any], played: list[Any], *series: list[Any]) -> None:
        r"""``played``: candidate indices of the records; ``series``: record lists of equal length."""
        try:
            n = len(self.candidates)
            ok = (
                len(extra["alive"]) == n
                and any(extra["alive"])
                and len({len(played), *map(len, series)}) == 1
                and all(0 <= int(c) < n for c in played)
                and int(extra["round"]) >= 0
                and isinstance(extra["eliminated_at"], dict)
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"state['extra'] is not a {self.name} state: {e}") from None
        if not ok:
            raise ValueError("state['extra'] is inconsistent with the candidate set (lengths or indices).")

    def _load_elimination_state(self, extra: dict[str, Any]) -> None:
        self.alive = [bool(a) for a in extra["alive"]]
        self.eliminated_at = {int(k): int(v) for k, v in extra["eliminated_at"].items()}
        self.kept_last = [int(v) for v in extra.get("kept_last", [])]
        self.round = int(extra["round"])
        self.pending = extra.get("pending")


class HEGPUCB(CandidateSetPolicy):
    r"""HE-GP-UCB (Alg. 1); see the module docstring and :class:`CandidateSetPolicy` for the args."""

    name = "he-gp-ucb"

    def __init__(self, domain: Domain, **kwargs: Any) -> None:
        super().__init__(domain, **kwargs)
        n = len(self.candidates)
        self.alive: list[bool] = [True] * n
        self.eliminated_at: dict[int, int] = {}
        self.kept_last: list[int] = []  # rounds where the last survivor failed the test
        self.play_candidate: list[int] = []
        self.play_eta: list[float] = []
        self.play_width: list[float] = []
        self.pending: dict[str, Any] | None = None

    def statistics(self, t: int | None = None) -> dict[str, list[float]]:
        r"""Per candidate: :math:`|\sum\eta|` and the threshold at round ``t`` (default: the last);
        a candidate is eliminated once its statistic exceeds its threshold after it is played."""
        t = self.round if t is None else t
        xi_t = he_xi(max(t, 1), len(self.alive), self.noise_std, self.delta)
        stat, threshold = elimination_statistics(
            self.play_candidate, self.play_eta, self.play_width, len(self.alive), xi_t
        )
        return {"statistic": stat.tolist(), "threshold": threshold.tolist()}

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        if q != 1:
            raise ValueError(f"q: he-gp-ucb proposes one point per round (q = 1), got {q}.")
        t = self.round + 1
        alive = [u for u, a in enumerate(self.alive) if a]
        model = self._model(train_X, train_Y, alive)
        betas = self._betas(model, t)
        # line 7: the doubly optimistic (x, u); mu and sigma of u at x are recorded now (line 8)
        X, local, m, sigma_t = joint_ucb_argmax(
            model, betas, self.domain, self.generator, self.num_restarts, self.raw_samples
        )
        u = alive[local]
        width = float(betas[local]) * sigma_t
        self.pending = {"candidate": u, "mean": m, "width": width, "beta": float(betas[local])}
        self.selected = self._labels([u])
        self.n_candidates = len(alive)
        self.diagnostics = {"alive": list(self.alive), "betas": betas.tolist(), "played": u, "sigma": sigma_t}
        return X

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        if self.pending is None:
            return
        pending, self.pending = self.pending, None
        self.round += 1
        t = self.round
        u = pending["candidate"]
        eta = float(Y.squeeze()) - pending["mean"]
        self.play_candidate.append(u)
        self.play_eta.append(eta)
        self.play_width.append(pending["width"])
        xi_t = he_xi(t, len(self.alive), self.noise_std, self.delta)
        stats, thresholds = elimination_statistics(
            self.play_candidate, self.play_eta, self.play_width, len(self.alive), xi_t
        )
        stat, threshold = float(stats[u]), float(thresholds[u])
        if stat > threshold:  # only the played candidate is tested
            self._eliminate(u, t)
        self.diagnostics.update(
            {
                "eta": eta,
                "xi": xi_t,
                "statistic": stat,
                "threshold": threshold,
                "eliminated": {str(k): v for k, v in self.eliminated_at.items()},
                "kept_last_survivor": list(self.kept_last),
            }
        )

    def _extra_state(self) -> dict[str, Any]:
        return {
            **self._elimination_state(),
            "play_candidate": list(self.play_candidate),
            "play_eta": list(self.play_eta),
            "play_width": list(self.play_width),
        }

    def _check_extra_state(self, extra: dict[str, Any]) -> None:
        try:
            played, eta, width = extra["play_candidate"], extra["play_eta"], extra["play_width"]
        except (KeyError, TypeError) as e:
            raise ValueError(f"state['extra'] is not a he-gp-ucb state: {e}") from None
        self._check_elimination_state(extra, played, eta, width)

    def _load_extra_state(self, extra: dict[str, Any]) -> None:
        self._load_elimination_state(extra)
        self.play_candidate = [int(c) for c in extra["play_candidate"]]
        self.play_eta = [float(v) for v in extra["play_eta"]]
        self.play_width = [float(v) for v in extra["play_width"]]
