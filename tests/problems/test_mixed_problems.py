from __future__ import annotations

import torch

from botorch_unknown_hypers.domains import MixedDomain
from botorch_unknown_hypers.problems.problem_registry import get_problem


def test_labs_optimum_is_the_best_of_every_sequence():
    problem = get_problem("labs")
    assert isinstance(problem.domain, MixedDomain) and problem.dim == 16
    assert abs(problem.optimal_value - 16 / 3) < 1e-12  # n^2 / (2 E) with E = 24 at n = 16
    X = problem.domain.sample(256, seed=0)
    y, f = problem.evaluate(X)
    assert bool((f <= problem.optimal_value + 1e-12).all()) and torch.equal(y, f)


def test_ackley_mixed_is_maximised_at_its_drawn_optimum():
    problem = get_problem("ackley-mixed")
    x_opt = problem.function.x_opt.unsqueeze(0)
    assert bool(problem.domain.contains(x_opt).all())
    assert abs(float(problem.evaluate_true(x_opt))) < 1e-9
    X = problem.domain.sample(64, seed=1)
    assert bool((problem.evaluate_true(X) < 0).all())
    assert torch.equal(get_problem("ackley-mixed").function.x_opt, problem.function.x_opt)  # the same in every build


def test_ackley_mixed_optimum_is_not_a_random_rules_first_draw():
    # Under a seed a run uses, a rule drawing uniform points from a generator with that seed must
    # not play the optimum (with the optimum drawn under seed 0, ``random`` seeded 0 did).
    from botorch_unknown_hypers.loop import run
    from botorch_unknown_hypers.policies.registry import make_policy

    problem = get_problem("ackley-mixed")
    for seed in (0, 1, 100):
        df = run(problem, make_policy("random", problem.domain, seed=seed), iterations=2, seed=seed, n_init=2)
        assert float(df["f"].max()) < -0.5, seed


def test_hpo_four_matches_the_optuna_objective_by_name():
    import math

    problem = get_problem("hpo-four")
    domain = problem.domain
    X = domain.sample(32, seed=0)
    cost = {"relu": 0.0, "tanh": 0.5, "gelu": 0.2}
    for x, f in zip(X, problem.evaluate_true(X)):
        v = domain.to_values(x)
        expected = (math.log10(v["lr"]) + 3) ** 2 + 0.3 * (v["layers"] - 3) ** 2 + cost[v["act"]] + (v["dropout"] - 0.1) ** 2
        assert abs(float(f) + expected) < 1e-12
    best = torch.tensor([domain.to_row({"lr": 1e-3, "layers": 3, "act": "relu", "dropout": 0.1})], dtype=torch.float64)
    assert abs(float(problem.evaluate_true(best))) < 1e-12 and problem.optimal_value == 0.0
    assert bool((problem.evaluate_true(X) < 0).all())


def test_run_takes_a_mixed_domain_with_a_categorical_and_refuses_a_wider_policy_domain():
    import pytest

    from botorch_unknown_hypers.domains import CategoricalParameter, FloatParameter, IntParameter
    from botorch_unknown_hypers.loop import run
    from botorch_unknown_hypers.policies.registry import make_policy

    problem = get_problem("hpo-four")
    df = run(problem, make_policy("random", problem.domain, seed=0), iterations=2, seed=0)
    assert len(df) == 12 and bool(problem.domain.contains(torch.tensor([[float(v) for v in x.split(";")] for x in df["x"]])).all())
    wider = MixedDomain((FloatParameter("lr", 1e-5, 1.0, log=True), IntParameter("layers", 1, 6),
                         CategoricalParameter("act", ("relu", "tanh", "gelu")), FloatParameter("dropout", 0.0, 0.5)))
    with pytest.raises(ValueError, match="policy.domain must lie in the problem's domain: the policy's lowest and highest points"):
        run(problem, make_policy("random", wider, seed=0), iterations=1)
