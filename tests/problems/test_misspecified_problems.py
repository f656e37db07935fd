"""Tests of the misspecified test functions (RKHS part of norm B plus a sup-norm-eps perturbation)."""

from __future__ import annotations

import pytest
import torch

from botorch_unknown_hypers.problems.misspecified_problems import PERTURBATIONS, MisspecifiedProblem, perturbation


@pytest.mark.parametrize("dim", [1, 2])
def test_rkhs_part_has_norm_exactly_B(dim):
    problem = MisspecifiedProblem(dim=dim, eps=0.1, seed=4, B=1.5, points_per_axis=12)
    assert problem.metadata["rkhs_norm"] == pytest.approx(1.5, rel=1e-12)
    assert problem.best_in_class_values.abs().max() <= 1.5  # |f| <= B sqrt(k(x, x))


@pytest.mark.parametrize("kind", PERTURBATIONS)
@pytest.mark.parametrize("dim", [1, 2])
def test_perturbation_has_sup_norm_exactly_eps(kind, dim):
    problem = MisspecifiedProblem(dim=dim, kind=kind, eps=0.2, seed=1, points_per_axis=15)
    m = problem.perturbation_values
    assert float(m.abs().max()) == pytest.approx(0.2, rel=1e-12)
    X = problem.domain.points
    assert torch.allclose(problem.evaluate_true(X), problem.best_in_class_values + m)
    assert torch.equal(problem.evaluate_best_in_class(X), problem.best_in_class_values)
    assert problem.optimal_value == pytest.approx(float((problem.best_in_class_values + m).max()))
    zero = MisspecifiedProblem(dim=dim, kind=kind, eps=0.0, seed=1, points_per_axis=15)
    assert torch.equal(zero.perturbation_values, torch.zeros_like(m))


@pytest.mark.parametrize("eps", [0.05, 0.1, 0.2])
@pytest.mark.parametrize("seed", range(4))
def test_adversarial_needle_always_holds_the_optimum(eps, seed):
    problem = MisspecifiedProblem(dim=1, kind="adversarial", eps=eps, seed=seed)
    f_star = problem.evaluate_true(problem.domain.points)
    on_needle = problem.perturbation_values > 0
    assert bool(on_needle[int(torch.argmax(f_star))])
    # the needle beats every point off it by at least eps / 2
    assert float(f_star[on_needle].max() - f_star[~on_needle].max()) >= eps / 2 - 1e-12


def test_same_rkhs_function_across_kinds_and_eps_and_determinism():
    a = MisspecifiedProblem(dim=1, kind="rough", eps=0.05, seed=7)
    b = MisspecifiedProblem(dim=1, kind="biased", eps=0.2, seed=7)
    c = MisspecifiedProblem(dim=1, kind="rough", eps=0.05, seed=8)
    assert torch.equal(a.best_in_class_values, b.best_in_class_values)
    assert not torch.equal(a.best_in_class_values, c.best_in_class_values)
    assert torch.equal(a.perturbation_values, MisspecifiedProblem(dim=1, kind="rough", eps=0.05, seed=7).perturbation_values)
    assert torch.equal(a.instance(8).best_in_class_values, c.best_in_class_values)


def test_bad_inputs_raise_value_error():
    with pytest.raises(ValueError, match="kind"):
        MisspecifiedProblem(kind="sawtooth")
    with pytest.raises(ValueError, match="eps"):
        MisspecifiedProblem(eps=-0.1)
    with pytest.raises(ValueError, match="dim"):
        MisspecifiedProblem(dim=0)
    with pytest.raises(ValueError, match="kind"):
        perturbation("sawtooth", 0.1, torch.zeros(3, 1), torch.zeros(3), torch.Generator())
    problem = MisspecifiedProblem(dim=1, points_per_axis=11)
    with pytest.raises(ValueError, match="grid"):
        problem.evaluate_true(torch.tensor([[0.123]], dtype=torch.float64))
