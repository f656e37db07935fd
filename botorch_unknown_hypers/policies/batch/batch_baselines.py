r"""The sequential batch baselines of the TS-RSR paper (Ren & Li, Sec. 6), and qLogNEI.

Each rule is a :class:`~botorch_unknown_hypers.policies.batch.surrogate.SurrogatePolicy` (the paper's
fixed-hyperparameter GP or a fitted ``SingleTaskGP``, on a box or a pool) that builds the
batch slot by slot. :math:`\mu_t, \sigma_t` are the posterior of round :math:`t`, ``n`` the
number of batches proposed before (0 for the first), :math:`Q` the slots already chosen and

.. math::

    \sigma_t^2(x \mid Q) = k_t(x, x) - k_t(x, Q)\,[k_t(Q, Q) + \sigma_n^2 I]^{-1} k_t(Q, x)

the hallucinated variance (TS-RSR eq. 2), which needs no values and no refit.

1. ``bucb`` (:class:`BUCB`, Desautels et al.): :math:`x_i = \arg\max_x \mu_t(x) +
   \beta_t \sigma_t(x \mid x_{<i})`, :math:`\beta_t = 0.1 \cdot 2 \log(|C| t^2 \pi^2 / (6\delta))`.
2. ``ucbpe`` (:class:`UCBPE`, Contal et al.): :math:`x_1 = \arg\max_x \mu_t + \beta
   \sigma_t`, :math:`\beta = 1 + 0.01 n`, then :math:`x_i = \arg\max_x \sigma_t^2(x \mid x_{<i})`.
3. ``kb-ei`` (:class:`KrigingBelieverEI`, the paper's "qEI"): sequential LogEI, each chosen
   point added to the model with the fantasised value :math:`y = \mu(x)`.
4. ``qlognei`` (:class:`QLogNEI`): BoTorch's ``qLogNoisyExpectedImprovement`` with
   sequential greedy optimisation, what a BoTorch user would run.

The sampling-based baselines (``gp-ts``, ``sp``, ``dpp-ts``) live in
:mod:`~botorch_unknown_hypers.policies.batch.batch_sampling`. Every argmax is BoTorch's
``optimize_acqf`` on a box and exhaustive on a pool, for every method alike (the authors'
code gives only TS-RSR continuous refinement); ``docs/ts-rsr.md`` lists each place where
we differ from the authors' code and why. ``last_info`` (JSON-safe diagnostics of the last
batch) and ``history`` are part of the policy's state with the round counter ``n``.

Example:
    >>> policy = BUCB(BoxDomain(bounds), seed=0, surrogate="paper",
    ...               surrogate_spec={"kernel": "matern52", "lengthscale": 0.7})
    >>> X_next = policy.suggest(train_X, train_Y, q=5)
    >>> policy.last_info["beta"], policy.last_info["slots"][1]["sigma_conditional"]

References:
    T. Desautels, A. Krause, J. Burdick. Parallelizing exploration-exploitation tradeoffs
    in Gaussian process bandit optimization. JMLR 2014.

    E. Contal, D. Buffoni, A. Robicquet, N. Vayatis. Parallel Gaussian process
    optimization with upper confidence bound and pure exploration. ECML-PKDD 2013.

    D. Ginsbourger, R. Le Riche, L. Carraro. Kriging is well-suited to parallelize
    optimization. 2010.

    S. Ament, S. Daulton, D. Eriksson, M. Balandat, E. Bakshy. Unexpected improvements to
    expected improvement for Bayesian optimization. NeurIPS 2023.
"""

from __future__ import annotations

import math
from typing import Any, cast

import torch
from botorch.acquisition import LogExpectedImprovement, qLogNoisyExpectedImprovement
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.models.model import Model
from botorch.posteriors.gpytorch import GPyTorchPosterior
from torch import Tensor

from botorch_unknown_hypers.acquisition.optimize import maximize
from botorch_unknown_hypers.acquisition.pending import ConditionalLogEI, ConditionalUCB, ConditionalVariance
from botorch_unknown_hypers.acquisition.thompson import posterior_mean_maximizer
from botorch_unknown_hypers.checks import check_bool, check_int, check_probability
from botorch_unknown_hypers.models.cached_predictive import CachedExactPredictive
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.policies.batch.surrogate import SurrogatePolicy

BUCB_DELTA = 0.01
r"""The :math:`\delta` of BUCB's :math:`\beta_t` in the authors' code."""

# --------------------------------------------------------------------------- formulas
def bucb_beta(num_points: int, t: int, delta: float = BUCB_DELTA) -> float:
    r"""BUCB's multiplier as the authors' code states it.

    .. math::

        \beta_t = 0.1 \cdot 2 \log\left(\frac{|C|\, t^2 \pi^2}{6 \delta}\right),

    used as :math:`\mu + \beta_t \sigma` (Desautels et al. use :math:`\beta_t^{1/2}`
    without the 0.1; the code's scaled, un-rooted form is what the paper ran).

    Args:
        num_points: :math:`|C|`, the size of the (candidate) domain.
        t: The 1-based round index (``t >= 1``; ``t = 0`` is the code's ``log 0`` bug).
        delta: Confidence parameter in ``(0, 1)``.
    """
    check_int("t", t, 1)
    check_int("num_points", num_points, 1)
    check_probability("delta", delta)
    return 0.1 * 2.0 * math.log(num_points * t**2 * math.pi**2 / (6.0 * delta))


def ucbpe_beta(n: int) -> float:
    r"""UCBPE's multiplier :math:`\beta = 1 + 0.01 n` (``n`` = batches proposed before)."""
    return 1.0 + 0.01 * n


class BatchBaselinePolicy(SurrogatePolicy):
    r"""Shared loop of the batch baselines: build the round's surrogate, propose, log.

    Subclasses implement :meth:`propose` (``model, train_X, train_Y, q`` ->
    ``q x d`` points and a JSON-safe diagnostics dict). The round counter ``n``
    (batches proposed so far) and the diagnostics history are part of the state.

    On a box, every maximisation has one extra start at the round's posterior-mean
    maximiser :math:`\arg\max_x \mu_t(x)` (``start_at_mean_max=True``, the default): in the
    authors' code all methods share a candidate set that holds a :math:`\mu`-ascent point
    and TS-RSR gets the same start. The stochastic policy adds the point
    to its finite set. ``qlognei`` keeps BoTorch's defaults.

    Args:
        start_at_mean_max: See above.

    Attributes:
        state: :class:`~botorch_unknown_hypers.policies.batch.surrogate.BatchHistory`: ``n``, the batches
            proposed so far (the authors' iteration index of the next batch), and the history
            of every batch's diagnostics.
        last_info: Diagnostics of the last batch.
    """

    uses_mean_max_start: bool = True
    r"""Whether this method's maximisations take the posterior-mean-maximiser start."""

    def __init__(self, domain: Domain, seed: int = 0, device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float64, start_at_mean_max: bool = True, **kwargs: Any) -> None:
        check_bool("start_at_mean_max", start_at_mean_max)
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
                model, self.domain, train_X, self.generator, self.num_restarts, self.raw_samples, self.search
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


class BUCB(BatchBaselinePolicy):
    r"""Batch UCB with hallucinated variance (Desautels et al.).

    .. math::

        x_i = \arg\max_x \mu_t(x) + \beta_t\, \sigma_t(x \mid x_1, \dots, x_{i-1}), \qquad
        \beta_t = 0.1 \cdot 2 \log\left(\frac{|C|\, t^2 \pi^2}{6 \delta}\right),

    with :math:`\mu_t` frozen for the batch, :math:`\delta = 0.01` and the score
    :math:`\mu + \beta_t \sigma` (not :math:`\beta_t^{1/2}`) exactly as the authors'
    code states. Deviation: :math:`t = n + 1`, the 1-based round index; the
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
        check_int("num_points", num_points, 1)
        check_probability("delta", delta)
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
                var = cast(GPyTorchPosterior, model.posterior(x)).variance.reshape(())
            slots.append({
                "mean": float(mean), "sigma": float(var.sqrt()), "sigma_conditional": float(var_c.sqrt()),
                "score": float(mean + beta * var_c.sqrt()),
            })
            chosen.append(x)
        return torch.cat(chosen), {"t": self.state.n + 1, "beta": beta, "slots": slots}


class UCBPE(BatchBaselinePolicy):
    r"""GP-UCB with pure exploration (Contal et al.).

    .. math::

        x_1 = \arg\max_x \mu_t(x) + \beta \sigma_t(x), \quad \beta = 1 + 0.01 n; \qquad
        x_i = \arg\max_x \sigma_t^2(x \mid x_1, \dots, x_{i-1}), \quad i \ge 2.

    Deviations: the authors' code adds :math:`\beta \sigma_t^2(x)` (its ``predict``
    returns the variance); we use the standard deviation, and
    ``use_variance_bug=True`` reproduces the code. Contal et al. restrict points
    ``2..m`` to the relevant region :math:`\{x : \mu_t + \beta\sigma_t \ge \max_x(\mu_t -
    \beta\sigma_t)\}`; the authors' code does not, and neither do we (whole domain).

    Args:
        use_variance_bug: Score the first point with the variance (the authors' code).
        **kwargs: As :class:`SurrogatePolicy`.
    """

    name = "ucbpe"

    def __init__(self, domain: Domain, seed: int = 0, device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float64, use_variance_bug: bool = False, **kwargs: Any) -> None:
        check_bool("use_variance_bug", use_variance_bug)
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
        check_bool("update_best_f", update_best_f)
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
            acqf: AcquisitionFunction
            if predictive is not None:
                pending = torch.cat(chosen) if chosen else None
                acqf = ConditionalLogEI(model, best_f, X_pending=pending, predictive=predictive)
            else:
                acqf = LogExpectedImprovement(believer, best_f=best_f)
            x = self.argmax(acqf)
            with torch.no_grad():
                post = cast(GPyTorchPosterior, believer.posterior(x))  # also builds the caches conditioning needs
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
                search=self.search,
            )
        return X, {"log_nei": values.reshape(-1).tolist()}


__all__ = [
    "BUCB",
    "BatchBaselinePolicy",
    "KrigingBelieverEI",
    "QLogNEI",
    "UCBPE",
    "bucb_beta",
    "ucbpe_beta",
]
