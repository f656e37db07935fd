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
   (printed line 20 overwrites line 17, ambiguity A4); the last survivor stays.

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
from typing import Any

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.robust import robust_min
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.policies.baselines import fit_single_task_gp
from botorch_unknown_hypers.policies.elimination import CandidateSetPolicy, elimination_statistics, he_xi
from botorch_unknown_hypers.domains import Domain, FiniteDomain

class HEStableOpt(CandidateSetPolicy):
    r"""HE-StableOpt (Alg. 2) on a pool; see the module docstring.

    Args:
        domain: A pool (:class:`~botorch_unknown_hypers.problems.base.FiniteDomain`).
        epsilon: Perturbation radius :math:`\epsilon` (domain units).
        perturbation: ``"box"`` (:math:`L_\infty`) or ``"ball"`` (:math:`L_2`).
        Other args: as :class:`~botorch_unknown_hypers.policies.elimination.CandidateSetPolicy`.
    """

    name = "he-stableopt"
    eliminate = True

    def __init__(self, domain: Domain, epsilon: float = 0.05, perturbation: str = "box", **kwargs: Any) -> None:
        if not isinstance(domain, FiniteDomain):
            raise ValueError(
                "domain: he-stableopt needs a pool (FiniteDomain) so that the perturbation set is exact; "
                "discretise a box into a grid."
            )
        if not (epsilon >= 0 and math.isfinite(epsilon)):
            raise ValueError(f"epsilon must be finite and >= 0, got {epsilon}.")
        super().__init__(domain, **kwargs)
        self.epsilon = float(epsilon)
        self.perturbation = perturbation
        self.mask = self.domain.neighbourhoods(self.epsilon, perturbation)
        n = len(self.candidates)
        self.alive: list[bool] = [True] * n
        self.eliminated_at: dict[int, int] = {}
        self.kept_last: list[int] = []
        self.records: dict[str, list] = {"u": [], "eta": [], "width_u": [], "v": [], "eta_hat": [], "width_v": []}
        self.pending: dict[str, Any] | None = None
        self.robust_point: Tensor | None = None

    def _round_model(self, train_X: Tensor, train_Y: Tensor) -> tuple[Any, list[int]]:
        alive = [u for u, a in enumerate(self.alive) if a]
        return self._model(train_X, train_Y, alive), alive

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        if q != 1:
            raise ValueError(f"q: {self.name} proposes one point per round (q = 1), got {q}.")
        t = self.round + 1
        model, alive = self._round_model(train_X, train_Y)
        betas = self._betas(model, t)
        points = self.domain.points
        with torch.no_grad():
            mean, var = model.marginal_mean_variance(points.unsqueeze(0).unsqueeze(0))
        mean, sigma = mean[0], var[0].clamp_min(0).sqrt()  # K x N
        ucb = mean + betas.unsqueeze(-1) * sigma
        lcb = mean - betas.unsqueeze(-1) * sigma
        robust = robust_min(ucb, self.mask)  # K x N
        flat = int(robust.argmax())
        k_u, i = divmod(flat, robust.shape[-1])
        nb = self.mask[i].nonzero().flatten()
        sub = lcb[:, nb]  # K x |nb|
        flat_v = int(sub.argmin())
        k_v, j_local = divmod(flat_v, sub.shape[-1])
        j = int(nb[j_local])
        self.pending = {
            "u": alive[k_u],
            "v": alive[k_v],
            "mean_u": float(mean[k_u, j]),
            "mean_v": float(mean[k_v, j]),
            "width_u": float(betas[k_u] * sigma[k_u, j]),
            "width_v": float(betas[k_v] * sigma[k_v, j]),
        }
        self.robust_point = points[i].unsqueeze(0)
        labels = self._labels(alive)
        self.selected = [labels[k_u]]
        self.n_candidates = len(alive)
        self.diagnostics = {
            "alive": list(self.alive),
            "u": alive[k_u],
            "v": alive[k_v],
            "x_robust": points[i].tolist(),
            "delta": (points[j] - points[i]).tolist(),
            "robust_ucb": float(robust[k_u, i]),
        }
        return points[j].unsqueeze(0)

    def _test(self, key: str, width_key: str, who: str, u: int, xi_t: float) -> tuple[bool, float, float]:
        stats, thresholds = elimination_statistics(
            self.records[who], self.records[key], self.records[width_key], len(self.alive), xi_t
        )
        return bool(stats[u] > thresholds[u]), float(stats[u]), float(thresholds[u])

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        if self.pending is None:
            return
        p, self.pending = self.pending, None
        self.round += 1
        t = self.round
        y = float(Y.squeeze())
        for key, value in (
            ("u", p["u"]),
            ("eta", y - p["mean_u"]),
            ("width_u", p["width_u"]),
            ("v", p["v"]),
            ("eta_hat", y - p["mean_v"]),
            ("width_v", p["width_v"]),
        ):
            self.records[key].append(value)
        if not self.eliminate:
            return
        xi_t = he_xi(t, len(self.alive), self.noise_std, self.delta)
        fire_u, stat_u, th_u = self._test("eta", "width_u", "u", p["u"], xi_t)
        fire_v, stat_v, th_v = self._test("eta_hat", "width_v", "v", p["v"], xi_t)
        for fire, u in ((fire_u, p["u"]), (fire_v, p["v"])):
            if fire:
                self._eliminate(u, t)
        self.diagnostics.update(
            {
                "xi": xi_t,
                "statistic_u": stat_u,
                "threshold_u": th_u,
                "statistic_v": stat_v,
                "threshold_v": th_v,
                "eliminated": {str(k): v for k, v in self.eliminated_at.items()},
            }
        )

    def _extra_state(self) -> dict[str, Any]:
        return {**self._elimination_state(), "records": {k: list(v) for k, v in self.records.items()}}

    def _check_extra_state(self, extra: dict[str, Any]) -> None:
        try:
            rec = extra["records"]
            series = [rec[k] for k in self.records]
        except (KeyError, TypeError) as e:
            raise ValueError(f"state['extra'] is not a {self.name} state: {e}") from None
        self._check_elimination_state(extra, rec["u"], *series)
        self._check_elimination_state(extra, rec["v"], *series)

    def _load_extra_state(self, extra: dict[str, Any]) -> None:
        self._load_elimination_state(extra)
        self.records = {k: list(v) for k, v in extra["records"].items()}


class StableOptMLE(HEStableOpt):
    r"""StableOpt with the length scale refitted by maximum likelihood every round (no elimination).

    The robust baseline of the issue: a Matern-5/2 ``SingleTaskGP`` with output scale 1 and
    noise variance :math:`R^2`, the length scale fitted by ``fit_gpytorch_mll`` on all data
    (inputs in the unit cube), then the same robust selection with :math:`K = 1`.
    """

    name = "stableopt-mle"
    eliminate = False

    def __init__(self, domain: Domain, **kwargs: Any) -> None:
        kwargs.setdefault("candidates", KernelCandidates.from_lengthscales(torch.ones(1, dtype=torch.float64)))
        super().__init__(domain, **kwargs)

    def _round_model(self, train_X: Tensor, train_Y: Tensor) -> tuple[Any, list[int]]:
        with self.seeded():
            fitted = fit_single_task_gp(train_X, train_Y, self.domain.bounds, noise=self.noise_std**2)
        theta = fitted.covar_module.base_kernel.lengthscale.reshape(1).detach()
        self.candidates = KernelCandidates.from_lengthscales(theta, kernel="matern52", noise=self.noise_std**2)
        self.alive = [True]
        return self._model(train_X, train_Y, [0]), [0]
