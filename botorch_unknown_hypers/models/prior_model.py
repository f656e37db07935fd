r"""The model of a prior-selection rule: K candidate priors and the data, on arms or on a box.

On a pool of arms the priors are :class:`~botorch_unknown_hypers.models.tabular_priors.TabularPriors`
(a mean vector and a covariance matrix over the arms per prior) and the model a
:class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP`; on a box they are K (mean, kernel)
pairs given as one :class:`~botorch_unknown_hypers.candidates.CandidateSpec` and the model a
:class:`~botorch_unknown_hypers.models.box_priors.BoxPriors`. :func:`prior_model` checks the priors
against the domain and builds the right one. Both share the point-based interface the rules use
(``condition_at``, ``predictive_log_likelihood_at``, ``mean_variance_at``, ``mean_variance_points``, ``observed_X``,
``observed_Y``, ``without_data``, ``labels``, ``num_priors``), so a rule never branches on the
domain; the selections themselves live in :mod:`botorch_unknown_hypers.acquisition.prior_acquisition`.
"""

from __future__ import annotations

import dataclasses
import math

import torch

from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.domains import Domain, FiniteDomain, MixedDomain
from botorch_unknown_hypers.models.box_priors import BoxPriors
from botorch_unknown_hypers.models.tabular import TabularPriorGP
from botorch_unknown_hypers.models.tabular_priors import TabularPriors

PriorModel = TabularPriorGP | BoxPriors
r"""The K priors and the data of a prior-selection rule: on arms or on a box."""

Priors = TabularPriors | CandidateSpec
r"""Candidate priors: tabular over a pool's arms, or (mean, kernel) pairs on a box."""


def check_priors_available(priors: Priors | None, domain: Domain, rule: str) -> None:
    r"""Refuse a box without priors up front: a task only carries tabular priors (over a pool's
    arms), so on a box the K (mean, kernel) pairs can come from nowhere but the caller.

    Raises:
        ValueError: naming ``domain``, for a box and ``priors=None``.
    """
    if isinstance(domain, MixedDomain) and not domain.is_box:
        raise ValueError(
            f"domain: {rule} needs a BoxDomain (its prior sample paths are maximised over a continuous box) or a "
            "FiniteDomain (tabular priors over its arms); a MixedDomain with integer, stepped or categorical "
            "parameters is neither: enumerate its points into a FiniteDomain, or use a rule of the other families."
        )
    if priors is None and not isinstance(domain, FiniteDomain):
        raise ValueError(
            f"domain: {rule} on a box (BoxDomain) needs priors=<a CandidateSpec of K (mean, kernel) pairs, "
            "e.g. KernelCandidates>; tabular priors need a FiniteDomain of their arms. Got priors=None."
        )


def prepare_priors(
    priors: Priors, domain: Domain, noise_std: float | None = None, name: str = "priors"
) -> Priors:
    r"""``priors`` checked against ``domain``, on its device and dtype, with an optional noise override.

    On a pool the priors must be :class:`TabularPriors` whose arms are the pool's points, in order
    (to a relative ``1e-6``; the arms are then set to the pool's points exactly). On a box they
    must be a :class:`CandidateSpec` of one common noise variance (the rules assume one known
    :math:`\sigma^2`).

    Raises:
        ValueError: naming ``name``, for priors of the wrong kind for the domain, arms that are
            not the pool, or differing noise variances.
    """
    dtype, device = (domain.points if isinstance(domain, FiniteDomain) else domain.bounds).dtype, domain.device
    if isinstance(domain, FiniteDomain):
        if not isinstance(priors, TabularPriors):
            raise ValueError(
                f"{name}: on a pool (FiniteDomain) the priors must be TabularPriors over its points, "
                f"got {type(priors).__name__}."
            )
        if noise_std is not None and priors.noise != noise_std**2:
            priors = dataclasses.replace(priors, noise=noise_std**2)
        priors = priors.to(device=device, dtype=dtype)
        points = domain.points
        scale = max(1.0, float(points.abs().max()))
        if priors.arms.shape != points.shape or not torch.allclose(priors.arms, points, rtol=0.0, atol=1e-6 * scale):
            raise ValueError(f"{name}: their {priors.num_arms} arms must be the domain's {points.shape[0]} points, in order.")
        return dataclasses.replace(priors, arms=points)
    if not isinstance(priors, CandidateSpec):
        raise ValueError(
            f"{name}: on a box (BoxDomain) the priors must be a CandidateSpec of K (mean, kernel) pairs, "
            f"e.g. KernelCandidates; tabular priors need a FiniteDomain of their arms. Got {type(priors).__name__}."
        )
    if noise_std is not None:
        priors = priors.with_noise(noise_std**2)
    priors = priors.to(device=device, dtype=dtype)
    priors.build(domain.dim)  # checks ARD length scales against d
    noise = priors.noise_variances()
    if not torch.allclose(noise, noise[:1].expand_as(noise), rtol=1e-6, atol=0.0):
        raise ValueError(
            f"{name}: the candidates' noise variances differ ({noise.tolist()}); the rules assume one known "
            "sigma^2: build the candidates with one noise or pass noise_std."
        )
    return priors


def prior_noise_std(priors: Priors) -> float:
    r"""The known noise standard deviation :math:`\sigma` of (prepared) priors."""
    variance = priors.noise if isinstance(priors, TabularPriors) else float(priors.noise_variances()[0])
    return math.sqrt(variance)


def prior_model(priors: Priors, domain: Domain) -> PriorModel:
    r"""The model of (prepared, see :func:`prepare_priors`) ``priors`` on ``domain``, before any data."""
    if isinstance(priors, TabularPriors):
        return TabularPriorGP(priors)
    return BoxPriors(priors, domain.bounds)
