r"""Exact GPs with fixed (not fitted) hyperparameters, as the TS-RSR paper's surrogate.

Ren & Li (TS-RSR, Sec. 6 and App. C) never train their GP: the kernel, its length
scale(s), the output scale and the likelihood noise are fixed per problem, inputs are
used in raw domain units and targets are re-standardised on all data every round.
:func:`fixed_hyperparameter_gp` builds exactly that model as a BoTorch
``SingleTaskGP``:

.. math::

    f \sim \mathcal{GP}(0, s\, k_\ell), \qquad
    \tilde y = (y - \bar y) / \operatorname{sd}(y) = f(x) + \varepsilon,
    \quad \varepsilon \sim \mathcal N(0, \sigma_n^2),

with :math:`k_\ell` an RBF or Matern kernel in GPyTorch's convention
(:math:`\exp(-r^2 / (2\ell^2))` for RBF), :math:`s` the output scale and
:math:`\sigma_n^2` the noise variance in standardised units (``1e-6`` in the
paper: :math:`\sigma_n = 10^{-3}`). The model's posterior is in the original units
of ``y`` (BoTorch's ``Standardize`` outcome transform untransforms it).

:class:`SurrogateSpec` is the JSON-safe description that problems carry in
``metadata["paper_surrogate"]`` and policies accept as an option.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from botorch.models import SingleTaskGP
from botorch.models.transforms import Standardize
from gpytorch.constraints import GreaterThan
from gpytorch.kernels import ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.means import ZeroMean
from torch import Tensor

from botorch_unknown_hypers.kernels import check_kernel, scale_kernel

r"""Kernel name -> Matern smoothness :math:`\nu` (``None`` for RBF)."""


@dataclass(frozen=True)
class SurrogateSpec:
    r"""Fixed GP hyperparameters.

    Attributes:
        kernel: One of :data:`KERNELS`.
        lengthscale: One length scale (isotropic) or ``d`` of them (ARD), in raw
            input units and GPyTorch's convention.
        outputscale: Prior variance :math:`s` of :math:`f` in standardised units.
        noise_variance: Likelihood noise variance :math:`\sigma_n^2` in standardised units.
    """

    kernel: str = "matern52"
    lengthscale: tuple[float, ...] = (math.log(2.0),)
    outputscale: float = math.log(2.0)
    noise_variance: float = 1e-6

    def __post_init__(self) -> None:
        check_kernel(self.kernel)
        ls = self.lengthscale
        if not isinstance(ls, tuple) or len(ls) == 0 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0 for v in ls
        ):
            raise ValueError(f"lengthscale must be a non-empty tuple of positive finite numbers, got {ls!r}.")
        for name in ("outputscale", "noise_variance"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive finite number, got {v!r}.")

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> SurrogateSpec:
        r"""Build from a JSON-safe dict (``lengthscale`` a number or a list)."""
        if not isinstance(spec, dict):
            raise ValueError(f"surrogate spec must be a dict, got {type(spec).__name__}.")
        unknown = set(spec) - {"kernel", "lengthscale", "outputscale", "noise_variance"}
        if unknown:
            raise ValueError(f"surrogate spec has unknown keys {sorted(unknown)}.")
        kwargs = dict(spec)
        if "lengthscale" in kwargs:
            ls = kwargs["lengthscale"]
            kwargs["lengthscale"] = tuple(ls) if isinstance(ls, (list, tuple)) else (ls,)
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        ls: float | list[float] = self.lengthscale[0] if len(self.lengthscale) == 1 else list(self.lengthscale)
        return {
            "kernel": self.kernel,
            "lengthscale": ls,
            "outputscale": self.outputscale,
            "noise_variance": self.noise_variance,
        }

    def label(self) -> str:
        r"""Short text for the ``selected`` column, e.g. ``matern52:0.693``."""
        return f"{self.kernel}:" + ";".join(f"{v:.4g}" for v in self.lengthscale)


def scaled_kernel_and_likelihood(kernel: str, ard_dims: int | None) -> tuple[ScaleKernel, GaussianLikelihood]:
    r"""``ScaleKernel(kernel)`` (:func:`~botorch_unknown_hypers.kernels.scale_kernel`) and a Gaussian
    likelihood (noise >= 1e-12), GPyTorch's default initial values; shared by the fixed and fitted GPs."""
    return scale_kernel(kernel, ard_dims), GaussianLikelihood(noise_constraint=GreaterThan(1e-12))


def fixed_hyperparameter_gp(train_X: Tensor, train_Y: Tensor, spec: SurrogateSpec) -> SingleTaskGP:
    r"""A ``SingleTaskGP`` with the fixed hyperparameters of ``spec``, in eval mode.

    Zero mean, ``ScaleKernel(kernel)``, no input transform (raw units, as the paper),
    ``Standardize`` on the targets (re-fitted on all data by construction) and a fixed
    Gaussian likelihood noise. Nothing is trained.

    Args:
        train_X: ``n x d`` inputs.
        train_Y: ``n x 1`` targets.
        spec: The hyperparameters; an ARD ``lengthscale`` must have ``d`` entries.

    Returns:
        The model, on ``train_X``'s device and dtype.
    """
    d = train_X.shape[-1]
    if len(spec.lengthscale) not in (1, d):
        raise ValueError(f"spec.lengthscale must have 1 or d = {d} entries, got {len(spec.lengthscale)}.")
    ard = d if len(spec.lengthscale) > 1 else None
    covar, likelihood = scaled_kernel_and_likelihood(spec.kernel, ard)
    base = covar.base_kernel
    model = SingleTaskGP(
        train_X,
        train_Y,
        likelihood=likelihood,
        covar_module=covar,
        mean_module=ZeroMean(),
        outcome_transform=Standardize(m=1),
    ).to(train_X)
    with torch.no_grad():
        base.lengthscale = torch.tensor(spec.lengthscale, dtype=train_X.dtype, device=train_X.device).expand(
            base.lengthscale.shape
        )
        covar.outputscale = torch.tensor(spec.outputscale, dtype=train_X.dtype, device=train_X.device)
        likelihood.noise = torch.tensor([spec.noise_variance], dtype=train_X.dtype, device=train_X.device)
    model.requires_grad_(False)
    return model.eval()
