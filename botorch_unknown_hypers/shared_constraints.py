r"""Constraints shared by the GPyTorch modules of candidate sets built on one device and dtype.

A candidate set's kernel and likelihood hold their hyperparameters through GPyTorch constraints:
the positive ones (length scales, output scales, periods) through
:math:`\theta = \operatorname{softplus}(\theta_\text{raw})` (``Positive``) and the noise variance
through :math:`\sigma^2 = \operatorname{softplus}(\sigma^2_\text{raw}) + \sigma^2_\text{min}`
(``GreaterThan``, :math:`\sigma^2_\text{min}` the candidates' ``NOISE_LOWER_BOUND``). A constraint
holds no parameter, only its bounds, and every module that uses it only reads them. GPyTorch
checks the bounds of each constraint it builds with a host read, so a round that builds the
modules of new candidate sets (the survivors of an elimination, the candidates a search still
refines) would read once per constraint. Here the modules built after others on the same device
and dtype share their constraints (:class:`ModuleConstraints`): the same transforms, with no
constraint built and no read.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from gpytorch.constraints import GreaterThan, Positive
from gpytorch.kernels import Kernel
from gpytorch.likelihoods import Likelihood
from torch import Tensor


class ModuleConstraints(NamedTuple):
    r"""The ``Positive`` of a candidate set's kernel and the ``GreaterThan`` of its likelihood's
    noise, passed to ``CandidateSpec.build`` to be shared (never written)."""

    positive: Positive
    noise: GreaterThan


def module_constraints(covar_module: Kernel, likelihood: Likelihood) -> ModuleConstraints | None:
    r"""The :class:`ModuleConstraints` of a kernel and likelihood that a candidate set built (the
    kernel's first ``Positive``, the likelihood's noise constraint), ``None`` when they hold none."""
    positive = next((m for m in covar_module.modules() if type(m) is Positive), None)
    noise = getattr(getattr(likelihood, "noise_covar", None), "raw_noise_constraint", None)
    if positive is None or type(noise) is not GreaterThan:
        return None
    return ModuleConstraints(positive, noise)


def constraints_on(covar_module: Kernel, likelihood: Likelihood, like: Tensor) -> ModuleConstraints | None:
    r""":func:`module_constraints` when both lie on ``like``'s device and dtype (their bounds are
    buffers: no read), else ``None``."""
    shared = module_constraints(covar_module, likelihood)
    if shared is None or any((c.lower_bound.dtype, c.lower_bound.device) != (like.dtype, like.device) for c in shared):
        return None
    return shared


def build_sharing(spec: Any, dim: int, covar_module: Kernel, likelihood: Likelihood, like: Tensor) -> tuple[Any, Any, Any]:
    r"""``spec.build(dim)`` (a ``CandidateSpec``) on ``like``'s device and dtype, sharing the
    constraints of ``covar_module`` and ``likelihood`` where they lie there
    (:func:`constraints_on`)."""
    shared = constraints_on(covar_module, likelihood, like)
    return spec.to(device=like.device, dtype=like.dtype).build(dim, shared)
