r"""Robust BO with unknown hyperparameters: HE-StableOpt and StableOpt with MLE hyperparameters.

Ziomek, Adachi, Osborne, "Beyond Lengthscales", Algorithm 2, on top of StableOpt
(Bogunovic et al. 2018). With perturbations :math:`\Delta_\epsilon(x) = \{x' - x :
x' \in X, d(x, x') \le \epsilon\}` (a box, :math:`d = L_\infty`, or a Euclidean
ball, :math:`d = L_2`, clipped to the domain), at round :math:`t`:

1. (line 8, optimistic in :math:`u`) :math:`(x_t, u_t) = \arg\max_{x, u \in U_{t-1}}
   \min_{\delta \in \Delta_\epsilon(x)} \mathrm{UCB}^u_{t-1}(x + \delta)`: the inner min
   is taken per candidate (batched over candidates and points);
2. (line 9, pessimistic in :math:`u`) :math:`(\delta_t, v_t) = \arg\min_{\delta, u}
   \mathrm{LCB}^u_{t-1}(x_t + \delta)`, a joint argmin;
3. query :math:`x_t + \delta_t`; residuals :math:`\eta_t = y_t - \mu^{u_t}_{t-1}(x_t + \delta_t)`
   and :math:`\hat\eta_t = y_t - \mu^{v_t}_{t-1}(x_t + \delta_t)`, widths
   :math:`\beta\sigma_{t-1}(x_t + \delta_t)` of each recorded at selection time;
4. (lines 16-21) two index sets :math:`S^{u_t} \ni t`, :math:`\hat S^{v_t} \ni t` and two
   elimination tests (as HE-GP-UCB's); both candidates go if both tests fire
   (the printed line 20 overwrites line 17); the last survivor stays.

The :math:`\epsilon`-regret :math:`\max_x \min_\delta f(x+\delta) - \min_\delta f(x_t + \delta)`
is measured at :math:`x_t` (not at the queried point): the policy exposes
``robust_point`` and the run loop records the regret in the diagnostics when the
problem has a ``robust_value``.

The round is the candidate-set round
(:class:`~botorch_unknown_hypers.policies.round.candidate_round.CandidateSetRound`) configured with the pieces
below (:class:`RobustUCB`, :class:`RobustElimination`; StableOpt-MLE swaps in
:class:`RefittedLengthscale` and :class:`RobustRecords`).

The perturbation set is exact on a **pool**: :math:`\Delta_\epsilon(x)` is the set of
pool points within :math:`\epsilon` of :math:`x`, so both the inner min and the outer
max are exhaustive (a box problem can be handed over as a dense grid). The
neighbourhood mask is ``N x N``; the robust UCB of all candidates is one
``K x N x N`` masked min.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, cast

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.robust import robust_min
from botorch_unknown_hypers.candidates import CandidateSpec, KernelCandidates
from botorch_unknown_hypers.confidence import elimination_statistics, upper_confidence_bound
from botorch_unknown_hypers.domains import Domain, FiniteDomain
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.fitted import fit_single_task_gp
from botorch_unknown_hypers.policies.context import RoundContext
from botorch_unknown_hypers.policies.round.candidate_set import CandidateSetPolicy, SurvivorState
from botorch_unknown_hypers.policies.round.candidate_round import AllCandidates, CandidateSetRound, CandidateSource, RoundRule, RoundData, Selector, Slot, Test
from botorch_unknown_hypers.policies.round.pending_plays import Observations, PendingPlay, play_record
from botorch_unknown_hypers.policies.round.shared_pieces import EliminationTest, FixedCandidates, UnitCubeModel


@dataclass
class RobustEliminationState(SurvivorState):
    r"""HE-StableOpt's memory: the surviving set and, per round, both candidates' records; the
    selection awaiting its observation is one play of the optimistic :math:`u_t` at the queried
    point with the pessimistic :math:`v_t`'s record attached (at most one: a batch of one)."""

    u: list[int] = field(default_factory=list)
    eta: list[float] = field(default_factory=list)
    width_u: list[float] = field(default_factory=list)
    v: list[int] = field(default_factory=list)
    eta_hat: list[float] = field(default_factory=list)
    width_v: list[float] = field(default_factory=list)
    round: int = 0
    pending: list[PendingPlay] = field(default_factory=list)

    def check(self) -> None:
        super().check()
        series = (self.u, self.eta, self.width_u, self.v, self.eta_hat, self.width_v)
        if len({len(values) for values in series}) != 1:
            raise ValueError("the records u, eta, width_u, v, eta_hat and width_v must be equally long.")
        n = len(self.alive)
        pending = [u for p in self.pending for u in p.candidates()]
        if not all(0 <= k < n for k in self.u + self.v + pending):
            raise ValueError(f"candidate indices must lie in [0, {n}).")


@dataclass(frozen=True)
class RobustUCB(Selector[CandidateGP]):
    r"""Lines 8-11 on a pool: the robust UCB's :math:`(x_t, u_t)` (line 8, the inner min per
    candidate, one ``K x N x N`` masked min), the pessimistic :math:`(\delta_t, v_t)` (line 9, a
    joint LCB argmin over :math:`x_t`'s neighbourhood), and (lines 10-11) :math:`\mu` and
    :math:`\beta\sigma` of :math:`u_t` and of :math:`v_t` at the queried point :math:`x_t + \delta_t`,
    recorded as one play with the pessimistic record attached; the slot's ``robust`` point is
    :math:`x_t`. ``mask``: the pool's ``N x N`` perturbation neighbourhoods
    (:meth:`~botorch_unknown_hypers.domains.FiniteDomain.neighbourhoods`)."""

    mask: Tensor = field(compare=False)

    def __call__(
        self, ctx: RoundContext, data: RoundData[CandidateGP], prepared: Any, view: CandidateGP, fixed: Tensor | None, warm: Any
    ) -> tuple[Slot, Any]:
        alive, points, betas = data.candidates, cast(FiniteDomain, ctx.domain).points, data.betas.unsqueeze(-1)  # a pool (the rule refuses a box)
        with torch.no_grad():
            mean, var = view.marginal_mean_variance(points.unsqueeze(0).unsqueeze(0))
        mean, var, sigma = mean[0], var[0], var[0].clamp_min(0).sqrt()  # K x N
        robust = robust_min(upper_confidence_bound(mean, var, betas), self.mask)  # line 8: K x N
        k_u, i = divmod(int(robust.argmax()), robust.shape[-1])
        nb = self.mask[i].nonzero().flatten()
        lcb = upper_confidence_bound(mean[:, nb], var[:, nb], -betas)  # line 9: K x |nb|
        k_v, j_local = divmod(int(lcb.argmin()), lcb.shape[-1])
        j = int(nb[j_local])
        pessimistic = PendingPlay(alive[k_v], mean=float(mean[k_v, j]), width=float(betas[k_v, 0] * sigma[k_v, j]))
        record = PendingPlay(  # lines 10-11: mu and beta * sigma of u_t and of v_t at the queried point
            alive[k_u], points[j].tolist(), mean=float(mean[k_u, j]), width=float(betas[k_u, 0] * sigma[k_u, j]),
            pessimistic=pessimistic,
        )
        info = {"u": alive[k_u], "v": alive[k_v], "x_robust": points[i].tolist(),
                "delta": (points[j] - points[i]).tolist(), "robust_ucb": float(robust[k_u, i])}
        return Slot(points[j].unsqueeze(0), k_u, record.mean, float(sigma[k_u, j]), record, info, points[i].unsqueeze(0)), warm

    def diagnostics(self, slots: list[Slot]) -> dict[str, Any]:
        return dict(slots[0].info or {})


@dataclass(frozen=True)
class SurvivorFlags(AllCandidates):
    r"""Every survivor in the model; reports their flags ``state.alive`` (the selector reports
    the rest)."""

    def diagnostics(self, data: RoundData[CandidateGP], slots: list[Slot]) -> dict[str, Any]:
        return {}


def record_robust_play(state: RobustEliminationState, observed: Observations) -> tuple[int, int, int] | None:
    r"""Lines 12-15: the observed play's :math:`\eta_t, \hat\eta_t` and widths join both records
    (:math:`S^{u_t} \ni t`, :math:`\hat S^{v_t} \ni t`); ``(t, u_t, v_t)``, or ``None`` for data
    without a play."""
    played = list(observed.plays())
    if not played:
        return None  # data without a play
    (p, y), = played
    state.round += 1
    u, eta, width_u = play_record(p, y)
    assert p.pessimistic is not None  # a robust play carries its pessimistic record
    v, eta_hat, width_v = play_record(p.pessimistic, y)
    state.u.append(u)
    state.eta.append(eta)
    state.width_u.append(width_u)
    state.v.append(v)
    state.eta_hat.append(eta_hat)
    state.width_v.append(width_v)
    return state.round, u, v


@dataclass(frozen=True)
class RobustRecords(Test):
    r"""Lines 12-15 only (StableOpt without elimination)."""

    def __call__(self, ctx: RoundContext, state: RobustEliminationState, observed: Observations) -> dict[str, Any]:
        record_robust_play(state, observed)
        return {}


@dataclass(frozen=True)
class RobustElimination(EliminationTest):
    r"""Lines 12-21: both records, then two elimination tests (as HE-GP-UCB's, :math:`\xi_t` with
    :math:`\delta_B = \delta/2` and the original :math:`|U|`); both candidates go if both fire (the
    printed line 20 overwrites line 17); the last survivor stays."""

    def __call__(self, ctx: RoundContext, state: RobustEliminationState, observed: Observations) -> dict[str, Any]:
        st = state
        played = record_robust_play(st, observed)
        if played is None:
            return {}
        t, u, v = played
        n = len(st.alive)
        xi_t = self.xi(t, n)
        stats_u, thresholds_u = elimination_statistics(st.u, st.eta, st.width_u, n, xi_t)
        stats_v, thresholds_v = elimination_statistics(st.v, st.eta_hat, st.width_v, n, xi_t)
        fire_u = stats_u[u] > thresholds_u[u]
        fire_v = stats_v[v] > thresholds_v[v]
        for fire, k in ((fire_u, u), (fire_v, v)):  # lines 16-21: both go if both tests fire
            if fire:
                st.eliminate(k, t)
        return {
            "xi": xi_t,
            "statistic_u": stats_u[u],
            "threshold_u": thresholds_u[u],
            "statistic_v": stats_v[v],
            "threshold_v": thresholds_v[v],
            "eliminated": {str(k): v for k, v in st.eliminated_at.items()},
        }


@dataclass(frozen=True)
class RefittedLengthscale(CandidateSource[CandidateSpec]):
    r"""StableOpt's one candidate: a Matern-5/2 length scale refitted by maximum likelihood on all
    data every round (``SingleTaskGP``, output scale 1, noise variance :math:`R^2` = ``noise``,
    inputs on the unit cube), under the context's seeded randomness."""

    noise: float

    def survivors(self, ctx: RoundContext, state: Any, train_X: Tensor, train_Y: Tensor) -> tuple[CandidateSpec, list[int]]:
        with ctx.seeded():
            fitted = fit_single_task_gp(train_X, train_Y, ctx.domain.bounds, noise=self.noise)
        theta = fitted.covar_module.base_kernel.lengthscale.reshape(1).detach()
        state.alive = [True]
        return KernelCandidates.from_lengthscales(theta, kernel="matern52", noise=self.noise), [0]


class HEStableOpt(RoundRule, CandidateSetPolicy):
    r"""HE-StableOpt (Alg. 2) on a pool; see the module docstring.

    Args:
        domain: A pool (:class:`~botorch_unknown_hypers.domains.FiniteDomain`); a box is refused
            (the perturbation set must be exact: discretise it into a grid).
        epsilon: Perturbation radius :math:`\epsilon` (domain units).
        perturbation: ``"box"`` (:math:`L_\infty`) or ``"ball"`` (:math:`L_2`).
        **kwargs: As :class:`~botorch_unknown_hypers.policies.round.candidate_set.CandidateSetPolicy`.
    """

    max_batch_size = 1
    r"""Proposes one point per round."""

    name = "he-stableopt"

    def __init__(self, domain: Domain, epsilon: float = 0.05, perturbation: str = "box", **kwargs: Any) -> None:
        if not (isinstance(epsilon, (int, float)) and epsilon >= 0 and math.isfinite(epsilon)):
            raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}.")
        super().__init__(domain, **kwargs)
        self.epsilon = float(epsilon)
        self.perturbation = perturbation
        self.mask = self.domain.neighbourhoods(self.epsilon, perturbation)  # refuses a box
        self.state = RobustEliminationState(alive=[True] * len(self.candidates))
        source, test = self.candidates_and_test()
        self.candidate_round = CandidateSetRound(
            source=source,  # the fixed set U, U_{t-1} its survivors (or StableOpt's refitted one)
            model=UnitCubeModel(),  # every survivor's GP on all of D_{t-1}, raw outputs
            betas=self.candidate_betas(),  # beta^u_t
            selector=RobustUCB(self.mask),  # lines 8-11
            test=test,  # lines 12-21 (or 12-15 alone)
            subset=SurvivorFlags(),
        )

    def candidates_and_test(self) -> tuple[CandidateSource[CandidateSpec], Test]:
        r"""The round's candidates and test: the fixed set with lines 12-21's elimination."""
        return FixedCandidates(self.candidates), RobustElimination(self.noise_std, self.delta)

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        X = super()._suggest(train_X, train_Y, q)
        self.state.pending = self.state.pending[-1:]  # one play at a time: it replaces an unanswered one
        return X


class StableOptMLE(HEStableOpt):
    r"""StableOpt with the length scale refitted by maximum likelihood every round (no elimination).

    The robust baseline: a Matern-5/2 ``SingleTaskGP`` with output scale 1 and noise variance
    :math:`R^2`, the length scale fitted by ``fit_gpytorch_mll`` on all data (inputs in the unit
    cube), then the same robust selection with :math:`K = 1`.
    """

    name = "stableopt-mle"

    def __init__(self, domain: Domain, **kwargs: Any) -> None:
        kwargs.setdefault("candidates", KernelCandidates.from_lengthscales(torch.ones(1, dtype=torch.float64)))
        super().__init__(domain, **kwargs)

    def candidates_and_test(self) -> tuple[CandidateSource[CandidateSpec], Test]:
        r"""The length scale refitted every round, and lines 12-15's records without a test."""
        return RefittedLengthscale(self.noise_std**2), RobustRecords()
