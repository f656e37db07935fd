r"""The base of the balancing family: options, memory and its candidate-set round.

Every balancing rule (HB, LB, LNB, A-GP-UCB, the LB ``auto`` preset) keeps the same memory
(:class:`BalancingState`: the candidates introduced with their norm bounds :math:`B^u`, which
are still active, and per played round the candidate, the observation and the recorded width
:math:`\beta\sigma`) and the same options (:math:`\sigma_N`, :math:`\delta`, the width factor
:math:`c`, the count :math:`|A|` and the split of :math:`\delta` in :math:`\xi_t`).
:class:`BalancingPolicy` holds them and runs its round on
:class:`~botorch_unknown_hypers.policies.round.candidate_round.CandidateSetRound`; what a rule does is the
configuration of pieces its own module writes
(:mod:`~botorch_unknown_hypers.policies.balancing.balancing_pieces`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import torch
from botorch.models.transforms import Normalize, Standardize
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import AUTO_SEARCH
from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.checks import check_bool, check_choice, check_nonnegative, check_positive, check_probability
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.host import host_tensor
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.factor_cache import CandidateFactor
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.round.candidate_set import XI_DELTA_SPLIT
from botorch_unknown_hypers.policies.round.candidate_round import CandidateSetRound, RoundRule
from botorch_unknown_hypers.policies.round.pending_plays import PendingPlay

XI_COUNTS = ("introduced", "active")
r"""What :math:`|A|` in :math:`\xi_t` counts: every candidate introduced, or the active ones."""


@dataclass
class BalancingState:
    r"""Memory of hyperparameter balancing (every candidate ever introduced, in order).

    Attributes:
        candidates: The candidates introduced so far (``None`` before the first round).
        norms: Their norm bounds :math:`B^u`.
        alive: Whether each is still in :math:`U_t` (the survivor flags of every candidate-set rule).
        eliminated_at: Candidate index -> round of its elimination.
        play_candidate, play_y, play_width: Per played round: the candidate, the raw observation
            and the recorded width :math:`\beta\sigma` (standardised units of its round).
        round: Played rounds :math:`t` (one per observed play: a batch of q points is q plays).
        pending: The plays awaiting their observations, in the order they were made (each with
            its width :math:`\beta\sigma` in the standardised units of its round and that
            round's outcome scaler).
    """

    candidates: CandidateSpec | None = None
    norms: Tensor | None = None
    alive: list[bool] = field(default_factory=list)
    eliminated_at: dict[int, int] = field(default_factory=dict)
    play_candidate: list[int] = field(default_factory=list)
    play_y: list[float] = field(default_factory=list)
    play_width: list[float] = field(default_factory=list)
    round: int = 0
    pending: list[PendingPlay] = field(default_factory=list)

    def add(self, spec: CandidateSpec, norms: Tensor) -> None:
        r"""Introduce candidates ``spec`` with norm bounds ``norms``, active."""
        self.candidates = spec if self.candidates is None else self.candidates.cat(spec)
        self.norms = norms if self.norms is None else torch.cat([self.norms, norms])
        self.alive.extend([True] * len(spec))

    def norm_bounds(self) -> list[float]:
        r"""The norm bounds :math:`B^u` as Python floats, copied to the host once per ``norms``
        tensor: the rules replace the tensor when candidates join and never write it in place, so
        a round's diagnostics read nothing while the set is unchanged. Derived, never saved."""
        held = self.__dict__.get("_norm_bounds")
        if held is None or held[0] is not self.norms:
            held = self.__dict__["_norm_bounds"] = (self.norms, [] if self.norms is None else self.norms.tolist())
        return list(held[1])

    def counts(self, pending: bool = False) -> Tensor:
        r"""Play counts :math:`|S^u|` of every candidate introduced (with the plays still awaiting
        their values if ``pending``), on the norms' dtype and device."""
        plays = self.play_candidate + ([p.candidate for p in self.pending] if pending else [])
        like = self.norms
        if like is None:
            raise ValueError("counts: the state has no candidates yet (the first round introduces them).")
        idx = host_tensor(plays, torch.long, like.device)
        zeros = torch.zeros(len(self.alive), dtype=like.dtype, device=like.device)
        return zeros.index_add_(0, idx, torch.ones_like(idx, dtype=like.dtype))

    def check(self) -> None:
        n = len(self.alive)
        if self.candidates is None:
            if n or self.norms is not None or self.play_candidate or self.pending:
                raise ValueError("a state without candidates must have no plays, norms or flags.")
        elif not (len(self.candidates) == n == (0 if self.norms is None else self.norms.shape[0])):
            raise ValueError(f"candidates, norms and active must have one entry per candidate ({n}).")
        elif self.norms is not None and bool((self.norms < 0).any()):
            raise ValueError("norms must be non-negative.")
        if not len(self.play_candidate) == len(self.play_y) == len(self.play_width):
            raise ValueError("play_candidate, play_y and play_width must be equally long.")
        played = [*self.play_candidate, *self.eliminated_at, *(p.candidate for p in self.pending)]
        if not all(0 <= i < n for i in played):
            raise ValueError(f"candidate indices must lie in [0, {n}).")
        if self.round < 0:
            raise ValueError(f"round must be >= 0, got {self.round}.")


def standardised_candidate_gp(
    domain: Domain, train_X: Tensor, train_Y: Tensor, spec: CandidateSpec, factor: CandidateFactor | None = None
) -> CandidateGP:
    r"""One batched GP over ``spec`` with inputs scaled to the unit cube by ``domain``'s bounds and
    outputs standardised on all data (the data are checked already), on ``factor`` if given
    (computed on these inputs in the unit cube: only its shape is compared with them):
    the model of a balancing round
    (:class:`~botorch_unknown_hypers.policies.round.shared_pieces.UnitCubeModel` with ``standardise=True``)."""
    return CandidateGP(
        train_X,
        train_Y,
        spec,
        input_transform=Normalize(domain.dim, bounds=domain.bounds),
        outcome_transform=Standardize(m=1),
        check_data=False,
        factor=factor,
    )


class BalancingPolicy(RoundRule, Policy):
    r"""A balancing rule: its options, its :class:`BalancingState` and its round, ``candidate_round`` (a
    :class:`~botorch_unknown_hypers.policies.round.candidate_round.CandidateSetRound` that the rule's module
    configures).

    Args:
        domain, seed, device, dtype, num_restarts, raw_samples, search: As
            :class:`~botorch_unknown_hypers.policies.base.Policy`.
        noise_std: :math:`\sigma_N`, the sub-Gaussian noise scale in :math:`\beta` and :math:`\xi`
            (standardised units).
        delta: :math:`\delta`, split as :math:`\delta_A = \delta_B = \delta/2`.
        width_factor: :math:`c` in the elimination test (paper: 2).
        noisy_sigma: Record :math:`\sigma` including the likelihood noise (the authors' code)
            instead of the latent one.
        xi_count: :math:`|A|` in :math:`\xi_t`: ``"introduced"`` (every candidate introduced,
            Lemma B.1) or ``"active"`` (the authors' code).
        xi_delta_split: :math:`\delta_B = \delta /` ``xi_delta_split`` in :math:`\xi_t`: 2 (Thm 4.1,
            the default) or 1 (the authors' code); see
            :func:`~botorch_unknown_hypers.policies.round.candidate_set.elimination_xi`.
    """

    max_batch_size: ClassVar[int | None] = None
    r"""Any batch: the rule's candidate, then each slot conditioned on the earlier ones."""
    supports_pending = True

    state_type: ClassVar[type[BalancingState]] = BalancingState
    candidate_round: CandidateSetRound[CandidateSpec, CandidateGP]

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        noise_std: float = 1e-2,
        delta: float = 0.01,
        width_factor: float = 2.0,
        noisy_sigma: bool = False,
        num_restarts: int = 10,
        raw_samples: int = 512,
        search: str = AUTO_SEARCH,
        xi_count: str = "introduced",
        xi_delta_split: float = XI_DELTA_SPLIT,
    ) -> None:
        super().__init__(domain, seed, device, dtype, num_restarts, raw_samples, search)
        check_choice("xi_count", xi_count, XI_COUNTS)
        if xi_delta_split not in (1.0, 2.0):
            raise ValueError(f"xi_delta_split must be 1 or 2, got {xi_delta_split!r}.")
        self.noise_std = check_nonnegative("noise_std", noise_std)
        self.delta = check_probability("delta", delta)
        self.width_factor = check_positive("width_factor", width_factor)
        self.noisy_sigma = check_bool("noisy_sigma", noisy_sigma)
        self.xi_count = xi_count
        self.xi_delta_split = float(xi_delta_split)
        self.state = self.state_type()

    def counts(self, pending: bool = False) -> Tensor:
        r"""Play counts :math:`|S^u|` of every candidate ever introduced (with the plays still
        awaiting their values if ``pending``)."""
        st: BalancingState = self.state
        if st.norms is None:
            return torch.zeros(0, dtype=self.dtype, device=self.device)
        return st.counts(pending)

    def _tensor(self, values: list[float]) -> Tensor:
        return host_tensor(values, self.dtype, self.device)


__all__ = ["XI_COUNTS", "BalancingPolicy", "BalancingState", "standardised_candidate_gp"]
