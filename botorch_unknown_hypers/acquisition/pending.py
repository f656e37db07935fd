r"""Acquisitions on the posterior mean and the variance conditioned on pending points.

Batch rules that hallucinate observations at the points :math:`Q` already chosen in a batch
(TS-RSR, BUCB, UCB-PE, the Kriging believer) keep the mean :math:`\mu_t` fixed and shrink only
the variance, Ren & Li eq. (2):

.. math::

    \sigma_t^2(x \mid Q) = k_t(x, x) - k_t(x, Q)\,[k_t(Q, Q) + \sigma_n^2 I]^{-1} k_t(Q, x),

the posterior variance after also observing :math:`Q` (no values are needed; the noise term
keeps a repeated point from getting :math:`\sigma = 0`). :class:`PendingConditionedAcquisition`
evaluates :math:`(\mu_t(x), \sigma_t^2(x \mid Q))` in the fastest way the model allows: a
:class:`~botorch_unknown_hypers.models.cached_predictive.CachedExactPredictive` (one Cholesky
factor per pending set), a model conditioned on :math:`Q` (BoTorch's rank-one
``condition_on_observations``), or the joint posterior of :math:`[x, Q]`
(:func:`conditional_posterior_variance`), in that order. On it sit the hallucinated UCB
(:class:`ConditionalUCB`, ``mu + beta sigma`` by the package's one UCB formula), the
conditioned variance (:class:`ConditionalVariance`) and the Kriging believer's LogEI
(:class:`ConditionalLogEI`, BoTorch's ``LogExpectedImprovement`` on these moments).

References:
    Z. Ren, N. Li. TS-RSR: A provably efficient approach for batch Bayesian optimization. 2024.
    T. Desautels, A. Krause, J. Burdick. Parallelizing exploration-exploitation tradeoffs in
    Gaussian process bandit optimization. JMLR 2014.
"""

from __future__ import annotations

import torch
from botorch.acquisition import LogExpectedImprovement
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.models.model import Model
from botorch.utils.transforms import t_batch_mode_transform
from torch import Tensor

from botorch_unknown_hypers.confidence import upper_confidence_bound
from botorch_unknown_hypers.models.cached_predictive import CachedExactPredictive
from botorch_unknown_hypers.models.marginal import MarginalModel

MIN_VARIANCE = 1e-18
r"""Floor of the conditioned variances (keeps ratios and logs finite)."""


def observation_noise_variance(model: Model, X: Tensor) -> Tensor:
    r"""Observation noise variance :math:`\sigma_n^2` at ``X`` in the units of the posterior.

    Computed as ``posterior(X, observation_noise=True).variance - posterior(X).variance``,
    which works for any BoTorch model with a Gaussian likelihood and untransforms the
    noise through an outcome transform (e.g. ``Standardize``).

    Args:
        X: ``batch_shape x p x d`` points.

    Returns:
        ``batch_shape x p`` noise variances.
    """
    with torch.no_grad():
        noisy = model.posterior(X, observation_noise=True).variance
        latent = model.posterior(X).variance
    return (noisy - latent).clamp_min(0.0).squeeze(-1)


def conditional_posterior_variance(
    model: Model, X: Tensor, X_pending: Tensor | None, noise: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    r"""Posterior mean and the variance conditioned on pending points, eq. (2).

    .. math::

        \sigma_t^2(x \mid Q) = k_t(x, x) - k_t(x, Q)\,[k_t(Q, Q) + \sigma_n^2 I]^{-1} k_t(Q, x)

    from the joint posterior of ``[x, Q]``: no fantasy model and no refit.

    Args:
        model: A single-output BoTorch model.
        X: ``batch_shape x 1 x d`` points.
        X_pending: ``p x d`` pending points (``None`` or ``p = 0``: unconditioned).
        noise: ``p`` noise variances at ``X_pending`` (computed if omitted).

    Returns:
        ``(mean, variance)``, each ``batch_shape``: :math:`\mu_t(x)` (not conditioned)
        and :math:`\sigma_t^2(x \mid Q)`.
    """
    if X.shape[-2] != 1:
        raise ValueError(f"X must be batch_shape x 1 x d, got shape {tuple(X.shape)}.")
    if X_pending is None or X_pending.shape[0] == 0:
        post = model.posterior(X)
        return post.mean[..., 0, 0], post.variance[..., 0, 0].clamp_min(MIN_VARIANCE)
    if noise is None:
        noise = observation_noise_variance(model, X_pending)
    p = X_pending.shape[0]
    Q = X_pending.expand(*X.shape[:-2], p, X.shape[-1])
    post = model.posterior(torch.cat([X, Q], dim=-2))
    cov = post.mvn.covariance_matrix  # batch x (1+p) x (1+p)
    mean = post.mean[..., 0, 0]
    c_xx = cov[..., 0, 0]
    c_xq = cov[..., 0, 1:]  # batch x p
    c_qq = cov[..., 1:, 1:] + torch.diag_embed(noise.expand(*cov.shape[:-2], p))
    L = torch.linalg.cholesky(c_qq)
    v = torch.linalg.solve_triangular(L, c_xq.unsqueeze(-1), upper=False).squeeze(-1)
    var = c_xx - (v * v).sum(dim=-1)
    return mean, var.clamp_min(MIN_VARIANCE)


def condition_on_pending(model: Model, x: Tensor) -> Model | None:
    r"""``model`` conditioned on one more pending point ``x`` (``1 x d``), or ``None``.

    Uses BoTorch's ``condition_on_observations``, which for an exact GP updates
    GPyTorch's prediction caches by a rank-one (low-rank) update instead of a refit;
    the fantasised value is irrelevant for the variance (eq. 2 needs no values) and is
    set to the posterior mean, which leaves the conditioned model's mean equal to
    :math:`\mu_t` everywhere (:math:`\mu_t + k_t(x, Q) [\cdot]^{-1} (\mu_t(Q) - \mu_t(Q))`),
    so one marginal posterior call of the conditioned model gives both
    :math:`\mu_t(x)` and :math:`\sigma_t(x \mid Q)`. The likelihood's noise enters for the
    new point, as in eq. (2). Returns ``None`` for models that cannot be conditioned (then the joint
    posterior form of :func:`conditional_posterior_variance` is used).
    """
    try:
        with torch.no_grad():
            y = model.posterior(x).mean
        return model.condition_on_observations(x, y)
    except (NotImplementedError, RuntimeError, AttributeError):
        return None


class PendingConditionedAcquisition(AcquisitionFunction):
    r"""Base of acquisitions that use :math:`\mu_t(x)` and :math:`\sigma_t^2(x \mid Q)`, eq. (2).

    The mean is not conditioned on the pending points ``Q = X_pending`` (no fantasy
    values); the variance is, with the noise term. Three ways to evaluate them, fastest
    first:

    1. a :class:`~botorch_unknown_hypers.models.cached_predictive.CachedExactPredictive`
       (exact single-output GPs: ``SingleTaskGP``, the paper's fixed surrogate), one
       Cholesky factor per ``X_pending`` and a triangular solve per call;
    2. ``conditioned_model`` (``model`` conditioned on ``Q`` by
       :func:`condition_on_pending`): one marginal BoTorch posterior call;
    3. the joint BoTorch posterior of ``[x, Q]`` (:func:`conditional_posterior_variance`),
       which works for any single-output model.

    Args:
        model: A single-output model.
        X_pending: ``p x d`` points already in the batch.
        conditioned_model: ``model`` conditioned on ``X_pending`` (used when 1 is not available).
        predictive: ``True`` (default): use 1 when ``model`` supports it; ``False`` or
            ``None``: never; or a ready ``CachedExactPredictive`` of ``model`` (shared across
            the slots of a batch so the training factor is computed once; pass
            ``CachedExactPredictive.from_model(model)``, which is ``None`` when unsupported).
    """

    def __init__(
        self,
        model: Model,
        X_pending: Tensor | None = None,
        conditioned_model: Model | None = None,
        predictive: CachedExactPredictive | bool | None = True,
    ) -> None:
        super().__init__(model=model)
        self.conditioned_model = conditioned_model
        if predictive is None:
            self._base_predictive = None
        elif isinstance(predictive, bool):
            self._base_predictive = CachedExactPredictive.from_model(model) if predictive else None
        elif isinstance(predictive, CachedExactPredictive):
            if predictive.model is not model:
                raise ValueError("predictive must wrap the same model object as model.")
            self._base_predictive = predictive
        else:
            raise ValueError(f"predictive must be a bool, None or a CachedExactPredictive, got {type(predictive).__name__}.")
        self.set_X_pending(X_pending)

    def set_X_pending(self, X_pending: Tensor | None = None) -> None:
        super().set_X_pending(X_pending)
        self._noise: Tensor | None = None
        self._predictive: CachedExactPredictive | None = None

    @property
    def uses_cached_predictive(self) -> bool:
        r"""Whether :meth:`mean_and_variance` runs on the cached exact predictive (path 1)."""
        return self._base_predictive is not None

    def mean_and_variance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        r"""``batch_shape x 1 x d`` -> (:math:`\mu_t`, :math:`\sigma_t^2(\cdot \mid Q)`), each ``batch_shape``."""
        if self._base_predictive is not None:
            if self._predictive is None:
                self._predictive = self._base_predictive.condition(self.X_pending)
            return self._predictive.mean_and_variance(X)
        if self.conditioned_model is not None:
            # The pending points were fantasised at their posterior mean, which leaves the
            # mean unchanged (mu_t stays frozen): one marginal call gives mu_t and sigma(x|Q).
            post = self.conditioned_model.posterior(X)
            return post.mean[..., 0, 0], post.variance[..., 0, 0].clamp_min(MIN_VARIANCE)
        pending = self.X_pending
        if pending is not None and pending.shape[0] > 0 and self._noise is None:
            self._noise = observation_noise_variance(self.model, pending)
        return conditional_posterior_variance(self.model, X, pending, self._noise)


class ConditionalUCB(PendingConditionedAcquisition):
    r"""Hallucinated UCB :math:`\mu_t(x) + \beta\, \sigma_t(x \mid Q)` (BUCB, UCBPE's first point).

    :math:`\mu_t` is not conditioned on the pending points ``Q`` (no fantasy values);
    only the standard deviation is. With ``variance_bonus=True`` the bonus is
    :math:`\beta \sigma_t^2(x \mid Q)`, the UCB-PE authors' code's bug.

    Args:
        model: A single-output model.
        beta: The multiplier.
        X_pending: ``p x d`` points already in the batch (``None``: plain UCB).
        variance_bonus: Use the variance instead of the standard deviation.
        predictive: As :class:`PendingConditionedAcquisition`.
    """

    def __init__(
        self,
        model: Model,
        beta: float,
        X_pending: Tensor | None = None,
        variance_bonus: bool = False,
        predictive: CachedExactPredictive | bool | None = True,
    ) -> None:
        super().__init__(model=model, X_pending=X_pending, predictive=predictive)
        self.beta = float(beta)
        self.variance_bonus = variance_bonus

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: Tensor) -> Tensor:
        mean, var = self.mean_and_variance(X)
        if self.variance_bonus:
            return mean + self.beta * var
        return upper_confidence_bound(mean, var, self.beta)


class ConditionalLogEI(PendingConditionedAcquisition):
    r"""Log EI on :math:`\mu_t` and :math:`\sigma_t(x \mid Q)`: the Kriging Believer's LogEI.

    A believer that fantasised :math:`y = \mu(x_j)` at each pending :math:`x_j` keeps the
    mean :math:`\mu_t` everywhere and has variance :math:`\sigma_t^2(x \mid Q)` (eq. 2 of
    Ren & Li, with the likelihood noise), so its LogEI is

    .. math::

        \log \mathrm{EI}(x) = \log \sigma + \log h\Big(\frac{\mu_t(x) - f^+}{\sigma}\Big),
        \qquad \sigma = \sigma_t(x \mid Q),

    computed by BoTorch's ``LogExpectedImprovement`` (its numerically stable :math:`\log h` and
    variance floor ``1e-12``) on a :class:`~botorch_unknown_hypers.models.marginal.MarginalModel`
    of these moments: equal to ``LogExpectedImprovement(believer, best_f)`` without building or
    querying the believer model (the fast path of the ``kb-ei`` rule).

    Args:
        model: A single-output model.
        best_f: The incumbent :math:`f^+`.
        X_pending: ``p x d`` pending points :math:`Q`.
        predictive: As :class:`PendingConditionedAcquisition`.
    """

    def __init__(
        self,
        model: Model,
        best_f: float,
        X_pending: Tensor | None = None,
        predictive: CachedExactPredictive | bool | None = True,
    ) -> None:
        super().__init__(model=model, X_pending=X_pending, predictive=predictive)
        self.best_f = float(best_f)
        # best_f as float64: a Python float would become a float32 buffer and lose digits.
        best = torch.tensor(self.best_f, dtype=torch.float64)
        self.log_ei = LogExpectedImprovement(MarginalModel(self.mean_and_variance), best_f=best)

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: Tensor) -> Tensor:
        return self.log_ei(X)


class ConditionalVariance(ConditionalUCB):
    r"""Hallucinated variance :math:`\sigma_t^2(x \mid Q)` (UCBPE's pure-exploration points)."""

    def __init__(
        self, model: Model, X_pending: Tensor | None = None, predictive: CachedExactPredictive | bool | None = True
    ) -> None:
        super().__init__(model, beta=0.0, X_pending=X_pending, predictive=predictive)

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: Tensor) -> Tensor:
        return self.mean_and_variance(X)[1]
