r"""Kernel ridge regression with a *known* kernel: the posterior of the misspecification paper.

Bogunovic & Krause (NeurIPS 2021), Sec. 3.1, use the GP posterior with a fixed, known kernel
:math:`k` (:math:`k(x, x) \le 1`), zero prior mean and a regulariser :math:`\lambda > 0` in place of
the noise variance (Eqs. 8, 9, 11):

.. math::

    \mu^*_t(x) = k_t(x)^\top (K_t + \lambda I_t)^{-1} Y^*_t, \qquad
    \sigma^2_t(x) = k(x, x) - k_t(x)^\top (K_t + \lambda I_t)^{-1} k_t(x).

Nothing is fitted and outputs are raw (:math:`\mu^*` must be Eq. 11's estimator for Lemma 2's
enlarged bounds). :class:`KernelRidge` computes these in closed form with the stable factorisation
of Rasmussen & Williams (Alg. 3.2), :math:`B = I + \lambda^{-1} C^{1/2} K_U C^{1/2} = L L^\top` over the
*distinct* inputs :math:`U` with replicate counts :math:`C` (observing :math:`x` :math:`c` times with
:math:`\lambda` is observing the mean once with :math:`\lambda / c`, an exact identity that makes the
cost depend on the distinct points on pools). Its log-determinant
:math:`2\sum_i \ln L_{ii} = \sum_{s \le t} \ln(1 + \lambda^{-1}\sigma^2_{s-1}(x_s))` enters the width of
Eq. 13. :func:`known_kernel_gp` builds the same posterior as a BoTorch ``SingleTaskGP``;
:func:`greedy_information_gain` estimates :math:`\gamma_T` by uncertainty sampling (footnote 4).

References:
    I. Bogunovic, A. Krause. Misspecified Gaussian Process Bandit Optimization. NeurIPS 2021.
    C. E. Rasmussen, C. K. I. Williams. Gaussian Processes for Machine Learning. 2006.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import torch
from botorch.exceptions.warnings import InputDataWarning
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize
from gpytorch.constraints import GreaterThan
from gpytorch.kernels import Kernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.means import ZeroMean
from torch import Tensor

from botorch_unknown_hypers.kernels import check_kernel, scale_kernel


def make_known_kernel(
    kernel: str,
    lengthscale: float | Sequence[float],
    outputscale: float,
    dim: int,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> ScaleKernel:
    r"""``ScaleKernel(Matern or RBF)`` with fixed hyperparameters and :math:`k(x, x) = s \le 1`.

    Args:
        kernel: ``"matern12"``, ``"matern32"``, ``"matern52"`` or ``"rbf"`` (GPyTorch
            conventions: RBF is :math:`\exp(-r^2 / 2)`).
        lengthscale: One positive length scale (isotropic) or ``d`` of them (ARD).
        outputscale: :math:`s = k(x, x) \in (0, 1]` (the paper assumes :math:`k(x, x) \le 1`).
        dim: Input dimension ``d``.

    Returns:
        The kernel module, no parameter requiring gradients.

    Raises:
        ValueError: naming the argument.
    """
    check_kernel(kernel)
    values = [lengthscale] if isinstance(lengthscale, (int, float)) else list(lengthscale)
    if not values or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0 for v in values
    ):
        raise ValueError(f"lengthscale must be a positive number or a list of them, got {lengthscale!r}.")
    if len(values) not in (1, dim):
        raise ValueError(f"lengthscale must have 1 or d = {dim} entries, got {len(values)}.")
    if isinstance(outputscale, bool) or not isinstance(outputscale, (int, float)) or not 0 < outputscale <= 1:
        raise ValueError(f"outputscale must lie in (0, 1] (the paper assumes k(x, x) <= 1), got {outputscale!r}.")
    module = scale_kernel(kernel, len(values) if len(values) > 1 else None).to(device=device, dtype=dtype)
    module.base_kernel.lengthscale = torch.tensor(values, dtype=dtype, device=device).reshape(1, -1)
    module.outputscale = torch.tensor(float(outputscale), dtype=dtype, device=device)
    module.requires_grad_(False)
    return module.eval()


def collapse_replicates(X: Tensor, Y: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    r"""Distinct rows of ``X`` (``n x d``) with their counts and sums of ``Y`` (``n`` or ``n x 1``).

    Returns:
        ``(X_unique, counts, sums)``: ``u x d``, ``u``, ``u`` (``X``'s dtype), rows in
        lexicographic order.
    """
    if X.shape[0] == 0:
        return X, X.new_zeros(0), X.new_zeros(0)
    X_unique, inverse = torch.unique(X, dim=0, return_inverse=True)
    return X_unique, *group_counts_sums(inverse, Y.reshape(-1), X_unique.shape[0])


def group_counts_sums(inverse: Tensor, Y: Tensor, num_groups: int) -> tuple[Tensor, Tensor]:
    r"""Counts and sums of ``Y`` (``n``) per group label ``inverse`` (``n`` ints in ``[0, num_groups)``)."""
    counts = Y.new_zeros(num_groups).index_add(0, inverse, torch.ones_like(Y))
    sums = Y.new_zeros(num_groups).index_add(0, inverse, Y)
    return counts, sums


class KernelRidge:
    r"""Closed-form kernel ridge regression / GP posterior with a known kernel.

    Args:
        kernel: The known kernel :math:`k` (a GPyTorch kernel module).
        lam: The regulariser :math:`\lambda > 0`.
        train_X: ``u x d`` *distinct* inputs (``u = 0`` gives the prior).
        counts: ``u`` replicate counts :math:`c_i \ge 1` (all ones without replicates).
        sums: ``u`` sums of the observations at each input.

    Example:
        >>> kr = KernelRidge.from_observations(kernel, 1.0, X, Y)
        >>> mean, variance = kr.mean_variance(X_test)  # m, m
        >>> kr.log_det  # sum_s ln(1 + sigma^2_{s-1}(x_s) / lam)
    """

    def __init__(self, kernel: Kernel, lam: float, train_X: Tensor, counts: Tensor, sums: Tensor) -> None:
        if not lam > 0:
            raise ValueError(f"lam (lambda) must be positive, got {lam}.")
        self.kernel = kernel
        self.lam = float(lam)
        self.train_X = train_X
        self.counts = counts
        u = train_X.shape[0]
        self._sqrt_counts = counts.sqrt()
        if u == 0:
            self._chol = train_X.new_zeros(0, 0)
            self._weights = train_X.new_zeros(0, 1)
            self.log_det = 0.0
            return
        with torch.no_grad():
            K = kernel(train_X).to_dense()
        sc = self._sqrt_counts
        B = torch.eye(u, dtype=K.dtype, device=K.device) + sc.unsqueeze(-1) * K * sc.unsqueeze(-2) / self.lam
        self._chol = torch.linalg.cholesky(B)  # eigenvalues >= 1: always factorisable
        self._weights = torch.cholesky_solve((sums / sc).unsqueeze(-1), self._chol)  # B^-1 C^-1/2 s
        self.log_det = float(2.0 * torch.log(torch.diagonal(self._chol)).sum())

    @classmethod
    def from_observations(cls, kernel: Kernel, lam: float, train_X: Tensor, train_Y: Tensor) -> KernelRidge:
        r"""From raw observations ``train_X`` (``n x d``) and ``train_Y`` (``n`` or ``n x 1``),
        collapsing replicated inputs."""
        X_unique, counts, sums = collapse_replicates(train_X, train_Y)
        return cls(kernel, lam, X_unique, counts, sums)

    @property
    def num_observations(self) -> int:
        r""":math:`t`, the number of observations (replicates included)."""
        return int(self.counts.sum().item()) if self.counts.numel() else 0

    def mean_variance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        r"""Posterior mean :math:`\mu^*_t` (Eq. 11) and variance :math:`\sigma^2_t` (Eq. 9).

        Args:
            X: ``m x d`` test inputs.

        Returns:
            ``(mean, variance)``, each ``m``, differentiable in ``X``; the variance is clamped at 0.
        """
        prior_var = self.kernel(X, diag=True)
        if self.train_X.shape[0] == 0:
            return torch.zeros_like(prior_var), prior_var
        k = self.kernel(self.train_X, X).to_dense() * self._sqrt_counts.unsqueeze(-1)  # u x m: C^1/2 k_U(x)
        mean = (k.transpose(-1, -2) @ self._weights).squeeze(-1) / self.lam
        v = torch.linalg.solve_triangular(self._chol, k, upper=False)
        variance = prior_var - v.square().sum(dim=-2) / self.lam
        return mean, variance.clamp_min(0.0)


def known_kernel_gp(train_X: Tensor, train_Y: Tensor, kernel: Kernel, lam: float, bounds: Tensor) -> SingleTaskGP:
    r"""The :class:`KernelRidge` posterior as a BoTorch ``SingleTaskGP`` (for ``optimize_acqf``).

    Fixed kernel (a copy of ``kernel``), noise variance :math:`\lambda`, zero mean,
    inputs scaled to the unit cube by ``bounds`` (``Normalize``), **no** outcome
    transform, eval mode; nothing is fitted.

    Args:
        train_X: ``n x d`` inputs (``n >= 1``), in the domain's units.
        train_Y: ``n x 1`` raw observations.
        kernel: The known kernel, acting on unit-cube inputs.
        lam: :math:`\lambda > 0`.
        bounds: ``2 x d`` box.
    """
    import copy

    likelihood = GaussianLikelihood(noise_constraint=GreaterThan(1e-12)).to(train_X)
    likelihood.noise = torch.tensor(float(lam), dtype=train_X.dtype, device=train_X.device)
    with warnings.catch_warnings():
        # Raw outputs on purpose (Eq. 11): silence BoTorch's "not standardized" advice.
        warnings.simplefilter("ignore", InputDataWarning)
        model = SingleTaskGP(
            train_X,
            train_Y,
            likelihood=likelihood,
            covar_module=copy.deepcopy(kernel),
            mean_module=ZeroMean(),
            outcome_transform=None,
            input_transform=Normalize(d=train_X.shape[-1], bounds=bounds),
        ).to(train_X)
    model.requires_grad_(False)
    return model.eval()


def greedy_information_gain(kernel: Kernel, points: Tensor, lam: float, steps: int) -> tuple[float, Tensor]:
    r"""Greedy maximisation of the information gain on a finite set (uncertainty sampling).

    Picks :math:`x_s = \arg\max_{x} \sigma^2_{s-1}(x)` (lowest index on ties; points
    may repeat) for :math:`s = 1..T` and returns
    :math:`\hat\gamma_T = \tfrac12 \sum_{s=1}^{T} \ln(1 + \lambda^{-1}\sigma^2_{s-1}(x_s))`.
    By submodularity :math:`\hat\gamma_T \ge (1 - 1/e)\gamma_T` (footnote 4 of the paper,
    whose printed inequality is garbled), so :math:`\gamma_T \le \hat\gamma_T / (1 - 1/e)`.

    The posterior variance is updated by rank-one (pivoted-Cholesky) steps,
    :math:`O(T^2 N)` time and :math:`O(TN)` memory.

    Args:
        kernel: The known kernel.
        points: ``N x d`` candidate set (already in the kernel's input units).
        lam: :math:`\lambda > 0`.
        steps: :math:`T \ge 0`.

    Returns:
        ``(gamma_hat, picks)``: the greedy information gain and the ``T`` picked indices.
    """
    if not lam > 0:
        raise ValueError(f"lam (lambda) must be positive, got {lam}.")
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be a non-negative int, got {steps!r}.")
    n = points.shape[0]
    with torch.no_grad():
        variance = kernel(points, diag=True).clone()
        rows = points.new_zeros(steps, n)  # rows[s] = Sigma_s(x_s, .) / sqrt(sigma^2_s(x_s) + lam)
        picks = torch.zeros(steps, dtype=torch.long, device=points.device)
        gain = 0.0
        for s in range(steps):  # sequential by definition: each pick depends on the previous ones
            j = int(torch.argmax(variance))
            picks[s] = j
            var_j = float(variance[j])
            gain += 0.5 * math.log1p(var_j / lam)
            column = kernel(points, points[j : j + 1]).to_dense().squeeze(-1) - rows[:s].transpose(0, 1) @ rows[:s, j]
            rows[s] = column / math.sqrt(var_j + lam)
            variance = (variance - rows[s].square()).clamp_min(0.0)
    return gain, picks
