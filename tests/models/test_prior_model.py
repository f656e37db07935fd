"""Tests of the model of a prior-selection rule (botorch_unknown_hypers.models.prior_model):
checking candidate priors against the domain and building the right model for it."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain
from botorch_unknown_hypers.models.box_priors import BoxPriors
from botorch_unknown_hypers.models.prior_model import (
    check_priors_available,
    prepare_priors,
    prior_model,
    prior_noise_std,
)
from botorch_unknown_hypers.models.tabular import TabularPriorGP
from botorch_unknown_hypers.models.tabular_priors import TabularPriors
from tests.prior_helpers import NOISE, box_candidates, small_priors

BOX = BoxDomain(torch.tensor([[0.0], [20.0]], dtype=torch.float64))


def pool_of(priors: TabularPriors) -> FiniteDomain:
    return FiniteDomain(priors.arms)


def test_a_box_needs_priors_up_front():
    with pytest.raises(ValueError, match=r"^domain: PE-GP-TS on a box \(BoxDomain\) needs priors="):
        check_priors_available(None, BOX, "PE-GP-TS")
    check_priors_available(None, pool_of(small_priors()), "PE-GP-TS")  # a task may bind them later
    check_priors_available(box_candidates(), BOX, "PE-GP-TS")


def test_tabular_priors_on_their_pool_are_kept_and_moved_to_its_dtype():
    priors = small_priors()
    prepared = prepare_priors(priors, pool_of(priors))
    assert prepared.noise == NOISE and torch.equal(prepared.covariances, priors.covariances)
    pool32 = FiniteDomain(priors.arms.float())
    prepared32 = prepare_priors(priors, pool32)
    assert prepared32.means.dtype == torch.float32 and prepared32.arms is pool32.points
    # a known noise overrides the priors' own
    assert prepare_priors(priors, pool_of(priors), noise_std=0.5).noise == pytest.approx(0.25)
    assert prior_noise_std(prepared) == pytest.approx(0.25)


def test_arms_must_be_the_pool_in_order_to_a_relative_1e_6():
    priors = small_priors()
    nearly = priors.arms + 1e-7 * priors.arms.abs().max()  # within 1e-6 of the largest arm: the same pool
    prepared = prepare_priors(priors, FiniteDomain(nearly))
    assert torch.equal(prepared.arms, nearly)  # the arms are now the pool's points exactly
    for pool in (FiniteDomain(priors.arms.flip(0)), FiniteDomain(priors.arms[:10]), FiniteDomain(priors.arms + 1e-3)):
        with pytest.raises(ValueError, match=r"^task\.priors: their 15 arms must be the domain's \d+ points, in order"):
            prepare_priors(priors, pool, name="task.priors")


def test_the_kind_of_priors_must_fit_the_domain():
    priors = small_priors()
    with pytest.raises(ValueError, match=r"^priors: on a pool \(FiniteDomain\) the priors must be TabularPriors"):
        prepare_priors(box_candidates(), pool_of(priors))
    with pytest.raises(ValueError, match=r"^priors: on a box \(BoxDomain\) the priors must be a CandidateSpec"):
        prepare_priors(priors, BOX)


def test_candidate_priors_on_a_box():
    prepared = prepare_priors(box_candidates(dtype=torch.float32), BOX)
    assert prepared.lengthscale.dtype == torch.float64  # the domain's dtype
    assert prior_noise_std(prepared) == pytest.approx(0.05)
    mixed = KernelCandidates.from_lengthscales(
        torch.tensor([0.1, 0.2], dtype=torch.float64), noise=torch.tensor([0.01, 0.02], dtype=torch.float64)
    )
    with pytest.raises(ValueError, match=r"^priors: the candidates' noise variances differ"):
        prepare_priors(mixed, BOX)
    overridden = prepare_priors(mixed, BOX, noise_std=0.3)
    torch.testing.assert_close(overridden.noise_variances(), torch.full((2,), 0.09, dtype=torch.float64))
    ard = KernelCandidates.from_lengthscales(torch.tensor([[0.1, 0.2]], dtype=torch.float64))
    with pytest.raises(ValueError, match="lengthscale has 2 columns but the inputs have d = 1"):
        prepare_priors(ard, BOX)


def test_prior_model_builds_the_model_of_the_domain():
    priors = prepare_priors(small_priors(), pool_of(small_priors()))
    on_arms = prior_model(priors, pool_of(priors))
    assert isinstance(on_arms, TabularPriorGP) and on_arms.num_observations == 0
    assert on_arms.priors is priors
    on_box = prior_model(prepare_priors(box_candidates(), BOX), BOX)
    assert isinstance(on_box, BoxPriors) and on_box.num_priors == 3 and on_box.num_observations == 0
    assert torch.equal(on_box.bounds, BOX.bounds)
    assert prior_noise_std(on_box.candidates) == pytest.approx(math.sqrt(0.05**2))
