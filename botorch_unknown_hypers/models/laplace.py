r"""The Laplace approximation of a fitted GP's hyperposterior, and draws from it.

BoTorch's default ``SingleTaskGP`` is fitted by maximising the log joint density of its
hyperparameters :math:`\psi = (\ell_1, \dots, \ell_d, \sigma^2)` and the data (its marginal log
likelihood plus the log densities of its priors). In log coordinates
:math:`\theta = (\log\ell_1, \dots, \log\ell_d, \log\sigma^2)`, around the fitted mode
:math:`\hat\theta`,

.. math::

    p(\theta \mid D) \approx \mathcal N\big(\hat\theta, \Lambda^{-1}\big), \qquad
    \Lambda = P\!\left(-\nabla^2_\theta \log p(y \mid X, \theta)\right)
        - \nabla^2_\theta \log p(\theta),

where :math:`P` projects onto the positive semi-definite matrices (negative eigenvalues of the
likelihood's curvature are set to 0: a direction in which the likelihood is not concave at the
fit gets the prior's spread, never more). The prior's curvature in these coordinates is positive
for BoTorch's priors: :math:`1/s^2` for a LogNormal with scale :math:`s`, :math:`b\,\ell` for a
Gamma with rate :math:`b`. The likelihood's curvature grows with the data (about linearly in
:math:`n`), so the approximation sharpens as data accrue, unlike a fixed ladder of multiples of
the fit. The constant mean is held at its fit (the approximation is conditional on it).
Curvatures are exact second derivatives (autograd through GPyTorch's exact marginal likelihood).

Draws :math:`\theta_m = \hat\theta + L z_m`, :math:`L L^\top = \Lambda^{-1}`,
:math:`z_m \sim \mathcal N(0, I)`, are clipped at the model's lower bounds (a length scale of at
least 0.025 on the unit cube, the noise variance's floor) and returned as RBF candidates in
standardised units (output scale 1, zero mean, as every proposal of
:mod:`~botorch_unknown_hypers.models.proposals`). ``docs/bbob.md`` (H3) uses them as the fully
Bayesian anchor's cheap stand-in: BoTorch's qLogNEI averaged over the draws.

References:
    D. J. C. MacKay. Bayesian interpolation. Neural Computation 1992 (the Laplace approximation
    of hyperparameter posteriors).
    C. E. Rasmussen, C. K. I. Williams. Gaussian Processes for Machine Learning. 2006, Sec. 5.2.
"""

from __future__ import annotations

from dataclasses import dataclass

import gpytorch
import torch
from botorch.models import SingleTaskGP
from gpytorch.kernels import RBFKernel
from gpytorch.likelihoods import GaussianLikelihood
from torch import Tensor
from torch.func import functional_call

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.checks import check_int

LENGTHSCALE = "covar_module.raw_lengthscale"
NOISE_RAW = "noise_covar.raw_noise"


@dataclass(frozen=True)
class LaplaceHyperposterior:
    r""":math:`\mathcal N(\hat\theta, L L^\top)` over :math:`\theta = (\log\ell_1, \dots,
    \log\ell_d, \log\sigma^2)` (``d + 1`` coordinates), with the lower bounds of :math:`\theta`.

    Attributes:
        mode: ``(d + 1)`` fitted :math:`\hat\theta`.
        scale_tril: ``(d + 1) x (d + 1)`` lower Cholesky factor :math:`L` of the covariance.
        lower: ``(d + 1)`` lower bounds of :math:`\theta` (the model's constraints).
    """

    mode: Tensor
    scale_tril: Tensor
    lower: Tensor

    @property
    def dim(self) -> int:
        r"""The number of inputs :math:`d`."""
        return self.mode.shape[-1] - 1

    def sample(self, num: int, generator: torch.Generator) -> Tensor:
        r"""``num x (d + 1)`` draws :math:`\theta_m = \hat\theta + L z_m`, clipped at the lower
        bounds; ``z`` from ``generator`` (a CPU generator), so a seed fixes the draws."""
        check_int("num", num, 1)
        z = torch.randn(num, self.mode.shape[-1], generator=generator, dtype=self.mode.dtype)
        theta = self.mode + z.to(self.mode.device) @ self.scale_tril.transpose(-1, -2)
        return torch.maximum(theta, self.lower)

    def candidates(self, num: int, generator: torch.Generator) -> KernelCandidates:
        r"""``num`` draws as RBF candidates (ARD length scales :math:`e^{\theta_{1:d}}`, noise
        variance :math:`e^{\theta_{d+1}}`, output scale 1, zero mean; standardised units)."""
        theta = self.sample(num, generator).exp()
        return KernelCandidates(lengthscale=theta[:, :-1], outputscale=torch.ones_like(theta[:, -1]), noise=theta[:, -1], kernel="rbf")


def laplace_hyperposterior(model: SingleTaskGP) -> LaplaceHyperposterior:
    r"""The Laplace approximation (module docstring) at ``model``'s fitted hyperparameters.

    Args:
        model: A fitted single-output ``SingleTaskGP`` with an ``RBFKernel`` whose length scales
            carry a prior, and a ``GaussianLikelihood`` whose noise carries one (BoTorch's
            default model, :func:`~botorch_unknown_hypers.models.fitted.fit_default_single_task_gp`).
            It is left as it was (parameters, train or eval mode).

    Raises:
        ValueError: naming ``model``, when it is not of that form.
    """
    covar, likelihood = getattr(model, "covar_module", None), getattr(model, "likelihood", None)
    if not isinstance(model, SingleTaskGP) or not isinstance(covar, RBFKernel) or not isinstance(likelihood, GaussianLikelihood):
        raise ValueError(
            "model must be a SingleTaskGP with an RBFKernel covar_module and a GaussianLikelihood, "
            f"got {type(model).__name__} with {type(covar).__name__} and {type(likelihood).__name__}."
        )
    ls_prior = getattr(covar, "lengthscale_prior", None)
    noise_prior = getattr(likelihood.noise_covar, "noise_prior", None)
    if ls_prior is None or noise_prior is None or model.num_outputs != 1:
        raise ValueError("model must have one output and priors on its length scales and its noise variance.")
    ls_con, noise_con = covar.raw_lengthscale_constraint, likelihood.noise_covar.raw_noise_constraint
    shape = covar.raw_lengthscale.shape
    d = shape[-1]
    mode = torch.cat([covar.lengthscale.detach().reshape(-1).log(), likelihood.noise.detach().reshape(-1).log()])
    if mode.shape[-1] != d + 1:
        raise ValueError(f"model must have one noise variance and unbatched length scales, got {mode.shape[-1] - d} and shape {tuple(shape)}.")

    def log_prior(theta: Tensor) -> Tensor:
        return ls_prior.log_prob(theta[:d].exp()).sum() + noise_prior.log_prob(theta[d:].exp()).sum()

    def log_likelihood(theta: Tensor) -> Tensor:  # the exact marginal likelihood, parameters set from theta
        ls = {LENGTHSCALE: ls_con.inverse_transform(theta[:d].exp()).reshape(shape)}
        noise = {NOISE_RAW: noise_con.inverse_transform(theta[d:].exp()).reshape(likelihood.noise_covar.raw_noise.shape)}
        with gpytorch.settings.lazily_evaluate_kernels(False):  # the kernel evaluated while theta's values are set
            latent = functional_call(model, ls, (train_X,))
        return functional_call(likelihood, noise, (latent,)).log_prob(train_Y)

    was_training = model.training
    model.train()  # the marginal likelihood of the training data, as in fitting (BoTorch's train-mode inputs)
    train_X, train_Y = model.train_inputs[0], model.train_targets
    try:
        curvature = -torch.autograd.functional.hessian(log_likelihood, mode)
    finally:
        model.train(was_training)
    prior = -torch.autograd.functional.hessian(log_prior, mode)
    evals, evecs = torch.linalg.eigh(0.5 * (curvature + curvature.transpose(-1, -2)))
    precision = (evecs * evals.clamp_min(0.0)) @ evecs.transpose(-1, -2) + prior
    covariance = torch.cholesky_inverse(torch.linalg.cholesky(0.5 * (precision + precision.transpose(-1, -2))))
    lower = torch.cat([
        torch.full((d,), float(ls_con.lower_bound.reshape(-1)[0]), dtype=mode.dtype, device=mode.device),
        noise_con.lower_bound.reshape(-1)[:1].to(mode),
    ]).clamp_min(torch.finfo(mode.dtype).tiny).log()
    return LaplaceHyperposterior(mode, torch.linalg.cholesky(covariance), lower)


__all__ = ["LaplaceHyperposterior", "laplace_hyperposterior"]
