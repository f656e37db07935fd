"""Tests of Optuna's length-scale prior on the length scale
(botorch_unknown_hypers.models.inverse_square_prior): Optuna's MAP term up to a constant, a proper
density, its mode, exact samples, batch shapes, and the refusal of a bad rate."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_unknown_hypers.models.inverse_square_prior import OPTUNA_RATE, InverseSquaredLengthscalePrior

GRID = torch.linspace(1e-3, 40.0, 400_001, dtype=torch.float64)


def test_log_density_is_optunas_term_on_the_inverse_squared_length_scale_plus_a_constant():
    prior = InverseSquaredLengthscalePrior().to(torch.float64)
    ell = torch.tensor([0.05, 0.3, 1.0, 2.5, 10.0, 17.0], dtype=torch.float64)
    lam = ell.pow(-2)
    optuna_term = -(OPTUNA_RATE / lam + OPTUNA_RATE * lam)  # optuna._gp.prior.default_log_prior, per length scale
    offset = prior.log_prob(ell) - optuna_term
    torch.testing.assert_close(offset, offset[0].expand_as(offset), rtol=0.0, atol=1e-12)
    assert float(prior.log_prob(torch.tensor(10.0, dtype=torch.float64)) - prior.log_prob(torch.tensor(1.0, dtype=torch.float64))) == pytest.approx(
        -(0.1 * 100 + 0.1 / 100) + 0.2, rel=1e-12
    )  # about 10 nats for a length scale of 10 against the mode


@pytest.mark.parametrize("rate", [0.1, 0.5, 2.0])
def test_a_proper_density_with_its_mode_at_one(rate):
    prior = InverseSquaredLengthscalePrior(rate).to(torch.float64)
    density = prior.log_prob(GRID).exp()
    assert float(torch.trapezoid(density, GRID)) == pytest.approx(1.0, abs=1e-6)
    assert float(GRID[density.argmax()]) == pytest.approx(1.0, abs=1e-3)
    assert float(prior.mode) == 1.0


def test_samples_follow_the_density():
    torch.manual_seed(0)
    prior = InverseSquaredLengthscalePrior().to(torch.float64)
    samples = prior.sample(torch.Size([40_000]))
    assert samples.shape == (40_000,) and bool((samples > 0).all())
    density = prior.log_prob(GRID).exp()
    cdf = torch.cumulative_trapezoid(density, GRID)
    for q in (0.5, 1.0, 2.0, 4.0):  # empirical CDF against the integrated density, within 4 binomial SEs
        p = float(cdf[torch.searchsorted(GRID[1:], torch.tensor(q, dtype=torch.float64))])
        assert float((samples <= q).double().mean()) == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / 40_000))
    mean = float(torch.trapezoid(GRID * density, GRID))
    assert float(samples.mean()) == pytest.approx(mean, abs=4 * float(samples.std()) / 200)


def test_batch_shapes_and_expand():
    prior = InverseSquaredLengthscalePrior(torch.tensor([0.1, 1.0], dtype=torch.float64))
    assert prior.batch_shape == (2,)
    assert prior.sample(torch.Size([3])).shape == (3, 2)
    assert prior.log_prob(torch.ones(4, 2, dtype=torch.float64)).shape == (4, 2)
    expanded = InverseSquaredLengthscalePrior().expand(torch.Size([5]))
    assert expanded.batch_shape == (5,) and expanded.sample().shape == (5,)


@pytest.mark.parametrize("rate", [0.0, -0.1, float("nan"), float("inf")])
def test_refuses_a_rate_that_is_not_finite_and_positive(rate):
    with pytest.raises(ValueError, match="rate must be finite and positive, got"):
        InverseSquaredLengthscalePrior(rate)
