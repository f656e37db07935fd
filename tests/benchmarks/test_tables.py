from functools import partial
from pathlib import Path

import pytest

from botorch_unknown_hypers.benchmarks.bbob import record_store
from botorch_unknown_hypers.benchmarks.tables import (
    TABLES,
    bbob_summary,
    fresh_report_tables,
    H13,
    H14,
    H6,
    paired_scores,
    regenerate,
    report_status,
    study_status,
    until_complete,
)

ROOT = Path(__file__).resolve().parents[2]


def _record(function, instance, method, regret, noisy=False, dim=2, cpu=3.0):
    problem = f"bbob-f{function}-i{instance}-d{dim}" + ("-noisy" if noisy else "")
    return {
        "config": {"problem": problem, "function": function, "instance": instance, "dim": dim, "noisy": noisy, "seed": 0,
                   "method": method, "spread": 1.0, "f_star": 0.0, "n_init": 4, "iterations": 1, "batch_size": 1,
                   "options": {}, "function_name": "f"},
        "simple_regret": [1.0, regret], "final_simple_regret": regret, "cumulative_time_s": [0.0, 2.0], "cpu_s": cpu,
    }


def _hpo_dev(mixed, method, failing):
    r"""``method``'s runs on hpo-four's development seeds 100-109 in the store ``mixed``, those in
    ``failing`` ending at the dropout bound 1e-2, the others at 1e-5."""
    for seed in range(100, 110):
        v = 1e-2 if seed in failing else 1e-5
        mixed.add("hpo-four", method, {"config": {"problem": "hpo-four", "method": method, "seed": seed, "iterations": 1, "n_init": 1},
                                       "problem": "hpo-four", "method": method, "seed": seed, "final_simple_regret": v})


def _dev_grid(store, method, regret):
    r"""``method``'s runs on the d = 2 development grid (both noise settings) in ``store``, ending at
    ``regret(instance)``."""
    for noisy in (False, True):
        for function in range(1, 25):
            for instance in range(1, 6):
                store.add("d2-noisy" if noisy else "d2", method, _record(function, instance, method, regret(instance), noisy))


def _optuna_dev(four, sampler, log10_regret):
    r"""``sampler``'s four-parameter development runs (seeds 100-109, 30 trials) in ``four``, ending
    at :math:`10^{\text{log10\_regret(seed)}}`."""
    for seed in range(100, 110):
        four.add("four", sampler, {"config": {"problem": "four", "sampler": sampler, "seed": seed, "trials": 30},
                                   "simple_regret": [1.0, 10.0 ** log10_regret(seed)]})


def test_tables_are_rewritten_from_the_records_between_their_markers(tmp_path):
    store = record_store(tmp_path / "results" / "bbob")
    for instance in (1, 2):
        store.add("d2", "qlognei", _record(1, instance, "qlognei", 1e-3))
        store.add("d2", "random", _record(1, instance, "random", 1e-1))
    store.add("d2", "random", _record(1, 3, "random", 1e-1))  # qlognei lacks instance 3: out of the table
    store.add("d2", "qlognei", _record(1, 4, "qlognei", 1e-3))  # random lacks instance 4: 3 pairs each, 2 in common
    store.add("d2", "fb-qlognei", _record(1, 1, "fb-qlognei", 1e-3))  # a grid still running: named, not in the table
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "page.md"
    page.write_text("intro\n<!-- table: bbob-d2-dev -->\nstale\n<!-- end table -->\noutro\n")
    assert regenerate(docs, tmp_path / "results", check=True) == ["page.md: bbob-d2-dev"]
    assert "stale" in page.read_text()  # check writes nothing
    assert regenerate(docs, tmp_path / "results") == ["page.md: bbob-d2-dev"]
    text = page.read_text()
    assert text.startswith("intro\n<!-- table: bbob-d2-dev -->\n**d2** (2 problems") and text.endswith("<!-- end table -->\noutro\n")
    rows = {line.split(" | ")[0]: line for line in text.splitlines() if line.startswith("| `")}
    assert set(rows) == {"| `qlognei`", "| `random`"} and "| 2 |" in rows["| `random`"]  # 2 common runs, not 3
    assert "Not in the table until their grid is complete: `fb-qlognei` (1 of 3)." in text
    assert regenerate(docs, tmp_path / "results", check=True) == []
    assert text == page.read_text()
    assert bbob_summary(tmp_path / "results", 2, (16,)) == "No records yet.\n"
    page.write_text("<!-- table: nope -->\n<!-- end table -->\n")
    with pytest.raises(ValueError, match="table 'nope' is not one of"):
        regenerate(docs, tmp_path / "results")


def test_a_summary_drops_the_cpu_column_only_when_no_run_recorded_it(tmp_path):
    store = record_store(tmp_path / "bbob")
    for method, cpu in (("qlognei", 3.0), ("random", 0.5)):
        store.add("d2", method, _record(1, 1, method, 1e-3, cpu=cpu))
    header = next(line for line in bbob_summary(tmp_path, 2, (1,)).splitlines() if line.startswith("| method"))
    assert header.endswith("| median CPU s/run |")
    rows = [line for line in bbob_summary(tmp_path, 2, (1,)).splitlines() if line.startswith("| `random`")]
    assert len(rows) == 1 and rows[0].endswith("| 1.5 | 2 | 0.5 |")  # rank 1.5 (a tie), 2 s proposals, 0.5 s CPU
    unrecorded = record_store(tmp_path / "old" / "bbob")
    for method in ("qlognei", "random"):
        unrecorded.add("d2", method, _record(1, 1, method, 1e-3, cpu=None))
    text = bbob_summary(tmp_path / "old", 2, (1,))
    assert "CPU s/run" not in text and "predate the CPU time's recording" in text
    assert "| `qlognei` | 1 |" in text


def test_a_report_table_shows_only_run_counts_until_every_method_has_every_run(tmp_path):
    store = record_store(tmp_path / "bbob")
    methods, instances = ("qlognei", "random"), (16, 17)
    for noisy in (False, True):
        for function in range(1, 25):
            for instance in instances:
                for method in methods:
                    last = (noisy, function, instance, method) == (True, 24, 17, "random")
                    if not last:
                        store.add("d5-noisy" if noisy else "d5", method, _record(function, instance, method, 1e-3, noisy, dim=5))
    status = report_status(tmp_path, 5, instances, methods)
    assert status.startswith("Not complete yet") and "| `random` | 48 of 48 | 47 of 48 |" in status
    assert "ECDF" not in status and "1e-3" not in status  # counts only
    table = until_complete(partial(report_status, dim=5, instances=instances, methods=methods),
                           partial(bbob_summary, dim=5, instances=instances, methods=methods))
    assert table(tmp_path) == status
    store.add("d5-noisy", "random", _record(24, 17, "random", 1e-3, True, dim=5))
    assert report_status(tmp_path, 5, instances, methods) is None
    assert table(tmp_path) == bbob_summary(tmp_path, 5, instances, methods) and "ECDF area" in table(tmp_path)


def test_paired_scores_are_the_mean_and_standard_error_of_the_decade_differences_per_noise_setting(tmp_path):
    store = record_store(tmp_path / "bbob")
    # variant - peer in decades of normalised regret: +1, -1 and 0 noise-free; +2, +2 with noise;
    # a run the peer lacks and a run floored at 1e-8 on both sides (difference 0) are pairs only where both ran.
    cases = {False: [(1e-2, 1e-3), (1e-4, 1e-3), (1e-9, 1e-10)], True: [(1e-1, 1e-3), (1e-3, 1e-5)]}
    for noisy, pairs in cases.items():
        for function, (mine, theirs) in enumerate(pairs, start=1):
            group = "d2-noisy" if noisy else "d2"
            store.add(group, "v", _record(function, 26, "v", mine, noisy))
            store.add(group, "q", _record(function, 26, "q", theirs, noisy))
    store.add("d2", "v", _record(7, 26, "v", 1.0))
    text = paired_scores(tmp_path, 2, (26,), "v", ("q",))
    # noise-free: mean 0, sd 1, se 1/sqrt(3); noisy: mean 2, se 0; all five: mean 0.8, sample variance 6.8 / 4, se sqrt(1.7 / 5)
    assert "`v` − `q`: d2 +0.000 ± 0.577 (3 pairs); d2-noisy +2.000 ± 0.000 (2 pairs); all +0.800 ± 0.583 (5 pairs)." in text
    assert paired_scores(tmp_path, 2, (27,), "v", ("q",)) == "No records yet.\n"


@pytest.mark.parametrize("variant, label", [(H13, "h13"), (H14, "h14")])
def test_fresh_report_tables_stay_closed_at_each_dimension_until_its_status_says_complete(tmp_path, variant, label):
    for dim in (2, 5):
        closed = fresh_report_tables(variant, label, dim, lambda results: "counts\n")
        assert sorted(closed) == [f"bbob-d{dim}-{label}-report", f"bbob-d{dim}-{label}-report-bars", f"bbob-d{dim}-{label}-report-paired"]
        assert set(closed) <= set(TABLES)
        assert all(table(tmp_path) == "counts\n" for table in closed.values())
        opened = fresh_report_tables(variant, label, dim, lambda results: None)
        assert all(table(tmp_path) == "No records yet.\n" for table in opened.values())


def test_a_study_table_shows_only_seed_counts_until_every_method_has_every_seed(tmp_path):
    from botorch_unknown_hypers.benchmarks.records import RecordStore
    from botorch_unknown_hypers.benchmarks.practical_suite import KEY_FIELDS

    store = RecordStore(tmp_path / "tabular", KEY_FIELDS)

    def _run(problem, method, seed):
        key = {"problem": problem, "method": method, "seed": seed, "iterations": 1, "n_init": 1}
        return {**key, "config": key, "final_simple_regret": 0.5}

    for problem in ("p1", "p2"):
        for method in ("auto", "random"):
            for seed in (0, 1):
                if (problem, method, seed) != ("p2", "random", 1):
                    store.add(problem, method, _run(problem, method, seed))
    status = study_status(tmp_path, "tabular", ("p1", "p2"), ("auto", "random"), (0, 1))
    assert status.startswith("Not complete yet") and "| `random` | 2 of 2 | 1 of 2 |" in status and "0.5" not in status
    store.add("p2", "random", _run("p2", "random", 1))
    assert study_status(tmp_path, "tabular", ("p1", "p2"), ("auto", "random"), (0, 1)) is None


def test_the_docs_tables_are_the_committed_records_tables():
    r"""Every marked table in ``docs/`` is what ``benchmarks/tables.py`` computes from
    ``benchmarks/results/`` (run it after new records land)."""
    assert set(TABLES) >= {"bbob-d2-dev", "bbob-d2-auto-decision"}
    assert regenerate(ROOT / "docs", ROOT / "benchmarks" / "results", check=True) == []


def test_mixed_paired_table_pairs_seeds_and_judges_at_two_standard_errors(tmp_path):
    from botorch_unknown_hypers.benchmarks.records import RecordStore
    from botorch_unknown_hypers.benchmarks.tables import mixed_paired

    store = RecordStore(tmp_path / "mixed", ("problem", "method", "seed", "iterations", "n_init"))
    finals = {"optuna-gp": [1.0, 2.0, 3.0, 4.0], H6: [0.5, 1.4, 2.6, 3.5], "random": [1.0, 2.5, 2.5, 5.0]}
    for method, values in finals.items():
        for seed, v in enumerate(values):
            store.add("labs", method, {"config": {"problem": "labs", "method": method, "seed": seed, "iterations": 1, "n_init": 1},
                                       "problem": "labs", "method": method, "seed": seed, "final_simple_regret": v,
                                       "simple_regret": [v + 1, v], "wall_time_s": 1.0 + seed})
    rows = {line.split(" | ")[1]: line for line in mixed_paired(tmp_path).splitlines() if line.startswith("| labs")}
    # H6 - optuna-gp: -0.5, -0.6, -0.4, -0.5: mean -0.5, SE 0.0408 -> better
    assert "-0.5 ± 0.041 (4, better)" in rows[f"`{H6}`"] and "| 2.5 |" in rows[f"`{H6}`"]  # median wall of 1, 2, 3, 4
    # random - optuna-gp: 0, 0.5, -0.5, 1: mean 0.25, SE 0.323 -> level
    assert "+0.25 ± 0.32 (4, level)" in rows["`random`"]
    assert mixed_paired(tmp_path / "none") == "No records yet.\n"
    # Chosen rows and peers: a peer that is not a row is still read, and gets a column.
    only = mixed_paired(tmp_path, methods=("random",), peers=(H6, "optuna-gp"))
    header, *lines = [line for line in only.splitlines() if line.startswith("|")]
    assert f"− {H6}" in header and "− optuna-gp" in header and "− mixed-qlognei" not in header
    body = [line for line in lines if line.startswith("| labs")]
    # random - H6: 0.5, 1.1, -0.1, 1.5: mean 0.75, SE 0.350, 2.14 SE -> worse
    assert len(body) == 1 and "`random`" in body[0] and "+0.75 ± 0.35 (4, worse)" in body[0]


def test_the_one_hot_diagnosis_computes_each_factors_effect_over_its_paired_differences(tmp_path):
    r"""Kernel: one-hot minus categorical over (seed, effort) pairs; search: 10/512 minus 20/1024
    over (seed, model) pairs; a factor carries the gap beyond 1 decade and 2 SE. A seed without
    every cell is left out."""
    from botorch_unknown_hypers.benchmarks.records import RecordStore
    from botorch_unknown_hypers.benchmarks.tables import ONE_HOT_CELLS, one_hot_diagnosis

    store = RecordStore(tmp_path / "mixed-dev", ("problem", "method", "seed", "iterations", "n_init"))
    # log10 regret = -5 for the categorical kernel, -2.5 +- 0.1 for one-hot; effort changes nothing
    logs = {"one-hot": [-2.4, -2.6, -2.5], "categorical": [-5.0, -5.0, -5.0]}
    for (model, _), method in ONE_HOT_CELLS.items():
        for seed, value in enumerate(logs[model]):
            store.add("hpo-four", method, {"config": {"problem": "hpo-four", "method": method, "seed": seed, "iterations": 1, "n_init": 1},
                                           "problem": "hpo-four", "method": method, "seed": seed, "final_simple_regret": 10.0**value})
    store.add("hpo-four", "qlognei", {"config": {"problem": "hpo-four", "method": "qlognei", "seed": 9, "iterations": 1, "n_init": 1},
                                      "problem": "hpo-four", "method": "qlognei", "seed": 9, "final_simple_regret": 1.0})
    rows = {line.split(" | ")[0][2:]: line for line in one_hot_diagnosis(tmp_path).splitlines() if line.startswith("| ")}
    assert "+2.50 ± 0.04 (6 pairs) | carries the gap" in rows["kernel: one-hot − categorical"]  # diffs 2.6, 2.4, 2.5 twice: SE 0.0365
    assert "+0.00 ± 0.00 (6 pairs) | does not carry it" in rows["search: 10/512 − 20/1024"]
    assert "| 3 |" in rows["`qlognei` (one-hot, 10/512)"]  # seed 9 lacks three cells: left out
    assert one_hot_diagnosis(tmp_path / "none").startswith("Fewer than two seeds")


def test_the_h5_rule_needs_every_run_a_clear_margin_over_h2a_and_fewer_hpo_four_failures(tmp_path):
    r"""H5 replaces H2a only when admissible against qlognei on the whole d = 2 development grid,
    more than 1 SE better than H2a over the same problems, and failing on fewer of hpo-four's
    development seeds; missing runs leave the rule undecided."""
    from botorch_unknown_hypers.benchmarks.records import RecordStore
    from botorch_unknown_hypers.benchmarks.tables import H2A, H5, h5_decision

    store = record_store(tmp_path / "bbob")
    regrets = {"qlognei": lambda i: 1e-3, H2A: lambda i: 1e-3, H5: lambda i: 10.0 ** (-3.5 - 0.1 * (i % 2))}
    for noisy in (False, True):
        for method, regret in regrets.items():
            for function in range(1, 25):
                for instance in range(1, 6):
                    if method == H5 and noisy and function == 24 and instance == 5:
                        continue  # one run missing until the end
                    store.add("d2-noisy" if noisy else "d2", method, _record(function, instance, method, regret(instance), noisy))
    hpo = partial(_hpo_dev, RecordStore(tmp_path / "mixed-dev", ("problem", "method", "seed", "iterations", "n_init")))

    hpo(H2A, {101, 103})
    hpo(H5, {103})
    text = h5_decision(tmp_path)
    assert "H5 − H2a over 239 development problems: -0.560 ± 0.003" in text  # 143 diffs of -0.6 (odd instances), 96 of -0.5
    assert "H5 1 of 10, H2a 2 of 10" in text and text.endswith("Decision: not decided yet (runs missing).\n")
    store.add("d2-noisy", H5, _record(24, 5, H5, 10.0**-3.6, True))
    assert h5_decision(tmp_path).endswith("Decision: H5 replaces H2a as `auto`'s default.\n")
    hpo(H5, {101, 103})  # as many failures as H2a: no replacement, whatever the grid says
    assert h5_decision(tmp_path).endswith("Decision: `auto` stays H2a.\n")
    assert h5_decision(tmp_path / "none") == "No records yet.\n"


def test_the_h7_rule_asks_for_no_loss_against_h6_less_cpu_and_no_more_hpo_four_failures(tmp_path):
    r"""H7 replaces H6 when admissible against qlognei, not worse than H6 by more than 1 SE, faster
    (median CPU per run) in each noise setting, and failing on no more of hpo-four's development
    seeds; a slower H7, or one more failure, keeps H6."""
    from botorch_unknown_hypers.benchmarks.records import RecordStore
    from botorch_unknown_hypers.benchmarks.tables import H6, H7, h7_decision

    store = record_store(tmp_path / "bbob")

    def grid(method, regret, cpu, skip_last=False):
        for noisy in (False, True):
            for function in range(1, 25):
                for instance in range(1, 6):
                    if skip_last and noisy and function == 24 and instance == 5:
                        continue
                    store.add("d2-noisy" if noisy else "d2", method, _record(function, instance, method, regret(instance), noisy, cpu=cpu))

    grid("qlognei", lambda i: 1e-3, 3.0)
    grid(H6, lambda i: 1e-3, 4.0)
    grid(H7, lambda i: 10.0 ** (-3 + 0.01 * (i % 2)), 3.5, skip_last=True)  # a hair worse on odd instances
    hpo = partial(_hpo_dev, RecordStore(tmp_path / "mixed-dev", ("problem", "method", "seed", "iterations", "n_init")))

    hpo(H6, {104})
    hpo(H7, {104})
    text = h7_decision(tmp_path)
    assert "H7 − H6 over 239 development problems: +0.006 ± 0.000" in text and "d2: H7 3.50 s, H6 4.00 s" in text
    assert text.endswith("Decision: not decided yet (runs missing).\n")
    store.add("d2-noisy", H7, _record(24, 5, H7, 10.0**-3, True, cpu=3.5))
    assert h7_decision(tmp_path).endswith("Decision: `auto` stays H6.\n")  # +0.006 decades is more than 1 SE above H6
    grid(H7, lambda i: 10.0 ** (-3 - 0.01 * (i % 2)), 3.5)  # now a hair better
    assert h7_decision(tmp_path).endswith("Decision: H7 replaces H6 as `auto`'s default.\n")
    hpo(H7, {104, 105})
    assert h7_decision(tmp_path).endswith("Decision: `auto` stays H6.\n")
    hpo(H7, {104})
    grid(H7, lambda i: 10.0 ** (-3 - 0.01 * (i % 2)), 4.5)  # slower than H6
    assert h7_decision(tmp_path).endswith("Decision: `auto` stays H6.\n")
    assert h7_decision(tmp_path / "none") == "No records yet.\n"


def test_the_h3_rule_asks_for_a_clear_gain_over_h6_and_no_more_hpo_four_failures_beside_the_anchor(tmp_path):
    r"""H3 replaces H6 only when admissible against qlognei, better than H6 by more than 1 SE and
    failing on no more of hpo-four's development seeds; the anchor's comparison is reported on
    the problems it shares (here only some) and decides nothing."""
    from botorch_unknown_hypers.benchmarks.records import RecordStore
    from botorch_unknown_hypers.benchmarks.tables import ANCHOR, H3, H6, h3_decision

    store = record_store(tmp_path / "bbob")

    def grid(method, regret, cpu=3.0, skip_last=False, functions=range(1, 25)):
        for noisy in (False, True):
            for function in functions:
                for instance in range(1, 6):
                    if skip_last and noisy and function == 24 and instance == 5:
                        continue
                    store.add("d2-noisy" if noisy else "d2", method, _record(function, instance, method, regret(instance), noisy, cpu=cpu))

    grid("qlognei", lambda i: 1e-3)
    grid(H6, lambda i: 1e-3, cpu=4.0)
    grid(ANCHOR, lambda i: 10.0**-3.2, cpu=80.0, functions=range(1, 13))  # half the grid so far
    grid(H3, lambda i: 10.0 ** (-3.1 - 0.1 * (i % 2)), cpu=6.0, skip_last=True)
    hpo = partial(_hpo_dev, RecordStore(tmp_path / "mixed-dev", ("problem", "method", "seed", "iterations", "n_init")))
    hpo(H6, {104})
    hpo(H3, {104})
    text = h3_decision(tmp_path)
    assert "H3 − H6 over 239 development problems: -0.160 ± 0.003" in text  # 143 of -0.2 (odd instances), 96 of -0.1
    assert f"H3 − `{ANCHOR}` over the 120 development problems both ran: +0.040 ± 0.004" in text  # 72 of 0, 48 of +0.1
    assert f"H6 − `{ANCHOR}` over the 120 development problems both ran: +0.200 ± 0.000" in text
    assert "d2: H3 6.00 s, H6 4.00 s, `qlognei` 3.00 s" in text and "H3 1 of 10, H6 1 of 10" in text
    assert text.endswith("Decision: not decided yet (runs missing).\n")
    store.add("d2-noisy", H3, _record(24, 5, H3, 10.0**-3.1, True, cpu=6.0))
    assert h3_decision(tmp_path).endswith("Decision: H3 is to replace H6 as `auto`'s default once the reports are run for it.\n")
    hpo(H3, {104, 105})  # one failure more than H6
    assert h3_decision(tmp_path).endswith("Decision: `auto` stays H6.\n")
    hpo(H3, {104})
    shift = {1: -0.3, 2: 0.2, 3: -0.1, 4: 0.15, 5: 0.0}  # a gain of 0.01 decades, within 1 SE (0.013)
    grid(H3, lambda i: 10.0 ** (-3.0 + shift[i]), cpu=6.0)
    assert h3_decision(tmp_path).endswith("Decision: `auto` stays H6.\n")
    assert h3_decision(tmp_path / "none") == "No records yet.\n"


def test_the_needle_check_counts_runs_on_the_peak_and_compares_auto_with_he_auto(tmp_path):
    r"""A run is on the peak when its final simple regret is below f* - f(1) of berkenkamp; the
    check reads only once both methods have all ten development seeds."""
    from botorch_unknown_hypers.benchmarks.records import RecordStore
    from botorch_unknown_hypers.benchmarks.tables import needle_check, needle_gap

    assert abs(needle_gap() - 0.1452) < 1e-3
    store = RecordStore(tmp_path / "needle-dev", ("problem", "method", "seed", "iterations", "n_init"))

    def add(method, seed, regret):
        store.add("berkenkamp", method, {"config": {"problem": "berkenkamp", "method": method, "seed": seed, "iterations": 1, "n_init": 1},
                                         "problem": "berkenkamp", "method": method, "seed": seed, "final_simple_regret": regret,
                                         "wall_time_s": 1.0})

    assert needle_check(tmp_path) == "No records yet.\n"
    for seed in range(100, 110):
        add("he-gp-ucb-auto", seed, 1e-6 if seed < 107 else 0.1452)  # 7 on the peak; stuck at the boundary: the gap, rounded
        if seed < 109:
            add(H6, seed, 1e-6 if seed < 106 else 0.072)  # 0.072 is on the peak, just (half the gap is 0.0726)
    assert needle_check(tmp_path).endswith("Check: not read yet (runs missing).\n")
    add(H6, 109, 0.2)
    text = needle_check(tmp_path)
    assert f"| `{H6}` | 10 | 9 |" in text and "| `he-gp-ucb-auto` | 10 | 7 |" in text
    assert text.endswith("Check: `auto` (H6) keeps the needle here (9 seeds against 7).\n")
    for seed in range(100, 103):
        add(H6, seed, 0.3)
    assert needle_check(tmp_path).endswith("Check: `auto` (H6) does not keep the needle here (6 seeds against 7).\n")


def test_h14s_needle_check_reads_each_problem_and_says_where_qlognei_finds_the_peak_anyway(tmp_path):
    r"""Per problem: whether qlognei misses the peak on some seed (else the problem cannot tell), and
    H14 against he-gp-ucb-auto by the runs on the peak, read once both have all ten seeds."""
    from botorch_unknown_hypers.benchmarks.records import RecordStore
    from botorch_unknown_hypers.benchmarks.tables import H14, needle_gap, needle_h14_check

    for problem in ("berkenkamp2", "berkenkamp3"):
        assert abs(needle_gap(problem) - 0.144) < 1e-3
    store = RecordStore(tmp_path / "needle-dev", ("problem", "method", "seed", "iterations", "n_init"))

    def add(problem, method, seed, regret):
        store.add(problem, method, {"config": {"problem": problem, "method": method, "seed": seed, "iterations": 1, "n_init": 1},
                                    "problem": problem, "method": method, "seed": seed, "final_simple_regret": regret,
                                    "wall_time_s": 2.0})

    assert needle_h14_check(tmp_path) == "No records yet.\n"
    for seed in range(100, 110):
        add("berkenkamp2", "qlognei", seed, 1e-5 if seed < 109 else 0.07)  # every seed on the peak: no needle for qlognei
        add("berkenkamp2", "he-gp-ucb-auto", seed, 1e-5 if seed < 105 else 0.15)  # 5
        add("berkenkamp2", H14, seed, 1e-5 if seed < 104 else 0.15)  # 4
        add("berkenkamp3", "qlognei", seed, needle_gap("berkenkamp3") - 1e-7 if seed == 100 else 1e-4)  # stuck at the corner on one seed
        add("berkenkamp3", "he-gp-ucb-auto", seed, 0.2 if seed < 108 else 1e-3)  # 2
        if seed > 100:
            add("berkenkamp3", H14, seed, 0.2 if seed < 107 else 1e-3)  # 3 of 9
    text = needle_h14_check(tmp_path)
    assert f"| berkenkamp2 | `{H14}` | 10 | 4 |" in text and "| berkenkamp3 | `qlognei` | 10 | 9 |" in text
    assert ("`berkenkamp2`: not a needle for `qlognei` (it finds the peak on every seed), so the check cannot tell; "
            "H14 does not keep the needle here (4 seeds against 5); beside it, not read yet (runs missing).") in text
    assert "`berkenkamp3`: a needle: `qlognei` misses it on 1 of 10 seeds; not read yet (runs missing); beside it, not read yet" in text
    add("berkenkamp3", H14, 100, 0.2)
    text = needle_h14_check(tmp_path)
    assert f"| berkenkamp3 | `{H14}` | 10 | 3 |" in text
    assert "`berkenkamp3`: a needle: `qlognei` misses it on 1 of 10 seeds; H14 keeps the needle here (3 seeds against 2); " in text
    for seed in range(100, 110):
        add("berkenkamp3", H6, seed, 0.2 if seed < 109 else 1e-3)  # H6, beside: 1
    assert needle_h14_check(tmp_path).endswith("beside it, `auto` (H6) does not keep the needle here (1 seed against 2).\n")
    for seed in range(100, 110):  # nobody on the peak: no verdict
        for method in ("he-gp-ucb-auto", H6):
            add("berkenkamp3", method, seed, 0.2)
    assert needle_h14_check(tmp_path).endswith(
        "beside it, neither `auto` (H6) nor `he-gp-ucb-auto` finds the peak on any seed, so the problem cannot tell.\n")


def test_the_four_parameter_rule_asks_for_a_clear_gain_through_optuna_and_reports_its_peers_beside_it(tmp_path):
    r"""H12 (like H10 and H11) replaces H6 only when admissible against qlognei, not behind H6 by
    more than 1 SE on the d = 2 grid, ahead of H6 by more than 2 SE on the four-parameter objective
    through Optuna, and failing on no more of hpo-four's development seeds; GPSampler and H11 are
    reported beside the rule and decide nothing."""
    from botorch_unknown_hypers.benchmarks.records import RecordStore
    from botorch_unknown_hypers.benchmarks.tables import H6, H11, H12, OPTUNA_DEV_FIELDS, h12_decision

    store = record_store(tmp_path / "bbob")

    grid = partial(_dev_grid, store)

    grid("qlognei", lambda i: 1e-3)
    grid(H6, lambda i: 1e-3)
    grid(H12, lambda i: 10.0 ** (-3 + 0.01 * (i % 2)))  # a hair behind H6: +0.006 ± 0.000 decades
    hpo = partial(_hpo_dev, RecordStore(tmp_path / "mixed-dev", ("problem", "method", "seed", "iterations", "n_init")))
    hpo(H6, {104})
    hpo(H12, set())
    four = RecordStore(tmp_path / "mixed-optuna-dev", OPTUNA_DEV_FIELDS)

    optuna = partial(_optuna_dev, four)

    optuna(H6, lambda s: -2.0)
    optuna(H11, lambda s: -3.0)
    optuna("gp", lambda s: -5.0)
    optuna(H12, lambda s: -4.0 - 0.1 * (s % 2))  # 2.05 ± 0.017 decades ahead of H6
    text = h12_decision(tmp_path)
    assert "H12 − H6 over 240 development problems: +0.006 ± 0.000" in text
    assert "H12 − H6 over 10 seeds: -2.05 ± 0.02" in text
    assert "H12 − `GPSampler` on the same objective over 10 seeds: +0.95 ± 0.02" in text
    assert "H12 − H11 on the same objective over 10 seeds: -1.05 ± 0.02" in text
    assert "H12 0 of 10, H6 1 of 10" in text
    assert text.endswith("Decision: `auto` stays H6.\n")  # part 2: behind H6 by more than 1 SE
    grid(H12, lambda i: 10.0 ** (-3 - 0.01 * (i % 2)))
    assert h12_decision(tmp_path).endswith("Decision: H12 is to replace H6 as `auto`'s default once the reports are run for it.\n")
    optuna(H12, lambda s: -2.0 - 0.3 * (1 if s % 2 else -1) - 0.05)  # ahead by 0.05 ± 0.10: not by 2 SE
    assert h12_decision(tmp_path).endswith("Decision: `auto` stays H6.\n")
    optuna(H12, lambda s: -4.0)
    hpo(H12, {104, 105})  # one failure more than H6
    assert h12_decision(tmp_path).endswith("Decision: `auto` stays H6.\n")
    assert h12_decision(tmp_path / "none") == "No records yet.\n"


def test_the_thirteenth_rule_fails_on_the_needle_alone_and_otherwise_asks_for_all_five_parts(tmp_path):
    r"""H15 takes H14's place only with more berkenkamp2 seeds on the peak than H14, admissible
    against qlognei, not behind H14 by more than 1 SE on the grid, no more hpo-four failures and
    not behind H14 by more than 2 SE on the four-parameter objective; a needle that fails decides
    the round alone, before the other runs."""
    from botorch_unknown_hypers.benchmarks.records import RecordStore
    from botorch_unknown_hypers.benchmarks.tables import H14, H15, OPTUNA_DEV_FIELDS, h15_decision

    needle = RecordStore(tmp_path / "needle-dev", ("problem", "method", "seed", "iterations", "n_init"))

    def on_peak(method, found):
        for seed in range(100, 110):
            needle.add("berkenkamp2", method, {
                "config": {"problem": "berkenkamp2", "method": method, "seed": seed, "iterations": 60, "n_init": 10},
                "problem": "berkenkamp2", "method": method, "seed": seed,
                "final_simple_regret": 1e-5 if seed - 100 < found else 0.1443, "wall_time_s": 1.0})

    assert h15_decision(tmp_path) == "No records yet.\n"
    on_peak(H14, 4)
    on_peak(H15, 4)  # as many as H14: part 3 fails, and decides the round alone
    text = h15_decision(tmp_path)
    assert "runs on the peak: H15 4 of 10, H14 4 of 10." in text
    assert text.endswith("Decision: the plan stays H14 (part 3 fails; the other runs are not made).\n")
    on_peak(H15, 6)
    assert h15_decision(tmp_path).endswith("Decision: not decided yet (runs missing).\n")
    store = record_store(tmp_path / "bbob")

    grid = partial(_dev_grid, store)

    grid("qlognei", lambda i: 1e-3)
    grid(H14, lambda i: 1e-3)
    grid(H15, lambda i: 10.0 ** (-3 - 0.01 * (i % 2)))
    hpo = partial(_hpo_dev, RecordStore(tmp_path / "mixed-dev", ("problem", "method", "seed", "iterations", "n_init")))
    hpo(H14, set())
    hpo(H15, set())
    four = RecordStore(tmp_path / "mixed-optuna-dev", OPTUNA_DEV_FIELDS)

    optuna = partial(_optuna_dev, four)

    optuna(H14, lambda s: -4.0)
    optuna(H15, lambda s: -4.0 + 0.1 * (s % 2))  # behind by 0.05 ± 0.017: within 2 SE? no, 3 SE
    assert h15_decision(tmp_path).endswith("Decision: the plan stays H14.\n")  # part 5
    optuna(H15, lambda s: -4.0 + 0.3 * (1 if s % 2 else -1) + 0.05)  # behind by 0.05 ± 0.10: within 2 SE
    text = h15_decision(tmp_path)
    assert "H15 − H14 over 10 seeds: +0.05 ± 0.10" in text and "H15 0 of 10, H14 0 of 10" in text
    assert text.endswith("Decision: H15 takes H14's place as the default-to-be: it is to become `auto`'s default once "
                         "its d = 2 and d = 5 reports on 26-35 are in.\n")
    hpo(H15, {101})  # one failure more than H14
    assert h15_decision(tmp_path).endswith("Decision: the plan stays H14.\n")
