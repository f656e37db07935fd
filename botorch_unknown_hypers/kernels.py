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

The builder's base kernels are GPyTorch's ``MaternKernel`` and ``RBFKernel`` with one change
(:class:`Matern`, :class:`RBF`): GPyTorch's distance helper tests ``torch.equal(x1, x2)`` on
every evaluation, a read of a device value on the host that waits for the queued device work.
Here the kernel decides it from its inputs (the same tensor twice is equal, inputs with
different numbers of points are not), and the diagonal :math:`k(x, x) = s\,\kappa(0) = s` of
one set of points with itself needs no distance; every value is the one GPyTorch computes, bit
for bit.
"""

from __future__ import annotations

import math

import torch
from gpytorch import Module
from gpytorch.constraints import Positive
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel
from gpytorch.kernels.kernel import dist, sq_dist
from torch import Tensor

from botorch_unknown_hypers.checks import check_choice

KERNELS: dict[str, float | None] = {
    "matern12": 0.5,
    "matern32": 1.5,
    "matern52": 2.5,
    "rbf": None,
}
r"""Supported kernel names and their Matérn smoothness :math:`\nu` (``None`` for RBF)."""


def check_kernel(kernel: object, name: str = "kernel") -> str:
    r"""``kernel`` if it is a name in :data:`KERNELS`, else ``ValueError`` listing the valid names."""
    return check_choice(name, kernel, sorted(KERNELS))


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


class NoSyncDistance:
    r"""Mixin of a stationary GPyTorch kernel whose evaluations decide without a host read whether
    their two inputs are equal.

    GPyTorch's distance helper (``Kernel.covar_dist``) tests ``torch.equal`` of the two scaled
    inputs and, when they are equal, computes the symmetric distance matrix (zero diagonal).
    Here ``forward`` decides it from what it is given: the same points twice (``kernel(x)``,
    ``kernel(x, diag=True)``, or two equal views of one tensor's memory, as GPyTorch's lazy kernel
    tensor makes when the test block of a joint train-and-test covariance is sliced out) are
    equal, and inputs with different numbers of points cannot be (their scaled versions differ in
    shape); only other inputs with equally many points are still compared by GPyTorch. The
    diagonal of a set of points with itself is :math:`\kappa(0) = 1` per point. (Views of one
    memory holding NaN would be unequal to ``torch.equal``; points reach a kernel checked finite.)
    """

    def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **params) -> Tensor:
        if params.get("last_dim_is_batch", False):
            return super().forward(x1, x2, diag=diag, **params)
        same = x1 is x2 or (
            x1.shape == x2.shape
            and x1.dtype == x2.dtype
            and x1.device == x2.device
            and x1.data_ptr() == x2.data_ptr()
            and x1.stride() == x2.stride()
        )
        if diag and same:
            return torch.ones(x1.shape[:-1], dtype=x1.dtype, device=x1.device)
        if not diag and (same or x1.shape[-2] != x2.shape[-2]):
            params["x1_eq_x2"] = same
        return super().forward(x1, x2, diag=diag, **params)

    def covar_dist(
        self,
        x1: Tensor,
        x2: Tensor,
        diag: bool = False,
        last_dim_is_batch: bool = False,
        square_dist: bool = False,
        x1_eq_x2: bool | None = None,
        **params,
    ) -> Tensor:
        if x1_eq_x2 is None or diag or last_dim_is_batch:
            return super().covar_dist(
                x1, x2, diag=diag, last_dim_is_batch=last_dim_is_batch, square_dist=square_dist, **params
            )
        return sq_dist(x1, x2, x1_eq_x2) if square_dist else dist(x1, x2, x1_eq_x2)


class Matern(NoSyncDistance, MaternKernel):
    r"""GPyTorch's ``MaternKernel`` without the equality test of its inputs (:class:`NoSyncDistance`)."""


class RBF(NoSyncDistance, RBFKernel):
    r"""GPyTorch's ``RBFKernel`` without the equality test of its inputs (:class:`NoSyncDistance`)."""


def set_constrained(module: Module, name: str, value: Tensor) -> None:
    r"""Set ``module``'s constrained hyperparameter ``name`` to ``value`` as GPyTorch's setter does,
    :math:`\text{raw} = c^{-1}(\text{value})` for the constraint :math:`c` of ``raw_<name>``, copied
    into the raw parameter, without the setter's bounds check (two host reads): the caller has
    checked ``value`` against the constraint."""
    raw = getattr(module, f"raw_{name}")
    constraint = module.constraint_for_parameter_name(f"raw_{name}")
    raw.data.copy_(constraint.inverse_transform(value.to(raw)).expand_as(raw))


def scale_kernel(
    kernel: str, ard_num_dims: int | None = None, batch_shape: torch.Size = torch.Size(), positive: Positive | None = None
) -> ScaleKernel:
    r"""``ScaleKernel(RBF or Matern-nu)`` (:class:`RBF`, :class:`Matern`) with positive constraints
    and GPyTorch's initial values.

    Args:
        kernel: A name in :data:`KERNELS`.
        ard_num_dims: ``d`` for one length scale per input dimension, ``None`` for one in all.
        batch_shape: The kernel's batch shape (``(K,)`` for K candidates).
        positive: The ``Positive`` constraint to use, shared with modules already built on the
            same device and dtype (a new one when ``None``).
    """
    nu = KERNELS[check_kernel(kernel)]
    # One ``Positive`` serves every positive hyperparameter (it holds no parameter, only its
    # bounds): each constraint GPyTorch builds checks its bounds with a host read, and the
    # ScaleKernel would otherwise build a default one for a length scale it does not have.
    positive = Positive() if positive is None else positive
    if nu is None:
        base = RBF(ard_num_dims=ard_num_dims, batch_shape=batch_shape, lengthscale_constraint=positive)
    else:
        base = Matern(nu=nu, ard_num_dims=ard_num_dims, batch_shape=batch_shape, lengthscale_constraint=positive)
    return ScaleKernel(
        base, batch_shape=batch_shape, outputscale_constraint=positive, lengthscale_constraint=positive
    )
