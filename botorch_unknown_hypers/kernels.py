r"""The stationary kernels every rule uses: names, Matérn smoothness and correlation functions.

A stationary kernel here is :math:`k(x, x') = s\,\kappa(r)` with :math:`r = \lVert (x - x')/\ell \rVert`
and the correlation :math:`\kappa` in GPyTorch's convention:

.. math::

    \kappa_{1/2}(r) = e^{-r}, \quad
    \kappa_{3/2}(r) = (1 + \sqrt3 r) e^{-\sqrt3 r}, \quad
    \kappa_{5/2}(r) = (1 + \sqrt5 r + \tfrac53 r^2) e^{-\sqrt5 r}, \quad
    \kappa_\text{RBF}(r) = e^{-r^2/2}.

The length-scale balancing paper writes the RBF kernel as :math:`\exp(-r^2/\theta^2)`, i.e.
:math:`\theta = \sqrt2\,\ell`; its Matérn kernels agree with GPyTorch's.
:data:`KERNELS` maps each name to its smoothness :math:`\nu` (``None`` for RBF); it is the one
table the package reads for kernel names (candidate sets, confidence rates, fixed surrogates,
known kernels), and :func:`scale_kernel` the one builder of their GPyTorch modules.
"""

from __future__ import annotations

import math

import torch
from gpytorch.constraints import Positive
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel
from torch import Tensor

KERNELS: dict[str, float | None] = {
    "matern12": 0.5,
    "matern32": 1.5,
    "matern52": 2.5,
    "rbf": None,
}
r"""Supported kernel names and their Matérn smoothness :math:`\nu` (``None`` for RBF)."""


def check_kernel(kernel: object, name: str = "kernel") -> str:
    r"""``kernel`` if it is a name in :data:`KERNELS`, else ``ValueError`` listing the valid names."""
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(f"{name} must be one of {sorted(KERNELS)}, got {kernel!r}.")
    return kernel


def correlation(squared_distance: Tensor, nu: float | None) -> Tensor:
    r"""The correlation :math:`\kappa(r)` at :math:`r^2` = ``squared_distance`` (scaled by the length
    scale) for Matérn-:math:`\nu` (:math:`\nu \in \{1/2, 3/2, 5/2\}`) or RBF (``nu=None``)."""
    if nu is None:
        return (-0.5 * squared_distance).exp()
    r = squared_distance.clamp_min(1e-36).sqrt()
    s = math.sqrt(2 * nu) * r
    if nu == 0.5:
        return (-s).exp()
    if nu == 1.5:
        return (1 + s) * (-s).exp()
    if nu == 2.5:
        return (1 + s + s.square() / 3) * (-s).exp()
    raise ValueError(f"nu must be 0.5, 1.5, 2.5 or None (RBF), got {nu!r}.")


def scale_kernel(kernel: str, ard_num_dims: int | None = None, batch_shape: torch.Size = torch.Size()) -> ScaleKernel:
    r"""``ScaleKernel(RBF or Matern-nu)`` with positive constraints and GPyTorch's initial values.

    Args:
        kernel: A name in :data:`KERNELS`.
        ard_num_dims: ``d`` for one length scale per input dimension, ``None`` for one in all.
        batch_shape: The kernel's batch shape (``(K,)`` for K candidates).
    """
    nu = KERNELS[check_kernel(kernel)]
    if nu is None:
        base = RBFKernel(ard_num_dims=ard_num_dims, batch_shape=batch_shape, lengthscale_constraint=Positive())
    else:
        base = MaternKernel(nu=nu, ard_num_dims=ard_num_dims, batch_shape=batch_shape, lengthscale_constraint=Positive())
    return ScaleKernel(base, batch_shape=batch_shape, outputscale_constraint=Positive())
