import numpy as np
import pytest
import torch

from botorch_unknown_hypers.problems.bbob_problems import (
    BBOB_FUNCTIONS,
    DEV_INSTANCES,
    NOISE_FRACTION,
    REPORT_INSTANCES,
    BBOBProblem,
    bbob_name,
    bbob_problem,
    parse_bbob_name,
    sobol_box_points,
)

ioh = pytest.importorskip("ioh")


def test_names_round_trip_and_bad_names_are_refused():
    assert parse_bbob_name(bbob_name(3, 2, 5)) == (3, 2, 5, False)
    assert parse_bbob_name(bbob_name(24, 1, 10, noisy=True)) == (24, 1, 10, True)
    for bad in ["bbob-f25-i1-d5", "bbob-f0-i1-d5", "bbob-f1-i0-d5", "bbob-f1-i1-d1", "bbob-f1-i1", "sphere", 3]:
        with pytest.raises(ValueError):
            parse_bbob_name(bad)


def test_instance_split_is_disjoint():
    assert set(DEV_INSTANCES) == {1, 2, 3, 4, 5}
    assert not set(DEV_INSTANCES) & set(REPORT_INSTANCES) and len(REPORT_INSTANCES) >= 10


@pytest.mark.parametrize("function", BBOB_FUNCTIONS)
def test_every_function_is_maximised_with_its_optimum_at_the_optimizer(function):
    for dim in (2, 5, 10):
        problem = BBOBProblem(function, instance=1, dim=dim)
        x_star = torch.tensor([problem.metadata["optimizer"]], dtype=torch.float64)
        assert problem.domain.contains(x_star).all()
        torch.testing.assert_close(problem.evaluate_true(x_star), torch.tensor([problem.optimal_value], dtype=torch.float64))
        Z = problem.domain.sample(512, seed=1)
        assert (problem.evaluate_true(Z) <= problem.optimal_value + 1e-9).all()
        assert problem.n_init == 2 * dim and problem.noise_std == 0.0


def test_values_are_coco_values_negated_and_spread_is_the_sobol_quantile_range():
    problem = BBOBProblem(7, instance=3, dim=5)
    reference = ioh.get_problem(7, instance=3, dimension=5, problem_class=ioh.ProblemClass.BBOB)
    X = np.random.default_rng(0).uniform(-5, 5, size=(20, 5))
    g = np.array([reference(list(x)) for x in X])  # one point at a time: the brute-force reference
    np.testing.assert_allclose(problem.evaluate_true(torch.tensor(X)).numpy(), -g, rtol=1e-12)
    values = np.array([reference(list(x)) for x in sobol_box_points(5)])
    assert problem.spread == pytest.approx(np.quantile(values, 0.95) - np.quantile(values, 0.05), rel=1e-12)
    assert problem.optimal_value == pytest.approx(-reference.optimum.y)


def test_batch_shapes_dtype_and_instances_differ():
    problem = bbob_problem("bbob-f1-i1-d2")
    X = problem.domain.sample(6, seed=0).reshape(2, 3, 2).float()
    f = problem.evaluate_true(X)
    assert f.shape == (2, 3) and f.dtype == torch.float32
    other = bbob_problem("bbob-f1-i2-d2")
    assert other.optimal_value != problem.optimal_value or other.metadata["optimizer"] != problem.metadata["optimizer"]


def test_noisy_variant_has_noise_at_the_stated_fraction_and_regret_on_the_noiseless_value():
    clean, noisy = bbob_problem("bbob-f2-i1-d5"), bbob_problem("bbob-f2-i1-d5-noisy")
    assert noisy.noise_std == pytest.approx(NOISE_FRACTION * clean.spread) and noisy.noise_std > 0
    X = clean.domain.sample(2000, seed=0)
    y, f = noisy.evaluate(X, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(f, clean.evaluate_true(X))
    residual = (y - f) / noisy.noise_std
    assert abs(float(residual.mean())) < 0.1 and abs(float(residual.std()) - 1.0) < 0.1
