r"""Optuna's length-scale prior as a GPyTorch prior on the length scale.

Optuna 5's ``GPSampler`` fits each inverse squared length scale :math:`\lambda = \ell^{-2}`
(inputs on the unit cube) by maximising the marginal likelihood plus

.. math::

    \log p(\lambda) = -\Big(\frac{a}{\lambda} + a\lambda\Big), \qquad a = 0.1,

with no Jacobian term: it peaks at :math:`\ell = 1`, charges :math:`a\ell^2` nats for a long
length scale (10 at :math:`\ell = 10`) and :math:`a\ell^{-2}` for a short one (10 at
:math:`\ell = 0.1`). As a MAP term on :math:`\ell` the same function reads
:math:`-a(\ell^2 + \ell^{-2})`, so :class:`InverseSquaredLengthscalePrior` is the proper density

.. math::

    p(\ell) = \frac{e^{-a(\ell^2 + \ell^{-2})}}{Z}, \qquad
    Z = \int_0^\infty e^{-a\ell^2 - a\ell^{-2}}\,d\ell = \tfrac12\sqrt{\pi/a}\,e^{-2a},

whose log density differs from Optuna's term by :math:`\log Z` only: a fit of :math:`\ell` under
it has Optuna's maximiser. Its mode is :math:`\ell = 1` for every :math:`a`. Samples (for
BoTorch's restarts from the prior) are exact, by rejection from the half-normal
:math:`e^{-a\ell^2}` with acceptance :math:`e^{-a\ell^{-2}}`; the acceptance rate is
:math:`e^{-2a}` (0.82 at :math:`a = 0.1`).
"""

from __future__ import annotations

import math

import torch
from gpytorch.priors import Prior
from torch import Tensor
from torch.distributions import constraints

OPTUNA_RATE = 0.1
r"""Optuna 5.0's :math:`a` (``optuna._gp.prior.default_log_prior``)."""


class InverseSquaredLengthscalePrior(Prior):
    r"""The density :math:`p(\ell) \propto e^{-a(\ell^2 + \ell^{-2})}` of the module docstring.

    Args:
        rate: :math:`a > 0`, a float (kept in float64 until the module is cast, as a model's
            ``.to`` does) or a tensor of them (the batch shape).
        validate_args: Check the support in :meth:`log_prob`, as torch distributions do.
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.positive

    def __init__(self, rate: float | Tensor = OPTUNA_RATE, validate_args: bool = False) -> None:
        rate = rate if isinstance(rate, Tensor) else torch.tensor(rate, dtype=torch.float64)  # exact until cast
        if not bool(torch.isfinite(rate).all()) or not bool((rate > 0).all()):
            raise ValueError(f"rate must be finite and positive, got {rate.tolist()}.")
        super().__init__(batch_shape=rate.shape, validate_args=False)  # the distribution, then the module
        self.register_buffer("rate", rate)
        self._validate_args = validate_args
        self._transform = None

    @property
    def mode(self) -> Tensor:
        r"""The mode, :math:`\ell = 1`."""
        return torch.ones_like(self.rate)

    def log_prob(self, x: Tensor) -> Tensor:
        r""":math:`-a(\ell^2 + \ell^{-2}) - \log Z`, elementwise (broadcast with ``rate``)."""
        if self._validate_args:
            self._validate_sample(x)
        a = self.rate
        log_z = 0.5 * torch.log(math.pi / a) - 2.0 * a - math.log(2.0)
        return -a * (x.square() + x.square().reciprocal()) - log_z

    def sample(self, sample_shape: torch.Size = torch.Size()) -> Tensor:
        r"""Exact samples by rejection (module docstring); not reparameterised."""
        shape = self._extended_shape(torch.Size(sample_shape))
        a = self.rate.expand(shape)
        out = torch.full(shape, float("nan"), dtype=a.dtype, device=a.device)
        with torch.no_grad():
            while bool(out.isnan().any()):
                proposal = torch.randn(shape, dtype=a.dtype, device=a.device).abs() / torch.sqrt(2.0 * a)
                accept = torch.rand(shape, dtype=a.dtype, device=a.device) < torch.exp(-a / proposal.square())
                out = torch.where(out.isnan() & accept, proposal, out)
        return out

    def expand(self, batch_shape: torch.Size, _instance: object = None) -> InverseSquaredLengthscalePrior:
        return InverseSquaredLengthscalePrior(self.rate.expand(torch.Size(batch_shape)))
