r"""Tests of the candidate proposals from data (botorch_unknown_hypers.models.proposals), on
functions whose truth is known."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_unknown_hypers.models.fitted import fit_default_single_task_gp
from botorch_unknown_hypers.models.proposals import (
    ISOTROPIC_LADDER,
    SHRINK_FACTORS,
    interaction_strengths,
    propose_additive_decompositions,
    propose_ard_lengthscales,
    propose_periods,
    propose_prior_means,
)


def _uniform(n: int, bounds: torch.Tensor, seed: int) -> torch.Tensor:
    u = torch.rand(n, bounds.shape[-1], generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return bounds[0] + (bounds[1] - bounds[0]) * u


def test_ard_ladder_contains_the_map_vector_and_sees_the_irrelevant_input():
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    X = _uniform(30, bounds, 0)
    Y = torch.sin(6 * X[:, :1])  # x1 is irrelevant
    cands, ell, _ = propose_ard_lengthscales(X, Y, bounds)
    reference = fit_default_single_task_gp(X, Y, bounds).covar_module.lengthscale.detach().reshape(-1)
    assert torch.allclose(ell, reference, rtol=1e-6)
    assert torch.equal(cands.lengthscale[0], ell)  # the MAP vector itself is a candidate
    assert len(cands) == len(SHRINK_FACTORS) + len(ISOTROPIC_LADDER)
    for s, row in zip(SHRINK_FACTORS, cands.lengthscale):
        assert torch.allclose(row, s * ell)
    assert torch.allclose(cands.lengthscale[len(SHRINK_FACTORS):, 0], torch.tensor(ISOTROPIC_LADDER, dtype=torch.float64))
    assert ell[0] < ell[1]  # the relevant input has the shorter length scale
    assert cands.kernel == "rbf" and (cands.noise > 0).all()


def test_ard_proposals_do_not_depend_on_the_output_scale():
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    X = _uniform(25, bounds, 1)
    Y = torch.sin(5 * X[:, :1]) + X[:, 1:] ** 2
    _, ell, _ = propose_ard_lengthscales(X, Y, bounds)
    _, ell_scaled, _ = propose_ard_lengthscales(X, 300.0 * Y + 40.0, bounds)
    assert torch.allclose(ell, ell_scaled, rtol=1e-3)


@pytest.mark.parametrize("period, lo, hi, seed", [(0.23, 0.0, 1.0, 0), (2.3, 0.0, 10.0, 1), (0.6, -2.0, 1.0, 2)])
def test_a_proposed_period_is_within_5_percent_of_the_true_one(period, lo, hi, seed):
    bounds = torch.tensor([[lo], [hi]], dtype=torch.float64)
    X = _uniform(40, bounds, seed)
    Y = torch.sin(2 * math.pi * X / period) + 0.05 * torch.randn(40, 1, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    cands = propose_periods(X, Y, bounds, num=3)
    unit_period = period / (hi - lo)
    assert len(cands) == 3
    assert (cands.period - unit_period).abs().min() / unit_period < 0.05, cands.period


def test_the_period_comes_from_the_periodic_input():
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    X = _uniform(60, bounds, 3)
    Y = torch.sin(2 * math.pi * X[:, 1:] / 0.3) + 0.2 * X[:, :1]
    cands = propose_periods(X, Y, bounds, num=2)
    assert (cands.period - 0.3).abs().min() / 0.3 < 0.05


def test_period_proposals_refuse_too_little_or_flat_data():
    bounds = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
    with pytest.raises(ValueError, match="at least 4 observations"):
        propose_periods(torch.rand(3, 1, dtype=torch.float64), torch.rand(3, 1, dtype=torch.float64), bounds)
    with pytest.raises(ValueError, match="no input that varies"):
        propose_periods(torch.full((6, 1), 0.5, dtype=torch.float64), torch.rand(6, 1, dtype=torch.float64), bounds)
    with pytest.raises(ValueError, match="num must be an integer >= 1"):
        propose_periods(torch.rand(6, 1, dtype=torch.float64), torch.rand(6, 1, dtype=torch.float64), bounds, num=0)


def test_prior_means_fit_constant_linear_and_quadratic_exactly():
    bounds = torch.tensor([[0.0, -1.0], [2.0, 1.0]], dtype=torch.float64)
    X = _uniform(20, bounds, 4)
    Y = (2.0 + 3.0 * X[:, 0] - X[:, 1] ** 2 + 0.5 * X[:, 0] * X[:, 1]).unsqueeze(-1)
    cands = propose_prior_means(X, Y, bounds)
    U = (X - bounds[0]) / (bounds[1] - bounds[0])
    y = (Y.squeeze(-1) - Y.mean()) / Y.std()
    means = cands.mean_fn(U)  # 3 x n
    assert means.shape == (3, 20)
    assert torch.allclose(means[0], torch.zeros(20, dtype=torch.float64), atol=1e-10)  # constant: the mean
    assert torch.allclose(means[2], y, atol=1e-8)  # the quadratic reproduces a quadratic
    residual = lambda m: float((m - y).square().sum())  # noqa: E731
    assert residual(means[2]) < residual(means[1]) < residual(means[0])
    assert cands.names == ["constant", "linear", "quadratic"] and len(cands) == 3
    batched = cands.mean_fn(U.expand(4, -1, -1))
    assert batched.shape == (4, 3, 20) and torch.allclose(batched[1], means)


def test_bad_factors_are_refused_by_name():
    bounds = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
    X, Y = torch.rand(6, 1, dtype=torch.float64), torch.rand(6, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match="shrink and isotropic must not both be empty"):
        propose_ard_lengthscales(X, Y, bounds, shrink=[], isotropic=[])
    with pytest.raises(ValueError, match="isotropic must be a sequence of finite numbers > 0"):
        propose_ard_lengthscales(X, Y, bounds, isotropic=[0.5, -1.0])
    with pytest.raises(ValueError, match="shrink must be a sequence of finite numbers > 0"):
        propose_ard_lengthscales(X, Y, bounds, shrink=[float("nan")])
    cands, _, _ = propose_ard_lengthscales(X, Y, bounds, shrink=[], isotropic=[0.5])  # one list may be empty
    assert cands.lengthscale.reshape(-1).tolist() == [0.5]


def test_interaction_screen_finds_the_true_additive_groups():
    bounds = torch.tensor([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]], dtype=torch.float64)
    X = _uniform(60, bounds, 5)
    # groups {0, 1} and {2}: x0 and x1 interact, x2 enters additively
    Y = (torch.sin(3 * X[:, 0]) * torch.cos(3 * X[:, 1]) + (X[:, 2] - 0.5) ** 2).unsqueeze(-1)
    cands = propose_additive_decompositions(X, Y, bounds)
    assert [[0, 1], [2]] in cands.partitions, cands.partitions
    assert [[0], [1], [2]] in cands.partitions and [[0, 1, 2]] in cands.partitions
    assert len(cands.partitions) == len({str(p) for p in cands.partitions})


def test_interaction_strengths_of_an_additive_mean_vanish():
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    X = _uniform(40, bounds, 6)
    additive = (torch.sin(4 * X[:, 0]) + X[:, 1] ** 2).unsqueeze(-1)
    product = (torch.sin(4 * X[:, 0]) * torch.sin(4 * X[:, 1])).unsqueeze(-1)
    weak = interaction_strengths(fit_default_single_task_gp(X, additive, bounds), 2)[0, 1]
    strong = interaction_strengths(fit_default_single_task_gp(X, product, bounds), 2)[0, 1]
    assert strong > 5 * weak


def test_interaction_strengths_match_per_point_hessians():
    bounds = torch.tensor([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]], dtype=torch.float64)
    X = _uniform(20, bounds, 7)
    Y = (torch.sin(3 * X[:, 0]) * X[:, 1] + X[:, 2]).unsqueeze(-1)
    model = fit_default_single_task_gp(X, Y, bounds)
    Z = torch.quasirandom.SobolEngine(3, scramble=True, seed=0).draw(16, dtype=torch.float64)
    hessians = torch.stack([
        torch.autograd.functional.hessian(lambda z: model.posterior(z.reshape(1, 1, 3)).mean.sum(), z) for z in Z
    ])
    strength = hessians.abs().mean(dim=0)
    scale = strength.diagonal().sqrt()
    expected = strength / (scale.unsqueeze(-1) * scale.unsqueeze(-2))
    assert torch.allclose(interaction_strengths(model, 3, num_points=16), expected, rtol=1e-8, atol=1e-10)
