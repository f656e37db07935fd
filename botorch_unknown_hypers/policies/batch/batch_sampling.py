r"""The sampling-based batch baselines of the TS-RSR paper (Ren & Li, Sec. 6).

Three of the paper's six batch rules build the batch from random draws rather than a
sequential argmax; each is a :class:`~botorch_unknown_hypers.policies.batch.batch_baselines.BatchBaselinePolicy`
(fixed-hyperparameter or fitted surrogate, box or pool):

1. ``gp-ts`` (:class:`BatchThompsonSampling`, Kandasamy et al.): :math:`m` independent
   posterior samples :math:`\tilde f_i`, :math:`x_i = \arg\max_x \tilde f_i(x)`.
2. ``sp`` (:class:`StochasticPolicy`, Garcia-Barcos & Martinez-Cantin): :math:`m` i.i.d.
   draws from :math:`p(x) \propto \exp(\beta \mu_t(x))` on a finite set :math:`C`,
   :math:`\beta = 3 \log(n + n_\text{init} + 1) / \max_{x \in C} |\max_C \mu_t - \mu_t(x)|`.
3. ``dpp-ts`` (:class:`DPPThompsonSampling`, Nava, Mutny & Krause): a TS batch, then
   Metropolis-Hastings swaps with target :math:`\det(I + \lambda \sigma_n^{-2} K_t(X))`.

Thompson samples are BoTorch pathwise (Matheron) sample paths maximised in one batched
L-BFGS-B on a box and exact joint draws on a pool
(:func:`~botorch_unknown_hypers.acquisition.thompson.thompson_maximizers`). SP is by
definition a distribution over a finite set, so on a box it keeps the authors' rule of a
fresh random candidate set each round. ``docs/ts-rsr.md`` lists where we differ from the
authors' code.

Example:
    >>> policy = DPPThompsonSampling(BoxDomain(bounds), seed=0, surrogate="paper",
    ...                              surrogate_spec={"kernel": "matern52", "lengthscale": 0.7})
    >>> X_next = policy.suggest(train_X, train_Y, q=5)
    >>> policy.last_info["accepted"]

References:
    K. Kandasamy, A. Krishnamurthy, J. Schneider, B. Poczos. Parallelised Bayesian
    optimisation via Thompson sampling. AISTATS 2018.

    J. Garcia-Barcos, R. Martinez-Cantin. Fully distributed Bayesian optimization with
    stochastic policies. IJCAI 2019.

    E. Nava, M. Mutny, A. Krause. Diversified sampling for batched Bayesian optimization
    with determinantal point processes. AISTATS 2022.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import torch
from botorch.models.model import Model
from botorch.posteriors.gpytorch import GPyTorchPosterior
from torch import Tensor

from botorch_unknown_hypers.acquisition.pending import observation_noise_variance
from botorch_unknown_hypers.acquisition.thompson import candidate_set, thompson_maximizers
from botorch_unknown_hypers.checks import check_int, check_positive
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.policies.batch.surrogate import BatchHistory
from botorch_unknown_hypers.policies.batch.batch_baselines import BatchBaselinePolicy

SP_UNIFORM_RANGE = 1e-2
r"""SP samples uniformly when the mean range over the candidate set is at most this."""


def boltzmann_probabilities(mean: Tensor, n: int, n_init: int) -> tuple[Tensor, float]:
    r"""SP's Boltzmann distribution over a finite candidate set.

    .. math::

        p(x) \propto \exp(\beta \mu(x)), \qquad
        \beta = \frac{3 \log(n + n_\text{init} + 1)}{C_\text{range}}, \qquad
        C_\text{range} = \max_{x \in C} |\max_{C} \mu - \mu(x)|,

    uniform when :math:`C_\text{range} \le 10^{-2}` (the authors' rule; the threshold is
    in the units of :math:`\mu`).

    Args:
        mean: ``N`` posterior means on the candidate set.
        n: Batches proposed before this one.
        n_init: Size of the initial design.

    Returns:
        ``(probabilities, beta)``: ``N`` probabilities and :math:`\beta` (0 when uniform).
    """
    c_range = float((mean.max() - mean).abs().max())
    if c_range <= SP_UNIFORM_RANGE:
        return torch.full_like(mean, 1.0 / mean.numel()), 0.0
    beta = 3.0 * math.log(n + n_init + 1) / c_range
    return torch.softmax(beta * mean, dim=-1), beta


def dpp_log_det(model: Model, X: Tensor, dpp_lambda: float = 1.0) -> Tensor:
    r"""DPP-TS's log target :math:`\log\det(I + \lambda \sigma_n^{-2} K_t(X))`.

    :math:`K_t(X)` is the posterior covariance of :math:`f` at the batch (no noise) and
    :math:`\sigma_n^2` the observation noise, both in the posterior's units (so the
    product does not depend on an outcome transform). With a heteroskedastic noise the
    matrix is :math:`I + \lambda N^{-1/2} K_t N^{-1/2}`, :math:`N = \mathrm{diag}(\sigma_n^2)`.

    Args:
        model: A single-output model.
        X: ``m x d`` batch.
        dpp_lambda: :math:`\lambda > 0`.
    """
    with torch.no_grad():
        cov = cast(GPyTorchPosterior, model.posterior(X)).mvn.covariance_matrix  # a GP's posterior
        noise = observation_noise_variance(model, X)
    scale = noise.rsqrt()
    mat = torch.eye(X.shape[0], dtype=cov.dtype, device=cov.device) + dpp_lambda * (
        scale.unsqueeze(-1) * cov * scale.unsqueeze(-2)
    )
    logdet: Tensor = torch.linalg.slogdet(mat).logabsdet
    return logdet


def dpp_acceptance_probability(log_det_current: float, log_det_proposed: float) -> float:
    r"""Metropolis-Hastings acceptance of a DPP-TS swap, :math:`\min(1, \det_\text{prop} / \det_\text{cur})`.

    The proposal (replace a uniformly chosen batch element by a fresh Thompson sample's
    maximiser) is an independence proposal from the TS law of one element, and the target
    is the TS law reweighted by the determinant, so the TS densities cancel and only the
    determinant ratio remains.
    """
    return math.exp(min(0.0, log_det_proposed - log_det_current))


class BatchThompsonSampling(BatchBaselinePolicy):
    r"""Batch Thompson sampling (Kandasamy et al.; the paper's "TS").

    :math:`x_i = \arg\max_x \tilde f_i(x)`, :math:`\tilde f_1, \dots, \tilde f_m` i.i.d.
    from :math:`f \mid \mathcal F_t`. Box: pathwise samples maximised in one batched
    L-BFGS-B (the code: joint samples on ~1000 random points); pool: exact joint samples.
    """

    name = "gp-ts"

    def propose(self, model: Model, train_X: Tensor, train_Y: Tensor, q: int) -> tuple[Tensor, dict[str, Any]]:
        X, maxima = thompson_maximizers(
            model, self.domain, q, self.generator, self.num_restarts, self.raw_samples, self.x_mean_max, self.search
        )
        return X, {"sample_max": maxima.tolist()}


@dataclass
class StochasticPolicyState(BatchHistory):
    r"""The batch history plus :math:`n_\text{init}` (recorded at the first batch if not given)."""

    n_init: int | None = None

    def check(self) -> None:
        super().check()
        if self.n_init is not None and self.n_init < 0:
            raise ValueError(f"n_init must be None or >= 0, got {self.n_init}.")


class StochasticPolicy(BatchBaselinePolicy):
    r"""Stochastic policy (Garcia-Barcos & Martinez-Cantin).

    :math:`m` i.i.d. draws from :math:`p(x) \propto \exp(\beta \mu_t(x))` on a finite set
    :math:`C`, with :math:`\beta = 3 \log(n + n_\text{init} + 1) / C_\text{range}` and
    :math:`C_\text{range} = \max_{x \in C} |\max_C \mu_t - \mu_t(x)|`; uniform on
    :math:`C` when :math:`C_\text{range} \le 10^{-2}` (:func:`boltzmann_probabilities`).

    SP is inherently a distribution over a finite set, so on a box :math:`C` is the
    paper's own rule, a fresh random candidate set each round: ``num_points`` (default
    1000, the code's size) scrambled Sobol points seeded from the policy's generator (the
    code: uniform points). On a pool :math:`C` is the pool. Draws use the policy's
    generator. :math:`n_\text{init}` is ``n_init`` if given, else the number of training
    points at the first batch (the code's initial-design size), kept in the state.

    Args:
        num_points: :math:`|C|` on a box.
        n_init: Initial-design size (``None``: recorded at the first batch).
        **kwargs: As :class:`SurrogatePolicy`.
    """

    name = "sp"

    def __init__(self, domain: Domain, seed: int = 0, device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float64, num_points: int = 1000, n_init: int | None = None,
                 **kwargs: Any) -> None:
        check_int("num_points", num_points, 1)
        if n_init is not None:
            check_int("n_init", n_init, 0)
        super().__init__(domain, seed=seed, device=device, dtype=dtype, **kwargs)
        self.num_points = num_points
        self.state = StochasticPolicyState(n_init=n_init)

    def candidates(self) -> Tensor:
        r"""The candidate set :math:`C` of this round (``N x d``): the pool, or ``num_points``
        Sobol points of the box plus the posterior-mean maximiser."""
        points = candidate_set(self.domain, self.num_points, self.generator)
        return points if self.x_mean_max is None else torch.cat([points, self.x_mean_max.to(points)])

    def propose(self, model: Model, train_X: Tensor, train_Y: Tensor, q: int) -> tuple[Tensor, dict[str, Any]]:
        st = self.state
        if st.n_init is None:
            st.n_init = train_X.shape[0]
        C = self.candidates()
        with torch.no_grad():
            mean = cast(GPyTorchPosterior, model.posterior(C)).mean.squeeze(-1)
        probs, beta = boltzmann_probabilities(mean, st.n, st.n_init)
        idx = torch.multinomial(probs.cpu(), q, replacement=True, generator=self.generator).to(C.device)
        return C[idx], {"beta": beta, "uniform": beta == 0.0}


class DPPThompsonSampling(BatchBaselinePolicy):
    r"""DPP-TS (Nava, Mutny & Krause).

    Start from a Thompson-sampling batch :math:`X` and run ``mcmc_steps`` (2 in the
    paper's runs) Metropolis-Hastings steps on the target

    .. math::

        \pi(X) \propto \det(I + \lambda \sigma_n^{-2} K_t(X)) \prod_i p_\text{TS}(x_i),

    with :math:`\lambda = 1` and :math:`K_t(X)` the posterior covariance of the batch. A
    step picks a slot uniformly, proposes replacing it by the maximiser of a fresh
    Thompson sample and accepts with probability :math:`\min(1, \det_\text{prop} /
    \det_\text{cur})` (:func:`dpp_acceptance_probability`; the TS densities cancel).
    As in the authors' code every slot can be swapped (their ``first_ts=False``). The
    initial batch and all proposals are independent TS draws, so they are drawn together:
    one batched L-BFGS-B over ``q + mcmc_steps`` pathwise samples on a box, exact joint
    samples on a pool. Determinants are compared in log space.

    Args:
        mcmc_steps: Number of Metropolis-Hastings steps.
        dpp_lambda: :math:`\lambda`.
        **kwargs: As :class:`SurrogatePolicy`.
    """

    name = "dpp-ts"

    def __init__(self, domain: Domain, seed: int = 0, device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float64, mcmc_steps: int = 2, dpp_lambda: float = 1.0,
                 **kwargs: Any) -> None:
        check_int("mcmc_steps", mcmc_steps, 0)
        check_positive("dpp_lambda", dpp_lambda)
        super().__init__(domain, seed=seed, device=device, dtype=dtype, **kwargs)
        self.mcmc_steps = mcmc_steps
        self.dpp_lambda = float(dpp_lambda)

    def propose(self, model: Model, train_X: Tensor, train_Y: Tensor, q: int) -> tuple[Tensor, dict[str, Any]]:
        draws, _ = thompson_maximizers(
            model, self.domain, q + self.mcmc_steps, self.generator, self.num_restarts, self.raw_samples, self.x_mean_max,
            self.search,
        )
        batch, proposals = draws[:q].clone(), draws[q:]
        log_det = float(dpp_log_det(model, batch, self.dpp_lambda))
        steps: list[dict[str, Any]] = []
        for s in range(self.mcmc_steps):  # a Markov chain: each step depends on the last
            slot = int(torch.randint(q, (1,), generator=self.generator))
            u = float(torch.rand((), generator=self.generator, dtype=torch.float64))
            proposed = batch.clone()
            proposed[slot] = proposals[s]
            log_det_prop = float(dpp_log_det(model, proposed, self.dpp_lambda))
            alpha = dpp_acceptance_probability(log_det, log_det_prop)
            accepted = u < alpha
            steps.append({
                "slot": slot, "log_det_current": log_det, "log_det_proposed": log_det_prop,
                "acceptance_probability": alpha, "accepted": accepted,
            })
            if accepted:
                batch, log_det = proposed, log_det_prop
        info = {
            "accepted": sum(st["accepted"] for st in steps),
            "log_det": log_det,
            "initial_batch": draws[:q].tolist(),
            "steps": steps,
            "proposals": proposals.tolist(),
        }
        return batch, info


__all__ = [
    "BatchThompsonSampling",
    "DPPThompsonSampling",
    "StochasticPolicy",
    "StochasticPolicyState",
    "boltzmann_probabilities",
    "dpp_acceptance_probability",
    "dpp_log_det",
]
