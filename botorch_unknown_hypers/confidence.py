r"""Confidence widths, information gain and suspected regret bounds.

This module collects the closed-form "schedule" quantities used by GP-UCB-type
algorithms with unknown hyperparameters (HE-GP-UCB, LB-GP-UCB, LNB-GP-UCB,
EC-GP-UCB): the confidence multipliers :math:`\beta_t`, the noise-concentration
width :math:`\xi_t`, the (empirical) information gain of a kernel matrix, the
maximum-information-gain (MIG) growth rates :math:`\gamma_T` for RBF and Matérn
kernels, the suspected regret bound :math:`R^{\theta,B}(T)` and the
length-scale-dependent RKHS norm bound :math:`B(\theta, N)`.

.. warning::

    **CONVENTION: EVERY ``beta`` RETURNED BY THIS MODULE IS THE MULTIPLIER OF
    SIGMA, NOT ITS SQUARE.** The upper confidence bound is

    .. math:: \mathrm{UCB}_t(x) = \mu_{t-1}(x) + \beta_t \, \sigma_{t-1}(x).

    Srinivas et al. (2010) write :math:`\mu + \beta_t^{1/2}\sigma` and call the
    *square* :math:`\beta_t` ("beta"). Here the Srinivas quantities are returned
    already square-rooted, so that all betas (Bayesian and frequentist) can be
    used the same way. Do **not** take another square root, and do not pass
    them to ``botorch.acquisition.UpperConfidenceBound(beta=...)`` (which
    expects the squared value) without squaring them first.

Inputs and outputs
------------------
Every function accepts python numbers or ``torch.Tensor`` objects for its
numeric arguments (in particular the "schedule" arguments: the iteration ``t``
or horizon ``T``, the information gain and the length scale) and broadcasts
them together, so e.g. a length scale of shape ``K`` (one entry per candidate
hyperparameter) yields ``K`` values at once. The result is always a
``torch.Tensor``: ``float64`` on the CPU when all inputs are python numbers or
integer tensors, otherwise the (promoted) floating dtype and the device of the
tensor inputs (a ``float32`` input therefore gives a ``float32`` output).
Arguments that are structural (``dim``, ``nu``, ``kernel``, ``form``) must be
python values. Invalid values raise ``ValueError`` naming the argument.

Formulas
--------
Notation: :math:`t \ge 1` is the iteration (the posterior used at iteration
:math:`t` is conditioned on :math:`t-1` points), :math:`d` the input dimension,
:math:`R` the sub-Gaussian noise scale (:math:`\sigma_N` in the LB paper),
:math:`B` an RKHS-norm bound, :math:`\theta` a length scale, and
:math:`\pi^2/6 = \sum_{t\ge1} t^{-2}` the union-bound constant.

1. **Bayesian beta, finite domain** -- Srinivas et al. (2010), Theorem 1
   (via their Lemma 5.1), :func:`bayesian_beta_finite`:

   .. math:: \beta_t = \sqrt{2 \log\!\big(|X|\, t^2 \pi^2 / (6\delta)\big)}.

   HE-GP-UCB (Ziomek et al., "Beyond Lengthscales", Thm 4.2 (A)) uses
   :math:`\delta_A = \delta/2`, i.e. :math:`\sqrt{2\log(|X| t^2\pi^2/(3\delta))}`;
   callers obtain it by passing ``delta / 2``.

2. **Bayesian beta, continuous domain** -- Srinivas et al. (2010), Theorem 2
   (Lemmas 5.5-5.7), :func:`bayesian_beta_continuous`; requires
   :math:`X \subset [0, r]^d` compact and convex and
   :math:`P(\sup_x |\partial f/\partial x_j| > L) \le a\, e^{-L^2/b^2}`:

   .. math::

       \beta_t = \sqrt{\,2\log\!\big(2 t^2 \pi^2 / (3\delta)\big)
           + 2d \log\!\big(t^2 d\, b\, r \sqrt{\log(4 d a / \delta)}\big)}.

   The second log is :math:`\log|D_t|/d` of the analysis-only discretisation
   :math:`D_t` with :math:`\tau_t = t^2 d b r \sqrt{\log(4da/\delta)}` points
   per axis. A discretisation has at least one point per axis, so this module
   uses :math:`\log\max(\tau_t, 1)` (identical to the printed formula whenever
   :math:`\tau_t \ge 1`, which is the regime the theorem is about; the printed
   formula can otherwise make :math:`\beta_t^2` negative). ``4 d a / delta``
   must exceed 1. *Note*: HE-GP-UCB Thm 4.2 (B) prints
   :math:`4d\log(d\,t\,b\,r\ldots)` instead of :math:`2d\log(t^2 d\,b\,r\ldots)`
   (its own Thm 3.2 gives the Srinivas form); the two differ slightly. The
   Srinivas form is implemented.

3. **Frequentist beta (IGP-UCB)** -- Chowdhury & Gopalan (2017), Theorem 2;
   LB paper Thm 2.1 / Thm 4.1; HE paper Thm 4.1; :func:`frequentist_beta`:

   .. math:: \beta_t = B + R \sqrt{2\big(I_{t-1} + 1 + \ln(1/\delta)\big)},

   where :math:`I_{t-1}` is (an upper bound on) the information gain after
   :math:`t-1` observations (:math:`I_0 = 0`); pass the empirical information
   gain of :func:`information_gain` or a MIG bound. HE-GP-UCB and LB-GP-UCB
   split the failure probability as :math:`\delta_A = \delta_B = \delta/2`,
   giving :math:`\ln(2/\delta)`; **callers pass** ``delta / 2`` **themselves**.
   With the LB authors' code constants (:math:`B = 1`, :math:`R = 10^{-4}`,
   :math:`\delta = 0.01`) this is :math:`\beta_t \approx 1.000`.

4. **Noise-concentration width** -- LB paper Lemma B.1, HE paper Lemma 5.1,
   :func:`xi`:

   .. math:: \xi_t = 2R^2 \log\!\big(|A|\, \pi^2 t^2 / (6\delta_B)\big),

   so that :math:`|\sum_{i\in S_t^u}\varepsilon_i| \le \sqrt{\xi_t |S_t^u|}`
   for all :math:`t, u` w.p. :math:`\ge 1-\delta_B`. :math:`|A|` is the number
   of candidate hyperparameters (``num_candidates >= 1``). Corrections
   relative to the printed theorems:

   * **Parenthesisation** (LB Thm 4.1 prints
     :math:`2\sigma_N^2\log(d\ln(g(t))\pi^2t^2) - \log 3\delta`): the
     :math:`\delta` term belongs *inside* the log, inside the :math:`2R^2`
     factor. With :math:`\delta_B = \delta/2` the intended formula is
     :math:`2R^2\log(|A|\pi^2t^2/(3\delta))`, obtained here by passing
     ``delta = delta / 2``.
   * **pi vs pi^2** (HE Thm 4.1 prints :math:`\pi`): Lemma 5.1 and Thm 4.2
     use :math:`\pi^2`, which is what the union bound needs; :math:`\pi^2`
     is used.
   * :math:`|A|` is a count, not :math:`d\ln g(t)` (which may be :math:`\le 1`
     or 0 and breaks the log): pass the actual number of candidates
     introduced (the LB authors' code passes the current :math:`|\Theta_t|`;
     HE-GP-UCB uses the original :math:`|U|`).
   * The HE proof drops the factor 2 of the two-sided tail (strictly,
     :math:`2R^2\log(2|A|\pi^2t^2/(6\delta_B))`); the printed lemma is
     implemented, as in both papers.

   Example (HE note): :math:`\xi_1/R^2 = 10.206` for :math:`|U| = 5`,
   :math:`\delta = 0.1`, :math:`\delta_B = 0.05`.

5. **Information gain of observed points** -- Srinivas et al. (2010), Lemma
   5.3; :func:`information_gain`, :func:`information_gain_of_model`:

   .. math::

       I(y_A; f_A) = \tfrac12 \log\det\big(I + \sigma^{-2} K_A\big)
                   = \tfrac12 \sum_i \log(1 + \lambda_i(K_A)/\sigma^2).

   This is the information gain of the points *actually observed*, a lower
   bound on the MIG :math:`\gamma_T` (a max over point sets). Using it in
   :math:`\beta_t` in place of :math:`\gamma_{t-1}` is what Chowdhury &
   Gopalan's self-normalised bound permits (their proof controls
   :math:`\ln\det(I+\sigma^{-2}K_{t-1})`). Numerics: a Cholesky factorisation
   of :math:`I + K/\sigma^2` (batched ``torch.linalg.cholesky_ex``, no
   exception on failure), :math:`\log\det = 2\sum\log L_{ii}`. The matrix is
   symmetric positive definite with all eigenvalues :math:`\ge 1` whenever
   :math:`K` is PSD, so the factorisation is well posed, exploits symmetry,
   and the diagonal of :math:`L` is positive so no sign bookkeeping is needed
   (``slogdet`` goes through a pivoted LU, ignores symmetry and can return a
   negative sign for a numerically indefinite :math:`K`). Batch entries whose
   Cholesky fails (a kernel matrix that is indefinite beyond round-off) fall
   back to ``eigvalsh`` with the eigenvalues of :math:`K/\sigma^2` clipped at 0.

6. **MIG growth rates** -- LB paper Prop. 2.2 (from Vakili et al. 2021);
   :func:`gamma_rbf`, :func:`gamma_matern`, :func:`gamma`:

   .. math::

       \gamma_T^{\mathrm{RBF}}(\theta) &= \theta^{-d} \log(T)^{d+1}, \\
       \gamma_T^{\nu}(\theta) &= \theta^{-d}\, T^{d(d+1)/(2\nu + d(d+1))}
           \log(T)^{2\nu/(2\nu+d)} \quad \text{(form="main", Prop. 2.2 as printed)}, \\
       \gamma_T^{\nu}(\theta) &= \theta^{-d}\, T^{d/(2\nu+d)}
           \log(T)^{2\nu/(2\nu+d)} \quad \text{(form="proof", LB App. A)}.

   The T exponent of the printed Prop. 2.2 (Srinivas-style) differs from the
   one its proof in App. A derives (Vakili et al. Cor. 1 with polynomial
   eigendecay); both are offered. These are rates up to constants; all vanish
   at :math:`T = 1` because :math:`\log 1 = 0`.

   **Length-scale convention.** The LB paper's RBF kernel is
   :math:`\exp(-\|x-x'\|^2/\theta^2)` (no 1/2) while GPyTorch/BoTorch use
   :math:`\exp(-\|x-x'\|^2/(2\ell^2))`. The RBF functions here take the
   *paper's* :math:`\theta`; convert with :func:`paper_rbf_lengthscale`
   (:math:`\theta = \sqrt2\,\ell`) and :func:`gpytorch_rbf_lengthscale`.
   The Matérn definitions agree (both use :math:`\sqrt{2\nu}\,r/\theta`).

7. **Suspected regret bound** -- LB paper Thm 2.3, :func:`suspected_regret_bound`:

   .. math::

       R^{\theta,B}(T) = \sqrt{T}\,\big(B\sqrt{\gamma_T(\theta)} + \gamma_T(\theta)\big).

   (LB App. C/E/G write the same as :math:`\sqrt{T\gamma_T}(\sqrt{\gamma_T}+B)`;
   Lemma B.5's :math:`\sqrt{T\beta_T\gamma_T}(\sqrt{\gamma_T}+\sqrt B)` is
   inconsistent and not used.) :math:`R^{\theta,B}(1) = 0`, so a candidate
   that was never played has the smallest suspected bound. The LB authors'
   code instead uses the RBF rate for its Matérn kernel, a constant
   :math:`B = 1` and a factor :math:`C = 0.01`; reproduce that by calling with
   ``kernel="rbf"`` and ``B=1`` (the factor :math:`C` does not change an
   argmin).

8. **Length-scale-dependent norm bound** -- LB paper Lemma 2.1 (Bull 2011,
   Lemma 4), :func:`norm_bound`:

   .. math:: B(\theta, N) = (\theta_0/\theta)^{d/2}\, N.

References:
    - N. Srinivas, A. Krause, S. M. Kakade, M. Seeger. Gaussian Process
      Optimization in the Bandit Setting: No Regret and Experimental Design.
      ICML 2010 (Theorems 1 and 2, Lemma 5.3).
    - S. R. Chowdhury, A. Gopalan. On Kernelized Multi-armed Bandits.
      ICML 2017 (Theorem 2, IGP-UCB).
    - J. Ziomek, M. Adachi, M. A. Osborne. Bayesian Optimisation with Unknown
      Hyperparameters: Regret Bounds Logarithmically Closer to Optimal.
      NeurIPS 2024 (LB-GP-UCB: Thm 2.1, Prop. 2.2, Thm 2.3, Lemma 2.1,
      Thm 4.1, Lemma B.1, App. A).
    - J. Ziomek, M. Adachi, M. A. Osborne. Beyond Lengthscales: No-regret
      Bayesian Optimisation With Unknown Hyperparameters Of Any Type
      (HE-GP-UCB: Lemma 5.1, Theorems 3.2, 4.1, 4.2).
    - I. Bogunovic, A. Krause. Misspecified Gaussian Process Bandit
      Optimization. NeurIPS 2021 (Lemma 1, Eq. 30: the same
      :math:`B + (\sigma/\sqrt\lambda)\sqrt{2\ln(1/\delta) + 2\gamma_{t-1}}` form).
    - S. Vakili, K. Khezeli, V. Picheny. On Information Gain and Regret
      Bounds in Gaussian Process Bandits. AISTATS 2021 (Corollary 1).
    - A. D. Bull. Convergence Rates of Efficient Global Optimization
      Algorithms. JMLR 2011 (Lemma 4).
"""

from __future__ import annotations

import math
from typing import Any, Optional, Union

import torch
from torch import Tensor

from botorch_unknown_hypers.kernels import KERNELS

__all__ = [
    "Number",
    "bayesian_beta_finite",
    "bayesian_beta_continuous",
    "frequentist_beta",
    "xi",
    "information_gain",
    "information_gain_of_model",
    "paper_rbf_lengthscale",
    "gpytorch_rbf_lengthscale",
    "gamma_rbf",
    "gamma_matern",
    "gamma",
    "suspected_regret_bound",
    "norm_bound",
]

#: A python number or a tensor (broadcast against the other arguments).
Number = Union[float, int, Tensor]


_PI_SQ = math.pi**2


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #


def _dtype_device(values: tuple[Any, ...]) -> tuple[torch.dtype, torch.device]:
    """Result dtype/device: promoted floating dtype of the tensor inputs, else float64."""
    dtype: Optional[torch.dtype] = None
    device: Optional[torch.device] = None
    for v in values:
        if isinstance(v, Tensor):
            if device is None:
                device = v.device
            if v.is_floating_point():
                dtype = v.dtype if dtype is None else torch.promote_types(dtype, v.dtype)
    return (dtype or torch.float64), (device or torch.device("cpu"))


def _as_tensors(_broadcast: bool = True, **named: Number) -> dict[str, Tensor]:
    """Convert the named numbers to tensors with a common dtype/device.

    With ``_broadcast`` (default) also check that their shapes broadcast.
    """
    dtype, device = _dtype_device(tuple(named.values()))
    out: dict[str, Tensor] = {}
    for name, v in named.items():
        if isinstance(v, bool) or not isinstance(v, (int, float, Tensor)):
            raise ValueError(
                f"{name} must be a real number or a torch.Tensor, got {type(v).__name__}"
            )
        if isinstance(v, Tensor) and (v.is_complex() or v.dtype == torch.bool):
            raise ValueError(f"{name} must be a real-valued tensor, got dtype {v.dtype}")
        out[name] = torch.as_tensor(v, dtype=dtype, device=device)
    if not _broadcast:
        return out
    try:
        shapes = [t.shape for t in out.values()]
        torch.broadcast_shapes(*shapes)
    except RuntimeError as err:
        desc = ", ".join(f"{n}: {tuple(t.shape)}" for n, t in out.items())
        raise ValueError(f"arguments cannot be broadcast together ({desc})") from err
    return out


def _require(name: str, ok: Tensor, requirement: str, value: Tensor) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``ok`` holds everywhere.

    ``ok`` must be phrased positively so that NaN entries fail the check.
    """
    if not bool(torch.all(ok)):
        ok, value = torch.broadcast_tensors(ok, value)
        shown = value.detach().cpu()
        if shown.numel() > 8:
            shown = shown.flatten()[~ok.detach().cpu().flatten()][:8]
        raise ValueError(f"{name} must be {requirement}; got {shown.tolist()}")


def _check_dim(dim: int) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int):
        if isinstance(dim, float) and dim.is_integer():
            dim = int(dim)
        else:
            raise ValueError(f"dim must be a positive integer; got {dim!r}")
    if dim < 1:
        raise ValueError(f"dim must be a positive integer; got {dim!r}")
    return dim


def _check_t(name: str, t: Tensor) -> None:
    _require(name, t >= 1, ">= 1 (iterations are counted from 1)", t)


def _check_delta(name: str, delta: Tensor) -> None:
    _require(name, (delta > 0) & (delta < 1), "in the open interval (0, 1)", delta)


def _check_positive(name: str, value: Tensor) -> None:
    _require(name, value > 0, "positive", value)


def _check_nonnegative(name: str, value: Tensor) -> None:
    _require(name, value >= 0, "non-negative", value)


# --------------------------------------------------------------------------- #
# confidence multipliers (beta = MULTIPLIER OF SIGMA)
# --------------------------------------------------------------------------- #


def bayesian_beta_finite(t: Number, num_points: Number, delta: Number) -> Tensor:
    r"""Srinivas et al. (2010), Thm 1: :math:`\sqrt{2\log(|X| t^2\pi^2/(6\delta))}`.

    Returns the **multiplier of sigma** (the square root of Srinivas' beta).

    Args:
        t: Iteration index(es), ``>= 1``.
        num_points: Size :math:`|X|` of the finite domain, ``>= 1``.
        delta: Failure probability in ``(0, 1)``. HE-GP-UCB uses
            :math:`\delta_A = \delta/2`: pass ``delta / 2``.

    Returns:
        Tensor of the broadcast shape of the inputs.
    """
    v = _as_tensors(t=t, num_points=num_points, delta=delta)
    _check_t("t", v["t"])
    _require("num_points", v["num_points"] >= 1, ">= 1", v["num_points"])
    _check_delta("delta", v["delta"])
    arg = v["num_points"] * v["t"].square() * _PI_SQ / (6.0 * v["delta"])
    return torch.sqrt(2.0 * torch.log(arg))


def bayesian_beta_continuous(
    t: Number, dim: int, delta: Number, a: Number, b: Number, r: Number
) -> Tensor:
    r"""Srinivas et al. (2010), Thm 2, as a **multiplier of sigma**.

    .. math::

        \beta_t = \sqrt{2\log(2t^2\pi^2/(3\delta))
            + 2d\log\max\big(t^2 d b r\sqrt{\log(4da/\delta)},\, 1\big)}

    (the ``max(., 1)`` only matters when the analysis discretisation would
    have fewer than one point per axis; see the module docstring).

    Args:
        t: Iteration index(es), ``>= 1``.
        dim: Input dimension :math:`d \ge 1`.
        delta: Failure probability in ``(0, 1)`` (HE-GP-UCB: pass ``delta / 2``).
        a: Constant of the derivative tail bound
            :math:`P(\sup|\partial f/\partial x_j| > L) \le a e^{-L^2/b^2}`,
            positive, with ``4 * dim * a / delta > 1``.
        b: Scale of the derivative tail bound, positive.
        r: Side length of the domain :math:`[0, r]^d`, positive.

    Returns:
        Tensor of the broadcast shape of the inputs.
    """
    d = _check_dim(dim)
    v = _as_tensors(t=t, delta=delta, a=a, b=b, r=r)
    _check_t("t", v["t"])
    _check_delta("delta", v["delta"])
    for name in ("a", "b", "r"):
        _check_positive(name, v[name])
    inner = 4.0 * d * v["a"] / v["delta"]
    _require("a", inner > 1, "large enough that 4 * dim * a / delta > 1", v["a"])
    first = 2.0 * torch.log(2.0 * v["t"].square() * _PI_SQ / (3.0 * v["delta"]))
    tau = v["t"].square() * d * v["b"] * v["r"] * torch.sqrt(torch.log(inner))
    second = 2.0 * d * torch.log(torch.clamp(tau, min=1.0))
    return torch.sqrt(first + second)


def frequentist_beta(information_gain: Number, B: Number, R: Number, delta: Number) -> Tensor:
    r"""IGP-UCB, Chowdhury & Gopalan (2017) Thm 2: :math:`B + R\sqrt{2(I_{t-1} + 1 + \ln(1/\delta))}`.

    Returns the **multiplier of sigma**. HE-GP-UCB (Thm 4.1) and LB-GP-UCB
    (Thm 4.1) use :math:`\delta_A = \delta/2`, i.e. :math:`\ln(2/\delta)`:
    callers pass ``delta / 2`` themselves.

    Args:
        information_gain: :math:`I_{t-1}` (or :math:`\gamma_{t-1}`), the
            information gain of the first :math:`t-1` observations, ``>= 0``
            (0 at :math:`t = 1`).
        B: RKHS-norm bound, ``>= 0``.
        R: Sub-Gaussian noise scale (standard deviation, not variance), ``>= 0``.
        delta: Failure probability in ``(0, 1)``.

    Returns:
        Tensor of the broadcast shape of the inputs.
    """
    v = _as_tensors(information_gain=information_gain, B=B, R=R, delta=delta)
    _check_nonnegative("information_gain", v["information_gain"])
    _check_nonnegative("B", v["B"])
    _check_nonnegative("R", v["R"])
    _check_delta("delta", v["delta"])
    log_term = torch.log(1.0 / v["delta"])
    return v["B"] + v["R"] * torch.sqrt(2.0 * (v["information_gain"] + 1.0 + log_term))


def xi(t: Number, num_candidates: Number, R: Number, delta: Number) -> Tensor:
    r"""Noise-concentration width :math:`\xi_t = 2R^2\log(|A|\pi^2t^2/(6\delta_B))`.

    LB paper Lemma B.1 / HE paper Lemma 5.1 (with the parenthesisation and the
    :math:`\pi^2` of the lemmas, see the module docstring). With the usual
    split :math:`\delta_B = \delta/2` pass ``delta = delta / 2`` to obtain
    :math:`2R^2\log(|A|\pi^2t^2/(3\delta))`.

    Args:
        t: Current global iteration(s), ``>= 1``.
        num_candidates: Number :math:`|A|` of candidate hyperparameters, ``>= 1``.
        R: Sub-Gaussian noise scale, ``>= 0`` (``R = 0`` gives :math:`\xi_t = 0`).
        delta: :math:`\delta_B`, the failure probability of the noise event,
            in ``(0, 1)``.

    Returns:
        Tensor of the broadcast shape of the inputs.
    """
    v = _as_tensors(t=t, num_candidates=num_candidates, R=R, delta=delta)
    _check_t("t", v["t"])
    _require("num_candidates", v["num_candidates"] >= 1, ">= 1", v["num_candidates"])
    _check_nonnegative("R", v["R"])
    _check_delta("delta", v["delta"])
    arg = v["num_candidates"] * _PI_SQ * v["t"].square() / (6.0 * v["delta"])
    return 2.0 * v["R"].square() * torch.log(arg)


# --------------------------------------------------------------------------- #
# information gain
# --------------------------------------------------------------------------- #


def information_gain(covariance: Tensor, noise_variance: Number) -> Tensor:
    r"""Information gain :math:`\tfrac12\log\det(I + \sigma^{-2}K)` of observed points.

    Args:
        covariance: ``batch_shape x n x n`` prior kernel matrix :math:`K` of the
            points actually observed (symmetric PSD). ``n = 0`` gives 0.
        noise_variance: Observation-noise **variance** :math:`\sigma^2 > 0`,
            one per matrix: a number or a tensor broadcastable to ``batch_shape``.

    Returns:
        Tensor of shape ``broadcast(batch_shape, noise_variance.shape)``.

    Computed from a batched Cholesky of :math:`I + K/\sigma^2` (all eigenvalues
    :math:`\ge 1`); entries whose factorisation fails fall back to
    ``eigvalsh`` with the eigenvalues of :math:`K/\sigma^2` clipped at 0.
    """
    if not isinstance(covariance, Tensor):
        raise ValueError(f"covariance must be a torch.Tensor, got {type(covariance).__name__}")
    if covariance.dim() < 2 or covariance.shape[-1] != covariance.shape[-2]:
        raise ValueError(
            f"covariance must have shape batch_shape x n x n; got {tuple(covariance.shape)}"
        )
    v = _as_tensors(False, covariance=covariance, noise_variance=noise_variance)
    K, s2 = v["covariance"], v["noise_variance"]
    _check_positive("noise_variance", s2)
    try:
        batch = torch.broadcast_shapes(K.shape[:-2], s2.shape)
    except RuntimeError as err:
        raise ValueError(
            f"noise_variance of shape {tuple(s2.shape)} does not broadcast with the batch "
            f"shape {tuple(K.shape[:-2])} of covariance"
        ) from err
    if not bool(torch.isfinite(K).all()):
        raise ValueError("covariance must be finite (it contains NaN or inf)")
    n = K.shape[-1]
    if n == 0:
        return torch.zeros(batch, dtype=K.dtype, device=K.device)
    scaled = K / s2[..., None, None]
    scaled = 0.5 * (scaled + scaled.transpose(-1, -2))
    scaled = scaled.expand(*batch, n, n)
    eye = torch.eye(n, dtype=K.dtype, device=K.device)
    L, info = torch.linalg.cholesky_ex(scaled + eye)
    out = torch.log(torch.diagonal(L, dim1=-2, dim2=-1)).sum(-1)  # = 0.5 * logdet
    failed = info != 0
    if bool(failed.any()):
        eig = torch.linalg.eigvalsh(scaled[failed]).clamp(min=0.0)
        out = out.clone()
        out[failed] = 0.5 * torch.log1p(eig).sum(-1)
    return out


def information_gain_of_model(model: Any, X: Optional[Tensor] = None) -> Tensor:
    r"""Information gain :math:`\tfrac12\log\det(I + \sigma^{-2}K)` of a GP model.

    Works for GPyTorch ``ExactGP`` and BoTorch GP models exposing
    ``covar_module`` and ``likelihood.noise`` (noise *variance*). The kernel is
    evaluated as ``model.covar_module(X).to_dense()``, so the result is batched
    over the model's batch shape (a model with ``batch_shape = K`` gives ``K``
    values). The model's mode, parameters and caches are not touched, and the
    computation runs under ``torch.no_grad()``: the result is a detached
    schedule constant (so using it inside an acquisition function can never
    back-propagate into, or accumulate ``.grad`` on, the model's parameters).

    Args:
        model: The GP model.
        X: ``(batch_shape x) n x d`` inputs in the model's (transformed) input
            space. Defaults to ``model.train_inputs[0]``, the points observed.

    Returns:
        Tensor of shape ``batch_shape`` (0-dim for a non-batched model).

    Noise handling: a homoskedastic likelihood has ``noise`` of shape
    ``batch_shape x 1`` (one variance per batch element). A fixed-noise
    likelihood (noise of shape ``batch_shape x n``, one variance per training
    point) is supported only for the training inputs (``X=None``); there the
    result is :math:`\tfrac12\log\det(I + D^{-1/2}KD^{-1/2})` with
    :math:`D = \operatorname{diag}(\sigma_i^2)`.
    """
    covar_module = getattr(model, "covar_module", None)
    likelihood = getattr(model, "likelihood", None)
    if covar_module is None:
        raise ValueError("model must have a covar_module")
    noise = getattr(likelihood, "noise", None) if likelihood is not None else None
    if not isinstance(noise, Tensor):
        raise ValueError("model.likelihood must expose a noise variance tensor `noise`")
    if X is None:
        train_inputs = getattr(model, "train_inputs", None)
        if not train_inputs:
            raise ValueError("X must be given when the model has no train_inputs")
        X = train_inputs[0]
        use_train = True
    else:
        use_train = False
        from gpytorch.likelihoods import FixedNoiseGaussianLikelihood

        if isinstance(likelihood, FixedNoiseGaussianLikelihood):
            raise ValueError(
                "X: a fixed-noise likelihood only knows the noise at the training "
                "inputs; call with X=None"
            )
    if not isinstance(X, Tensor) or X.dim() < 2:
        raise ValueError("X must be a tensor of shape (batch_shape x) n x d")
    n = X.shape[-2]
    with torch.no_grad():
        K = covar_module(X).to_dense()
        noise = noise.detach().to(dtype=K.dtype, device=K.device)
    if noise.dim() == 0 or noise.shape[-1] == 1:
        s2 = noise.squeeze(-1) if noise.dim() > 0 else noise
        return information_gain(K, s2)
    if use_train and noise.shape[-1] == n:
        _check_positive("noise_variance", noise)
        inv_sd = noise.rsqrt()
        K_white = inv_sd[..., :, None] * K * inv_sd[..., None, :]
        return information_gain(K_white, 1.0)
    raise ValueError(
        f"X: likelihood noise of shape {tuple(noise.shape)} is per training point; "
        "it is only supported for the training inputs (X=None) of matching size "
        f"(n={n})"
    )


# --------------------------------------------------------------------------- #
# MIG rates, suspected regret bound, norm bound (LB-GP-UCB)
# --------------------------------------------------------------------------- #


def paper_rbf_lengthscale(gpytorch_lengthscale: Number) -> Tensor:
    r"""Convert a GPyTorch RBF length scale :math:`\ell` to the LB paper's :math:`\theta = \sqrt2\,\ell`.

    GPyTorch: :math:`\exp(-r^2/(2\ell^2))`; LB paper: :math:`\exp(-r^2/\theta^2)`.
    """
    v = _as_tensors(gpytorch_lengthscale=gpytorch_lengthscale)
    _check_positive("gpytorch_lengthscale", v["gpytorch_lengthscale"])
    return math.sqrt(2.0) * v["gpytorch_lengthscale"]


def gpytorch_rbf_lengthscale(paper_lengthscale: Number) -> Tensor:
    r"""Inverse of :func:`paper_rbf_lengthscale`: :math:`\ell = \theta/\sqrt2`."""
    v = _as_tensors(paper_lengthscale=paper_lengthscale)
    _check_positive("paper_lengthscale", v["paper_lengthscale"])
    return v["paper_lengthscale"] / math.sqrt(2.0)


def gamma_rbf(T: Number, lengthscale: Number, dim: int) -> Tensor:
    r"""RBF MIG rate (LB Prop. 2.2): :math:`\theta^{-d}\log(T)^{d+1}`.

    Args:
        T: Horizon / number of observations, ``>= 1``.
        lengthscale: The **paper's** :math:`\theta` (kernel
            :math:`\exp(-r^2/\theta^2)`), positive. Convert a GPyTorch length
            scale with :func:`paper_rbf_lengthscale`.
        dim: Input dimension :math:`d \ge 1`.
    """
    d = _check_dim(dim)
    v = _as_tensors(T=T, lengthscale=lengthscale)
    _check_t("T", v["T"])
    _check_positive("lengthscale", v["lengthscale"])
    return v["lengthscale"].pow(-d) * torch.log(v["T"]).pow(d + 1)


def gamma_matern(
    T: Number, lengthscale: Number, dim: int, nu: float, form: str = "main"
) -> Tensor:
    r"""Matérn-:math:`\nu` MIG rate (LB Prop. 2.2 / App. A).

    * ``form="main"``: :math:`\theta^{-d} T^{d(d+1)/(2\nu+d(d+1))}\log(T)^{2\nu/(2\nu+d)}`
      (Prop. 2.2 as printed);
    * ``form="proof"``: :math:`\theta^{-d} T^{d/(2\nu+d)}\log(T)^{2\nu/(2\nu+d)}`
      (derived in App. A via Vakili et al. 2021, Cor. 1).

    Args:
        T: Horizon / number of observations, ``>= 1``.
        lengthscale: Length scale :math:`\theta`, positive (same convention as
            GPyTorch's Matérn kernel).
        dim: Input dimension :math:`d \ge 1`.
        nu: Smoothness :math:`\nu > 0`.
        form: ``"main"`` or ``"proof"``.
    """
    d = _check_dim(dim)
    if isinstance(nu, bool) or not isinstance(nu, (int, float)) or not nu > 0:
        raise ValueError(f"nu must be a positive number; got {nu!r}")
    if form not in ("main", "proof"):
        raise ValueError(f"form must be 'main' or 'proof'; got {form!r}")
    v = _as_tensors(T=T, lengthscale=lengthscale)
    _check_t("T", v["T"])
    _check_positive("lengthscale", v["lengthscale"])
    nu = float(nu)
    if form == "main":
        t_exp = d * (d + 1) / (2.0 * nu + d * (d + 1))
    else:
        t_exp = d / (2.0 * nu + d)
    log_exp = 2.0 * nu / (2.0 * nu + d)
    T_ = v["T"]
    return v["lengthscale"].pow(-d) * T_.pow(t_exp) * torch.log(T_).pow(log_exp)


def gamma(T: Number, lengthscale: Number, dim: int, kernel: str, form: str = "main") -> Tensor:
    r"""MIG rate for ``kernel`` in ``{"rbf", "matern12", "matern32", "matern52"}``.

    Dispatches to :func:`gamma_rbf` (``form`` is ignored, but still validated)
    or :func:`gamma_matern` with :math:`\nu = 0.5, 1.5, 2.5`. For ``"rbf"`` the
    length scale is the paper's :math:`\theta` (see :func:`paper_rbf_lengthscale`).
    """
    if not isinstance(kernel, str) or kernel.lower() not in KERNELS:
        raise ValueError(f"kernel must be one of {sorted(KERNELS)}; got {kernel!r}")
    if form not in ("main", "proof"):
        raise ValueError(f"form must be 'main' or 'proof'; got {form!r}")
    nu = KERNELS[kernel.lower()]
    if nu is None:
        return gamma_rbf(T, lengthscale, dim)
    return gamma_matern(T, lengthscale, dim, nu, form=form)


def suspected_regret_bound(
    T: Number, lengthscale: Number, dim: int, kernel: str, B: Number, form: str = "main"
) -> Tensor:
    r"""Suspected regret bound (LB Thm 2.3): :math:`\sqrt T(B\sqrt{\gamma_T} + \gamma_T)`.

    Args:
        T: Number of plays (LB-GP-UCB evaluates it at a candidate's own
            :math:`|S^\theta| + 1`), ``>= 1``; ``T = 1`` gives 0.
        lengthscale: Length scale(s) :math:`\theta` (paper convention for RBF).
        dim: Input dimension.
        kernel: ``"rbf"``, ``"matern12"``, ``"matern32"`` or ``"matern52"``.
        B: Norm bound, ``>= 0``; for LB-GP-UCB use :func:`norm_bound`.
        form: Matérn rate form, see :func:`gamma_matern`.
    """
    v = _as_tensors(T=T, lengthscale=lengthscale, B=B)
    _check_nonnegative("B", v["B"])
    g = gamma(v["T"], v["lengthscale"], dim, kernel, form=form)
    return torch.sqrt(v["T"]) * (v["B"] * torch.sqrt(g) + g)


def norm_bound(lengthscale: Number, theta0: Number, N: Number, dim: int) -> Tensor:
    r"""Length-scale-dependent norm bound (LB Lemma 2.1): :math:`(\theta_0/\theta)^{d/2} N`.

    Args:
        lengthscale: Length scale(s) :math:`\theta`, positive.
        theta0: Reference (initial, longest) length scale :math:`\theta_0`, positive.
        N: Norm bound under :math:`\theta_0`, ``>= 0``.
        dim: Input dimension :math:`d \ge 1`.
    """
    d = _check_dim(dim)
    v = _as_tensors(lengthscale=lengthscale, theta0=theta0, N=N)
    _check_positive("lengthscale", v["lengthscale"])
    _check_positive("theta0", v["theta0"])
    _check_nonnegative("N", v["N"])
    return (v["theta0"] / v["lengthscale"]).pow(d / 2.0) * v["N"]
