import json
import math
import statistics
from pathlib import Path

import pytest

from tests.benchmark_loader import load_benchmark


@pytest.fixture(scope="module")
def suite():
    return load_benchmark("practical_suite")


def test_method_specs_and_seeds(suite):
    assert suite.parse_method("qlognei") == ("qlognei", {"surrogate": "fitted"})
    assert suite.parse_method("lb-gp-ucb-auto[shrink=[1.0,0.5]&acquisition=ucb]") == (
        "lb-gp-ucb-auto", {"shrink": [1.0, 0.5], "acquisition": "ucb"})
    with pytest.raises(ValueError, match="key=value"):
        suite.parse_method("lb-gp-ucb-auto[shrink]")
    assert suite.parse_seeds("0-2,7") == [0, 1, 2, 7]


def _write(out, problem, method, seed, sr, cr, wall=1.0):
    path = out / problem / method / f"seed{seed}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"problem": problem, "method": method, "seed": seed, "final_simple_regret": sr,
                                "cumulative_regret": cr, "simple_regret": [sr + 1, sr], "wall_time_s": wall,
                                "threads": 1, "machine": "test"}))


def test_report_pairs_by_seed_and_marks_2_se(suite, tmp_path):
    q = [1.0, 2.0, 3.0, 4.0]
    a = [0.5, 1.4, 2.6, 3.5]  # differences -0.5, -0.6, -0.4, -0.5: clearly better
    for s in range(4):
        _write(tmp_path, "branin", "qlognei", s, q[s], 10.0, wall=5.0)
        _write(tmp_path, "branin", "lb-gp-ucb-auto", s, a[s], 9.0, wall=2.0)
        _write(tmp_path, "branin", "mle-gp-ucb", s, q[s], 10.0)
    text = suite.report(tmp_path)
    d = [x - y for x, y in zip(a, q)]
    mean = sum(d) / 4
    se = math.sqrt(sum((x - mean) ** 2 for x in d) / 3 / 4)
    row = next(line for line in text.splitlines() if line.startswith("| lb-gp-ucb-auto"))
    assert suite.fmt(mean, se) + " *" in row
    assert "against qlognei on 1 problems:" in text and "lower mean SR on 1" in text and "2.0 s vs qlognei 5.0 s" in text
    assert "significantly worse than mle-gp-ucb on 0 of 1 []; lower SR than lb-gp-ucb on n/a (not run)." in text
    assert (tmp_path / "report.md").exists()
    for s in range(4):  # without mle-gp-ucb the record says it was not run, not that the preset was never worse
        (tmp_path / "branin" / "mle-gp-ucb" / f"seed{s}.json").unlink()
    assert "significantly worse than mle-gp-ucb on n/a (not run);" in suite.report(tmp_path)


def test_bars_against_both_peers_count_problems_and_hold_only_when_every_bar_does(suite, tmp_path):
    problems = [f"p{k}" for k in range(10)]
    for k, p in enumerate(problems):
        for s in range(10):
            _write(tmp_path, p, "qlognei", s, 1.0 + s, 10.0, wall=5.0)
            _write(tmp_path, p, "optuna-gp", s, 0.1 + 0.01 * s, 10.0, wall=1.0)  # below the preset everywhere
            # lower than qlognei on p0-p6; on p9 worse in every seed (significantly); CR lower on p0-p5
            sr = [0.5 + s] * 7 + [1.0 + s, 1.0 + s, 3.0 + 1.1 * s]
            _write(tmp_path, p, "lb-gp-ucb-auto", s, sr[k], 9.0 if k < 6 else 11.0, wall=2.0)
    _write(tmp_path, "p0", "lb-gp-ucb-auto", 10, 0.5, 1e6, wall=2.0)  # a seed qlognei lacks: out of every pairing
    text = suite.report(tmp_path, spread=lambda p: 1.0)
    lines = {line.split(" on ")[0]: line for line in text.splitlines() if line.startswith("- **lb-gp-ucb-auto** against")}
    q = lines["- **lb-gp-ucb-auto** against qlognei"]
    assert "on 10 problems:" in q and "lower mean SR on 7 (bar 60%)" in q and "significantly worse on 1 [p9] (bar 10%)" in q
    assert "at least 10 seeds per problem" in q and "2.0 s vs qlognei 5.0 s" in q
    assert "CR <= qlognei's on 6 (bar 60%)" in q and q.endswith("bars hold.")
    o = lines["- **lb-gp-ucb-auto** against optuna-gp"]
    assert "lower mean SR on 0" in o and o.endswith("bars do not hold.")
    # the areas: traces [sr + 1, sr] against COCO's 51 targets, averaged over problems and seeds
    runs = [r for r in (json.loads(f.read_text()) for f in tmp_path.glob("*/*/seed*.json")) if r["seed"] < 10]  # the pairs
    hits = lambda r: sum(sum(v <= t for t in suite_targets()) for v in r["simple_regret"]) / (2 * 51)  # noqa: E731
    area = {m: statistics.mean(hits(r) for r in runs if r["method"] == m) for m in ("lb-gp-ucb-auto", "qlognei", "optuna-gp")}
    assert f"ECDF area {area['lb-gp-ucb-auto']:.3f} vs {area['qlognei']:.3f} (bar: higher)" in q
    assert f"ECDF area {area['lb-gp-ucb-auto']:.3f} vs {area['optuna-gp']:.3f}" in o and area["lb-gp-ucb-auto"] > area["qlognei"]
    for s in range(10):  # CR above qlognei's on one more problem: 5 of 10 < 6
        _write(tmp_path, "p5", "lb-gp-ucb-auto", s, 0.5 + s, 11.0, wall=2.0)
    text = suite.report(tmp_path, spread=lambda p: 1.0)
    q = next(line for line in text.splitlines() if line.startswith("- **lb-gp-ucb-auto** against qlognei"))
    assert "CR <= qlognei's on 5" in q and q.endswith("bars do not hold.")
    for s in range(9, 10):  # one seed fewer of the preset on p3: 9 pairs there
        (tmp_path / "p3" / "lb-gp-ucb-auto" / f"seed{s}.json").unlink()
    for s in range(10):
        _write(tmp_path, "p5", "lb-gp-ucb-auto", s, 0.5 + s, 9.0, wall=2.0)
    q = next(line for line in suite.report(tmp_path, spread=lambda p: 1.0).splitlines() if line.startswith("- **lb-gp-ucb-auto** against qlognei"))
    assert "at least 9 seeds per problem" in q and q.endswith("bars do not hold.")
    text = suite.report(tmp_path, spread=lambda p: 0.0)  # no targets: the problems leave the bars
    assert not any(line.startswith("- **lb-gp-ucb-auto** against") for line in text.splitlines())


def suite_targets():
    from botorch_unknown_hypers.benchmarks.bbob_report import TARGETS

    return list(TARGETS)


def test_problem_spread_is_the_5_95_range_over_sobol_points_or_the_pool(suite):
    import numpy as np
    import torch

    from botorch_unknown_hypers.problems.problem_registry import get_problem

    branin = get_problem("branin")
    unit = torch.quasirandom.SobolEngine(2, scramble=True, seed=0).draw(4096, dtype=torch.float64)
    lo, hi = branin.domain.bounds
    f = branin.evaluate_true(lo + (hi - lo) * unit).numpy()
    assert suite.problem_spread("branin") == pytest.approx(float(np.quantile(f, 0.95) - np.quantile(f, 0.05)), rel=1e-12)
    agnp = get_problem("agnp")
    f = agnp.evaluate_true(agnp.domain.points).numpy()
    assert suite.problem_spread("agnp") == pytest.approx(float(np.quantile(f, 0.95) - np.quantile(f, 0.05)), rel=1e-12)


def test_one_real_run_is_written_and_skipped_when_present(suite, tmp_path):
    path = Path(suite.run_one(str(tmp_path), "berkenkamp", "random", 3, 1))
    record = json.loads(path.read_text())
    assert record["iterations"] == 60 and len(record["f"]) == 70
    best = max(record["f"])
    assert record["final_simple_regret"] == pytest.approx(record["f_star"] - best)
    assert record["cumulative_regret"] == pytest.approx(sum(record["f_star"] - v for v in record["f"][10:]))
    assert isinstance(record["warnings"], dict) and all(isinstance(n, int) and n > 0 for n in record["warnings"].values())
    suite.sweep(tmp_path, ["berkenkamp"], ["random"], [3], workers=1, threads=1)  # nothing to do
    assert json.loads(path.read_text()) == record


def test_optuna_peer_runs_on_a_pool(suite, tmp_path):
    pytest.importorskip("optuna")
    record = json.loads(Path(suite.run_one(str(tmp_path), "agnp", "optuna-gp", 0, 1)).read_text())
    assert record["iterations"] == 50 and len(record["f"]) == 60
    assert record["final_simple_regret"] == pytest.approx(record["f_star"] - max(record["f"]))
    assert len(set(record["f"])) == 60  # a pool point is not played twice while others are unobserved


def _record(problem, method, seed, regret, wall=1.0):
    return {"problem": problem, "method": method, "seed": seed, "final_simple_regret": regret, "wall_time_s": wall}


def test_option_decision_pairs_by_seed_refuses_incomplete_data_and_vetoes_one_worse_pair(suite):
    assert suite.with_option("he-gp-ucb", "search=torch") == "he-gp-ucb[search=torch]"
    assert suite.with_option("lb-gp-ucb-auto[growth=1.01]", "search=torch") == "lb-gp-ucb-auto[growth=1.01&search=torch]"
    seeds, option = [100, 101, 102], "search=torch"
    base = {"a": [1.0, 2.0, 3.0], "b": [0.5, 0.7, 0.9]}
    shift = {("a", "p"): [0.1, -0.1, 0.0], ("a", "q"): [0.0, 0.0, 0.0], ("b", "p"): [-0.2, 0.1, -0.3], ("b", "q"): [0.01, 0.01, 0.02]}
    records = []
    for (m, p), d in shift.items():
        for i, s in enumerate(seeds):
            records += [_record(p, m, s, base[m][i], wall=2.0 + i), _record(p, f"{m}[{option}]", s, base[m][i] + d[i], wall=1.0)]
    decision = suite.option_decision(records, option, ["a", "b"], ["p", "q"], seeds)
    rows = {(r["method"], r["problem"]): r for r in decision["rows"]}
    for key, d in shift.items():  # brute force: mean and SE of the differences, worse iff mean > 2 SE
        mean = sum(d) / 3
        se = math.sqrt(sum((x - mean) ** 2 for x in d) / 2 / 3)
        assert rows[key]["diff"] == pytest.approx(mean) and rows[key]["se"] == pytest.approx(se)
        assert rows[key]["worse"] == (mean > 2 * se)
    assert [k for k, r in rows.items() if r["worse"]] == [("b", "q")]  # +0.0133 with SE 0.0033
    assert decision["adopt"] is False and rows[("a", "p")]["wall"] == 3.0 and rows[("a", "p")]["wall_option"] == 1.0
    shift[("b", "q")] = [0.01, -0.01, 0.0]
    records = [r for r in records if not (r["problem"] == "q" and r["method"] == f"b[{option}]")]
    records += [_record("q", f"b[{option}]", s, base["b"][i] + shift[("b", "q")][i]) for i, s in enumerate(seeds)]
    assert suite.option_decision(records, option, ["a", "b"], ["p", "q"], seeds)["adopt"] is True
    incomplete = suite.option_decision(records[1:], option, ["a", "b"], ["p", "q"], seeds)
    assert incomplete["adopt"] is None and len(incomplete["missing"]) == 1
    assert "No decision" in suite.decision_table(incomplete, option)
    assert "becomes the default" in suite.decision_table(suite.option_decision(records, option, ["a", "b"], ["p", "q"], seeds), option)
