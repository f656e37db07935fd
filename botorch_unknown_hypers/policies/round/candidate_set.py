r"""Rules over a fixed finite candidate set: the shared base and the test's confidence constant.

A *candidate set* :math:`U` is a finite list of GP hyperparameters of any type (kernels, prior
means, noise levels, additive decompositions: a
:class:`~botorch_unknown_hypers.candidates.CandidateSpec`). Every rule over it keeps, per round, one
batched :class:`~botorch_unknown_hypers.models.CandidateGP` of its candidates on all data
:math:`D_{t-1}` (inputs on the unit cube, raw outputs, noise variance :math:`R^2`) on Cholesky
factors kept across rounds, and a width multiplier :math:`\beta^u_t` per candidate:

- ``"frequentist"`` (Ziomek et al. 2025, Thm 4.1): :math:`\beta^u_t = B + R\sqrt{2(I^u_{t-1} + 1 + \ln(2/\delta))}`,
  :math:`I^u_{t-1}` the information gain of the data under :math:`u`, at :math:`\delta_A = \delta/2`;
- ``"bayesian-finite"`` / ``"bayesian-continuous"`` (Thm 4.2 A / B) or a fixed number.

Elimination tests compare a candidate's prequential residuals with
:math:`\sqrt{\xi_t|S^u|}`, :math:`\xi_t = 2R^2\ln(|U|\pi^2t^2/(6\delta_B))` (Lemma 5.1 of Ziomek et
al. 2025, Lemma B.1 of Ziomek et al. 2024). :func:`elimination_xi` is the package's one place
where :math:`\delta` is split: :math:`\delta_B = \delta/2` in both papers' theorems (the other
half bounds the confidence widths), :math:`\delta_B = \delta` in the length-scale authors' code.

The rules: :class:`~botorch_unknown_hypers.policies.elimination.he_gp_ucb.HEGPUCB`,
:class:`~botorch_unknown_hypers.policies.elimination.stableopt.HEStableOpt` and the baselines of
:mod:`~botorch_unknown_hypers.policies.elimination.candidate_baselines`.

References:
    J. Ziomek, M. Adachi, M. A. Osborne. Beyond Lengthscales: No-regret Bayesian Optimisation
    With Unknown Hyperparameters Of Any Type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
from botorch.models.transforms import Normalize
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import AUTO_SEARCH
from botorch_unknown_hypers.candidates import CandidateSpec, KernelCandidates
from botorch_unknown_hypers.checks import POSITIVE, check_nonnegative, check_pair, check_probability
from botorch_unknown_hypers.confidence import bayesian_beta_continuous, bayesian_beta_finite, theorem_beta, xi, xi_number
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.factor_cache import CandidateFactor
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.context import RoundContext
from botorch_unknown_hypers.policies.round.candidate_round import Betas

BETAS = ("frequentist", "bayesian-finite", "bayesian-continuous")
DEFAULT_LENGTHSCALES = (0.3, 0.4, 0.5, 0.7, 1.0)  # the paper's length-scale task (a)
XI_DELTA_SPLIT = 2.0
r"""The theorems' split :math:`\delta_B = \delta / 2` of :func:`elimination_xi`."""


def elimination_xi(t: int, num_candidates: int, R: float, delta: float, split: float = XI_DELTA_SPLIT) -> float:
    r""":math:`\xi_t = 2R^2\log(|U|\pi^2t^2/(6\delta_B))` with :math:`\delta_B = \delta /` ``split``:
    Lemma 5.1 (and Lemma B.1 of the length-scale paper) with :math:`\delta_B = \delta/2`, i.e.
    :math:`2R^2\log(|U|\pi^2t^2/(3\delta))`, by default; ``split = 1`` is the length-scale
    authors' code. The package's one :func:`~botorch_unknown_hypers.confidence.xi` call; the
    numbers are checked here, on the host, and the value computed there (:func:`xi_number`), with
    no tensor to read back."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (t, num_candidates, R, delta, split))
    if not numbers or not (t >= 1 and num_candidates >= 1 and math.isfinite(R) and R >= 0 and 0 < delta / split < 1):
        return float(xi(t, num_candidates, R, delta / split))  # the checks' messages
    return xi_number(t, num_candidates, R, delta / split)


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
class RoundState:
    r"""The number of played rounds (the baselines need nothing else)."""

    round: int = 0

    def check(self) -> None:
        if self.round < 0:
            raise ValueError(f"round must be >= 0, got {self.round}.")



@dataclass(frozen=True)
class FrequentistBetas(Betas[CandidateGP]):
    r""":math:`\beta^u_t = B + R\sqrt{2(I^u_{t-1} + 1 + \ln(1/\delta_A))}` (Thm 4.1), :math:`\delta_A = \delta/2` (so the log is :math:`\ln(2/\delta)`),
    :math:`I^u_{t-1}` the information gain at the noise of the round model's ``info`` factors
    (``noise``; the GP's own where those are absent and ``noise`` is ``None``)."""

    B: float
    R: float
    delta: float
    noise: float | None = None

    def __post_init__(self) -> None:
        check_nonnegative("B", self.B)
        check_nonnegative("R", self.R)
        check_probability("delta", self.delta)

    def __call__(
        self, ctx: RoundContext, state: Any, model: CandidateGP, info: CandidateFactor | None, t: int, candidates: list[int]
    ) -> Tensor:
        gain = ctx.information_gain(model, info, self.noise)
        return theorem_beta(gain, B=self.B, R=self.R, delta=self.delta, checked=False).to(gain)  # constants checked when built; the round checks the widths


@dataclass(frozen=True)
class CandidateSetBetas(Betas[CandidateGP]):
    r""":math:`\beta^u_t` of a candidate set (a :class:`CandidateSetPolicy`'s ``beta`` option):
    ``"frequentist"`` (Thm 4.1, :class:`FrequentistBetas` at :math:`(B, R, \delta)` with the GP's own
    noise), ``"bayesian-finite"`` / ``"bayesian-continuous"`` (Thm 4.2 A / B
    at :math:`\delta/2`, ``lipschitz`` the :math:`(a, b)` of Assumption B.1 on the unit cube) or a
    number."""

    beta: str | float
    B: float
    R: float
    delta: float
    lipschitz: tuple[float, float] = (1.0, 1.0)
    frequentist: FrequentistBetas = field(init=False, repr=False, compare=False)  # Thm 4.1 at (B, R, delta); checks them

    def __post_init__(self) -> None:
        object.__setattr__(self, "frequentist", FrequentistBetas(self.B, self.R, self.delta))

    def betas(self, ctx: RoundContext, model: CandidateGP, t: int) -> Tensor:
        r""":math:`\beta^u_t` of the model's candidates (``K``), without a read (the constants are
        checked when the piece is built, the widths by the round)."""
        K = model.num_candidates
        if not isinstance(self.beta, str):
            return torch.full((K,), self.beta, dtype=ctx.dtype, device=ctx.device)
        if self.beta == "frequentist":
            return self.frequentist(ctx, None, model, None, t, [])
        if self.beta == "bayesian-finite":
            value = bayesian_beta_finite(t, ctx.domain.size, self.delta / 2)
        else:
            a, b = self.lipschitz  # of f on the unit cube the GPs see, so r = 1
            value = bayesian_beta_continuous(t, ctx.domain.dim, self.delta / 2, a, b, 1.0)
        return torch.full((K,), float(value), dtype=ctx.dtype, device=ctx.device)

    def __call__(
        self, ctx: RoundContext, state: Any, model: CandidateGP, info: CandidateFactor | None, t: int, candidates: list[int]
    ) -> Tensor:
        return self.betas(ctx, model, t)


class CandidateSetPolicy(Policy):
    r"""Shared machinery of rules over a fixed finite candidate set :math:`U`.

    Args:
        domain: Box or pool.
        seed, device, dtype, num_restarts, raw_samples, search: As
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
        search: str = AUTO_SEARCH,
    ) -> None:
        super().__init__(domain, seed, device, dtype, num_restarts, raw_samples, search)
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

    def candidate_betas(self) -> CandidateSetBetas:
        r"""The round's betas piece for the rule's ``beta`` option and constants."""
        return CandidateSetBetas(self.beta, self.B, self.noise_std, self.delta, self.lipschitz)

    def _check_state(self, state: SurvivorState | RoundState) -> None:
        alive = getattr(state, "alive", None)
        if alive is not None and len(alive) != len(self.candidates):
            raise ValueError(
                f"state['state']['alive'] has {len(alive)} flags for {len(self.candidates)} candidates."
            )


__all__ = ["BETAS", "CandidateSetBetas", "FrequentistBetas", "DEFAULT_LENGTHSCALES", "XI_DELTA_SPLIT", "CandidateSetPolicy", "RoundState", "SurvivorState", "elimination_xi"]
