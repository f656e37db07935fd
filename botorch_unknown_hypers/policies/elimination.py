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
``expected-ucb`` (:mod:`~botorch_unknown_hypers.policies.candidate_baselines`) share
:class:`CandidateSetPolicy`. Choices and derivations: ``docs/hyperparameter-elimination.md``.

References:
    J. Ziomek, M. Adachi, M. A. Osborne. Beyond Lengthscales: No-regret Bayesian Optimisation
    With Unknown Hyperparameters Of Any Type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from botorch.models.transforms import Normalize
from torch import Tensor

from botorch_unknown_hypers.checks import POSITIVE, check_nonnegative, check_pair, check_probability
from botorch_unknown_hypers.acquisition.optimize import draw_raw_seed, fixed_raw_points, joint_ucb_argmax, stack_points
from botorch_unknown_hypers.candidates import CandidateSpec, KernelCandidates
from botorch_unknown_hypers.confidence import bayesian_beta_continuous, bayesian_beta_finite, elimination_statistics, frequentist_beta, xi
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.pending_plays import match_pending

BETAS = ("frequentist", "bayesian-finite", "bayesian-continuous")
DEFAULT_LENGTHSCALES = (0.3, 0.4, 0.5, 0.7, 1.0)  # the paper's length-scale task (a)


def elimination_xi(t: int, num_candidates: int, R: float, delta: float) -> float:
    r""":math:`\xi_t = 2R^2\log(|U|\pi^2t^2/(3\delta))`: Lemma 5.1 with :math:`\delta_B = \delta/2`
    (the package's one :func:`~botorch_unknown_hypers.confidence.xi` at ``delta / 2``)."""
    return float(xi(t, num_candidates, R, delta / 2))


@dataclass
class SurvivorState:
    r"""The surviving set of an elimination rule and its log.

    Attributes:
        alive: One flag per candidate (:math:`U_t`).
        eliminated_at: Candidate -> round of its elimination.
        kept_last: Rounds where the last survivor failed its test (and was kept).
    """

    alive: list[bool] = field(default_factory=list)
    eliminated_at: dict[int, int] = field(default_factory=dict)
    kept_last: list[int] = field(default_factory=list)

    def eliminate(self, u: int, t: int) -> bool:
        r"""Remove ``u`` at round ``t`` unless it is the last survivor (then log the round);
        whether it was removed."""
        if not self.alive[u]:
            return False
        if sum(self.alive) > 1:
            self.alive[u] = False
            self.eliminated_at[u] = t
            return True
        self.kept_last.append(t)
        return False

    def check(self) -> None:
        if not any(self.alive):
            raise ValueError("alive must keep at least one candidate.")
        if not all(0 <= u < len(self.alive) and t >= 1 for u, t in self.eliminated_at.items()):
            raise ValueError("eliminated_at must map candidate indices to rounds >= 1.")


@dataclass
class PendingSelection:
    r"""A selection awaiting its observation: the candidate, :math:`\mu` and :math:`\beta\sigma`
    there on the data of its round, the outputs' scale of that round (1 in raw units) and its
    point (``None`` in states saved before points were recorded)."""

    candidate: int
    mean: float
    width: float
    beta: float
    x: list[float] | None = None
    scale: float = 1.0


@dataclass
class EliminationState(SurvivorState):
    r"""HE-GP-UCB's memory: the surviving set and, per played round, the candidate, the
    prequential residual :math:`\eta` and the recorded width; the selections awaiting their
    observations, and the candidates recorded but not yet tested (a batch is tested once all its
    values have arrived); on a box, the seed of the campaign's raw points (``None`` on a pool, or
    before the first suggestion)."""

    play_candidate: list[int] = field(default_factory=list)
    play_eta: list[float] = field(default_factory=list)
    play_width: list[float] = field(default_factory=list)
    round: int = 0
    pending: list[PendingSelection] = field(default_factory=list)
    untested: list[int] = field(default_factory=list)
    test_scale: float = 1.0
    raw_seed: int | None = None

    def check(self) -> None:
        super().check()
        if self.raw_seed is not None and not 0 <= self.raw_seed < 2**63:
            raise ValueError(f"raw_seed must be None or an int in [0, 2**63), got {self.raw_seed}.")
        n = len(self.alive)
        if not len(self.play_candidate) == len(self.play_eta) == len(self.play_width) == self.round:
            raise ValueError("play_candidate, play_eta and play_width must hold one entry per round.")
        if not all(0 <= u < n for u in [*self.play_candidate, *(p.candidate for p in self.pending), *self.untested]):
            raise ValueError(f"candidate indices must lie in [0, {n}).")
        if not all(p.scale > 0 for p in self.pending) or not self.test_scale > 0:
            raise ValueError("the scales of pending selections and of the test must be > 0.")


def record_plays(state: EliminationState, X: Tensor, Y: Tensor, domain: Domain, xi_of: Callable[[int], float]) -> dict[str, Any]:
    r"""Lines 10-12 for observed rows ``(X, Y)``: each row that matches a pending selection
    (:func:`~botorch_unknown_hypers.policies.pending_plays.match_pending`) records
    :math:`\eta_t = y_t - m_t` and its width; once no selection is pending (the whole batch has
    arrived), every candidate played since the last test is tested, residuals and widths divided
    by the outputs' scale of the latest selection (the units of the test), and eliminated if it
    fails. Returns the diagnostics of the last play and test."""
    matches = match_pending([p.x for p in state.pending], X, domain)
    out: dict[str, Any] = {}
    for m, y in zip(matches, Y.reshape(-1).tolist()):
        if m is None:
            continue  # data without a play
        p = state.pending[m]
        state.round += 1
        state.play_candidate.append(p.candidate)
        state.play_eta.append(y - p.mean)
        state.play_width.append(p.width)
        state.untested.append(p.candidate)
        state.test_scale = p.scale
        out["eta"] = y - p.mean
    taken = {m for m in matches if m is not None}
    state.pending = [p for i, p in enumerate(state.pending) if i not in taken]
    if state.pending or not state.untested:
        return out
    t = state.round
    xi_t = xi_of(t)
    residuals = [e / state.test_scale for e in state.play_eta]
    widths = [w / state.test_scale for w in state.play_width]
    stats, thresholds = elimination_statistics(state.play_candidate, residuals, widths, len(state.alive), xi_t)
    for u in dict.fromkeys(state.untested):  # line 12: only the played candidates are tested
        if float(stats[u]) > float(thresholds[u]):
            state.eliminate(u, t)
    last = state.untested[-1]
    state.untested = []
    return {
        **out,
        "xi": xi_t,
        "statistic": float(stats[last]),
        "threshold": float(thresholds[last]),
        "eliminated": {str(k): v for k, v in state.eliminated_at.items()},
        "kept_last_survivor": list(state.kept_last),
    }


@dataclass
class RoundState:
    r"""The number of played rounds (the baselines need nothing else)."""

    round: int = 0

    def check(self) -> None:
        if self.round < 0:
            raise ValueError(f"round must be >= 0, got {self.round}.")


class CandidateSetPolicy(Policy):
    r"""Shared machinery of rules over a fixed finite candidate set :math:`U`.

    Args:
        domain: Box or pool.
        seed, device, dtype, num_restarts, raw_samples: As
            :class:`~botorch_unknown_hypers.policies.base.Policy`.
        candidates: The set :math:`U` (any :class:`~botorch_unknown_hypers.candidates.CandidateSpec`);
            default: Matern-5/2 length scales 0.3, 0.4, 0.5, 0.7, 1.0 (task (a)), output scale 1.
        noise_std: :math:`R`; the GPs use noise variance :math:`R^2` unless the candidates set one.
        beta: ``"frequentist"``, ``"bayesian-finite"``, ``"bayesian-continuous"`` or a number.
        B: RKHS norm bound of the frequentist :math:`\beta`.
        delta: :math:`\delta` (0.1 in the paper).
        lipschitz: ``(a, b)`` of Assumption B.1 for ``"bayesian-continuous"``.
    """

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        candidates: CandidateSpec | None = None,
        noise_std: float = 0.01,
        beta: str | float = "frequentist",
        B: float = 1.0,
        delta: float = 0.1,
        lipschitz: tuple[float, float] = (1.0, 1.0),
        num_restarts: int = 10,
        raw_samples: int = 512,
    ) -> None:
        super().__init__(domain, seed, device, dtype, num_restarts, raw_samples)
        if not (noise_std > 0 and math.isfinite(noise_std)):
            raise ValueError(f"noise_std must be positive and finite, got {noise_std}.")
        if isinstance(beta, str):
            if beta not in BETAS:
                raise ValueError(f"beta must be one of {BETAS} or a number, got {beta!r}.")
            if beta == "bayesian-finite" and not math.isfinite(domain.size):
                raise ValueError("beta='bayesian-finite' needs a finite domain (a pool).")
        elif not (float(beta) >= 0 and math.isfinite(float(beta))):
            raise ValueError(f"beta must be a finite non-negative number, got {beta}.")
        check_probability("delta", delta)
        check_nonnegative("B", B)
        if candidates is None:
            ls = torch.tensor(DEFAULT_LENGTHSCALES, dtype=dtype)
            candidates = KernelCandidates.from_lengthscales(ls, kernel="matern52", noise=noise_std**2)
        if not isinstance(candidates, CandidateSpec) or len(candidates) < 1:
            raise ValueError(f"candidates must be a non-empty CandidateSpec, got {type(candidates).__name__}.")
        self.candidates = candidates.to(device=self.device, dtype=dtype)
        self.noise_std = float(noise_std)
        self.beta = beta if isinstance(beta, str) else float(beta)
        self.B = float(B)
        self.delta = float(delta)
        self.lipschitz = check_pair("lipschitz", lipschitz, POSITIVE)

    def _model(self, train_X: Tensor, train_Y: Tensor, indices: list[int], points: Tensor | None = None) -> CandidateGP:
        r"""One batched GP over the candidates at ``indices`` (unit-cube inputs, raw outputs), on
        factors kept across rounds (:meth:`~botorch_unknown_hypers.policies.base.Policy.candidate_factors`),
        with their solves at the fixed ``points`` when given."""
        spec = self.candidates.subset(indices)
        return CandidateGP(
            train_X,
            train_Y,
            spec,
            input_transform=Normalize(self.domain.dim, bounds=self.domain.bounds),
            check_data=False,
            factor=self.candidate_factors(spec, train_X, points=points),
        )

    def _betas(self, model: CandidateGP, t: int) -> Tensor:
        r""":math:`\beta^u_t` of the model's candidates (``K``)."""
        K = model.num_candidates
        if not isinstance(self.beta, str):
            return torch.full((K,), self.beta, dtype=self.dtype, device=self.device)
        if self.beta == "frequentist":
            info = self.information_gain(model).reshape(K)
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

    def _check_state(self, state: SurvivorState | RoundState) -> None:
        alive = getattr(state, "alive", None)
        if alive is not None and len(alive) != len(self.candidates):
            raise ValueError(
                f"state['state']['alive'] has {len(alive)} flags for {len(self.candidates)} candidates."
            )


class HEGPUCB(CandidateSetPolicy):
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

    def __init__(self, domain: Domain, **kwargs) -> None:
        super().__init__(domain, **kwargs)
        self.state = EliminationState(alive=[True] * len(self.candidates))

    def statistics(self, t: int | None = None) -> dict[str, list[float]]:
        r"""Per candidate: :math:`|\sum\eta|` and the threshold at round ``t`` (default: the last);
        a candidate is eliminated once its statistic exceeds its threshold after it is played."""
        st = self.state
        xi_t = elimination_xi(max(st.round if t is None else t, 1), len(st.alive), self.noise_std, self.delta)
        stat, threshold = elimination_statistics(st.play_candidate, st.play_eta, st.play_width, len(st.alive), xi_t)
        return {"statistic": stat.tolist(), "threshold": threshold.tolist()}

    def raw_points(self) -> Tensor | None:
        r"""The campaign's ``raw_samples x d`` Sobol raw points on a box (``None`` on a pool and
        before the first suggestion): drawn from the seed :attr:`EliminationState.raw_seed` (taken
        from the policy's generator at the first suggestion on a box and saved with the state), so
        that their posterior under every survivor is kept and extended with the factors instead of
        recomputed each round."""
        seed = self.state.raw_seed
        return None if seed is None else fixed_raw_points(self.domain, self.raw_samples, seed)

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        st = self.state
        alive = [u for u, a in enumerate(st.alive) if a]
        if st.raw_seed is None:
            st.raw_seed = draw_raw_seed(self.domain, self.generator)
        raw = self.raw_points()
        model = self._model(train_X, train_Y, alive, points=raw)
        betas = self._betas(model, st.round + 1)
        slots: list[Tensor] = []
        records: list[tuple[int, float, float]] = []
        warm = None  # a later slot restarts from the previous slot's refined (point, candidate) pairs
        for _ in range(q):  # line 7 per slot: the doubly optimistic (x, u); line 8 records mu and sigma of u at x
            fixed = stack_points(self.X_pending, *slots)
            view = model if fixed is None else model.condition_on_pending(fixed)
            X, local, mean, sigma, warm = joint_ucb_argmax(
                view, betas, self.domain, self.generator, self.num_restarts, self.raw_samples, exclude=fixed, warm=warm, raw_points=raw
            )
            if fixed is not None:  # record on the data observed, not on the fantasy
                with torch.no_grad():
                    m, v = model.marginal_mean_variance(X.unsqueeze(0))
                mean, sigma = float(m[local, 0]), float(v[local, 0].clamp_min(0).sqrt())
            slots.append(X)
            records.append((local, mean, sigma))
        X = torch.cat(slots)
        for x, (local, mean, sigma) in zip(X, records):
            beta = float(betas[local])
            st.pending.append(PendingSelection(alive[local], mean, beta * sigma, beta, x.tolist()))
        self.selected = self._labels([alive[local] for local, _, _ in records])
        self.n_candidates = len(alive)
        self.diagnostics = {
            "alive": list(st.alive),
            "betas": betas.tolist(),
            "played": alive[records[0][0]],
            "sigma": records[0][2],
        }
        return X

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        xi_of = lambda t: elimination_xi(t, len(self.state.alive), self.noise_std, self.delta)  # noqa: E731
        self.diagnostics.update(record_plays(self.state, X, Y, self.domain, xi_of))
