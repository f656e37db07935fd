r"""Rules with a known kernel: kernel ridge regression and the width of Lemma 1.

Bogunovic & Krause (NeurIPS 2021). The learner knows the kernel :math:`k` (:math:`k(x, x) \le 1`),
the domain and a norm bound :math:`B`; nothing is fitted. The posterior is kernel ridge
regression with a regulariser :math:`\lambda`
(:class:`~botorch_unknown_hypers.models.kernel_ridge.KernelRidge`, replicates collapsed), and
the confidence width is Lemma 1 (Eq. 13, variance form;
:func:`~botorch_unknown_hypers.misspecification.confidence_width`),

.. math::

    \beta_t = \frac{\sigma}{\sqrt\lambda}\sqrt{\log\det(I + \lambda^{-1}K_t) + 2\ln(1/\delta)} + B.

Kernel inputs are scaled to the unit cube. The rules on this base:
:mod:`~botorch_unknown_hypers.policies.misspecified.misspecified_rules` (EC-GP-UCB, phased GP-US, regret balancing).

References:
    I. Bogunovic, A. Krause. Misspecified Gaussian Process Bandit Optimization. NeurIPS 2021.
"""

from __future__ import annotations

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import AUTO_SEARCH
from botorch_unknown_hypers.acquisition.ucb import KernelRidgeUCB
from botorch_unknown_hypers.checks import check_nonnegative, check_positive, check_probability
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.misspecification import confidence_width
from botorch_unknown_hypers.models.kernel_ridge import KernelRidge, group_counts_sums, make_known_kernel
from botorch_unknown_hypers.policies.base import Policy


class KnownKernelPolicy(Policy):
    r"""Shared machinery: a known kernel, the :math:`\lambda`-regularised posterior and Eq. 13.

    Args:
        domain: Box or pool.
        seed, device, dtype: As :class:`~botorch_unknown_hypers.policies.base.Policy`.
        kernel: ``"matern52"`` (default), ``"matern32"``, ``"matern12"`` or ``"rbf"``.
        lengthscale: Known length scale(s), unit-cube units (default 0.2).
        outputscale: :math:`k(x, x) \in (0, 1]` (default 1).
        lam: Regulariser :math:`\lambda > 0` (default 1; the paper gives no value; small
            values make the Lemma 2 bonus :math:`\epsilon\sqrt t/\sqrt\lambda` dominate).
        noise_std: Sub-Gaussian noise scale :math:`\sigma \ge 0` of Eq. 13 (default 0.1).
        B: RKHS norm bound (default 1).
        delta: :math:`\delta \in (0, 1)` (default 0.05).
        num_restarts, raw_samples, search: UCB maximisation on a box (as
            :class:`~botorch_unknown_hypers.policies.base.Policy`).
    """

    min_observations = 0
    r"""Starts from its prior: no observation is needed."""

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        kernel: str = "matern52",
        lengthscale: float | list[float] = 0.2,
        outputscale: float = 1.0,
        lam: float = 1.0,
        noise_std: float = 0.1,
        B: float = 1.0,
        delta: float = 0.05,
        num_restarts: int = 10,
        raw_samples: int = 512,
        search: str = AUTO_SEARCH,
    ) -> None:
        super().__init__(domain, seed, device, dtype, num_restarts, raw_samples, search)
        check_positive("lam (lambda)", lam)
        check_nonnegative("noise_std", noise_std)
        check_nonnegative("B", B)
        check_probability("delta", delta)
        self.kernel = kernel
        self.lengthscale = lengthscale
        self.outputscale = outputscale
        self.kernel_module = make_known_kernel(kernel, lengthscale, outputscale, self.domain.dim, dtype, self.device)
        self.lam = float(lam)
        self.noise_std = float(noise_std)
        self.B = float(B)
        self.delta = float(delta)
        lower, upper = self.domain.bounds
        self._lower: Tensor = lower
        span = upper - lower
        self._span: Tensor = torch.where(span > 0, span, torch.ones_like(span))  # a flat pool axis maps to 0

    def to_unit(self, X: Tensor) -> Tensor:
        r"""Map ``n x d`` domain points to the unit cube (the kernel's input space)."""
        return (X - self._lower) / self._span

    def posterior(self, train_X: Tensor, train_Y: Tensor) -> KernelRidge:
        r"""The :math:`\lambda`-regularised posterior of ``n x d`` / ``n x 1`` data (replicates collapsed:
        equal rows on a box, the same pool point on a pool)."""
        unique, inverse = self.domain.unique_points(train_X)
        counts, sums = group_counts_sums(inverse, train_Y.reshape(-1), unique.shape[0])
        return KernelRidge(self.kernel_module, self.lam, self.to_unit(unique), counts, sums)

    def width(self, model: KernelRidge) -> float:
        r""":math:`\beta_t` of Eq. 13 for the posterior ``model`` (built from :math:`t - 1` points)."""
        return confidence_width(model.log_det, self.noise_std, self.lam, self.delta, self.B)

    def maximize_ucb(self, model: KernelRidge, width: float) -> Tensor:
        r"""``1 x d`` maximiser of :math:`\mu^*(x) + w\,\sigma(x)`: exhaustive on a pool (lowest
        index on ties), multi-start L-BFGS-B on a box. With no data the UCB is constant and the
        domain's neutral point is returned (a box's centre, a pool's first point)."""
        if model.num_observations == 0:
            return self.domain.neutral_point()
        return self.maximize(KernelRidgeUCB(model, width, self.to_unit))


__all__ = ["KnownKernelPolicy"]
