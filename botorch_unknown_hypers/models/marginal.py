r"""A BoTorch model whose marginal posterior is given by a function.

Analytic BoTorch acquisitions (``LogExpectedImprovement``, ``UpperConfidenceBound``, ...) need
only the marginal mean and variance of a model at each point. :class:`MarginalModel` wraps a
function ``X -> (mean, variance)`` (``batch_shape x 1 x d -> batch_shape`` each) as a
single-output ``Model`` with a diagonal Gaussian posterior, so those acquisitions run unchanged
on moments computed elsewhere, e.g. the posterior mean and the variance conditioned on pending
points of a batch (:class:`~botorch_unknown_hypers.acquisition.pending.ConditionalLogEI`).
Gradients flow through the function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from botorch.posteriors.gpytorch import GPyTorchPosterior
from linear_operator.operators import DiagLinearOperator
from torch import Tensor

from botorch_unknown_hypers.models.quiet_normal import QuietMultivariateNormal

MeanVariance = Callable[[Tensor], tuple[Tensor, Tensor]]
r"""``batch_shape x 1 x d`` points -> ``(mean, variance)``, each ``batch_shape``."""


class MarginalModel(Model):
    r"""A single-output model with posterior :math:`\mathcal{N}(m(x), v(x))` at one point per batch.

    Args:
        mean_and_variance: The moments, ``batch_shape x 1 x d -> (batch_shape, batch_shape)``.

    Example:
        >>> model = MarginalModel(acqf.mean_and_variance)
        >>> LogExpectedImprovement(model, best_f=0.0)(X)  # X: b x 1 x d
    """

    _num_outputs = 1

    def __init__(self, mean_and_variance: MeanVariance) -> None:
        super().__init__()
        self.mean_and_variance = mean_and_variance

    @property
    def num_outputs(self) -> int:
        return 1

    def posterior(
        self,
        X: Tensor,
        output_indices: list[int] | None = None,
        observation_noise: bool | Tensor = False,
        posterior_transform: PosteriorTransform | None = None,
        **kwargs: Any,
    ) -> GPyTorchPosterior:
        r"""Diagonal Gaussian posterior at ``X`` (``batch_shape x 1 x d``), shape ``batch_shape x 1 x 1``."""
        if X.ndim < 2 or X.shape[-2] != 1:
            raise ValueError(f"X must be batch_shape x 1 x d, got shape {tuple(X.shape)}.")
        if observation_noise is not False:
            raise ValueError("observation_noise: MarginalModel gives latent moments only.")
        mean, variance = self.mean_and_variance(X)
        posterior = GPyTorchPosterior(QuietMultivariateNormal(mean.unsqueeze(-1), DiagLinearOperator(variance.unsqueeze(-1))))
        return posterior if posterior_transform is None else posterior_transform(posterior)
