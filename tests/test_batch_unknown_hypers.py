import json
from pathlib import Path

import pytest

from tests.benchmark_loader import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("batch_unknown_hypers")


def test_real_runs_at_two_batch_sizes_and_the_paired_check(bench, tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "EVALUATIONS", 4)  # a smoke run: 4 evaluations after the initial design
    for seed in (0, 1):
        for q in (1, 4):
            path = Path(bench.run_one(str(tmp_path), "agnp", "he-gp-ucb[num_restarts=2&raw_samples=32]", q, seed, 1))
            record = json.loads(path.read_text())
            assert record["q"] == q and len(record["f"]) == bench.N_INIT + 4
            assert record["wall_per_evaluation_s"] == pytest.approx(record["wall_time_s"] / 4)
    text = bench.report(tmp_path)
    assert "## agnp" in text and "| agnp | he-gp-ucb[num_restarts=2&raw_samples=32] |" in text
    rows = [line for line in text.splitlines() if line.startswith("| he-gp-ucb")]
    assert [line.split(" | ")[1] for line in rows] == ["1", "4"]  # one row per batch size


@pytest.mark.parametrize("problem", ["agnp", "hartmann6"])
def test_prior_rules_get_the_benchmark_prior_set_on_a_pool_and_a_box(bench, tmp_path, monkeypatch, problem):
    from botorch_unknown_hypers.problems.problem_registry import get_problem

    priors = bench.prior_set(get_problem(problem).domain)
    assert len(priors) == len(bench.PRIOR_LENGTHSCALES)
    monkeypatch.setattr(bench, "EVALUATIONS", 4)
    path = Path(bench.run_one(str(tmp_path), problem, "hp-gp-ts[num_restarts=2&raw_samples=32]", 4, 0, 1))
    record = json.loads(path.read_text())
    assert record["q"] == 4 and len(record["f"]) == bench.N_INIT + 4
