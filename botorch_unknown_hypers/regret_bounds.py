r"""Information gain, maximum-information-gain rates and the suspected regret bounds built on them.

- :func:`information_gain`, :func:`information_gain_of_model`: the information gain of the points
  actually observed (Srinivas et al. 2010, Lemma 5.3),

  .. math:: I(y_A; f_A) = \tfrac12 \log\det(I + \sigma^{-2} K_A),

  a lower bound on the MIG :math:`\gamma_T` that Chowdhury & Gopalan's self-normalised bound allows in
  :math:`\beta_t`; computed from a batched Cholesky of :math:`I + K/\sigma^2` (all eigenvalues
  :math:`\ge 1`), with an ``eigvalsh`` fallback for matrices indefinite beyond round-off;
- :func:`gamma_rbf`, :func:`gamma_matern`, :func:`gamma`: the MIG rates of the LB paper's Prop. 2.2
  (:math:`\theta^{-d}\log(T)^{d+1}` for RBF; for Matérn-:math:`\nu` the printed exponent or the one
  its App. A derives, ``form="main"`` / ``"proof"``); the RBF rate takes the paper's
  :math:`\theta = \sqrt2\,\ell` (:func:`paper_rbf_lengthscale`);
- :func:`suspected_regret_bound`: LB Thm 2.3, :math:`R^{\theta,B}(T) = \sqrt T\,(B\sqrt{\gamma_T} + \gamma_T)`,
  0 at :math:`T = 1`, so a candidate never played has the smallest bound;
- :func:`norm_bound`: LB Lemma 2.1 (Bull 2011), :math:`B(\theta, N) = (\theta_0/\theta)^{d/2} N`.

Conventions as in :mod:`~botorch_unknown_hypers.confidence` (numbers or tensors broadcast; ``ValueError``
naming the argument). Derivations: ``docs/length-scale-balancing.md``.

References:
    N. Srinivas, A. Krause, S. Kakade, M. Seeger. Gaussian Process Optimization in the Bandit
    Setting. ICML 2010 (Lemma 5.3).
    S. Vakili, K. Khezeli, V. Picheny. On Information Gain and Regret Bounds in Gaussian Process
    Bandits. AISTATS 2021.
    J. Ziomek, M. Adachi, M. A. Osborne. Bayesian Optimisation with Unknown Hyperparameters:
    Regret Bounds Logarithmically Closer to Optimal. NeurIPS 2024.
    A. D. Bull. Convergence Rates of Efficient Global Optimization Algorithms. JMLR 2011.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import torch
from torch import Tensor

from botorch_unknown_hypers.checks import (
    AT_LEAST_ONE,
    NONNEGATIVE,
    POSITIVE,
    Interval,
    check_all_entries,
    check_choice,
    check_entries,
    check_int,
    check_positive,
)
from botorch_unknown_hypers.confidence import Number, as_tensors
from botorch_unknown_hypers.kernels import KERNELS

GAMMA_FORMS = ("main", "proof")
r"""The forms of the Matérn rate: the paper's main-text exponent or its proof's (:func:`gamma_matern`)."""

__all__ = [
    "information_gain",
    "information_gain_of_model",
    "paper_rbf_lengthscale",
    "gpytorch_rbf_lengthscale",
    "gamma_rbf",
    "gamma_matern",
    "gamma",
    "GAMMA_FORMS",
    "suspected_regret_bound",
    "norm_bound",
]


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
    v = as_tensors(False, covariance=covariance, noise_variance=noise_variance)
    K, s2 = v["covariance"], v["noise_variance"]
    check_entries("noise_variance", s2, POSITIVE)
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


def information_gain_of_model(model: Any, X: Optional[Tensor] = None, noise_variance: Optional[Tensor] = None) -> Tensor:
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
        noise_variance: Optional noise variance(s) :math:`\sigma^2` to use instead of the
            likelihood's (broadcast to ``batch_shape``), e.g. the rule's own noise scale.

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
        if noise_variance is not None:
            return information_gain(K, noise_variance.detach().to(dtype=K.dtype, device=K.device))
        noise = noise.detach().to(dtype=K.dtype, device=K.device)
    if noise.dim() == 0 or noise.shape[-1] == 1:
        s2 = noise.squeeze(-1) if noise.dim() > 0 else noise
        return information_gain(K, s2)
    if use_train and noise.shape[-1] == n:
        check_entries("noise_variance", noise, POSITIVE)
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
    v = as_tensors(gpytorch_lengthscale=gpytorch_lengthscale)
    check_entries("gpytorch_lengthscale", v["gpytorch_lengthscale"], POSITIVE)
    return math.sqrt(2.0) * v["gpytorch_lengthscale"]


def gpytorch_rbf_lengthscale(paper_lengthscale: Number) -> Tensor:
    r"""Inverse of :func:`paper_rbf_lengthscale`: :math:`\ell = \theta/\sqrt2`."""
    v = as_tensors(paper_lengthscale=paper_lengthscale)
    check_entries("paper_lengthscale", v["paper_lengthscale"], POSITIVE)
    return v["paper_lengthscale"] / math.sqrt(2.0)


def gamma_rbf(
    T: Number, lengthscale: Number, dim: int, also: tuple[tuple[str, Tensor, Interval], ...] = (), checked: bool = True
) -> Tensor:
    r"""RBF MIG rate (LB Prop. 2.2): :math:`\theta^{-d}\log(T)^{d+1}`.

    Args:
        T: Horizon / number of observations, ``>= 1``.
        lengthscale: The **paper's** :math:`\theta` (kernel
            :math:`\exp(-r^2/\theta^2)`), positive. Convert a GPyTorch length
            scale with :func:`paper_rbf_lengthscale`.
        dim: Input dimension :math:`d \ge 1`.
        also: A caller's own ``(name, value, interval)`` checks, read with these in one copy
            (:func:`~botorch_unknown_hypers.checks.check_all_entries`; they fail first).
        checked: ``False`` skips the entry checks (no host read) for a caller that vouches for
            the arguments and checks the result itself.
    """
    d = check_int("dim", dim, 1)
    v = as_tensors(T=T, lengthscale=lengthscale)
    check_all_entries(
        *also,
        ("T", v["T"], AT_LEAST_ONE),
        ("lengthscale", v["lengthscale"], POSITIVE),
        checked=checked,
    )
    return v["lengthscale"].pow(-d) * torch.log(v["T"]).pow(d + 1)


def gamma_matern(
    T: Number,
    lengthscale: Number,
    dim: int,
    nu: float,
    form: str = "main",
    also: tuple[tuple[str, Tensor, Interval], ...] = (),
    checked: bool = True,
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
        also, checked: As :func:`gamma_rbf`.
    """
    d = check_int("dim", dim, 1)
    nu = check_positive("nu", nu)
    check_choice("form", form, GAMMA_FORMS)
    v = as_tensors(T=T, lengthscale=lengthscale)
    check_all_entries(
        *also,
        ("T", v["T"], AT_LEAST_ONE),
        ("lengthscale", v["lengthscale"], POSITIVE),
        checked=checked,
    )
    if form == "main":
        t_exp = d * (d + 1) / (2.0 * nu + d * (d + 1))
    else:
        t_exp = d / (2.0 * nu + d)
    log_exp = 2.0 * nu / (2.0 * nu + d)
    T_ = v["T"]
    return v["lengthscale"].pow(-d) * T_.pow(t_exp) * torch.log(T_).pow(log_exp)


def gamma(
    T: Number,
    lengthscale: Number,
    dim: int,
    kernel: str,
    form: str = "main",
    also: tuple[tuple[str, Tensor, Interval], ...] = (),
    checked: bool = True,
) -> Tensor:
    r"""MIG rate for ``kernel`` in ``{"rbf", "matern12", "matern32", "matern52"}``.

    Dispatches to :func:`gamma_rbf` (``form`` is ignored, but still validated)
    or :func:`gamma_matern` with :math:`\nu = 0.5, 1.5, 2.5`. For ``"rbf"`` the
    length scale is the paper's :math:`\theta` (see :func:`paper_rbf_lengthscale`).
    ``also``, ``checked``: a caller's checks read with the rate's own, or none read
    (:func:`gamma_rbf`).
    """
    if isinstance(kernel, str):
        kernel = kernel.lower()
    nu = KERNELS[check_choice("kernel", kernel, sorted(KERNELS))]
    check_choice("form", form, GAMMA_FORMS)
    if nu is None:
        return gamma_rbf(T, lengthscale, dim, also=also, checked=checked)
    return gamma_matern(T, lengthscale, dim, nu, form=form, also=also, checked=checked)


def suspected_regret_bound(
    T: Number, lengthscale: Number, dim: int, kernel: str, B: Number, form: str = "main", checked: bool = True
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
        checked: As :func:`gamma_rbf`.
    """
    v = as_tensors(T=T, lengthscale=lengthscale, B=B)
    g = gamma(v["T"], v["lengthscale"], dim, kernel, form=form, also=(("B", v["B"], NONNEGATIVE),), checked=checked)  # one read
    return torch.sqrt(v["T"]) * (v["B"] * torch.sqrt(g) + g)


def norm_bound(lengthscale: Number, theta0: Number, N: Number, dim: int) -> Tensor:
    r"""Length-scale-dependent norm bound (LB Lemma 2.1): :math:`(\theta_0/\theta)^{d/2} N`.

    Args:
        lengthscale: Length scale(s) :math:`\theta`, positive.
        theta0: Reference (initial, longest) length scale :math:`\theta_0`, positive.
        N: Norm bound under :math:`\theta_0`, ``>= 0``.
        dim: Input dimension :math:`d \ge 1`.
    """
    d = check_int("dim", dim, 1)
    v = as_tensors(lengthscale=lengthscale, theta0=theta0, N=N)
    check_all_entries(
        ("lengthscale", v["lengthscale"], POSITIVE),
        ("theta0", v["theta0"], POSITIVE),
        ("N", v["N"], NONNEGATIVE),
    )
    return (v["theta0"] / v["lengthscale"]).pow(d / 2.0) * v["N"]
