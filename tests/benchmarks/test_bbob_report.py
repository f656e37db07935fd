import itertools
import json
import math
import statistics

import numpy as np
import pytest

from botorch_unknown_hypers.benchmarks.bbob import RECORD_FORMAT, RECORD_VERSION
from botorch_unknown_hypers.benchmarks.bbob_report import (
    TARGETS,
    auc,
    average_ranks,
    common_runs,
    ecdf_evaluations,
    ecdf_time,
    load_runs,
    paired_table,
    run_scores,
    runs_frame,
    variant_decision,
    write_report,
)

N = 8


def _record(function, instance, seed, method, rng, noisy=False, spread=None):
    spread = float(rng.uniform(0.5, 50.0)) if spread is None else spread
    f = list(-np.exp(rng.uniform(-12, 3, size=N)))  # f* = 0: regrets over many decades
    best = list(np.maximum.accumulate(f))
    steps = rng.uniform(0.0, 2.0, size=N)
    steps[:2] = 0.0  # the initial design costs no proposal time
    problem = f"bbob-f{function}-i{instance}-d2" + ("-noisy" if noisy else "")
    return {
        "format": RECORD_FORMAT, "version": RECORD_VERSION, "complete": True,
        "config": {"problem": problem, "function": function, "instance": instance, "dim": 2, "noisy": noisy,
                   "seed": seed, "method": method, "spread": spread, "f_star": 0.0},
        "f": f, "best_f": best, "simple_regret": [-b for b in best], "final_simple_regret": -best[-1],
        "cumulative_time_s": list(np.cumsum(steps)), "cpu_s": 1.0,
    }


def _write(tmp_path, records):
    for r in records:
        c = r["config"]
        path = tmp_path / f"d{c['dim']}" / c["problem"] / f"{c['method']}-seed{c['seed']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(r))


@pytest.fixture
def records():
    rng = np.random.default_rng(0)
    return [_record(k, i, s, m, rng) for k, i, s, m in itertools.product([1, 2, 3], [1, 2], [0, 1], ["a", "b", "c"])]


def _first_hits(record, targets):
    r = [v / record["config"]["spread"] for v in record["simple_regret"]]
    return [next((n + 1 for n in range(N) if r[n] <= t), math.inf) for t in targets]


def test_ecdf_over_evaluations_and_auc_match_first_hitting_counts(tmp_path, records):
    _write(tmp_path, records)
    frame = runs_frame(load_runs(tmp_path))
    assert len(frame) == len(records)
    curves = ecdf_evaluations(frame)
    for method in "abc":
        hits = [h for r in records if r["config"]["method"] == method for h in _first_hits(r, TARGETS)]
        brute = [sum(h <= n for h in hits) / len(hits) for n in range(1, N + 1)]
        np.testing.assert_allclose(curves[method], brute)
        assert auc(curves[method]) == pytest.approx(sum(brute) / N)
    assert 0 < curves["a"][0] < curves["a"][-1] < 1


def test_ecdf_over_time_matches_first_hitting_times(records):
    frame = runs_frame(records)
    times = np.array([0.0, 0.3, 1.0, 2.5, 4.0, 100.0])
    curves = ecdf_time(frame, times)
    for method in "abc":
        hit_times = []
        for r in (r for r in records if r["config"]["method"] == method):
            for h in _first_hits(r, TARGETS):
                hit_times.append(math.inf if h == math.inf else r["cumulative_time_s"][h - 1])
        brute = [sum(h <= t for h in hit_times) / len(hit_times) for t in times]
        np.testing.assert_allclose(curves[method], brute)


def test_paired_differences_match_a_direct_computation(records):
    frame = runs_frame(records[:-1])  # the last (f3, i2, seed 1, c) is missing: one pair fewer for c on f3
    table = paired_table(frame, reference="a").set_index(["function", "method"])
    for function, method in itertools.product([1, 2, 3], "bc"):
        final = {(r["config"]["instance"], r["config"]["seed"], r["config"]["method"]): r["final_simple_regret"]
                 for r in records[:-1] if r["config"]["function"] == function}
        diffs = [final[(i, s, method)] - final[(i, s, "a")] for i, s in itertools.product([1, 2], [0, 1]) if (i, s, method) in final]
        row = table.loc[(function, method)]
        assert row["pairs"] == len(diffs) == (3 if (function, method) == (3, "c") else 4)
        assert row["mean_diff"] == pytest.approx(statistics.mean(diffs))
        assert row["se"] == pytest.approx(statistics.stdev(diffs) / math.sqrt(len(diffs)))
        assert (row["better"], row["worse"]) == (sum(d < 0 for d in diffs), sum(d > 0 for d in diffs))
        expected = "" if abs(statistics.mean(diffs)) <= 2 * row["se"] else ("better" if statistics.mean(diffs) < 0 else "worse")
        assert row["significant"] == expected
        mine = [v for (i, s, m), v in final.items() if m == method]
        assert row["mean_final_regret"] == pytest.approx(statistics.mean(mine))


def test_paired_difference_marks_a_clear_winner_significant():
    rng = np.random.default_rng(1)
    recs = []
    for i in range(1, 6):
        ref = _record(4, i, 0, "ref", rng, spread=1.0)
        good = json.loads(json.dumps(ref))
        good["config"]["method"] = "good"
        good["final_simple_regret"] = ref["final_simple_regret"] - 1.0 - 0.01 * i
        recs += [ref, good]
    row = paired_table(runs_frame(recs), "ref").set_index("method").loc["good"]
    assert row["significant"] == "better" and row["better"] == 5 and row["mean_diff"] == pytest.approx(-1.03)


def test_average_ranks_with_ties_and_only_common_runs():
    rng = np.random.default_rng(2)
    recs = []
    regrets = {(1, 0): {"a": 1.0, "b": 2.0, "c": 3.0}, (1, 1): {"a": 2.0, "b": 2.0, "c": 1.0},
               (2, 0): {"a": 5.0, "b": 4.0, "c": 4.0}}
    for (function, seed), values in regrets.items():
        for method, value in values.items():
            r = _record(function, 1, seed, method, rng)
            r["final_simple_regret"] = value
            recs.append(r)
    extra = _record(2, 1, 1, "a", rng)  # run by one method only: left out
    extra["final_simple_regret"] = 100.0
    frame = runs_frame(recs + [extra])
    assert len(common_runs(frame)) == 9
    table = average_ranks(frame)
    # brute force: ranks per (function, seed), ties averaged
    assert table.loc["a", 1] == pytest.approx((1 + 2.5) / 2) and table.loc["c", 1] == pytest.approx((3 + 1) / 2)
    assert table.loc["a", 2] == 3 and table.loc["b", 2] == 1.5
    assert table.loc["b", "all"] == pytest.approx((2 + 2.5 + 1.5) / 3)
    np.testing.assert_allclose(table["all"].sum(), 6.0)  # ranks of 3 methods average to 2


def test_report_writes_tables_and_labelled_plots(tmp_path, records):
    noisy = [_record(1, 1, 0, m, np.random.default_rng(3), noisy=True) for m in "ab"]
    _write(tmp_path, records + noisy)
    (tmp_path / "d2" / "bbob-f1-i1-d2" / "broken-seed0.json").write_text("{not json")
    path = write_report(tmp_path, reference="a")
    text = path.read_text()
    assert "## d2:" in text and "## d2-noisy:" in text and "AUC (evaluations)" in text
    for name in ["ecdf_evaluations_d2.png", "ecdf_time_d2.png", "ranks_d2.csv", "paired_d2.csv", "ecdf_evaluations_d2-noisy.png"]:
        assert (path.parent / name).exists()
    with pytest.raises(ValueError, match="no complete"):
        write_report(tmp_path / "empty")


def test_variant_decision_applies_the_written_rule():
    rng = np.random.default_rng(3)
    shifts = {  # decades added to the baseline's normalised regret, per function
        "v-better": {1: -1.0, 2: -1.0, 3: 0.0, 4: 0.0},
        "v-best-but-worse-twice": {1: -3.0, 2: -3.0, 3: 0.5, 4: 0.5},  # better on 2 functions, worse on 2
        "v-mixed": {1: -2.0, 2: -2.0, 3: 0.5, 4: 0.0},  # better on 2, worse on 1
        "v-same": {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0},
    }
    recs = []
    for function, instance, noisy in itertools.product([1, 2, 3, 4], range(1, 6), [False, True]):
        base = _record(function, instance, 0, "v0", rng, noisy=noisy, spread=2.0)
        base["final_simple_regret"] = 2.0 * 10 ** float(rng.uniform(-6, -1))
        recs.append(base)
        for name, by in shifts.items():
            r = json.loads(json.dumps(base))
            r["config"]["method"] = name
            noise = 0.1 * (instance - 3) + (0.05 if noisy else 0.0)  # paired differences with spread
            r["final_simple_regret"] = base["final_simple_regret"] * 10 ** (by[function] + noise)
            recs.append(r)
    frame = runs_frame(recs)
    scores = run_scores(frame)
    assert scores.iloc[0] == pytest.approx(math.log10(recs[0]["final_simple_regret"] / 2.0))
    table, kept = variant_decision(frame, "v0", list(shifts), expected_pairs=40)
    table = table.set_index("variant")
    diff = np.array([0.1 * (i - 3) + (0.05 if z else 0.0) for i, z in itertools.product(range(1, 6), [False, True])])
    by = shifts["v-better"]
    d = np.concatenate([by[f] + diff for f in [1, 2, 3, 4]])  # brute force, one function after another
    assert table.loc["v-better", "pairs"] == 40
    assert table.loc["v-better", "mean_diff"] == pytest.approx(d.mean())
    assert table.loc["v-better", "se"] == pytest.approx(d.std(ddof=1) / math.sqrt(40))
    assert table.loc["v-better", ["functions_better", "functions_worse"]].tolist() == [2, 0]
    assert table.loc["v-best-but-worse-twice", ["functions_better", "functions_worse"]].tolist() == [2, 2]
    assert table.loc["v-best-but-worse-twice", "beats"]  # worse on 2 <= better on 2
    # per function and noise setting (5 instances each): both settings of functions 1-2 better,
    # of 3-4 worse where shifted by 0.5; the 0.05 of a noisy instance is within 2 SE (0.14)
    assert table.loc["v-better", ["settings_better", "settings_worse"]].tolist() == [4, 0]
    assert table.loc["v-best-but-worse-twice", ["settings_better", "settings_worse"]].tolist() == [4, 4]
    assert table.loc["v-same", ["settings_better", "settings_worse"]].tolist() == [0, 0]
    assert table.loc["v-mixed", "beats"] and table.loc["v-better", "beats"] and not table.loc["v-same", "beats"]
    assert kept == "v-best-but-worse-twice"  # the lowest mean of those that beat V0
    _, kept = variant_decision(frame, "v0", ["v-better", "v-same"], expected_pairs=40)
    assert kept == "v-better"
    _, kept = variant_decision(frame, "v0", ["v-same"], expected_pairs=40)
    assert kept == "v0"  # none beats the baseline: it stays
    _, kept = variant_decision(frame[frame["instance"] < 5], "v0", ["v-better"], expected_pairs=40)
    assert kept is None  # runs missing: no decision yet
    worse = frame[frame["method"] != "v-mixed"].copy()
    worse.loc[(worse["method"] == "v-better") & (worse["function"] == 3), "final_simple_regret"] *= 1e3
    table, _ = variant_decision(worse, "v0", ["v-better"])
    row = table.iloc[0]
    assert row["functions_worse"] == 1 and row["functions_better"] == 2 and row["beats"] == (row["mean_diff"] < -2 * row["se"])


def test_command_line_prints_the_decision_and_waits_for_missing_runs(tmp_path, records, capsys):
    from tests.benchmark_loader import load_benchmark

    cli = load_benchmark("bbob_report")
    _write(tmp_path, records)
    assert cli.main(["--out", str(tmp_path), "--decide", "a", "--variants", "b;c", "--expected", "12"]) == 0
    out = capsys.readouterr().out
    assert "functions_worse" in out and "kept: " in out and "not decided" not in out  # 3 functions x 2 instances x 2 seeds
    assert cli.main(["--out", str(tmp_path), "--decide", "a", "--variants", "b", "--expected", "13"]) == 0
    assert "not decided" in capsys.readouterr().out
    assert cli.main(["--out", str(tmp_path), "--decide", "a"]) == 2


def _run(function, instance, method, final, seconds, noisy=False):
    regret = list(np.logspace(0.0, math.log10(final), N))  # spread 1: the normalised regret falls to `final`
    problem = f"bbob-f{function}-i{instance}-d5" + ("-noisy" if noisy else "")
    return {
        "format": RECORD_FORMAT, "version": RECORD_VERSION, "complete": True,
        "config": {"problem": problem, "function": function, "instance": instance, "dim": 5, "noisy": noisy,
                   "seed": 0, "method": method, "spread": 1.0, "f_star": 0.0},
        "simple_regret": regret, "final_simple_regret": regret[-1],
        "cumulative_time_s": list(np.linspace(0.0, seconds, N)), "cpu_s": seconds,
    }


def _bars_runs(factor, preset_seconds=1.0):
    r"""Functions 1-5, instances 1-10: ``qlognei`` at ``1e-3`` (times 1.0-1.9), ``optuna-gp`` a hundred
    times lower, the preset at ``factor[f]`` times ``qlognei`` with a spread over instances."""
    runs = []
    for function, instance in itertools.product(range(1, 6), range(1, 11)):
        base = 1e-3 * (1 + 0.1 * instance)
        jitter = 1 + 0.05 * ((instance * 7) % 5 - 2)  # paired differences that vary
        runs += [
            _run(function, instance, "qlognei", base, 1.0 + 0.1 * (instance - 1)),
            _run(function, instance, "optuna-gp", base / 100, 0.5),
            _run(function, instance, "lb-gp-ucb-auto", base * factor[function] * jitter, preset_seconds),
        ]
    return runs


def test_report_bars_count_functions_pairs_and_times_as_a_direct_computation():
    from botorch_unknown_hypers.benchmarks.bbob_report import BARS, report_bars

    factor = {1: 0.1, 2: 0.1, 3: 0.5, 4: 1.0, 5: 3.0}  # lower on 3 of 5 (3 significantly), f4 ~equal, f5 worse
    runs = _bars_runs(factor)
    bars = report_bars(runs_frame(runs)).set_index(["preset", "peer"])
    assert list(bars.index) == [("lb-gp-ucb-auto", "qlognei"), ("lb-gp-ucb-auto", "optuna-gp")]  # he: not run
    row = bars.loc[("lb-gp-ucb-auto", "qlognei")]
    finals = {(r["config"]["function"], r["config"]["instance"], r["config"]["method"]): r["final_simple_regret"] for r in runs}
    lower = worse = 0
    for function in range(1, 6):
        d = np.array([finals[(function, i, "lb-gp-ucb-auto")] - finals[(function, i, "qlognei")] for i in range(1, 11)])
        lower += int(d.mean() < 0)
        worse += int(d.mean() > 2 * d.std(ddof=1) / math.sqrt(len(d)))
    assert (row["functions"], row["min_pairs"], row["lower"], row["worse"]) == (5, 10, lower, worse)
    assert (lower, worse) == (4, 1) and row["worse_functions"] == "5"  # f4's jitter averages below 1: lower, not significantly
    assert row["lower_fraction"] == pytest.approx(0.8) and row["worse_fraction"] == pytest.approx(0.2)
    assert row["median_time_preset"] == pytest.approx(1.0) and row["median_time_reference"] == pytest.approx(1.45)
    assert row["auc_preset"] > row["auc_peer"]
    assert not row["holds"] and row["worse_fraction"] > BARS["worse"]  # one function of five worse: 20 % > 10 %
    against_optuna = bars.loc[("lb-gp-ucb-auto", "optuna-gp")]
    assert against_optuna["lower"] == 0 and against_optuna["auc_preset"] < against_optuna["auc_peer"] and not against_optuna["holds"]


def test_report_bars_hold_only_when_every_bar_does():
    from botorch_unknown_hypers.benchmarks.bbob_report import report_bars

    good = {1: 0.1, 2: 0.1, 3: 0.1, 4: 0.5, 5: 1.0}
    row = lambda runs: report_bars(runs_frame(runs), peers=("qlognei",)).iloc[0]  # noqa: E731
    assert row(_bars_runs(good))["holds"]
    assert not row(_bars_runs(good, preset_seconds=2.0))["holds"]  # slower than qlognei's median 1.45 s
    missing = [r for r in _bars_runs(good) if not (r["config"]["function"] == 2 and r["config"]["instance"] == 3)]
    short = row(missing)
    assert short["min_pairs"] == 9 and not short["holds"]  # fewer than 10 pairs on function 2
    assert report_bars(runs_frame(_bars_runs(good)), presets=("he-gp-ucb-auto",)).empty


def test_command_line_and_report_give_the_bars(tmp_path, records, capsys):
    from tests.benchmark_loader import load_benchmark

    cli = load_benchmark("bbob_report")
    _write(tmp_path / "none", records)  # methods a, b, c: no preset, no peer
    assert cli.main(["--out", str(tmp_path / "none"), "--bars"]) == 2
    assert "no group" in capsys.readouterr().err
    _write(tmp_path / "runs", _bars_runs({1: 0.1, 2: 0.1, 3: 0.1, 4: 0.5, 5: 1.0}))
    assert cli.main(["--out", str(tmp_path / "runs"), "--bars"]) == 0
    out = capsys.readouterr().out
    assert "holds" in out and "lower_fraction" in out and "optuna-gp" in out
    text = write_report(tmp_path / "runs").read_text()
    assert "## The bars" in text and (tmp_path / "runs" / "report" / "bars.csv").exists()


def test_admissible_variants_applies_the_auto_rule_per_noise_setting():
    from botorch_unknown_hypers.benchmarks.bbob_report import admissible_variants

    rng = np.random.default_rng(5)
    # decades added to the reference's normalised regret, per (function, noisy)
    shifts = {
        "h1": lambda f, z: 0.0,                                   # level everywhere: admissible
        "h2-better": lambda f, z: -0.5 if f <= 2 else 0.0,        # better on two functions: admissible, lower mean
        "h2-worse-noisy": lambda f, z: 0.7 if (z and f <= 3) else -1.0,  # best mean, but worse on 3 noisy functions
        "h2-slightly": lambda f, z: -0.001,                       # within a tie of h1
    }
    recs = []
    for function, instance, noisy in itertools.product([1, 2, 3, 4, 5], range(1, 6), [False, True]):
        base = _record(function, instance, 0, "ref", rng, noisy=noisy, spread=1.0)
        base["final_simple_regret"] = 10 ** float(rng.uniform(-6, -1))
        recs.append(base)
        for name, by in shifts.items():
            r = json.loads(json.dumps(base))
            r["config"]["method"] = name
            r["final_simple_regret"] = base["final_simple_regret"] * 10 ** (by(function, noisy) + 0.05 * (instance - 3))
            recs.append(r)
    frame = runs_frame(recs)
    table, kept = admissible_variants(frame, "ref", ["h1", "h2-better", "h2-worse-noisy"], expected_pairs=50)
    rows = table.set_index(["variant", "group"])
    assert rows.loc[("h2-worse-noisy", "d2-noisy"), "functions_worse"] == 3
    assert not rows.loc[("h2-worse-noisy", "all"), "admissible"] and rows.loc[("h2-worse-noisy", "d2"), "admissible"]
    assert rows.loc[("h2-better", "d2"), "functions_better"] == 2 and rows.loc[("h2-better", "all"), "pairs"] == 50
    assert rows.loc[("h2-better", "all"), "mean_diff"] == pytest.approx(-0.2)
    assert kept == "h2-better"  # admissible, and below h1 by more than 1 SE of h1's difference
    assert admissible_variants(frame, "ref", ["h1", "h2-slightly"], expected_pairs=50)[1] == "h1"  # a tie goes to h1
    assert admissible_variants(frame, "ref", ["h2-worse-noisy"], expected_pairs=50)[1] == "h2-worse-noisy"  # none admissible
    assert admissible_variants(frame, "ref", ["h1"], expected_pairs=51)[1] is None  # a pair missing: no decision
