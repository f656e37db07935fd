r"""Single-output GPs fitted by maximum marginal likelihood, as the baselines use them.

- :func:`fit_single_task_gp`: the length-scale paper's MLE baseline (Ziomek et al. 2024, Sec. 5,
  as in the authors' code): ``ScaleKernel(kernel)`` with output scale 1 and noise variance fixed
  (each trained only if asked), zero mean, only the length scale(s) trained by
  ``fit_gpytorch_mll``, inputs scaled to the unit cube by the domain bounds, outputs standardised.
  Its length scale is also LB-GP-UCB's :math:`\theta_0` on the initial design.
- :func:`fit_default_single_task_gp`: BoTorch's default ``SingleTaskGP`` (its priors, fitted ARD
  length scales, output scale and noise, ``Normalize`` and ``Standardize``), what practitioners
  run with qLogNEI.
- :func:`fit_fully_bayesian_single_task_gp`: BoTorch's ``FullyBayesianSingleTaskGP`` (Matern-5/2,
  the dimension-scaled priors of Hvarfner et al. 2024, ``Normalize`` and ``Standardize``), its
  hyperparameters sampled by NUTS (:data:`NUTS_BUDGET`; BoTorch 0.18 runs NUTS in NumPyro on
  JAX, an optional extra: ``pip install "botorch-unknown-hypers[fullybayes]"``).
"""

from __future__ import annotations

import math

import torch
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.model import Model
from botorch.models.transforms import Normalize, Standardize
from botorch.models.utils.gpytorch_modules import (
    MIN_INFERRED_NOISE_LEVEL,
    SQRT2,
    SQRT3,
    get_gaussian_likelihood_with_lognormal_prior,
)
from gpytorch.constraints import GreaterThan
from gpytorch.kernels import MaternKernel, RBFKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.means import ZeroMean
from gpytorch.priors import GammaPrior, LogNormalPrior, Prior
from gpytorch.mlls import ExactMarginalLogLikelihood
from torch import Tensor

from botorch_unknown_hypers.checks import check_choice, check_positive
from botorch_unknown_hypers.kernels import KERNELS, check_kernel
from botorch_unknown_hypers.models.fixed_gp import scaled_kernel_and_likelihood
from botorch_unknown_hypers.models.inverse_square_prior import InverseSquaredLengthscalePrior

NUTS_BUDGET = {"warmup_steps": 256, "num_samples": 128, "thinning": 8}
r"""The NUTS budget of :func:`fit_fully_bayesian_single_task_gp`: half BoTorch's warm-up (512) and
samples (256) at half its thinning (16), so the same 16 posterior samples are kept at about half
the sampling cost (``docs/bbob.md`` gives the measured cost)."""
FULLY_BAYESIAN_INSTALL_HINT = 'pip install "botorch-unknown-hypers[fullybayes]"'


def fit_single_task_gp(
    train_X: Tensor,
    train_Y: Tensor,
    bounds: Tensor,
    kernel: str = "matern52",
    ard: bool = False,
    noise: float = 1e-4,
    fit_outputscale: bool = False,
    fit_noise: bool = False,
) -> SingleTaskGP:
    r"""A fresh ``SingleTaskGP`` fitted by maximum marginal likelihood with ``fit_gpytorch_mll``.

    As the length-scale paper's code: ``ScaleKernel(kernel)`` with output scale 1
    and noise variance ``noise`` (each trained only if asked), zero mean, inputs
    scaled to the unit cube by ``bounds`` (``Normalize``), outputs standardised
    (``Standardize``), GPyTorch's default initial length scale softplus(0) = 0.693.

    Args:
        train_X: ``n x d`` inputs; train_Y: ``n x 1`` targets; bounds: ``2 x d`` box.

    Returns:
        The fitted model in eval mode.
    """
    d = train_X.shape[-1]
    covar, likelihood = scaled_kernel_and_likelihood(kernel, d if ard else None)
    covar.outputscale = 1.0
    likelihood.noise = noise
    covar.raw_outputscale.requires_grad_(fit_outputscale)
    likelihood.noise_covar.raw_noise.requires_grad_(fit_noise)
    model = SingleTaskGP(
        train_X,
        train_Y,
        likelihood=likelihood,
        covar_module=covar,
        mean_module=ZeroMean(),
        input_transform=Normalize(d=d, bounds=bounds),
        outcome_transform=Standardize(m=1),
    ).to(train_X)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    return model.eval()


NOISE_PRIORS = ("lognormal", "optuna")
r"""The noise-variance priors of :func:`default_likelihood`: BoTorch's
:math:`\log\sigma^2 \sim \mathcal N(-4, 1)` (its default, median 0.018 in standardised units) and
Optuna ``GPSampler``'s :math:`\sigma^2 \sim \mathrm{Gamma}(1.1, 30)` (density
:math:`\propto \sigma^{0.2} e^{-30\sigma^2}`, mode :math:`1/300`, nearly flat towards 0, so the
fit may interpolate where the data allow it)."""


def default_likelihood(noise_floor: float, noise_prior: str = "lognormal") -> GaussianLikelihood:
    r"""BoTorch's default likelihood (``get_gaussian_likelihood_with_lognormal_prior``: noise prior
    :math:`\log\sigma^2 \sim \mathcal N(-4, 1)`, started at the prior's mode, or at the floor where
    that is higher) with the noise variance bounded below by ``noise_floor`` (standardised units)
    instead of BoTorch's :math:`10^{-4}`. ``noise_prior="optuna"`` puts Optuna ``GPSampler``'s
    :math:`\sigma^2 \sim \mathrm{Gamma}(1.1, 30)` on the noise variance instead
    (:data:`NOISE_PRIORS`), same bound and start rule."""
    check_positive("noise_floor", noise_floor)
    check_choice("noise_prior", noise_prior, NOISE_PRIORS)
    if noise_prior == "lognormal":
        likelihood = get_gaussian_likelihood_with_lognormal_prior()
        prior = likelihood.noise_covar.noise_prior
    else:
        # float64 parameters, so 1.1 stays 1.1 until the likelihood is cast to the data's dtype
        prior = GammaPrior(torch.tensor(1.1, dtype=torch.float64), torch.tensor(30.0, dtype=torch.float64))
        likelihood = GaussianLikelihood(noise_prior=prior)
    start = max(float(prior.mode), noise_floor)
    likelihood.noise_covar.register_constraint("raw_noise", GreaterThan(noise_floor, transform=None, initial_value=start))
    likelihood.noise = start
    return likelihood


LENGTHSCALE_PRIORS = ("dim-scaled", "gamma", "optuna")
r"""The length-scale priors of :func:`fit_default_single_task_gp`: BoTorch's dimension-scaled
LogNormal (its default), the Gamma(3, 6) of its earlier default, and Optuna's ``GPSampler``
prior (:class:`~botorch_unknown_hypers.models.inverse_square_prior.InverseSquaredLengthscalePrior`)."""


def _lengthscale_prior(name: str, d: int) -> Prior:
    if name == "dim-scaled":
        return LogNormalPrior(loc=SQRT2 + 0.5 * math.log(d), scale=SQRT3)
    return GammaPrior(3.0, 6.0) if name == "gamma" else InverseSquaredLengthscalePrior()


def fit_default_single_task_gp(
    train_X: Tensor,
    train_Y: Tensor,
    bounds: Tensor,
    ard: bool = True,
    noise_floor: float | None = None,
    lengthscale_prior: str = "dim-scaled",
    noise_prior: str = "lognormal",
    kernel: str = "rbf",
) -> SingleTaskGP:
    r"""BoTorch's default ``SingleTaskGP`` (``Normalize`` by ``bounds``, ``Standardize``),
    fitted by ``fit_gpytorch_mll``; in eval mode.

    ``ard=False`` keeps everything but shares one length scale across inputs, under the same
    dimension-scaled prior :math:`\log\ell \sim \mathcal N(\sqrt2 + \tfrac12\log d, 3)`
    (Hvarfner et al. 2024) and the same lower bound 0.025. ``lengthscale_prior="gamma"`` puts
    :math:`\ell \sim \mathrm{Gamma}(3, 6)` on every length scale instead (BoTorch's earlier
    default, as in its ``get_matern_kernel_with_gamma_prior``; mode 1/3 on the unit cube, about
    :math:`6\ell` nats charged for a long one), same RBF kernel and bound;
    ``lengthscale_prior="optuna"`` puts Optuna ``GPSampler``'s
    :math:`p(\ell) \propto e^{-0.1(\ell^2 + \ell^{-2})}` on each (mode 1, :math:`0.1\ell^2` nats
    for a long one), same kernel and bound, started at the mode. ``noise_floor``
    (standardised units) replaces BoTorch's lower bound :math:`10^{-4}` of the noise variance,
    prior unchanged (:func:`default_likelihood`); ``None`` keeps BoTorch's likelihood.
    ``noise_prior="optuna"`` puts Optuna ``GPSampler``'s Gamma(1.1, 30) on the noise variance
    (:data:`NOISE_PRIORS`), bounded below by ``noise_floor`` (BoTorch's :math:`10^{-4}` if ``None``).
    ``kernel`` (a name of :data:`~botorch_unknown_hypers.kernels.KERNELS`) replaces BoTorch's RBF
    by GPyTorch's Matérn kernel of that smoothness (``"matern52"``: Optuna ``GPSampler``'s and
    BoTorch's fully Bayesian model's), same length-scale prior, bound and start.
    """
    check_choice("lengthscale_prior", lengthscale_prior, LENGTHSCALE_PRIORS)
    d = train_X.shape[-1]
    check_choice("noise_prior", noise_prior, NOISE_PRIORS)
    nu = KERNELS[check_kernel(kernel)]
    likelihood = None
    if noise_floor is not None or noise_prior != "lognormal":
        floor = MIN_INFERRED_NOISE_LEVEL if noise_floor is None else noise_floor
        likelihood = default_likelihood(floor, noise_prior).to(train_X)
    covar = None
    if not ard or lengthscale_prior != "dim-scaled" or nu is not None:
        prior = _lengthscale_prior(lengthscale_prior, d)
        options = {
            "ard_num_dims": d if ard else None,
            "lengthscale_prior": prior,
            "lengthscale_constraint": GreaterThan(2.5e-2, transform=None, initial_value=prior.mode),
        }
        covar = (RBFKernel(**options) if nu is None else MaternKernel(nu=nu, **options)).to(train_X)
    model = SingleTaskGP(
        train_X,
        train_Y,
        likelihood=likelihood,
        covar_module=covar,
        input_transform=Normalize(d=d, bounds=bounds),
        outcome_transform=Standardize(m=1),
    )
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    return model.eval()


def fit_fully_bayesian_single_task_gp(
    train_X: Tensor, train_Y: Tensor, bounds: Tensor, seed: int = 0, **budget: int
) -> Model:
    r"""BoTorch's ``FullyBayesianSingleTaskGP`` (``Normalize`` by ``bounds``, ``Standardize``) with
    its hyperparameters sampled by ``fit_fully_bayesian_model_nuts`` (JAX key ``seed``), in eval
    mode: a batch of :math:`S` GPs, one per kept sample, whose posterior is their mixture.

    ``budget`` overrides :data:`NUTS_BUDGET` (``warmup_steps``, ``num_samples``, ``thinning``).

    Raises:
        ImportError: naming the extra to install, when NumPyro or JAX is missing.
        ValueError: for an unknown budget key or a non-positive budget.
    """
    unknown = sorted(set(budget) - set(NUTS_BUDGET))
    if unknown:
        raise ValueError(f"budget: unknown NUTS setting(s) {unknown}; valid: {sorted(NUTS_BUDGET)}.")
    settings = {**NUTS_BUDGET, **budget}
    bad = {k: v for k, v in settings.items() if isinstance(v, bool) or not isinstance(v, int) or v < 1}
    if bad:
        raise ValueError(f"budget: NUTS settings must be positive integers, got {bad}.")
    try:
        import jax  # noqa: F401
        import numpyro  # noqa: F401
    except ImportError as e:
        raise ImportError(f"the fully Bayesian GP needs NumPyro and JAX, an optional extra: {FULLY_BAYESIAN_INSTALL_HINT} ({e}).") from None
    from botorch.fit import fit_fully_bayesian_model_nuts
    from botorch.models.fully_bayesian import FullyBayesianSingleTaskGP

    d = train_X.shape[-1]
    model = FullyBayesianSingleTaskGP(
        train_X, train_Y, input_transform=Normalize(d=d, bounds=bounds), outcome_transform=Standardize(m=1)
    )
    fit_fully_bayesian_model_nuts(model, disable_progbar=True, seed=seed, **settings)
    return model.eval()
