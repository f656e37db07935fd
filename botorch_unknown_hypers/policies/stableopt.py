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

The perturbation set is exact on a **pool**: :math:`\Delta_\epsilon(x)` is the set of
pool points within :math:`\epsilon` of :math:`x`, so both the inner min and the outer
max are exhaustive (a box problem can be handed over as a dense grid). The
neighbourhood mask is ``N x N``; the robust UCB of all candidates is one
``K x N x N`` masked min.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.robust import robust_min
from botorch_unknown_hypers.confidence import upper_confidence_bound
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.confidence import elimination_statistics
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.fitted import fit_single_task_gp
from botorch_unknown_hypers.policies.candidate_set import CandidateSetPolicy, SurvivorState, elimination_xi
from botorch_unknown_hypers.policies.pending_plays import PendingPlay, play_record, take_plays


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


class HEStableOpt(CandidateSetPolicy):
    r"""HE-StableOpt (Alg. 2) on a pool; see the module docstring.

    Args:
        domain: A pool (:class:`~botorch_unknown_hypers.domains.FiniteDomain`); a box is refused
            (the perturbation set must be exact: discretise it into a grid).
        epsilon: Perturbation radius :math:`\epsilon` (domain units).
        perturbation: ``"box"`` (:math:`L_\infty`) or ``"ball"`` (:math:`L_2`).
        **kwargs: As :class:`~botorch_unknown_hypers.policies.candidate_set.CandidateSetPolicy`.
    """

    max_batch_size = 1
    r"""Proposes one point per round."""

    name = "he-stableopt"
    eliminate = True

    def __init__(self, domain: Domain, epsilon: float = 0.05, perturbation: str = "box", **kwargs: Any) -> None:
        if not (isinstance(epsilon, (int, float)) and epsilon >= 0 and math.isfinite(epsilon)):
            raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}.")
        super().__init__(domain, **kwargs)
        self.epsilon = float(epsilon)
        self.perturbation = perturbation
        self.mask = self.domain.neighbourhoods(self.epsilon, perturbation)  # refuses a box
        self.state = RobustEliminationState(alive=[True] * len(self.candidates))

    def _round_model(self, train_X: Tensor, train_Y: Tensor) -> tuple[CandidateGP, list[int]]:
        alive = [u for u, a in enumerate(self.state.alive) if a]
        return self._model(train_X, train_Y, alive), alive

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        model, alive = self._round_model(train_X, train_Y)
        betas = self._betas(model, self.state.round + 1).unsqueeze(-1)
        points = self.domain.points
        with torch.no_grad():
            mean, var = model.marginal_mean_variance(points.unsqueeze(0).unsqueeze(0))
        mean, var, sigma = mean[0], var[0], var[0].clamp_min(0).sqrt()  # K x N
        robust = robust_min(upper_confidence_bound(mean, var, betas), self.mask)  # line 8: K x N
        k_u, i = divmod(int(robust.argmax()), robust.shape[-1])
        nb = self.mask[i].nonzero().flatten()
        lcb = upper_confidence_bound(mean[:, nb], var[:, nb], -betas)  # line 9: K x |nb|
        k_v, j_local = divmod(int(lcb.argmin()), lcb.shape[-1])
        j = int(nb[j_local])
        pessimistic = PendingPlay(alive[k_v], mean=float(mean[k_v, j]), width=float(betas[k_v, 0] * sigma[k_v, j]))
        self.state.pending = [  # lines 10-11: mu and beta * sigma of u_t and of v_t at the queried point
            PendingPlay(
                alive[k_u],
                points[j].tolist(),
                mean=float(mean[k_u, j]),
                width=float(betas[k_u, 0] * sigma[k_u, j]),
                pessimistic=pessimistic,
            )
        ]
        self.robust_point = points[i].unsqueeze(0)
        self.selected = self._labels([alive[k_u]])
        self.n_candidates = len(alive)
        self.diagnostics = {
            "alive": list(self.state.alive),
            "u": alive[k_u],
            "v": alive[k_v],
            "x_robust": points[i].tolist(),
            "delta": (points[j] - points[i]).tolist(),
            "robust_ucb": float(robust[k_u, i]),
        }
        return points[j].unsqueeze(0)

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        st = self.state
        played = [(play, float(y)) for play, y in zip(take_plays(st, X, self.domain), Y.reshape(-1)) if play is not None]
        if not played:
            return  # data without a play
        (p, y), = played
        st.round += 1
        t = st.round
        u, eta, width_u = play_record(p, y)
        v, eta_hat, width_v = play_record(p.pessimistic, y)
        st.u.append(u)
        st.eta.append(eta)
        st.width_u.append(width_u)
        st.v.append(v)
        st.eta_hat.append(eta_hat)
        st.width_v.append(width_v)
        if not self.eliminate:
            return
        xi_t = elimination_xi(t, len(st.alive), self.noise_std, self.delta)
        n = len(st.alive)
        stats_u, thresholds_u = elimination_statistics(st.u, st.eta, st.width_u, n, xi_t)
        stats_v, thresholds_v = elimination_statistics(st.v, st.eta_hat, st.width_v, n, xi_t)
        fire_u = bool(stats_u[u] > thresholds_u[u])
        fire_v = bool(stats_v[v] > thresholds_v[v])
        for fire, k in ((fire_u, u), (fire_v, v)):  # lines 16-21: both go if both tests fire
            if fire:
                st.eliminate(k, t)
        self.diagnostics.update(
            {
                "xi": xi_t,
                "statistic_u": float(stats_u[u]),
                "threshold_u": float(thresholds_u[u]),
                "statistic_v": float(stats_v[v]),
                "threshold_v": float(thresholds_v[v]),
                "eliminated": {str(k): v for k, v in st.eliminated_at.items()},
            }
        )


class StableOptMLE(HEStableOpt):
    r"""StableOpt with the length scale refitted by maximum likelihood every round (no elimination).

    The robust baseline: a Matern-5/2 ``SingleTaskGP`` with output scale 1 and noise variance
    :math:`R^2`, the length scale fitted by ``fit_gpytorch_mll`` on all data (inputs in the unit
    cube), then the same robust selection with :math:`K = 1`.
    """

    name = "stableopt-mle"
    eliminate = False

    def __init__(self, domain: Domain, **kwargs: Any) -> None:
        kwargs.setdefault("candidates", KernelCandidates.from_lengthscales(torch.ones(1, dtype=torch.float64)))
        super().__init__(domain, **kwargs)

    def _round_model(self, train_X: Tensor, train_Y: Tensor) -> tuple[CandidateGP, list[int]]:
        with self.seeded():
            fitted = fit_single_task_gp(train_X, train_Y, self.domain.bounds, noise=self.noise_std**2)
        theta = fitted.covar_module.base_kernel.lengthscale.reshape(1).detach()
        self.candidates = KernelCandidates.from_lengthscales(theta, kernel="matern52", noise=self.noise_std**2)
        self.state.alive = [True]
        return self._model(train_X, train_Y, [0]), [0]
