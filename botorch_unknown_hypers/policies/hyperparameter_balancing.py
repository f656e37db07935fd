r"""Hyperparameter balancing GP-UCB: the general rule behind LB- and LNB-GP-UCB.

Ziomek, Adachi, Osborne (NeurIPS 2024), App. B, Algorithm 2. Every candidate :math:`u` (a kernel
:math:`k^u` with a norm bound :math:`B^u`) is a GP-UCB base learner on all data; with
:math:`S^u_t` the rounds it was played, round :math:`t`:

1. (line 3) :math:`u_t = \arg\min_{u \in U_t} R^u(|S^u_{t-1}| + 1)`, the *suspected* regret bound,
   by default :math:`R^u(T) = \sqrt T\,(B^u\sqrt{\gamma_T(k^u)} + \gamma_T(k^u))` (Thm 2.3);
   :math:`R^u(1) = 0`, so a fresh candidate is played next (first index on ties);
2. (line 4) :math:`x_t = \arg\max_x \mu^{u_t}_{t-1}(x) + \beta^{u_t}_t\sigma^{u_t}_{t-1}(x)` with
   :math:`\beta^u_t = B^u + \sigma_N\sqrt{2(I^u_{t-1} + 1 + \ln(2/\delta))}` (Thm 2.1), and the width
   :math:`w_t = \beta^{u_t}_t\sigma^{u_t}_{t-1}(x_t)` recorded at play time;
3. (lines 9-11) once every :math:`u \in U_t` was played, keep :math:`u` iff

   .. math::

       \bar y_u + \sqrt{\xi_t/|S^u_t|} + \frac{c}{|S^u_t|}\sum_{\tau\in S^u_t} w_\tau
       \ge \max_{u'} \Big(\bar y_{u'} - \sqrt{\xi_t/|S^{u'}_t|}\Big),

   :math:`\xi_t = 2\sigma_N^2\ln(|A|\pi^2t^2/(6\delta_B))` (Lemma B.1; the sign of :math:`\sqrt\xi` on
   the left is the one the proof of Lemma B.2 supports), :math:`c = 2`;
4. (line 13) optionally :math:`U_{t+1} = U_{t+1} \cup a(t)`, a user-supplied proposing function.

One round builds **one** :class:`~botorch_unknown_hypers.models.CandidateGP`, of the played
candidate: it gives the information gain :math:`I^u_{t-1}` (its kernel matrix), the acquisition
and the recorded width. Inputs are scaled to the unit cube by the domain bounds; outputs are
standardised on all data every round and recorded rewards re-standardised with the scaler in
force at the test (recorded widths stay in the units of their round, as in the authors' code).
The bookkeeping is vectorised over candidates; the state is :class:`BalancingState`.

The derivations, every constant and every printed typo corrected: ``docs/length-scale-balancing.md``.

References:
    J. Ziomek, M. Adachi, M. A. Osborne. Bayesian Optimisation with Unknown Hyperparameters:
    Regret Bounds Logarithmically Closer to Optimal. NeurIPS 2024.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Optional

import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.models.transforms import Normalize, Standardize
from torch import Tensor

from botorch_unknown_hypers.acquisition.optimize import Restarts
from botorch_unknown_hypers.checks import check_positive, check_probability
from botorch_unknown_hypers.acquisition.ucb import CandidateUCB
from botorch_unknown_hypers.candidates import CandidateSpec, KernelCandidates
from botorch_unknown_hypers.confidence import balancing_keep, frequentist_beta
from botorch_unknown_hypers.regret_bounds import suspected_regret_bound
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.factor_cache import CandidateFactor
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.candidate_set import XI_DELTA_SPLIT, elimination_xi
from botorch_unknown_hypers.policies.pending_plays import PendingPlay, play_record, take_plays
from botorch_unknown_hypers.policies.slots import fill_slots

XI_COUNTS = ("introduced", "active")
r"""What :math:`|A|` in :math:`\xi_t` counts: every candidate introduced, or the active ones."""

Proposal = Optional[tuple[CandidateSpec, Tensor]]
r"""What a proposing function returns: new candidates and their norm bounds, or ``None``."""


@dataclass
class BalancingState:
    r"""Memory of hyperparameter balancing (every candidate ever introduced, in order).

    Attributes:
        candidates: The candidates introduced so far (``None`` before the first round).
        norms: Their norm bounds :math:`B^u`.
        active: Whether each is still in :math:`U_t`.
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
    active: list[bool] = field(default_factory=list)
    eliminated_at: dict[int, int] = field(default_factory=dict)
    play_candidate: list[int] = field(default_factory=list)
    play_y: list[float] = field(default_factory=list)
    play_width: list[float] = field(default_factory=list)
    round: int = 0
    pending: list[PendingPlay] = field(default_factory=list)

    def check(self) -> None:
        n = len(self.active)
        if self.candidates is None:
            if n or self.norms is not None or self.play_candidate or self.pending:
                raise ValueError("a state without candidates must have no plays, norms or flags.")
        elif not (len(self.candidates) == n == (0 if self.norms is None else self.norms.shape[0])):
            raise ValueError(f"candidates, norms and active must have one entry per candidate ({n}).")
        elif (self.norms < 0).any():
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
    outputs standardised on all data (the data are checked already), on ``factor`` if given."""
    return CandidateGP(
        train_X,
        train_Y,
        spec,
        input_transform=Normalize(domain.dim, bounds=domain.bounds),
        outcome_transform=Standardize(m=1),
        check_data=False,
        factor=factor,
    )


def _effective_lengthscale(spec: CandidateSpec) -> Tensor:
    r"""Isotropic :math:`\theta` with :math:`\theta^{-d} = \prod_i \ell_i^{-1}` (geometric mean for ARD)."""
    ls = getattr(spec, "lengthscale", None)
    if not isinstance(ls, Tensor):
        raise ValueError(
            f"candidates: the default suspected bound needs length scales; pass bound=... for a {type(spec).__name__}."
        )
    return ls.log().mean(-1).exp()


class HyperparameterBalancing(Policy):
    r"""Hyperparameter balancing GP-UCB (Ziomek et al. 2024, Alg. 2); see the module docstring.

    **Batches and pending points.** A batch of :math:`q` points plays one candidate, chosen by
    line 3 with the plays still awaiting their values counted in :math:`|S^u|`; slot :math:`j`
    maximises that candidate's UCB

    .. math::

        x_{t,j} = \arg\max_x \mu^u_{t-1}(x) + \beta^u_t\sigma^u_{t-1}(x \mid Q_j),

    with :math:`Q_j` the pending points and the slots before :math:`j` (the mean frozen, the
    variance as if :math:`Q_j` had been observed at its posterior mean: BUCB's fantasy). The
    bookkeeping counts **per point**: each slot is one play of :math:`u` with its own recorded
    width :math:`w = \beta^u_t\sigma^u_{t-1}(x_{t,j})` on the data actually observed (not the
    fantasy), and each arriving value runs lines 9-13 as a round of its own. Why per point rather
    than per round with an inflated :math:`\beta` (Desautels et al. 2014): the elimination test
    and Lemma B.1 need valid confidence widths :math:`|f(x) - \mu_{t-1}(x)| \le \beta\sigma_{t-1}(x)`
    for the posterior the rule holds when the value arrives; the unconditioned :math:`\sigma_{t-1}`
    is such a width for every slot of the batch (it is at least the width after any further
    data), whereas the fantasy's :math:`\sigma(x \mid Q)` is not unless :math:`\beta` is
    inflated by Desautels' :math:`C = \exp(\max I(f; y_Q))`, a constant that depends on the
    batch and is loose. The fantasy only spreads the batch; the record stays that of sequential
    play, and :math:`q = 1` is Alg. 2 exactly.

    Args:
        domain: Box or pool.
        seed, device, dtype, num_restarts, raw_samples: As
            :class:`~botorch_unknown_hypers.policies.base.Policy`.
        candidates: The initial set :math:`a(0)`; defaults to eight Matern-5/2 length scales
            :math:`2^{0}, 2^{-1/2}, \dots` of the unit cube, noise 1e-4.
        norms: Norm bounds :math:`B^u` of the initial candidates (scalar or ``K``).
        propose: Optional :math:`a(t)`: called after round ``t`` as ``propose(t, policy)``;
            returns ``None`` or ``(spec, norms)`` of new candidates (same family as
            ``candidates``). It must be deterministic given the policy's state.
        bound: Optional suspected bound: ``bound(T, policy) -> K`` values of :math:`R^u(T_u)` for
            every candidate introduced (``T`` is ``K``, the play counts plus one). Default:
            Thm 2.3 with the candidate's kernel rate :math:`\gamma_T` at its (geometric-mean)
            length scale.
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
            :func:`~botorch_unknown_hypers.policies.candidate_set.elimination_xi`.
    """

    max_batch_size = None
    r"""Any batch: the rule's candidate, then each slot conditioned on the earlier ones."""
    supports_pending = True

    name = "hb-gp-ucb"
    state_type: ClassVar[type[BalancingState]] = BalancingState

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
        xi_count: str = "introduced",
        xi_delta_split: float = XI_DELTA_SPLIT,
    ) -> None:
        super().__init__(domain, seed, device, dtype, num_restarts, raw_samples)
        if xi_count not in XI_COUNTS:
            raise ValueError(f"xi_count must be one of {XI_COUNTS}, got {xi_count!r}.")
        if xi_delta_split not in (1.0, 2.0):
            raise ValueError(f"xi_delta_split must be 1 or 2, got {xi_delta_split!r}.")
        if not (noise_std >= 0 and math.isfinite(noise_std)):
            raise ValueError(f"noise_std must be finite and >= 0, got {noise_std}.")
        check_probability("delta", delta)
        check_positive("width_factor", width_factor)
        if propose is not None and not callable(propose):
            raise ValueError("propose must be callable (t, policy) -> (spec, norms) | None.")
        if bound is not None and not callable(bound):
            raise ValueError("bound must be callable (T, policy) -> Tensor.")
        self.noise_std = float(noise_std)
        self.delta = float(delta)
        self.width_factor = float(width_factor)
        self.noisy_sigma = bool(noisy_sigma)
        self.xi_count = xi_count
        self.xi_delta_split = float(xi_delta_split)
        self._propose_fn = propose
        self._bound_fn = bound
        if candidates is None:
            ladder = 2.0 ** (-0.5 * torch.arange(8, dtype=dtype))
            candidates = KernelCandidates.from_lengthscales(ladder, kernel="matern52", noise=1e-4)
        self._initial = self._check_proposal(candidates, norms, "candidates")
        self.state = self.state_type()

    # ------------------------------------------------------------------ hooks
    def _check_proposal(self, spec: CandidateSpec, norms: float | Tensor, name: str) -> tuple[CandidateSpec, Tensor]:
        if not isinstance(spec, CandidateSpec):
            raise ValueError(f"{name} must be a CandidateSpec, got {type(spec).__name__}.")
        if len(spec) < 1:
            raise ValueError(f"{name} must hold at least one candidate.")
        spec = spec.to(device=self.device, dtype=self.dtype)
        n = torch.as_tensor(norms, dtype=self.dtype, device=self.device)
        if n.ndim == 0:
            n = n.expand(len(spec)).clone()
        if n.shape != (len(spec),) or not torch.isfinite(n).all() or (n < 0).any():
            raise ValueError(
                f"norms of {name} must be a finite non-negative scalar or {len(spec)} values, got {n.tolist()}."
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
        return None if out is None else self._check_proposal(out[0], out[1], "propose(...)")

    def suspected_bounds(self, counts: Tensor) -> Tensor:
        r""":math:`R^u(|S^u| + 1)` of every candidate ever introduced."""
        T = counts + 1
        if self._bound_fn is not None:
            out = torch.as_tensor(self._bound_fn(T, self), dtype=self.dtype, device=self.device)
            if out.shape != T.shape:
                raise ValueError(f"bound must return {tuple(T.shape)} values, got {tuple(out.shape)}.")
            return out
        candidates = self.state.candidates
        kernel = getattr(candidates, "kernel", "matern52")
        return suspected_regret_bound(T, _effective_lengthscale(candidates), self.domain.dim, kernel, self.state.norms)

    def _info_noise(self) -> float | None:
        r"""The noise variance of :math:`I_{t-1}`: ``None`` for the candidate's own (the default)."""
        return None

    def _beta(self, model: CandidateGP, B: float, info_factor: CandidateFactor | None = None) -> float:
        r""":math:`\beta_t = B + \sigma_N\sqrt{2(I_{t-1} + 1 + \ln(2/\delta))}` for the one-candidate
        ``model`` of the round, :math:`I_{t-1}` the information gain of its data (from
        ``info_factor``, the played candidate's factor at the noise of :meth:`_info_noise`, if given)."""
        info = float(self.information_gain(model, info_factor, self._info_noise()).reshape(-1)[0])
        return float(frequentist_beta(info, B=B, R=self.noise_std, delta=self.delta / 2))

    def _starts(self, model: CandidateGP, train_X: Tensor, train_Y: Tensor) -> Tensor | None:
        r"""Extra L-BFGS-B starts of the round's acquisitions (default none); computed once per batch."""
        return None

    def _acquisition(self, model: CandidateGP, beta: float, train_Y: Tensor, fixed: Tensor | None = None) -> AcquisitionFunction:
        r"""Line 4's acquisition: the played candidate's GP-UCB with :math:`\beta_t` (``model``
        holds that one candidate; its variance is conditioned on ``fixed``, the ``p x d`` pending
        points and earlier slots, which UCB needs no more of)."""
        return CandidateUCB(model, beta=beta, reduction="select", index=0)

    def _acquire(
        self,
        model: CandidateGP,
        beta: float,
        train_X: Tensor,
        train_Y: Tensor,
        exclude: Tensor | None = None,
        starts: Tensor | None = None,
        warm: Restarts | None = None,
    ) -> tuple[Tensor, Restarts | None]:
        r"""Line 4: the ``1 x d`` maximiser of :meth:`_acquisition` (``model``'s variance conditioned
        on ``exclude``, the pending points and earlier slots, none of which is proposed again), and
        the restarts that warm-start the next slot
        (:func:`~botorch_unknown_hypers.acquisition.optimize.maximize_slot`)."""
        return self.maximize_slot(self._acquisition(model, beta, train_Y, exclude), exclude, starts, warm)

    def _xi(self, t: int) -> float:
        r""":math:`\xi_t = 2\sigma_N^2\ln(|A|\pi^2t^2/(6\delta_B))`, :math:`\delta_B = \delta` / ``xi_delta_split``."""
        active = self.state.active
        count = sum(active) if self.xi_count == "active" else len(active)
        return elimination_xi(t, count, self.noise_std, self.delta, self.xi_delta_split)

    def _diagnostics(self, t: int) -> dict[str, Any]:
        r"""Rule-specific entries of the per-round diagnostics."""
        return {"candidates": self.state.candidates.labels(), "norms": self.state.norms.tolist()}

    # ---------------------------------------------------------------- helpers
    def _tensor(self, values: list[float]) -> Tensor:
        return torch.tensor(values, dtype=self.dtype, device=self.device)

    def _add(self, spec: CandidateSpec, norms: Tensor) -> None:
        st = self.state
        st.candidates = spec if st.candidates is None else st.candidates.cat(spec)
        st.norms = norms if st.norms is None else torch.cat([st.norms, norms])
        st.active.extend([True] * len(spec))

    def counts(self, pending: bool = False) -> Tensor:
        r"""Play counts :math:`|S^u|` of every candidate ever introduced (with the plays still
        awaiting their values if ``pending``)."""
        plays = self.state.play_candidate + ([p.candidate for p in self.state.pending] if pending else [])
        idx = torch.tensor(plays, dtype=torch.long, device=self.device)
        zeros = torch.zeros(len(self.state.active), dtype=self.dtype, device=self.device)
        return zeros.index_add_(0, idx, torch.ones_like(idx, dtype=self.dtype))

    def _build_model(self, train_X: Tensor, train_Y: Tensor, spec: CandidateSpec) -> CandidateGP:
        r"""One batched GP over ``spec``: unit-cube inputs, standardised outputs (data checked already)."""
        return standardised_candidate_gp(self.domain, train_X, train_Y, spec)

    def _round_model(self, train_X: Tensor, train_Y: Tensor, k: int) -> tuple[CandidateGP, CandidateFactor | None]:
        r"""The one model of the round, candidate ``k`` on factors that every active candidate
        keeps across rounds, and ``k``'s factor at the noise of :math:`I_{t-1}` (``None`` when
        that is the GP's own noise or the family has no factor cache). Only ``k``'s factors are
        brought up to date; the other active candidates' wait, cached, until they are played."""
        st = self.state
        active = st.candidates.subset([i for i, a in enumerate(st.active) if a])
        played = st.candidates.subset([k])
        factors = self.candidate_factors(played, train_X, keep=active)
        model = standardised_candidate_gp(self.domain, train_X, train_Y, played, factors)
        noise = self._info_noise()
        info = None if noise is None or factors is None else self.candidate_factors(played, train_X, noise, keep=active)
        return model, info

    def _start(self, train_X: Tensor, train_Y: Tensor) -> None:
        self._add(*self._initial_candidates(train_X, train_Y))

    # ------------------------------------------------------------------ rule
    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        st = self.state
        if st.candidates is None:
            self._start(train_X, train_Y)
        t = st.round + 1
        active = torch.tensor(st.active, device=self.device)
        counts = self.counts(pending=True)
        bounds = self.suspected_bounds(counts)
        k = int(torch.argmin(torch.where(active, bounds, torch.full_like(bounds, math.inf))))  # line 3
        # The one model of the round: the played candidate on D_{t-1}.
        model, info_factor = self._round_model(train_X, train_Y, k)
        beta = self._beta(model, float(st.norms[k]), info_factor)
        starts = self._starts(model, train_X, train_Y)
        X = fill_slots(  # line 4, one slot at a time: sigma conditioned on pending points and earlier slots
            model,
            self.X_pending,
            q,
            lambda view, fixed, warm: self._acquire(view, beta, train_X, train_Y, exclude=fixed, starts=starts, warm=warm),
        )
        with torch.no_grad():  # widths: sigma on the data observed (a valid width for every slot)
            _, var = model.marginal_mean_variance(X.unsqueeze(0), observation_noise=self.noisy_sigma)
        scaler = model.outcome_transform
        y_mean, y_std = float(scaler.means.squeeze()), float(scaler.stdvs.squeeze())
        st.pending.extend(
            PendingPlay(k, x.tolist(), width=beta * float(v.sqrt()) / y_std, beta=beta, y_mean=y_mean, y_std=y_std)
            for v, x in zip(var[0], X)
        )
        self.selected = [st.candidates.subset([k]).labels()[0]] * q
        self.n_candidates = int(active.sum())
        self.diagnostics = {
            **self._diagnostics(t),
            "played": k,
            "active": list(st.active),
            "counts": counts.tolist(),
            "suspected_bounds": [float(v) if math.isfinite(v) else None for v in bounds.tolist()],
            "beta": beta,
        }
        return X

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        for play, y in zip(take_plays(self.state, X, self.domain), Y.reshape(-1)):
            if play is not None:  # rows without a play enter D but no S^u
                self._record(play, float(y))

    def _record(self, pending: PendingPlay, y: float) -> None:
        r"""One observed play: its record, the elimination test (lines 9-11) and :math:`a(t)`."""
        st = self.state
        st.round += 1
        t = st.round
        candidate, observation, width = play_record(pending, y)  # balancing predicts nothing: the observation
        st.play_candidate.append(candidate)
        st.play_y.append(observation)
        st.play_width.append(width)
        # lines 9-11: elimination once every current candidate has been played.
        counts = self.counts()
        active = torch.tensor(st.active, device=self.device)
        xi_t = None
        if bool((counts[active] > 0).all()):
            idx = torch.tensor(st.play_candidate, dtype=torch.long, device=self.device)
            y_std = (self._tensor(st.play_y) - pending.y_mean) / pending.y_std
            zeros = torch.zeros(len(st.active), dtype=self.dtype, device=self.device)
            reward_sum = zeros.clone().index_add_(0, idx, y_std)
            width_sum = zeros.clone().index_add_(0, idx, self._tensor(st.play_width))
            xi_t = self._xi(t)
            keep, lower = balancing_keep(reward_sum[active], counts[active], width_sum[active], xi_t, self.width_factor)
            active_idx = active.nonzero().flatten().tolist()
            for j, i in enumerate(active_idx):
                if not bool(keep[j]):
                    st.active[i] = False
                    st.eliminated_at[i] = t
            self.diagnostics["lower_bounds"] = dict(zip(active_idx, lower.tolist()))
        self.diagnostics["xi"] = xi_t
        self.diagnostics["eliminated"] = {str(k): v for k, v in st.eliminated_at.items()}
        new = self._propose(t)  # line 13: optional proposals
        if new is not None:
            self._add(*new)
