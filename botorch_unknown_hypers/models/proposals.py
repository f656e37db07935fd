r"""Candidate sets proposed from the data (the hyperparameter-elimination paper's future work).

Each function takes observations :math:`(X, y)` on a box and returns a candidate family for
balancing or elimination; inputs are read in unit-cube units (``Normalize`` by ``bounds``) and
outputs standardised, so the proposals do not depend on the problem's scale.

- :func:`propose_ard_lengthscales`: the MAP ARD length scales :math:`\hat\ell \in \mathbb{R}^d`
  of BoTorch's default ``SingleTaskGP`` (RBF kernel, dimension-scaled LogNormal prior), then the
  ladder :math:`\{s\,\hat\ell : s \in S\}` of global shrink factors, plus the isotropic ladder
  :math:`\{\ell_i \mathbf{1}\}`; the MAP vector itself is the first row.
- :func:`propose_periods`: the strongest peaks of the Lomb-Scargle periodogram of the
  standardised values along each input (irregular samples need no grid),

  .. math::

      P(\omega) = \frac{1}{2}\Big[\frac{(\sum_i y_i \cos\omega(x_i - \tau))^2}{\sum_i \cos^2\omega(x_i - \tau)}
      + \frac{(\sum_i y_i \sin\omega(x_i - \tau))^2}{\sum_i \sin^2\omega(x_i - \tau)}\Big],

  on frequencies between one cycle per input range and half the mean sampling rate; the periods
  :math:`2\pi/\omega` of the top local maxima of the best input become periodic candidates.
- :func:`propose_additive_decompositions`: partitions of the inputs from an interaction screen
  of the fitted model (mean absolute mixed second derivatives of its posterior mean),
  thresholded at several levels.
- :func:`propose_prior_means`: constant, linear and quadratic prior means fitted by least
  squares to the standardised values, as mean-function candidates over one kernel.

References:
    J. Ziomek, M. Adachi, M. A. Osborne. Beyond Lengthscales: No-regret Bayesian Optimisation
    With Unknown Hyperparameters Of Any Type (Sec. 8, future work: proposing candidates).

    N. R. Lomb. Least-squares frequency analysis of unequally spaced data. 1976.
    J. D. Scargle. Studies in astronomical time series analysis II. 1982.

    C. Hvarfner, E. O. Hellsten, L. Nardi. Vanilla Bayesian optimization performs great in
    high dimensions. ICML 2024.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from botorch.models import SingleTaskGP
from botorch.models.model import Model
from botorch.models.transforms import Normalize
from botorch.utils.transforms import standardize
from scipy.signal import lombscargle
from torch import Tensor

from botorch_unknown_hypers.candidate_families import AdditiveCandidates, MeanFunctionCandidates, PeriodicCandidates
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.checks import check_bool, check_int
from botorch_unknown_hypers.domains import check_training_data
from botorch_unknown_hypers.models.fitted import fit_default_single_task_gp

SHRINK_FACTORS = (1.0, 0.5, 0.25, 0.125)
ISOTROPIC_LADDER = (1.0, 0.5, 0.25, 0.125, 0.0625)


def _unit_inputs(train_X: Tensor, bounds: Tensor) -> Tensor:
    return Normalize(d=train_X.shape[-1], bounds=bounds.to(train_X))(train_X)


def _check_factors(name: str, values: Sequence[float], allow_empty: bool = False) -> list[float]:
    values = [float(v) for v in values]
    if (not values and not allow_empty) or not all(np.isfinite(v) and v > 0 for v in values):
        kind = "sequence" if allow_empty else "non-empty sequence"
        raise ValueError(f"{name} must be a {kind} of finite numbers > 0, got {values!r}.")
    return values


def propose_ard_lengthscales(
    train_X: Tensor,
    train_Y: Tensor,
    bounds: Tensor,
    shrink: Sequence[float] = SHRINK_FACTORS,
    isotropic: Sequence[float] = ISOTROPIC_LADDER,
    ard: bool = True,
    noise_floor: float | None = None,
    lengthscale_prior: str = "dim-scaled",
    fitted_mean: bool = False,
    noise_prior: str = "lognormal",
    kernel: str = "rbf",
) -> tuple[KernelCandidates, Tensor, SingleTaskGP]:
    r"""RBF (or ``kernel``) candidates: the MAP ARD vector scaled by ``shrink``, then the ``isotropic`` ladder.

    Args:
        train_X: ``n x d`` inputs in ``bounds``; train_Y: ``n`` or ``n x 1`` values.
        bounds: ``2 x d`` box.
        shrink: Global factors :math:`S` applied to the MAP vector (1 keeps it).
        isotropic: Isotropic length scales (unit-cube units); either list may be empty, not both.
        ard: ``False`` fits one shared MAP length scale (the ablation of ARD) instead of ``d``.
        noise_floor: Lower bound of the MAP noise variance (standardised units) in place of
            BoTorch's :math:`10^{-4}`; ``None`` keeps BoTorch's model as it is.
        lengthscale_prior: The MAP fit's length-scale prior, one of
            :data:`~botorch_unknown_hypers.models.fitted.LENGTHSCALE_PRIORS` (``"dim-scaled"``,
            BoTorch's, by default; :func:`~botorch_unknown_hypers.models.fitted.fit_default_single_task_gp`).
        fitted_mean: Give every candidate the fit's constant mean :math:`\hat c` (standardised
            units, BoTorch's ``ConstantMean``) instead of a zero mean.
        noise_prior: The MAP fit's noise-variance prior, one of
            :data:`~botorch_unknown_hypers.models.fitted.NOISE_PRIORS` (``"lognormal"``,
            BoTorch's, by default).
        kernel: The fit's and the candidates' kernel, a name of
            :data:`~botorch_unknown_hypers.kernels.KERNELS` (``"rbf"``, BoTorch's, by default).

    Returns:
        ``(candidates, map_lengthscale, model)``: ``len(shrink) + len(isotropic)`` candidates
        with the MAP noise variance (standardised units), output scale 1 and a zero mean (the
        fit's constant mean with ``fitted_mean``), the ``d`` MAP
        length scales (``d`` copies of the shared one when ``ard=False``), and the fitted
        ``SingleTaskGP`` (eval mode) for rules that use the fit further.
    """
    train_Y = check_training_data(train_X, train_Y)
    shrink = _check_factors("shrink", shrink, allow_empty=True)
    isotropic = _check_factors("isotropic", isotropic, allow_empty=True)
    check_bool("fitted_mean", fitted_mean)
    if not shrink and not isotropic:
        raise ValueError("shrink and isotropic must not both be empty: no candidate would be proposed.")
    model = fit_default_single_task_gp(
        train_X,
        train_Y,
        bounds.to(train_X),
        ard=ard,
        noise_floor=noise_floor,
        lengthscale_prior=lengthscale_prior,
        noise_prior=noise_prior,
        kernel=kernel,
    )
    ell = model.covar_module.lengthscale.detach().reshape(-1).expand(train_X.shape[-1])
    noise = float(model.likelihood.noise.detach().reshape(-1)[0])
    rows = [s * ell for s in shrink] + [torch.full_like(ell, v) for v in isotropic]
    mean = model.mean_module.constant.detach().reshape(-1).expand(len(rows)) if fitted_mean else None
    cands = KernelCandidates(lengthscale=torch.stack(rows), outputscale=1.0, noise=noise, kernel=kernel, mean_constant=mean)
    return cands, ell, model


def propose_periods(
    train_X: Tensor,
    train_Y: Tensor,
    bounds: Tensor,
    num: int = 3,
    num_frequencies: int = 2000,
) -> PeriodicCandidates:
    r"""Periodic candidates at the ``num`` strongest periodogram peaks (unit-cube periods).

    The periodogram of the standardised values is computed along every input; the input whose
    highest peak is largest gives the periods (``d = 1`` is the common case).

    Args:
        train_X: ``n x d`` inputs (``n >= 4``); train_Y: ``n`` values; bounds: ``2 x d`` box.
        num: How many periods to propose.
        num_frequencies: Frequencies on the log-spaced grid.
    """
    train_Y = check_training_data(train_X, train_Y)
    check_int("num", num, 1)
    check_int("num_frequencies", num_frequencies, 16)
    n = train_X.shape[0]
    if n < 4:
        raise ValueError(f"train_X must hold at least 4 observations to propose periods, got {n}.")
    U = _unit_inputs(train_X, bounds).detach().cpu().numpy().astype(np.float64)
    y = standardize(train_Y.reshape(-1)).detach().cpu().numpy().astype(np.float64)
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for j in range(U.shape[1]):
        x = U[:, j]
        span = float(x.max() - x.min())
        if span <= 0:
            continue
        omega = 2 * np.pi * np.geomspace(1.0 / span, 0.5 * n / span, num_frequencies)
        power = lombscargle(x, y - y.mean(), omega)
        peaks = np.flatnonzero((power[1:-1] > power[:-2]) & (power[1:-1] >= power[2:])) + 1
        if peaks.size == 0:
            peaks = np.array([int(power.argmax())])
        top = peaks[np.argsort(power[peaks])[::-1][:num]]
        if best is None or power[top[0]] > best[0]:
            best = (float(power[top[0]]), omega[top], power[top])
    if best is None:
        raise ValueError("train_X has no input that varies: no period can be proposed.")
    periods = torch.as_tensor(2 * np.pi / best[1], dtype=train_X.dtype, device=train_X.device)
    return PeriodicCandidates(period=periods)


def interaction_strengths(model: Model, dim: int, num_points: int = 256, seed: int = 0) -> Tensor:
    r"""``d x d`` normalised interaction strengths of a model's posterior mean on the unit cube,

    .. math::

        I_{ij} = \frac{\mathbb{E}_x |\partial_i \partial_j \mu(x)|}
        {\sqrt{\mathbb{E}_x |\partial_i^2 \mu(x)|\, \mathbb{E}_x |\partial_j^2 \mu(x)|}},

    averaged over ``num_points`` scrambled Sobol points; :math:`I_{ij} = 0` for an additive
    :math:`\mu` in :math:`i` and :math:`j`. The diagonal is 1 (0 for an input the mean ignores).
    """
    Z = torch.quasirandom.SobolEngine(dim, scramble=True, seed=seed).draw(num_points, dtype=torch.float64)
    Z = Z.to(model.train_inputs[0])

    # The points' means are independent, so the gradient of their sum holds every point's
    # gradient, and one more backward pass per input i gives row i of every point's Hessian.
    Z.requires_grad_(True)
    grad = torch.autograd.grad(model.posterior(Z.unsqueeze(-2)).mean.sum(), Z, create_graph=True)[0]  # n x d
    rows = [torch.autograd.grad(grad[:, i].sum(), Z, retain_graph=True)[0] for i in range(dim)]  # d of n x d
    strength = torch.stack(rows, dim=-2).abs().mean(dim=0)  # d x d
    scale = strength.diagonal().sqrt()
    denom = scale.unsqueeze(-1) * scale.unsqueeze(-2)
    return torch.where(denom > 0, strength / denom, torch.zeros_like(strength)).detach()


def propose_additive_decompositions(
    train_X: Tensor,
    train_Y: Tensor,
    bounds: Tensor,
    thresholds: Sequence[float] = (0.05, 0.1, 0.2, 0.4),
    num_points: int = 256,
) -> AdditiveCandidates:
    r"""Additive decompositions from an interaction screen of the MAP-fitted default model.

    For each threshold :math:`\tau`, inputs :math:`i, j` share a group when they are connected
    in the graph :math:`\{(i, j) : I_{ij} > \tau\}` (:func:`interaction_strengths`); the
    distinct partitions over the thresholds, plus the fully additive and the joint ones, are the
    candidates (RBF base kernel with the mean MAP length scale, standardised units).
    """
    train_Y = check_training_data(train_X, train_Y)
    thresholds = _check_factors("thresholds", thresholds)
    dim = train_X.shape[-1]
    model = fit_default_single_task_gp(train_X, train_Y, bounds.to(train_X))
    strengths = interaction_strengths(model, dim, num_points)
    partitions: list[list[list[int]]] = [[[i] for i in range(dim)]]
    for tau in sorted(thresholds, reverse=True):
        parent = list(range(dim))

        def root(i: int) -> int:
            while parent[i] != i:
                i = parent[i]
            return i

        for i in range(dim):
            for j in range(i + 1, dim):
                if strengths[i, j] > tau:
                    parent[root(j)] = root(i)
        groups: dict[int, list[int]] = {}
        for i in range(dim):
            groups.setdefault(root(i), []).append(i)
        partition = sorted(groups.values())
        if partition not in partitions:
            partitions.append(partition)
    if [list(range(dim))] not in partitions:
        partitions.append([list(range(dim))])
    ell = float(model.covar_module.lengthscale.detach().mean())
    noise = float(model.likelihood.noise.detach().reshape(-1)[0])
    return AdditiveCandidates(partitions=partitions, lengthscale=ell, noise=noise, _like=train_X.new_zeros(()))


def propose_prior_means(
    train_X: Tensor, train_Y: Tensor, bounds: Tensor, base: KernelCandidates | None = None
) -> MeanFunctionCandidates:
    r"""Constant, linear and quadratic prior means, least-squares fits to the standardised values.

    The quadratic has all second-order terms when ``n`` exceeds their number
    (:math:`1 + d + d(d+1)/2`), only the squares otherwise. The means live in the model's input
    space (the unit cube) and standardised units, so the model must ``Normalize`` by ``bounds``
    and ``Standardize`` its outputs.

    Args:
        train_X: ``n x d`` inputs; train_Y: ``n`` values; bounds: ``2 x d`` box.
        base: Three kernels for the three means (default: RBF, length scale 0.2, noise 1e-4).
    """
    train_Y = check_training_data(train_X, train_Y)
    U = _unit_inputs(train_X, bounds)
    y = standardize(train_Y.reshape(-1))
    n, d = U.shape
    full = n > 1 + d + d * (d + 1) // 2

    def features(Z: Tensor, degree: int) -> Tensor:
        cols = [torch.ones_like(Z[..., :1])]
        if degree >= 1:
            cols.append(Z)
        if degree >= 2:
            if full:
                i, j = torch.triu_indices(d, d)
                cols.append(Z[..., i] * Z[..., j])
            else:
                cols.append(Z.square())
        return torch.cat(cols, dim=-1)

    coefs = [torch.linalg.lstsq(features(U, k), y.unsqueeze(-1)).solution.squeeze(-1) for k in range(3)]

    def mean_fn(Z: Tensor) -> Tensor:  # ... x n x d -> ... x 3 x n
        return torch.stack([features(Z, k) @ c.to(Z) for k, c in enumerate(coefs)], dim=-2)

    if base is None:
        base = KernelCandidates.from_lengthscales(U.new_full((3,), 0.2), kernel="rbf", noise=1e-4)
    if len(base) != 3:
        raise ValueError(f"base must hold 3 candidates (one per mean), got {len(base)}.")
    return MeanFunctionCandidates(base, mean_fn, names=["constant", "linear", "quadratic"])


__all__ = [
    "ISOTROPIC_LADDER",
    "SHRINK_FACTORS",
    "interaction_strengths",
    "propose_additive_decompositions",
    "propose_ard_lengthscales",
    "propose_periods",
    "propose_prior_means",
]
