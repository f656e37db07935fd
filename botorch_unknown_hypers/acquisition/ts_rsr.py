r"""TS-RSR: Thompson-sampling regret to sigma ratio (Ren & Li, Algorithm 1, eqs. 2-4, App. C).

For batch slot :math:`i = 1, \dots, m` of round :math:`t`, with an independent posterior sample
path :math:`\tilde f_{t,i}` and its maximum :math:`\tilde f^*_{t,i}`,

.. math::

    x_{t+1,i} \in \arg\min_x \Psi_{t,i}(x), \qquad
    \Psi_{t,i}(x) = \frac{\tilde f^*_{t,i} - \mu_t(x)}{\sigma_t(x \mid x_{t+1,1}, \dots, x_{t+1,i-1})}:

the mean stays fixed for the whole batch and only the standard deviation is conditioned on the
points already chosen, with the noise term (eq. 2; a repeated point does not get
:math:`\sigma = 0`; :mod:`~botorch_unknown_hypers.acquisition.pending`). App. C's rule redraws
:math:`\tilde f_{t,i}` while :math:`\tilde f^*_{t,i} \le \max_x \mu_t(x)`; we cap the redraws
(``max_resamples``) and record them. The authors' code optimises over about 1000 random points;
here every optimisation on a box is continuous: the sample maxima of all slots in one batched
L-BFGS-B over pathwise samples, :math:`\max_x \mu_t` by a multi-start maximisation (and the
training inputs), each :math:`\Psi_{t,i}` by the package's
:func:`~botorch_unknown_hypers.acquisition.optimize.maximize` with one extra start at
:math:`\arg\max_x \mu_t` (where the argmin sits when :math:`\tilde f^*` is close to
:math:`\max \mu_t`). On a pool the samples are exact joint draws and each conditioning is a
rank-one downdate of the pool's posterior covariance. :func:`gen_ts_rsr_batch` dispatches.
``search="torch"`` refines every box restart on the device instead of SciPy's L-BFGS-B.
Choices and the reproduction table: ``docs/ts-rsr.md``.

References:
    Z. Ren, N. Li. TS-RSR: A provably efficient approach for batch Bayesian optimization.
    arXiv:2403.04764, 2024.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from botorch.models.model import Model
from botorch.utils.transforms import t_batch_mode_transform
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import DEFAULT_SEARCH, check_search
from botorch_unknown_hypers.acquisition.optimize import maximize
from botorch_unknown_hypers.acquisition.pending import (
    MIN_VARIANCE,
    PendingConditionedAcquisition,
    condition_on_pending,
    observation_noise_variance,
)
from botorch_unknown_hypers.acquisition.thompson import (
    PoolJointSampler,
    max_posterior_mean_box,
    random_point_sampler,
    stand_in_points,
    thompson_maximizers_box,
)
from botorch_unknown_hypers.checks import check_int
from botorch_unknown_hypers.domains import BoxDomain, Domain, FiniteDomain, is_mixed
from botorch_unknown_hypers.models.cached_predictive import CachedExactPredictive
from botorch_unknown_hypers.rng import draw_seed, forked_rng


class RegretToSigmaRatio(PendingConditionedAcquisition):
    r"""Negative regret-to-sigma ratio :math:`-\Psi_{t,i}(x)` (maximised by BoTorch).

    .. math::

        -\Psi_{t,i}(x) = -\frac{\tilde f^* - \mu_t(x)}{\sigma_t(x \mid Q)}

    with ``Q = X_pending`` (the batch points already chosen), eq. (4). Works with any
    single-output BoTorch model: a fitted ``SingleTaskGP``, the fixed-hyperparameter
    surrogate of the paper, or one candidate of a candidate model.

    With ``log=True`` the value is the monotone transform
    :math:`-\log(\tilde f^* - \mu_t(x)) + \tfrac12 \log \sigma_t^2(x \mid Q)`, which has
    the same maximisers wherever the numerator is positive (always, after the App. C
    redraws: :math:`\tilde f^* > \max_x \mu_t(x)`) and a far better conditioned
    landscape for L-BFGS-B: the ratio itself varies over orders of magnitude near
    the data when :math:`\sigma_n` is small (``1e-3`` in the paper), which made
    BoTorch's line search fail ("ABNORMAL") and restart. A non-positive numerator is
    clamped at ``1e-300`` (so such points rank best, as :math:`\Psi \le 0` would).

    Args:
        model: A single-output model.
        f_star: The slot's sample maximum :math:`\tilde f^*_{t,i}` (a number or a
            0-dim tensor), in the units of the model's posterior.
        X_pending: ``p x d`` points already in the batch.
        log: Use the log form (only valid when :math:`\tilde f^* > \max_x \mu_t(x)`).
        conditioned_model: Optional: ``model`` already conditioned on ``X_pending``
            (e.g. by :func:`condition_on_pending`). Its posterior variance is
            :math:`\sigma_t^2(x \mid Q)` for an exact GP, which costs one marginal
            posterior call per point instead of the joint posterior of ``[x, Q]``.
    """

    def __init__(
        self,
        model: Model,
        f_star: float | Tensor,
        X_pending: Tensor | None = None,
        log: bool = False,
        conditioned_model: Model | None = None,
        predictive: CachedExactPredictive | bool | None = True,
    ) -> None:
        f_star = torch.as_tensor(f_star)
        if f_star.numel() != 1 or not torch.isfinite(f_star).all():
            raise ValueError(f"f_star must be one finite number, got {f_star}.")
        super().__init__(model=model, X_pending=X_pending, conditioned_model=conditioned_model, predictive=predictive)
        self.log = bool(log)
        self.register_buffer("f_star", f_star.reshape(()))

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: Tensor) -> Tensor:
        r"""Evaluate :math:`-\Psi` at ``X``.

        Args:
            X: ``batch_shape x 1 x d`` points.

        Returns:
            ``batch_shape`` values.
        """
        mean, var = self.mean_and_variance(X)
        if self.log:
            return -torch.log((self.f_star.to(mean) - mean).clamp_min(1e-300)) + 0.5 * torch.log(var)
        return -(self.f_star.to(mean) - mean) / var.sqrt()


@dataclass
class TSRSRSlot:
    r"""Diagnostics of one batch slot: the sample maximum, its redraws, :math:`\Psi` at the chosen point,
    :math:`\mu`, :math:`\sigma` and the conditioned :math:`\sigma` there."""

    f_star: float
    resamples: int
    psi: float
    mean: float
    sigma: float
    sigma_conditional: float


@dataclass
class TSRSRBatchInfo:
    r"""Diagnostics of one TS-RSR batch: :math:`\max_x \mu_t` and the slots."""

    max_mean: float
    slots: list[TSRSRSlot] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"max_mean": self.max_mean, "slots": [asdict(s) for s in self.slots]}

    @property
    def rho(self) -> float:
        r"""The empirical :math:`\max_i \sigma_t(x_i) / \sigma_t(x_i \mid \cdot)`, a proxy for :math:`\rho_m`."""
        return max((s.sigma / s.sigma_conditional for s in self.slots), default=1.0)


def _check_common(q: int, max_resamples: int) -> None:
    check_int("q", q, 1)
    check_int("max_resamples", max_resamples, 0)


def sample_f_star(
    sample_maxima: Callable[[int], Tensor], q: int, max_mean: float, max_resamples: int
) -> tuple[Tensor, Tensor]:
    r"""The ``q`` slots' sample maxima :math:`f^*_i`, redrawn where :math:`f^*_i \le \max_x \mu_t(x)`.

    All slots are drawn at once; a slot whose maximum does not exceed the posterior-mean
    maximum would have a non-positive regret estimate, so it is redrawn (App. C), at most
    ``max_resamples`` times, and the redraws are counted.

    Args:
        sample_maxima: ``num -> num`` maxima of ``num`` fresh independent posterior samples.
        q: Number of slots.
        max_mean: :math:`\max_x \mu_t(x)`.
        max_resamples: Cap on the redraws per slot.

    Returns:
        ``(f_star, resamples)``: ``q`` maxima and ``q`` redraw counts (CPU ``long``).
    """
    f_star = sample_maxima(q)
    resamples = torch.zeros(q, dtype=torch.long)
    for _ in range(max_resamples):
        bad = (f_star <= max_mean).nonzero().flatten()
        if bad.numel() == 0:
            break
        f_star[bad] = sample_maxima(bad.numel())
        resamples[bad.cpu()] += 1
    return f_star, resamples


def gen_ts_rsr_batch_box(
    model: Model,
    bounds: Tensor,
    train_X: Tensor,
    q: int,
    generator: torch.Generator,
    num_restarts: int = 10,
    raw_samples: int = 512,
    max_resamples: int = 10,
    f_star_points: int | None = None,
    start_at_mean_max: bool = True,
    search: str = DEFAULT_SEARCH,
) -> tuple[Tensor, TSRSRBatchInfo]:
    r"""One TS-RSR batch of ``q`` points on a box.

    Args:
        model: A single-output BoTorch model of :math:`f` given all data.
        bounds: ``2 x d`` box.
        train_X: ``n x d`` training inputs (for :math:`\max \mu_t`).
        q: Batch size :math:`m`.
        generator: CPU generator for all seeds (Sobol raw samples, sample paths).
        num_restarts, raw_samples: Multi-start settings of every optimisation.
        max_resamples: Cap on the App. C redraws per slot.
        f_star_points: ``None`` (default): each :math:`\tilde f^*` is the
            continuous maximum of a pathwise sample (batched L-BFGS-B). An integer ``N``:
            the authors' code instead, the maximum of an exact joint sample over ``N``
            uniform random points plus the posterior-mean maximiser (an ablation: on
            Ackley it gives a smaller :math:`\tilde f^*` and so more exploitation).
        start_at_mean_max: One extra L-BFGS-B start (on top of ``num_restarts``) of every
            argmin and of every sample maximisation at the posterior-mean
            maximiser (default; the authors' candidate set holds this point for every
            method); ``False``: all starts from the raw-sample heuristic.
        search: The refinement of the restarts of every optimisation (the posterior-mean
            maximum, the sample maxima and each argmin): ``"scipy"`` (L-BFGS-B on the host) or
            ``"torch"`` (the device search,
            :mod:`~botorch_unknown_hypers.acquisition.device_search`).

    Returns:
        ``(X, info)``: ``q x d`` points and the batch diagnostics.
    """
    _check_common(q, max_resamples)
    check_search(search)
    if f_star_points is not None and (
        isinstance(f_star_points, bool) or not isinstance(f_star_points, int) or f_star_points < 1
    ):
        raise ValueError(f"f_star_points must be None or a positive integer, got {f_star_points!r}.")

    def seed() -> int:
        return draw_seed(generator)

    with forked_rng(seed(), bounds.device):
        max_mean, x_mean_max = max_posterior_mean_box(model, bounds, train_X, num_restarts, raw_samples, seed(), search)

        point_sampler = (
            None if f_star_points is None else random_point_sampler(model, bounds, f_star_points, x_mean_max, generator)
        )

        def sample_maxima(num: int) -> Tensor:
            if point_sampler is None:
                extra = x_mean_max if start_at_mean_max else None
                return thompson_maximizers_box(model, bounds, num, num_restarts, raw_samples, seed(), extra, search)[1]
            return point_sampler.draw(num, generator).amax(dim=0)

        f_star, resamples = sample_f_star(sample_maxima, q, max_mean, max_resamples)
    info = TSRSRBatchInfo(max_mean=max_mean)
    domain = BoxDomain(bounds)
    chosen: list[Tensor] = []
    # Exact GPs: one cached factor per pending set (path 1 of PendingConditionedAcquisition);
    # other models: BoTorch's rank-one conditioned model, else the joint posterior.
    predictive = CachedExactPredictive.from_model(model)
    conditioned: Model | None = model if predictive is None else None
    logs = (f_star > max_mean).tolist()  # every slot's branch in one host read
    diagnostics: list[Tensor] = []  # per slot, read once after the loop
    # Slots are sequential by definition (slot i conditions on slots < i): a Python loop.
    for i in range(q):
        pending = torch.cat(chosen, dim=0) if chosen else None
        acqf = RegretToSigmaRatio(
            model,
            f_star=f_star[i],
            X_pending=pending,
            log=logs[i],
            conditioned_model=conditioned,
            predictive=predictive,
        )
        # One extra start at argmax mu_t (on top of the raw-sample ones): when f* is just above
        # max mu_t the argmin of Psi sits in a basin around it that can be far smaller than the
        # raw-sample spacing (seen on Ackley); the authors' candidate set holds a mean-ascent
        # point for the same reason.
        x, _ = maximize(
            acqf,
            domain,
            generator,
            num_restarts=num_restarts,
            raw_samples=raw_samples,
            initial_points=x_mean_max if start_at_mean_max else None,
            search=search,
        )
        with torch.no_grad():
            sigma = model.posterior(x).variance.sqrt().reshape(())
            mean_x, var_c = acqf.mean_and_variance(x.unsqueeze(0))
            mean_x, sigma_c = mean_x.reshape(()), var_c.sqrt().reshape(())
            diagnostics.append(torch.stack([f_star[i], (f_star[i] - mean_x) / sigma_c, mean_x, sigma.to(mean_x), sigma_c]))
        chosen.append(x)
        if conditioned is not None and i + 1 < q:
            conditioned = condition_on_pending(conditioned, x)
    for (f, psi, mean, sigma, sigma_c), count in zip(torch.stack(diagnostics).tolist(), resamples.tolist()):
        info.slots.append(TSRSRSlot(f_star=f, resamples=count, psi=psi, mean=mean, sigma=sigma, sigma_conditional=sigma_c))
    return torch.cat(chosen, dim=0), info


def gen_ts_rsr_batch_pool(
    model: Model,
    points: Tensor,
    q: int,
    generator: torch.Generator,
    max_resamples: int = 10,
) -> tuple[Tensor, TSRSRBatchInfo]:
    r"""One TS-RSR batch of ``q`` pool indices on a finite domain.

    Exact joint samples over all ``N`` pool points (one call for all slots), and the
    batch conditioning as a rank-one downdate of the ``N x N`` posterior covariance
    per chosen point:

    .. math::

        \Sigma \leftarrow \Sigma - \frac{\Sigma_{:,j} \Sigma_{j,:}}{\Sigma_{jj} + \sigma_n^2(x_j)}.

    Args:
        model: A single-output BoTorch model.
        points: ``N x d`` pool.
        q: Batch size.
        generator: CPU generator of the joint samples.
        max_resamples: Cap on the App. C redraws per slot.

    Returns:
        ``(indices, info)``: ``q`` pool indices and the diagnostics.
    """
    _check_common(q, max_resamples)
    sampler = PoolJointSampler(model, points)
    mean, cov = sampler.mean, sampler.cov.clone()
    max_mean = float(mean.max())

    def draw(num: int) -> Tensor:
        return sampler.draw(num, generator).amax(dim=0)

    f_star, resamples = sample_f_star(draw, q, max_mean, max_resamples)
    sigma0 = cov.diagonal().clamp_min(MIN_VARIANCE).sqrt()
    info = TSRSRBatchInfo(max_mean=max_mean)
    chosen: list[int] = []
    for i in range(q):
        var = cov.diagonal().clamp_min(MIN_VARIANCE)
        psi = (f_star[i] - mean) / var.sqrt()
        j = int(psi.argmin())
        info.slots.append(
            TSRSRSlot(
                f_star=float(f_star[i]),
                resamples=int(resamples[i]),
                psi=float(psi[j]),
                mean=float(mean[j]),
                sigma=float(sigma0[j]),
                sigma_conditional=float(var[j].sqrt()),
            )
        )
        chosen.append(j)
        if i + 1 < q:  # noise only at the chosen point, not over the whole pool
            noise_j = observation_noise_variance(model, points[j : j + 1]).reshape(())
            col = cov[:, j].clone()
            cov -= torch.outer(col, col) / (col[j] + noise_j)
    return torch.tensor(chosen, device=points.device), info


def gen_ts_rsr_batch(
    model: Model,
    domain: Domain,
    train_X: Tensor,
    q: int,
    generator: torch.Generator,
    num_restarts: int = 10,
    raw_samples: int = 512,
    max_resamples: int = 10,
    f_star_points: int | None = None,
    search: str = DEFAULT_SEARCH,
) -> tuple[Tensor, TSRSRBatchInfo]:
    r"""One TS-RSR batch of ``q`` points over ``domain``: :func:`gen_ts_rsr_batch_pool` on a pool
    (the points of the chosen indices), :func:`gen_ts_rsr_batch_box` on a box.

    Args:
        model, domain, train_X, q, generator: As :func:`gen_ts_rsr_batch_box` (``domain``
            instead of its bounds).
        num_restarts, raw_samples, f_star_points: Box only, as :func:`gen_ts_rsr_batch_box`.
        max_resamples: Cap on the App. C redraws per slot.
        search: Box only: ``"scipy"`` or ``"torch"``, as :func:`gen_ts_rsr_batch_box`
            (checked on a pool too, where every maximisation is exhaustive).

    Returns:
        ``(X, info)``: ``q x d`` points and the batch diagnostics.
    """
    check_search(search)
    if isinstance(domain, FiniteDomain) or is_mixed(domain):
        points = stand_in_points(domain, raw_samples, generator)
        idx, info = gen_ts_rsr_batch_pool(model, points, q, generator, max_resamples=max_resamples)
        return points[idx], info
    return gen_ts_rsr_batch_box(
        model,
        domain.bounds,
        train_X,
        q,
        generator,
        num_restarts=num_restarts,
        raw_samples=raw_samples,
        max_resamples=max_resamples,
        f_star_points=f_star_points,
        search=search,
    )
