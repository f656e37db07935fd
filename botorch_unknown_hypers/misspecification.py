r"""Confidence widths and regret bounds of misspecified kernelised bandits.

Bogunovic & Krause, "Misspecified Gaussian Process Bandit Optimization" (NeurIPS 2021). The
learner knows the kernel and a norm bound :math:`B` but :math:`f^*` is only :math:`\epsilon`-close
to the RKHS ball. These are the closed-form quantities of its three algorithms
(:mod:`~botorch_unknown_hypers.policies.misspecified.misspecified_rules`):

- :func:`confidence_width`: Lemma 1 / Eq. 13, :math:`\beta_t = \frac{\sigma}{\sqrt\lambda}
  \sqrt{2\ln(1/\delta) + \sum_{s<t}\ln(1 + \lambda^{-1}\sigma^2_{s-1}(x_s))} + B` (the variance,
  not the standard deviation, inside the log, as the cited results and Eqs. 29-30 use);
- :func:`enlarged_width`: EC-GP-UCB's Eq. 14, :math:`\beta_t + \epsilon\sqrt t/\sqrt\lambda`;
- :func:`phased_elimination`: the elimination of phased uncertainty sampling, Eq. 20;
- :func:`epsilon_grid`, :func:`candidate_regret_bounds`, :func:`balancing_eliminations`,
  :func:`theoretical_bound_constants`: regret-bound balancing, Alg. 3, Eqs. 23, 24 and 85.

The derivations and every choice where the paper is ambiguous: ``docs/misspecified-bandits.md``.

References:
    I. Bogunovic, A. Krause. Misspecified Gaussian Process Bandit Optimization. NeurIPS 2021.
    A. Pacchiano, C. Dann, C. Gentile, P. Bartlett. Regret Bound Balancing and Elimination for
    Model Selection in Bandits and RL. arXiv:2012.13045, 2020.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from botorch_unknown_hypers.checks import check_choice
from botorch_unknown_hypers.confidence import upper_confidence_bound

ELIMINATION_TESTS = ("normalized", "as-printed")


def confidence_width(log_det: float, noise_std: float, lam: float, delta: float, B: float) -> float:
    r"""Lemma 1 width, Eq. 13 (variance form): :math:`\frac{\sigma}{\sqrt\lambda}\sqrt{2\ln(1/\delta) + L} + B`.

    Args:
        log_det: :math:`L = \sum_{s=1}^{t-1}\ln(1 + \lambda^{-1}\sigma^2_{s-1}(x_s)) =
            \ln\det(I + \lambda^{-1}K_{t-1})` (``KernelRidge.log_det``), ``>= 0``.
        noise_std: Sub-Gaussian noise scale :math:`\sigma`.
        lam: Regulariser :math:`\lambda`.
        delta: Failure probability :math:`\delta`.
        B: RKHS norm bound.

    Returns:
        :math:`\beta_t`, the multiplier of :math:`\sigma_{t-1}(x)`.
    """
    return noise_std / math.sqrt(lam) * math.sqrt(2.0 * math.log(1.0 / delta) + max(log_det, 0.0)) + B


def enlarged_width(beta: float, eps: float, t: int, lam: float) -> float:
    r"""EC-GP-UCB width (Eq. 14): :math:`\beta_t + \epsilon\sqrt t/\sqrt\lambda` at round :math:`t`."""
    return beta + eps * math.sqrt(t) / math.sqrt(lam)


def phased_elimination(mean: Tensor, variance: Tensor, beta: float) -> Tensor:
    r"""Eq. 20: keep :math:`x` iff :math:`\mu(x) + \beta\sigma(x) \ge \max_{x'}(\mu(x') - \beta\sigma(x'))`.

    Args:
        mean, variance: ``n`` posterior means and variances over :math:`D_e`.
        beta: :math:`\beta_{m_e+1}` (no :math:`\epsilon` enlargement).

    Returns:
        ``n`` bool keep mask; the maximiser of the lower bound is always kept.
    """
    return upper_confidence_bound(mean, variance, beta) >= upper_confidence_bound(mean, variance, -beta).max()


def epsilon_grid(gamma_T: float, horizon: int, num_bases: int | None = None) -> list[float]:
    r"""Base learners' candidates :math:`\hat\epsilon_i = 2^{1-i}/\sqrt{\gamma_T}`, :math:`i = 1..M`.

    :math:`M = \max(1, \lceil 1 + \tfrac12\log_2(T/\gamma_T^2)\rceil)` (Sec. 4; App. E's
    :math:`\lceil 1 + \log_2(\sqrt T/\gamma_T)\rceil` is the same), or ``num_bases``.
    """
    if num_bases is None:
        num_bases = max(1, math.ceil(1.0 + 0.5 * math.log2(horizon / gamma_T**2)))
    return [2.0 ** (1 - i) / math.sqrt(gamma_T) for i in range(1, num_bases + 1)]


def candidate_regret_bounds(
    play_count: Tensor, eps_hat: Tensor, gamma_T: float, B: float, c1: float, c2: float, regret_cap: float = 1.0
) -> Tensor:
    r"""Eq. 85 with the base's own count: :math:`\min\{c'_1(B\sqrt{\gamma_T} + \gamma_T)\sqrt N + c'_2\hat\epsilon\sqrt{\gamma_T}N,\ r N\}`.

    Args:
        play_count: ``M`` play counts :math:`N_i` (any float/int tensor).
        eps_hat: ``M`` candidates :math:`\hat\epsilon_i`.
        regret_cap: :math:`r`, the largest regret of one round (1 for the paper's
            :math:`f^* \in [0, 1]`).

    Returns:
        ``M`` bounds :math:`\mathcal R_i(N_i)`; 0 at :math:`N = 0`, non-decreasing.
    """
    N = play_count.to(eps_hat)
    sqrt_gamma = math.sqrt(gamma_T)
    concave = c1 * (B * sqrt_gamma + gamma_T) * N.sqrt() + c2 * eps_hat * sqrt_gamma * N
    return torch.minimum(concave, regret_cap * N)


def balancing_eliminations(
    cumulative_reward: Tensor,
    play_count: Tensor,
    bounds: Tensor,
    active: Tensor,
    c: float,
    delta: float,
    test: str = "normalized",
) -> Tensor:
    r"""The bases that fail the consistency test of Eq. 24 this round.

    With :math:`L(N) = \ln(M \ln\max(N, 3)/\delta)` (guarded: the printed
    :math:`\ln(M\ln N/\delta)` is undefined or negative for :math:`N \le 2`),

    - ``"normalized"`` (default; per-play averages as in Pacchiano et al. 2020):
      eliminate :math:`i` iff :math:`\frac{J_i + \mathcal R_i(N_i) + c\sqrt{N_i L(N_i)}}{N_i}
      < \max_j \frac{J_j - c\sqrt{N_j L(N_j)}}{N_j}`, the max over active :math:`j` with
      :math:`N_j \ge 1`;
    - ``"as-printed"``: :math:`J_i + \mathcal R_i(N_i) + c\sqrt{N_i L(N_i)} <
      \max_j J_j - c\sqrt{N_j L(N_j)}` (Eq. 24 literally), the max over all active :math:`j`.

    Only active bases with :math:`N_i \ge 1` are tested; all are tested against the
    same maximum (simultaneous elimination). The base attaining the maximum never fails.

    Args:
        cumulative_reward: ``M`` sums :math:`J_i` of observed rewards.
        play_count: ``M`` counts :math:`N_i`.
        bounds: ``M`` candidate bounds :math:`\mathcal R_i(N_i)`.
        active: ``M`` bool mask of :math:`I_t`.
        c: Confidence constant :math:`c \ge 0`.
        delta: :math:`\delta`.
        test: ``"normalized"`` or ``"as-printed"``.

    Returns:
        ``M`` bool mask of the bases to eliminate.
    """
    check_choice("elimination_test", test, ELIMINATION_TESTS)
    M = play_count.shape[0]
    N = play_count.to(cumulative_reward)
    log_term = torch.log(M * torch.log(N.clamp_min(3.0)) / delta)
    confidence = c * (N * log_term).sqrt()
    upper = cumulative_reward + bounds + confidence
    lower = cumulative_reward - confidence
    played = N >= 1
    if test == "normalized":
        safe_N = N.clamp_min(1.0)
        upper, lower = upper / safe_N, lower / safe_N
        eligible = active & played
    else:
        eligible = active
    if not bool(eligible.any()):
        return torch.zeros_like(active)
    best_lower = lower[eligible].max()
    return active & played & (upper < best_lower)


def theoretical_bound_constants(
    gamma_T: float, B: float, lam: float, noise_std: float, delta: float, true_regret: bool = True
) -> tuple[float, float]:
    r""":math:`(c'_1, c'_2)` that make Eq. 85 the explicit Theorem 1 bound (Eq. 39, :math:`T \to N`).

    Eq. 39: :math:`R_N \le 2(\frac{\sigma}{\sqrt\lambda}\sqrt{2\ln(1/\delta) + 2\gamma_T} + B)
    \sqrt{(2\lambda+1)\gamma_T N} + 2\frac{\epsilon}{\sqrt\lambda}N\sqrt{(2\lambda+1)\gamma_T}`,
    plus :math:`2\epsilon N` for the true regret :math:`R^*` (``true_regret``). For reports:
    with these, :math:`\mathcal R_i(N) = N` for every practical :math:`N` (a round-robin whose test never fires).
    """
    sqrt_gamma = math.sqrt(gamma_T)
    root = math.sqrt((2.0 * lam + 1.0) * gamma_T)
    c1 = 2.0 * (noise_std / math.sqrt(lam) * math.sqrt(2.0 * math.log(1.0 / delta) + 2.0 * gamma_T) + B) * root
    c1 /= B * sqrt_gamma + gamma_T
    c2 = 2.0 * root / math.sqrt(lam) / sqrt_gamma + (2.0 / sqrt_gamma if true_regret else 0.0)
    return c1, c2


# --------------------------------------------------------------------------- #
# option checks
# --------------------------------------------------------------------------- #
