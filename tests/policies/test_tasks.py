"""Tests of what a problem may tell a rule about itself (botorch_unknown_hypers.policies.tasks)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec
from botorch_unknown_hypers.policies.tasks import TaskInfo
from tests.prior_helpers import small_priors

SPEC = SurrogateSpec(kernel="matern52", lengthscale=(0.7,), outputscale=1.0, noise_variance=1e-6)


def test_every_field_is_optional_and_the_info_is_frozen():
    info = TaskInfo()
    assert (info.name, info.priors, info.true_prior, info.surrogate) == (None, None, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.name = "other"


def test_valid_facts_are_kept_as_given():
    priors = small_priors()
    info = TaskInfo(name="gp-kernel", priors=priors, true_prior=2, surrogate=SPEC)
    assert info.name == "gp-kernel" and info.priors is priors and info.true_prior == 2 and info.surrogate is SPEC
    assert TaskInfo(true_prior=0, priors=priors).true_prior == 0  # the first prior
    assert TaskInfo(true_prior=17).true_prior == 17  # without priors there is nothing to check against
    assert dataclasses.replace(info, true_prior=1).true_prior == 1


@pytest.mark.parametrize(
    "priors", [KernelCandidates.from_lengthscales(torch.tensor([0.1, 0.2], dtype=torch.float64)), "gp-kernel", 3]
)
def test_priors_must_be_tabular(priors):
    with pytest.raises(ValueError, match="^priors must be TabularPriors or None"):
        TaskInfo(priors=priors)


@pytest.mark.parametrize("true_prior", [-1, True, 1.0, "0", torch.tensor(1)], ids=repr)
def test_true_prior_must_be_a_non_negative_int(true_prior):
    with pytest.raises(ValueError, match="^true_prior must be a non-negative int or None"):
        TaskInfo(true_prior=true_prior)


@pytest.mark.parametrize("true_prior", [3, 10])
def test_true_prior_must_index_one_of_the_priors(true_prior):
    with pytest.raises(ValueError, match=rf"^true_prior {true_prior} is not one of the 3 priors"):
        TaskInfo(priors=small_priors(), true_prior=true_prior)


def test_surrogate_must_be_a_surrogate_spec():
    with pytest.raises(ValueError, match="^surrogate must be a SurrogateSpec or None, got dict"):
        TaskInfo(surrogate={"kernel": "matern52", "lengthscale": 0.7})
