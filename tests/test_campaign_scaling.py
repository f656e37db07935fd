import cProfile
import math

import pytest
import torch

from tests.benchmark_loader import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("campaign_scaling")


def test_exponent_recovers_a_power_law(bench):
    assert bench.exponent([(n, 3e-7 * n**1.7) for n in (1000, 2000, 4000, 10000)]) == pytest.approx(1.7)


def test_factorisations_and_solves_are_counted_apart(bench):
    A = torch.eye(60, dtype=torch.float64) * 2 + 0.1
    profile = cProfile.Profile()
    profile.enable()
    L = torch.linalg.cholesky(A)
    for _ in range(3):
        torch.cholesky_solve(torch.ones(60, 1, dtype=torch.float64), L)
    profile.disable()
    factorise, solve = bench._cholesky_seconds(profile)
    assert factorise > 0 and solve > 0
    stats = {k[2]: v[1] for k, v in __import__("pstats").Stats(profile).stats.items()}
    assert sum(c for name, c in stats.items() if "cholesky_solve" in name) == 3


def test_a_fixed_ladder_keeps_its_size_through_the_timed_rounds(bench):
    result = bench.measure("lb-gp-ucb", 40, 2, "cpu", 0, lb_k=10)  # r^10 = e in d = 5: no length scale enters before round 7
    assert result["candidates"] == 10 and result["median_s"] > 0
    assert 0 <= result["cholesky_share"] <= 1 and 0 <= result["cholesky_solve_share"] <= 1
    assert result["syncs_per_round"] is None  # counted on CUDA only
    ratio = bench.p5_ratio(40, 3, 1, "cpu", 0)
    assert ratio["k"] == 3 and ratio["floor_s"] == pytest.approx(ratio["cholesky_s"] + ratio["matmuls_s"])
    assert math.isclose(ratio["p5"], ratio["median_s"] / ratio["floor_s"])
