r"""The six batch baselines of the TS-RSR paper (Ren & Li, Sec. 6), and BoTorch's qLogNEI.

Ren & Li compare TS-RSR with exactly six batch rules (note Sec. 2.3); each is a
:class:`~botorch_unknown_hypers.policies.batch.SurrogatePolicy`, so it runs on the
paper's fixed-hyperparameter GP or on a fitted ``SingleTaskGP``, on a box or a pool.
Below :math:`\mu_t, \sigma_t` are the posterior of round :math:`t` (all data so far),
:math:`m = q` the batch size, :math:`Q` the points already chosen in the batch, and

.. math::

    \sigma_t^2(x \mid Q) = k_t(x, x) - k_t(x, Q)\,[k_t(Q, Q) + \sigma_n^2 I]^{-1} k_t(Q, x)

the *hallucinated* variance (TS-RSR eq. 2): the posterior variance after also observing
``Q``, which needs no values and no refit
(:func:`~botorch_unknown_hypers.acquisition.ts_rsr.conditional_posterior_variance`).
``n`` is the number of batches this policy proposed before the current one (the
authors' iteration index, 0 for the first batch).

1. ``gp-ts`` (:class:`BatchThompsonSampling`, Kandasamy et al.): :math:`m` independent
   posterior samples :math:`\tilde f_i`, :math:`x_i = \arg\max_x \tilde f_i(x)`.
2. ``bucb`` (:class:`BUCB`, Desautels et al.): :math:`x_i = \arg\max_x \mu_t(x) +
   \beta_t \sigma_t(x \mid x_{<i})` with :math:`\mu_t` frozen and
   :math:`\beta_t = 0.1 \cdot 2 \log(|C| t^2 \pi^2 / (6\delta))`, :math:`\delta = 0.01`.
3. ``ucbpe`` (:class:`UCBPE`, Contal et al.): :math:`x_1 = \arg\max_x \mu_t + \beta
   \sigma_t` with :math:`\beta = 1 + 0.01 n`, then :math:`x_i = \arg\max_x
   \sigma_t^2(x \mid x_{<i})`.
4. ``sp`` (:class:`StochasticPolicy`, Garcia-Barcos & Martinez-Cantin): :math:`m` i.i.d.
   draws from :math:`p(x) \propto \exp(\beta \mu_t(x))` on a finite set :math:`C`,
   :math:`\beta = 3 \log(n + n_\text{init} + 1) / \max_{x \in C} |\max_C \mu_t - \mu_t(x)|`.
5. ``kb-ei`` (:class:`KrigingBelieverEI`, the paper's "qEI"): sequential EI, each chosen
   point added to the model with the fantasised value :math:`y = \mu(x)`.
6. ``dpp-ts`` (:class:`DPPThompsonSampling`, Nava, Mutny & Krause): a TS batch, then
   Metropolis-Hastings swaps with target :math:`\det(I + \lambda \sigma_n^{-2} K_t(X))`.

plus ``qlognei`` (:class:`QLogNEI`), BoTorch's ``qLogNoisyExpectedImprovement`` with
sequential greedy optimisation, what a BoTorch user would run.

**Where we differ from the authors' code (note Sec. 2.1, 2.3 and gotchas 5, 7).**

- *Acquisition optimisation.* The authors' code maximises every baseline over the same
  ~1000 uniform random points (plus a few posterior-mean ascent points); the gradient
  loops written for BUCB and EI have ``iters = 0`` and only TS-RSR gets continuous
  refinement. We deliberately optimise all methods equally: every box argmax is BoTorch's
  ``optimize_acqf`` (batched multi-start L-BFGS-B with ``num_restarts`` / ``raw_samples``,
  seeded from the policy's generator), Thompson samples are BoTorch pathwise (Matheron)
  sample paths maximised in one batched L-BFGS-B
  (:func:`~botorch_unknown_hypers.acquisition.optimize.maximize_per_candidate`). On a
  pool every argmax is exhaustive and samples are exact joint draws. SP is the exception:
  it is by definition a distribution over a finite set, so it keeps the TS-RSR authors'
  candidate-set rule, a fresh random set each round (``num_points`` = 1000 scrambled
  Sobol points from the policy's generator here, uniform points in the code).
- *BUCB's score* is :math:`\mu + \beta_t \sigma` with the 0.1-scaled :math:`\beta_t` above,
  as the note and the code state (Desautels et al. use :math:`\beta_t^{1/2}` unscaled).
- *BUCB at the first batch.* The code uses :math:`t = n = 0`, so :math:`\log 0 = -\infty`
  and its whole first batch is degenerate (candidate 0 repeated). We use the 1-based round
  index :math:`t = n + 1 \ge 1`. The hallucinated variance comes from the joint
  posterior, not a deep-copied refit with dummy targets (same value, exact noise term).
- *UCBPE's first point.* The code adds :math:`\beta \sigma_t^2` (its ``predict`` returns
  the variance); we use :math:`\beta \sigma_t` and keep the bug as
  ``use_variance_bug=True``. Like the code (and the note) we take points ``2..m`` as the
  argmax of the conditioned variance over the whole domain, not over Contal et al.'s
  "relevant region" :math:`\{x: \mu_t + \beta\sigma_t \ge \max_x (\mu_t - \beta\sigma_t)\}`.
- *KB-EI.* BoTorch's ``LogExpectedImprovement`` (same argmax as EI, no underflow far from
  the incumbent) with ``best_f`` the best observed ``y``, raised to the fantasised values
  within the batch (Kriging Believer); the code keeps it fixed, which makes a batch repeat
  one point whenever its mean beats the incumbent (``update_best_f=False`` reproduces it).

Reference quantities the policies expose: ``last_info`` (a JSON-safe dict of the last
batch, e.g. BUCB's :math:`\beta_t`, per-slot :math:`\mu, \sigma, \sigma(\cdot \mid Q)`,
DPP-TS's proposals and acceptances) and ``history`` (all batches), both part of the
policy's state together with the round counter ``n``.

Example:
    >>> policy = BUCB(BoxDomain(bounds), seed=0, surrogate="paper",
    ...               surrogate_spec={"kernel": "matern52", "lengthscale": 0.7})
    >>> X_next = policy.suggest(train_X, train_Y, q=5)
    >>> policy.last_info["beta"], policy.last_info["slots"][1]["sigma_conditional"]

References:
    Z. Ren, N. Li. TS-RSR: A provably efficient approach for batch Bayesian optimization.
    (Sec. 6 and App. C; reimplementation notes in ``shared/reference/ts-rsr.md``.)

    T. Desautels, A. Krause, J. Burdick. Parallelizing exploration-exploitation tradeoffs
    in Gaussian process bandit optimization. JMLR 2014.

    E. Contal, D. Buffoni, A. Robicquet, N. Vayatis. Parallel Gaussian process
    optimization with upper confidence bound and pure exploration. ECML-PKDD 2013.

    K. Kandasamy, A. Krishnamurthy, J. Schneider, B. Poczos. Parallelised Bayesian
    optimisation via Thompson sampling. AISTATS 2018.

    J. Garcia-Barcos, R. Martinez-Cantin. Fully distributed Bayesian optimization with
    stochastic policies. IJCAI 2019.

    D. Ginsbourger, R. Le Riche, L. Carraro. Kriging is well-suited to parallelize
    optimization. 2010.

    E. Nava, M. Mutny, A. Krause. Diversified sampling for batched Bayesian optimization
    with determinantal point processes. AISTATS 2022.

    S. Ament, S. Daulton, D. Eriksson, M. Balandat, E. Bakshy. Unexpected improvements to
    expected improvement for Bayesian optimization. NeurIPS 2023.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from botorch.acquisition import LogExpectedImprovement, qLogNoisyExpectedImprovement
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.models.model import Model
from torch import Tensor

from botorch_unknown_hypers.acquisition.optimize import maximize
from botorch_unknown_hypers.acquisition.pending import (
    ConditionalLogEI,
    ConditionalUCB,
    ConditionalVariance,
    observation_noise_variance,
)
from botorch_unknown_hypers.acquisition.thompson import (
    candidate_set,
    posterior_mean_maximizer,
    thompson_maximizers,
)
from botorch_unknown_hypers.models.cached_predictive import CachedExactPredictive
from botorch_unknown_hypers.policies.batch import BatchHistory, SurrogatePolicy
from botorch_unknown_hypers.domains import Domain

BUCB_DELTA = 0.01
r"""The :math:`\delta` of BUCB's :math:`\beta_t` in the authors' code."""

SP_UNIFORM_RANGE = 1e-2
r"""SP samples uniformly when the mean range over the candidate set is at most this."""


# --------------------------------------------------------------------------- formulas
def bucb_beta(num_points: int, t: int, delta: float = BUCB_DELTA) -> float:
    r"""BUCB's multiplier as the authors' code states it (note Sec. 2.3, item 1).

    .. math::

        \beta_t = 0.1 \cdot 2 \log\left(\frac{|C|\, t^2 \pi^2}{6 \delta}\right),

    used as :math:`\mu + \beta_t \sigma` (Desautels et al. use :math:`\beta_t^{1/2}`
    without the 0.1; the code's scaled, un-rooted form is what the paper ran).

    Args:
        num_points: :math:`|C|`, the size of the (candidate) domain.
        t: The 1-based round index (``t >= 1``; ``t = 0`` is the code's ``log 0`` bug).
        delta: Confidence parameter in ``(0, 1)``.
    """
    if not isinstance(t, int) or t < 1:
        raise ValueError(f"t must be an integer >= 1 (the 1-based round index), got {t!r}.")
    if not isinstance(num_points, int) or num_points < 1:
        raise ValueError(f"num_points must be a positive integer, got {num_points!r}.")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    return 0.1 * 2.0 * math.log(num_points * t**2 * math.pi**2 / (6.0 * delta))


def ucbpe_beta(n: int) -> float:
    r"""UCBPE's multiplier :math:`\beta = 1 + 0.01 n` (``n`` = batches proposed before)."""
    return 1.0 + 0.01 * n


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
        cov = model.posterior(X).mvn.covariance_matrix
        noise = observation_noise_variance(model, X)
    scale = noise.rsqrt()
    mat = torch.eye(X.shape[0], dtype=cov.dtype, device=cov.device) + dpp_lambda * (
        scale.unsqueeze(-1) * cov * scale.unsqueeze(-2)
    )
    return torch.linalg.slogdet(mat).logabsdet


def dpp_acceptance_probability(log_det_current: float, log_det_proposed: float) -> float:
    r"""Metropolis-Hastings acceptance of a DPP-TS swap, :math:`\min(1, \det_\text{prop} / \det_\text{cur})`.

    The proposal (replace a uniformly chosen batch element by a fresh Thompson sample's
    maximiser) is an independence proposal from the TS law of one element, and the target
    is the TS law reweighted by the determinant, so the TS densities cancel and only the
    determinant ratio remains.
    """
    return math.exp(min(0.0, log_det_proposed - log_det_current))


# ----------------------------------------------------------------------- acquisitions
# ------------------------------------------------------------------ Thompson samples
def _check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return value


def _check_positive(name: str, value: Any, upper: float | None = None) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if ok and upper is not None:
        ok = value < upper
    if not ok:
        bound = f" and < {upper}" if upper is not None else ""
        raise ValueError(f"{name} must be a finite number > 0{bound}, got {value!r}.")
    return float(value)


class BatchBaselinePolicy(SurrogatePolicy):
    r"""Shared loop of the batch baselines: build the round's surrogate, propose, log.

    Subclasses implement :meth:`propose` (``model, train_X, train_Y, q`` ->
    ``q x d`` points and a JSON-safe diagnostics dict). The round counter ``n``
    (batches proposed so far) and the diagnostics history are part of the state.

    On a box, every maximisation has one extra start at the round's posterior-mean
    maximiser :math:`\arg\max_x \mu_t(x)` (``start_at_mean_max=True``, the default): in the
    authors' code all methods share a candidate set that holds a :math:`\mu`-ascent point
    (note Sec. 2.1), and TS-RSR gets the same start. The stochastic policy adds the point
    to its finite set. ``qlognei`` keeps BoTorch's defaults.

    Args:
        start_at_mean_max: See above.

    Attributes:
        state: :class:`~botorch_unknown_hypers.policies.batch.BatchHistory`: ``n``, the batches
            proposed so far (the authors' iteration index of the next batch), and the history
            of every batch's diagnostics.
        last_info: Diagnostics of the last batch.
    """

    uses_mean_max_start: bool = True
    r"""Whether this method's maximisations take the posterior-mean-maximiser start."""

    def __init__(self, domain: Domain, seed: int = 0, device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float64, start_at_mean_max: bool = True, **kwargs: Any) -> None:
        if not isinstance(start_at_mean_max, bool):
            raise ValueError(f"start_at_mean_max must be a bool, got {start_at_mean_max!r}.")
        super().__init__(domain, seed=seed, device=device, dtype=dtype, **kwargs)
        self.start_at_mean_max = start_at_mean_max
        self.last_info: dict[str, Any] = {}
        self.x_mean_max: Tensor | None = None

    def propose(self, model: Model, train_X: Tensor, train_Y: Tensor, q: int) -> tuple[Tensor, dict[str, Any]]:
        raise NotImplementedError

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        model = self.build_model(train_X, train_Y)
        self.x_mean_max = None
        if self.start_at_mean_max and self.uses_mean_max_start:
            self.x_mean_max = posterior_mean_maximizer(
                model, self.domain, train_X, self.generator, self.num_restarts, self.raw_samples
            )
        X, info = self.propose(model, train_X, train_Y, q)
        self.last_info = {"n": self.state.n, **info}
        self.state.history.append(self.last_info)
        self.state.n += 1
        self.selected = [self.last_label] * q
        self.n_candidates = 1
        return X.detach()

    def argmax(self, acqf: AcquisitionFunction) -> Tensor:
        r"""``1 x d`` maximiser: exhaustive on a pool, seeded ``optimize_acqf`` on a box
        (one start at :attr:`x_mean_max` when set)."""
        return self.maximize(acqf, initial_points=self.x_mean_max)

    # ----------------------------------------------------------------- state
    def _after_load(self) -> None:
        self.last_info = dict(self.state.history[-1]) if self.state.history else {}


class BatchThompsonSampling(BatchBaselinePolicy):
    r"""Batch Thompson sampling (Kandasamy et al.; the paper's "TS").

    :math:`x_i = \arg\max_x \tilde f_i(x)`, :math:`\tilde f_1, \dots, \tilde f_m` i.i.d.
    from :math:`f \mid \mathcal F_t`. Box: pathwise samples maximised in one batched
    L-BFGS-B (the code: joint samples on ~1000 random points); pool: exact joint samples.
    """

    name = "gp-ts"

    def propose(self, model: Model, train_X: Tensor, train_Y: Tensor, q: int) -> tuple[Tensor, dict[str, Any]]:
        X, maxima = thompson_maximizers(
            model, self.domain, q, self.generator, self.num_restarts, self.raw_samples, self.x_mean_max
        )
        return X, {"sample_max": maxima.tolist()}


class BUCB(BatchBaselinePolicy):
    r"""Batch UCB with hallucinated variance (Desautels et al.; note Sec. 2.3, item 1).

    .. math::

        x_i = \arg\max_x \mu_t(x) + \beta_t\, \sigma_t(x \mid x_1, \dots, x_{i-1}), \qquad
        \beta_t = 0.1 \cdot 2 \log\left(\frac{|C|\, t^2 \pi^2}{6 \delta}\right),

    with :math:`\mu_t` frozen for the batch, :math:`\delta = 0.01` and the score
    :math:`\mu + \beta_t \sigma` (not :math:`\beta_t^{1/2}`) exactly as the note and the
    authors' code state. Deviation: :math:`t = n + 1`, the 1-based round index; the
    code's :math:`t = 0` makes :math:`\beta = -\infty` and its first batch degenerate.
    :math:`|C|` is ``num_points`` on a box (the code's candidate-set size, 1000), the
    pool size on a pool. The slots are built one after the other because each conditions
    on the previous ones.

    Args:
        num_points: :math:`|C|` on a box.
        delta: :math:`\delta`.
        **kwargs: As :class:`SurrogatePolicy`.
    """

    name = "bucb"

    def __init__(self, domain: Domain, seed: int = 0, device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float64, num_points: int = 1000, delta: float = BUCB_DELTA,
                 **kwargs: Any) -> None:
        _check_int("num_points", num_points, 1)
        _check_positive("delta", delta, upper=1.0)
        super().__init__(domain, seed=seed, device=device, dtype=dtype, **kwargs)
        self.num_points = num_points
        self.delta = float(delta)

    def beta(self) -> float:
        r""":math:`\beta_t` of the next batch (:math:`t = n + 1`)."""
        size = self.domain.discretization_size(self.num_points)
        return bucb_beta(size, self.state.n + 1, self.delta)

    def propose(self, model: Model, train_X: Tensor, train_Y: Tensor, q: int) -> tuple[Tensor, dict[str, Any]]:
        beta = self.beta()
        predictive = CachedExactPredictive.from_model(model)  # one training factor per batch
        chosen: list[Tensor] = []
        slots: list[dict[str, float]] = []
        for _ in range(q):  # sequential: slot i conditions on slots < i
            pending = torch.cat(chosen) if chosen else None
            acqf = ConditionalUCB(model, beta, X_pending=pending, predictive=predictive)
            x = self.argmax(acqf)
            with torch.no_grad():
                mean, var_c = acqf.mean_and_variance(x.unsqueeze(0))
                var = model.posterior(x).variance.reshape(())
            slots.append({
                "mean": float(mean), "sigma": float(var.sqrt()), "sigma_conditional": float(var_c.sqrt()),
                "score": float(mean + beta * var_c.sqrt()),
            })
            chosen.append(x)
        return torch.cat(chosen), {"t": self.state.n + 1, "beta": beta, "slots": slots}


class UCBPE(BatchBaselinePolicy):
    r"""GP-UCB with pure exploration (Contal et al.; note Sec. 2.3, item 2).

    .. math::

        x_1 = \arg\max_x \mu_t(x) + \beta \sigma_t(x), \quad \beta = 1 + 0.01 n; \qquad
        x_i = \arg\max_x \sigma_t^2(x \mid x_1, \dots, x_{i-1}), \quad i \ge 2.

    Deviations: the authors' code adds :math:`\beta \sigma_t^2(x)` (its ``predict``
    returns the variance; note gotcha 7); we use the standard deviation, and
    ``use_variance_bug=True`` reproduces the code. Contal et al. restrict points
    ``2..m`` to the relevant region :math:`\{x : \mu_t + \beta\sigma_t \ge \max_x(\mu_t -
    \beta\sigma_t)\}`; the note and the code do not, and neither do we (whole domain).

    Args:
        use_variance_bug: Score the first point with the variance (the authors' code).
        **kwargs: As :class:`SurrogatePolicy`.
    """

    name = "ucbpe"

    def __init__(self, domain: Domain, seed: int = 0, device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float64, use_variance_bug: bool = False, **kwargs: Any) -> None:
        if not isinstance(use_variance_bug, bool):
            raise ValueError(f"use_variance_bug must be a bool, got {use_variance_bug!r}.")
        super().__init__(domain, seed=seed, device=device, dtype=dtype, **kwargs)
        self.use_variance_bug = use_variance_bug

    def propose(self, model: Model, train_X: Tensor, train_Y: Tensor, q: int) -> tuple[Tensor, dict[str, Any]]:
        beta = ucbpe_beta(self.state.n)
        predictive = CachedExactPredictive.from_model(model)  # one training factor per batch
        first = ConditionalUCB(model, beta, variance_bonus=self.use_variance_bug, predictive=predictive)
        chosen = [self.argmax(first)]
        variances: list[float] = []
        for _ in range(1, q):  # sequential: each slot conditions on the previous ones
            acqf = ConditionalVariance(model, X_pending=torch.cat(chosen), predictive=predictive)
            x = self.argmax(acqf)
            with torch.no_grad():
                variances.append(float(acqf(x.unsqueeze(0))))
            chosen.append(x)
        return torch.cat(chosen), {"beta": beta, "variance_conditional": variances}


@dataclass
class StochasticPolicyState(BatchHistory):
    r"""The batch history plus :math:`n_\text{init}` (recorded at the first batch if not given)."""

    n_init: int | None = None

    def check(self) -> None:
        super().check()
        if self.n_init is not None and self.n_init < 0:
            raise ValueError(f"n_init must be None or >= 0, got {self.n_init}.")


class StochasticPolicy(BatchBaselinePolicy):
    r"""Stochastic policy (Garcia-Barcos & Martinez-Cantin; note Sec. 2.3, item 4).

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
        _check_int("num_points", num_points, 1)
        if n_init is not None:
            _check_int("n_init", n_init, 0)
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
            mean = model.posterior(C).mean.squeeze(-1)
        probs, beta = boltzmann_probabilities(mean, st.n, st.n_init)
        idx = torch.multinomial(probs.cpu(), q, replacement=True, generator=self.generator).to(C.device)
        return C[idx], {"beta": beta, "uniform": beta == 0.0}


class KrigingBelieverEI(BatchBaselinePolicy):
    r"""Sequential EI with the Kriging Believer (Ginsbourger et al.; the paper's "qEI").

    For :math:`i = 1..m`: :math:`x_i = \arg\max_x \mathrm{LogEI}_{i}(x)` on the believer
    model :math:`\mathcal{GP}_i`, then :math:`\mathcal{GP}_{i+1} = \mathcal{GP}_i`
    conditioned on :math:`(x_i, \mu_i(x_i))` by ``condition_on_observations`` (no refit;
    the fantasised value is in the original units, BoTorch applies the ``Standardize``
    transform of the surrogate, and the fantasy gets the likelihood noise). Because the
    fantasy equals the believer's mean, the mean function never changes within a batch;
    only the variance shrinks around chosen points.

    Choices: BoTorch's ``LogExpectedImprovement`` (the log of analytic EI, same argmax,
    numerically stable where EI underflows); on exact GPs the same values come from
    :class:`ConditionalLogEI` (cached :math:`\mu_t`, :math:`\sigma_t(x \mid Q)`), which
    is about 3x cheaper per evaluation than querying the believer. ``best_f`` is the best observed ``y`` (not the
    best posterior mean): the authors' code uses ``Y_max`` of the training targets, and
    with the paper's noise variance 1e-6 observed values are the function values; the
    noisy-incumbent case is what :class:`QLogNEI` is for. Within the batch the believer
    treats its fantasies as data, so by default ``best_f`` becomes
    :math:`\max(y_\text{best}, \mu_1(x_1), \dots, \mu_{i-1}(x_{i-1}))` for slot ``i``
    (Ginsbourger et al.'s Kriging Believer). The authors' code keeps ``Y_max`` fixed
    (``update_best_f=False``); then a point whose mean beats ``Y_max`` keeps
    :math:`\mathrm{EI} \approx \mu - Y_\text{max} > 0` after its fantasy and is chosen
    again for every slot (the whole batch repeats one point, seen on pools).

    Args:
        update_best_f: Raise ``best_f`` to the fantasised values (Kriging Believer);
            ``False`` keeps the best observed ``y`` fixed (the authors' code).
        **kwargs: As :class:`SurrogatePolicy`.

    Attributes:
        last_believer: The believer model after the last batch's ``q`` fantasies.
    """

    name = "kb-ei"

    def __init__(self, domain: Domain, seed: int = 0, device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float64, update_best_f: bool = True, **kwargs: Any) -> None:
        if not isinstance(update_best_f, bool):
            raise ValueError(f"update_best_f must be a bool, got {update_best_f!r}.")
        super().__init__(domain, seed=seed, device=device, dtype=dtype, **kwargs)
        self.update_best_f = update_best_f
        self.last_believer: Model | None = None

    def propose(self, model: Model, train_X: Tensor, train_Y: Tensor, q: int) -> tuple[Tensor, dict[str, Any]]:
        best_observed = float(train_Y.max())
        best_f = best_observed
        believer = model
        # Exact GPs: LogEI of the believer from mu_t and sigma_t(x|Q) (ConditionalLogEI), the
        # same values without a posterior call of the believer per evaluation.
        predictive = CachedExactPredictive.from_model(model)
        chosen: list[Tensor] = []
        slots: list[dict[str, float]] = []
        for _ in range(q):  # sequential: each slot sees the previous fantasies
            if predictive is not None:
                pending = torch.cat(chosen) if chosen else None
                acqf = ConditionalLogEI(model, best_f, X_pending=pending, predictive=predictive)
            else:
                acqf = LogExpectedImprovement(believer, best_f=best_f)
            x = self.argmax(acqf)
            with torch.no_grad():
                post = believer.posterior(x)  # also builds the caches conditioning needs
                y = post.mean.detach()
                slots.append({
                    "best_f": best_f, "mean": float(y), "sigma": float(post.variance.sqrt()),
                    "log_ei": float(acqf(x.unsqueeze(0))),
                })
            believer = believer.condition_on_observations(x, y)
            if self.update_best_f:
                best_f = max(best_f, float(y))
            chosen.append(x)
        self.last_believer = believer
        return torch.cat(chosen), {"best_observed": best_observed, "slots": slots}


class DPPThompsonSampling(BatchBaselinePolicy):
    r"""DPP-TS (Nava, Mutny & Krause; note Sec. 2.3, item 6).

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
        _check_int("mcmc_steps", mcmc_steps, 0)
        _check_positive("dpp_lambda", dpp_lambda)
        super().__init__(domain, seed=seed, device=device, dtype=dtype, **kwargs)
        self.mcmc_steps = mcmc_steps
        self.dpp_lambda = float(dpp_lambda)

    def propose(self, model: Model, train_X: Tensor, train_Y: Tensor, q: int) -> tuple[Tensor, dict[str, Any]]:
        draws, _ = thompson_maximizers(
            model, self.domain, q + self.mcmc_steps, self.generator, self.num_restarts, self.raw_samples, self.x_mean_max
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


class QLogNEI(BatchBaselinePolicy):
    r"""BoTorch's batch log noisy expected improvement (Ament et al.).

    ``qLogNoisyExpectedImprovement(model, X_baseline=train_X)`` (BoTorch's defaults:
    QMC sampler, baseline pruning), optimised by ``optimize_acqf(..., sequential=True)``
    (sequential greedy: slot ``i`` maximises qLogNEI with slots ``< i`` pending) on a box,
    by ``optimize_acqf_discrete`` (the same greedy, exhaustive, without repeats while
    ``q <= N``) on a pool. The acquisition is built and optimised inside ``seeded()``.
    Not one of the paper's baselines, so it keeps BoTorch's own starts (no
    posterior-mean-maximiser start; ``start_at_mean_max`` is ignored).
    """

    name = "qlognei"
    uses_mean_max_start = False

    def propose(self, model: Model, train_X: Tensor, train_Y: Tensor, q: int) -> tuple[Tensor, dict[str, Any]]:
        with self.seeded():  # qLogNEI draws its QMC sampler and prunes the baseline with the global RNG
            acqf = qLogNoisyExpectedImprovement(model, X_baseline=train_X)
            X, values = maximize(
                acqf,
                self.domain,
                self.generator,
                q=q,
                num_restarts=self.num_restarts,
                raw_samples=self.raw_samples,
                unique=q <= self.domain.size,
                fork_rng=False,
            )
        return X, {"log_nei": values.reshape(-1).tolist()}


BATCH_BASELINES: dict[str, type[BatchBaselinePolicy]] = {
    cls.name: cls
    for cls in (BatchThompsonSampling, BUCB, UCBPE, StochasticPolicy, KrigingBelieverEI, DPPThompsonSampling, QLogNEI)
}
r"""Name -> class of the policies in this module."""

__all__ = [
    "BATCH_BASELINES",
    "BUCB",
    "BatchBaselinePolicy",
    "BatchThompsonSampling",
    "DPPThompsonSampling",
    "KrigingBelieverEI",
    "QLogNEI",
    "StochasticPolicy",
    "UCBPE",
    "boltzmann_probabilities",
    "bucb_beta",
    "dpp_acceptance_probability",
    "dpp_log_det",
    "ucbpe_beta",
]
