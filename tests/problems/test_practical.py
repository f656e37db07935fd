import math

import pytest
import torch

from botorch_unknown_hypers.problems import get_problem
from botorch_unknown_hypers.problems.practical import practical_benchmark

OPTIMA = {"branin": [[-math.pi, 12.275], [math.pi, 2.275], [9.42478, 2.475]], "rosenbrock4": [[1.0] * 4], "ackley5": [[0.0] * 5]}


@pytest.mark.parametrize("name", sorted(OPTIMA))
def test_known_optimisers_attain_the_optimal_value(name):
    problem = get_problem(name)
    X = torch.tensor(OPTIMA[name], dtype=torch.float64)
    torch.testing.assert_close(problem.evaluate_true(X), torch.full((X.shape[0],), problem.optimal_value, dtype=torch.float64), atol=1e-5, rtol=0)
    Z = problem.domain.sample(256, seed=0)
    assert (problem.evaluate_true(Z) <= problem.optimal_value + 1e-9).all()
    assert problem.n_init == 10 and problem.noise_std == 0.0


def test_an_unhashable_name_is_refused_with_the_names_not_a_type_error():
    with pytest.raises(ValueError, match=r"^name must be one of \[.*\], got \['branin'\]\."):
        practical_benchmark(["branin"])
