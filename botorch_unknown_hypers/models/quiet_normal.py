r"""Gaussian posteriors formed without reading device values on the host.

Two checks in the posterior that every analytic BoTorch acquisition asks for read a device value
on the host (a synchronisation on CUDA) at every evaluation, and neither changes a value:

- GPyTorch's ``MultivariateNormal.variance`` tests whether any variance is below
  :math:`v_{\min}` = ``gpytorch.settings.min_variance`` before clamping, only to warn;
- BoTorch's ``Standardize.untransform_posterior`` tests its trained flag, a tensor.

:class:`QuietMultivariateNormal` returns GPyTorch's variance :math:`\max(\operatorname{diag}
\Sigma, v_{\min})` by clamping unconditionally (``clamp_min`` leaves values at or above
:math:`v_{\min}` and their gradients as they are, bit for bit), and :func:`untransformed_posterior`
(and :func:`untransformed_marginals` for marginals alone) applies a one-output ``Standardize``'s affine map :math:`\mu' = a + s\mu`,
:math:`\Sigma' = S\Sigma S` with :math:`S = sI`, exactly as BoTorch writes it:
:math:`S\Sigma S` as a product of linear operators for a lazy covariance, and the Cholesky
factor scaled, :math:`L' = sL`, for a dense one. What is lost is GPyTorch's
``NumericalWarning`` on clamped variances; the clamp itself is kept. :func:`quiet_paths` gives
BoTorch's pathwise posterior samples the same map :math:`a + s f(x)` in place of its
``OutcomeUntransformer``, which reads both its output count (a tensor) and the trained flag at
every evaluation of the paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from botorch.models.transforms.outcome import OutcomeTransform, Standardize
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch import settings
from gpytorch.distributions import MultivariateNormal
from linear_operator.operators import CholLinearOperator, DiagLinearOperator, TriangularLinearOperator
from torch import Tensor

if TYPE_CHECKING:
    from botorch.sampling.pathwise.paths import SamplePath


class QuietMultivariateNormal(MultivariateNormal):
    r"""GPyTorch's ``MultivariateNormal`` whose ``variance`` is GPyTorch's value bit for bit (the
    diagonal clamped below at ``gpytorch.settings.min_variance``) without the test for values
    below it."""

    @property
    def variance(self) -> Tensor:
        if self.islazy:
            diag = self.lazy_covariance_matrix.diagonal(dim1=-1, dim2=-2)
            variance = diag.view(diag.shape[:-1] + self.event_shape).expand(self.batch_shape + self.event_shape)
        else:  # torch's variance, from the scale_tril computed at construction
            variance = torch.distributions.MultivariateNormal.variance.fget(self)
        return variance.clamp_min(settings.min_variance.value(variance.dtype))


def is_plain_standardize(transform: OutcomeTransform | None) -> bool:
    r"""Whether ``transform`` is exactly BoTorch's one-output ``Standardize`` (no subclass), whose
    untransform is the affine map above."""
    return type(transform) is Standardize and transform.means.numel() == 1


def untransformed_posterior(mvn: MultivariateNormal, transform: OutcomeTransform | None, X: Tensor) -> GPyTorchPosterior:
    r"""``transform.untransform_posterior(GPyTorchPosterior(mvn), X=X)`` (``GPyTorchPosterior(mvn)``
    without a transform). For an :func:`is_plain_standardize` ``transform``, trained, and a
    single-output ``mvn`` (``batch_shape x q``) built by the caller (so that a lazy one has no
    Cholesky factor cached), BoTorch's result bit for bit, as a :class:`QuietMultivariateNormal`,
    without the read of the trained flag."""
    if not is_plain_standardize(transform):
        posterior = GPyTorchPosterior(distribution=mvn)
        return posterior if transform is None else transform.untransform_posterior(posterior, X=X)
    mean = transform.means.squeeze(-1) + transform.stdvs.squeeze(-1) * mvn.mean
    scale = transform.stdvs.squeeze(-1).expand_as(mean)
    if not mvn.islazy:
        covariance = CholLinearOperator(TriangularLinearOperator(mvn.scale_tril * scale.unsqueeze(-1)))
    else:
        lazy = mvn.lazy_covariance_matrix
        diagonal = DiagLinearOperator(scale.expand(lazy.shape[:-1]))
        covariance = diagonal @ lazy @ diagonal
    return GPyTorchPosterior(QuietMultivariateNormal(mean, covariance))


def untransformed_marginals(
    mean: Tensor, variance: Tensor, transform: OutcomeTransform | None, X: Tensor
) -> tuple[Tensor, Tensor]:
    r"""Marginal means and variances (``batch_shape x q`` each, one output) in the units of the raw
    targets: ``transform.untransform`` of them as one output's column (``X`` the transformed
    inputs), as is without a transform. For a trained :func:`is_plain_standardize` ``transform``
    the affine map :math:`(a + s\mu, s^2\sigma^2)` as BoTorch writes it, without the read of its
    trained flag."""
    if is_plain_standardize(transform):
        return transform.means.squeeze(-1) + transform.stdvs.squeeze(-1) * mean, transform.stdvs.pow(2).squeeze(-1) * variance
    if transform is None:
        return mean, variance
    mean, variance = transform.untransform(mean.unsqueeze(-1), variance.unsqueeze(-1), X=X)
    return mean.squeeze(-1), variance.squeeze(-1)


class StandardizeUntransformer(torch.nn.Module):
    r"""BoTorch's ``OutcomeUntransformer`` of a single output and an :func:`is_plain_standardize`
    transform, bit for bit: ``values`` (any shape) to ``means + stdvs * values``."""

    def __init__(self, transform: Standardize) -> None:
        super().__init__()
        self.transform = transform

    def forward(self, values: Tensor) -> Tensor:
        return (self.transform.means + self.transform.stdvs * values.unsqueeze(-1)).squeeze(-1)


def quiet_paths(paths: SamplePath, num_outputs: int) -> SamplePath:
    r"""``paths`` (from ``draw_matheron_paths`` on a model with ``num_outputs`` outputs) with its
    ``output_transform`` replaced by :class:`StandardizeUntransformer` where it is BoTorch's
    untransformer of a single output and a trained :func:`is_plain_standardize` transform;
    otherwise ``paths`` unchanged. The same values and gradients, bit for bit."""
    from botorch.sampling.pathwise.utils import OutcomeUntransformer  # not on the package's import path

    output = getattr(paths, "output_transform", None)
    if num_outputs == 1 and isinstance(output, OutcomeUntransformer) and is_plain_standardize(output.transform):
        paths.output_transform = StandardizeUntransformer(output.transform)
    return paths
