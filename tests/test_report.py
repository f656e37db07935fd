import json
import math

import numpy as np
import pandas as pd
import pytest

from botorch_unknown_hypers.report import (
    eps_regret_frame,
    prior_confusion,
    prior_labels,
    prior_run_stats,
    prior_selection_frame,
    prior_selection_summary,
    reference_entropy,
    summarize,
    write_report,
)


def _frame(with_eps: bool) -> pd.DataFrame:
    rows = []
    eps = {0: [0.5, 0.2, 0.4], 1: [0.3, 0.6, 0.1]}
    for seed in (0, 1):
        for it in range(4):
            diag = {} if it == 0 or not with_eps else {"eps_regret": eps[seed][it - 1]}
            rows.append(
                {
                    "problem": "robust-peak",
                    "method": "he-stableopt",
                    "seed": seed,
                    "iteration": it,
                    "batch_index": 0,
                    "y": 0.0,
                    "f": 0.0,
                    "simple_regret": 1.0 / (it + 1),
                    "cumulative_regret": float(it),
                    "selected": "0.1",
                    "n_candidates": 4,
                    "wall_time_s": 0.1,
                    "diagnostics": json.dumps(diag) if diag else "",
                }
            )
    return pd.DataFrame(rows)


def test_eps_regret_frame_and_summary_match_brute_force():
    df = _frame(with_eps=True)
    eps = eps_regret_frame(df)
    assert eps[eps.seed == 0]["best_eps_regret"].tolist() == [0.5, 0.2, 0.2]
    assert eps[eps.seed == 1]["best_eps_regret"].tolist() == [0.3, 0.3, 0.1]
    row = summarize(df).iloc[0]
    assert row["eps_regret_final_mean"] == pytest.approx((0.4 + 0.1) / 2)
    assert row["eps_regret_final_se"] == pytest.approx(pd.Series([0.4, 0.1]).std() / 2**0.5)
    assert row["best_eps_regret_mean"] == pytest.approx((0.2 + 0.1) / 2)


def test_report_without_eps_regret_has_no_eps_columns_or_plot(tmp_path):
    summary, plots = write_report(_frame(with_eps=False), tmp_path)
    assert "eps_regret_final_mean" not in summary.columns
    assert not any("eps_regret" in p.name for p in plots)
    summary, plots = write_report(_frame(with_eps=True), tmp_path)
    assert (tmp_path / "eps_regret_robust-peak.png").exists()
    assert "eps_regret_final_mean" in pd.read_csv(tmp_path / "summary.csv").columns


# ----------------------------------------------------------------------------- prior selection
LABELS = ["a", "b", "c"]
# (method, seed): p*, the prior used at t = 1, 2, 3, and n_active (PE) or the final hyperposterior (HP)
PS_RUNS = {
    ("pe-gp-ts", 0): (0, [0, 1, 1], [3, 3, 2]),
    ("pe-gp-ts", 1): (2, [2, 2, 0], [3, 3, 3]),
    ("hp-gp-ts", 0): (1, [0, 1, 1], [0.1, 0.7, 0.2]),
    ("hp-gp-ts", 1): (2, [2, 2, 2], [0.5, 0.1, 0.4]),
}


def _ps_frame(with_oracle: bool = False) -> pd.DataFrame:
    runs = dict(PS_RUNS)
    if with_oracle:
        runs[("oracle-gp-ts", 0)] = (1, [1, 1, 1], [1, 1, 1])
    rows = []
    for (method, seed), (true, used, extra) in runs.items():
        for t, prior in enumerate(used, start=1):
            diag = {"prior": prior, "true_prior": true}
            if method.startswith("hp"):
                post = extra if t == 3 else [1 / 3] * 3
                diag.update({"hyperposterior": post, "entropy": 1.0 / t, "log_evidence": [-1.0, -2.0, -3.0]})
                n_candidates = 3
            else:
                diag.update({"eliminated": None, "active": [True] * extra[t - 1], "n_active": extra[t - 1]})
                n_candidates = 1 if method.startswith("oracle") else 3
            # the HP runs in the loop's compact JSON, the PE runs with json.dumps' default spaces
            text = json.dumps(diag, separators=(",", ":")) if method.startswith("hp") else json.dumps(diag)
            rows.append(
                {
                    "problem": "gp-toy",
                    "method": method,
                    "seed": seed,
                    "iteration": t,
                    "batch_index": 0,
                    "y": 0.0,
                    "f": 0.0,
                    "simple_regret": 0.0,
                    "cumulative_regret": float(t * (seed + 1)),
                    "selected": LABELS[prior],
                    "n_candidates": n_candidates,
                    "wall_time_s": 0.1,
                    "diagnostics": text,
                }
            )
    return pd.DataFrame(rows).sample(frac=1.0, random_state=0)  # order must not matter


def test_prior_selection_metrics_match_hand_counts():
    table = prior_selection_summary(_ps_frame()).set_index("method")
    pe, hp = table.loc["pe-gp-ts"], table.loc["hp-gp-ts"]
    assert pe["seeds"] == 2 and pe["num_priors"] == 3 and pe["rounds"] == 3
    assert pe["cumulative_regret_mean"] == pytest.approx((3 + 6) / 2)
    # accuracy: seed 0 uses p* = 0 once in 3 rounds, seed 1 uses p* = 2 twice
    assert pe["prior_accuracy_mean"] == pytest.approx((1 / 3 + 2 / 3) / 2)
    assert pe["prior_accuracy_se"] == pytest.approx(pd.Series([1 / 3, 2 / 3]).std() / 2**0.5)
    # eliminated at T: 3 - 2 = 1 and 3 - 3 = 0
    assert pe["eliminated_mean"] == pytest.approx(0.5)
    assert pe["eliminated_se"] == pytest.approx(pd.Series([1.0, 0.0]).std() / 2**0.5)
    assert math.isnan(pe["final_top_mass_mean"]) and math.isnan(pe["final_top_is_true"])
    assert hp["prior_accuracy_mean"] == pytest.approx((2 / 3 + 1) / 2)
    assert math.isnan(hp["eliminated_mean"])
    # final hyperposterior: max 0.7 at p* = 1 (seed 0), max 0.5 at 0 != p* = 2 (seed 1)
    assert hp["final_top_mass_mean"] == pytest.approx(0.6)
    assert hp["final_top_mass_se"] == pytest.approx(pd.Series([0.7, 0.5]).std() / 2**0.5)
    assert hp["final_top_is_true"] == pytest.approx(0.5)


def test_prior_confusion_rows_sum_to_one_and_match_hand_count():
    frame = prior_selection_frame(_ps_frame())
    assert prior_labels(frame) == {"gp-toy": LABELS}
    confusion = prior_confusion(frame[frame.method == "pe-gp-ts"], LABELS)
    assert list(confusion.index) == LABELS and list(confusion.columns) == LABELS
    expected = np.array([[1 / 3, 2 / 3, 0.0], [np.nan] * 3, [1 / 3, 0.0, 2 / 3]])
    np.testing.assert_allclose(confusion.to_numpy(), expected)
    confusion = prior_confusion(frame[frame.method == "hp-gp-ts"], LABELS)
    # p* = 1: used 0, 1, 1; p* = 2: used 2, 2, 2; p* = 0 never drawn
    np.testing.assert_allclose(confusion.iloc[1:].to_numpy(), [[1 / 3, 2 / 3, 0.0], [0.0, 0.0, 1.0]])
    sums = confusion.sum(axis=1, min_count=1).dropna()
    np.testing.assert_allclose(sums.to_numpy(), 1.0)


def test_prior_selection_frame_reads_per_round_diagnostics():
    frame = prior_selection_frame(_ps_frame(with_oracle=True))
    pe0 = frame[(frame.method == "pe-gp-ts") & (frame.seed == 0)]
    assert pe0["iteration"].tolist() == [1, 2, 3]  # sorted by round
    assert pe0["n_active"].tolist() == [3, 3, 2] and pe0["entropy"].isna().all()
    hp0 = frame[(frame.method == "hp-gp-ts") & (frame.seed == 0)]
    assert hp0["entropy"].tolist() == pytest.approx([1.0, 0.5, 1 / 3]) and hp0["n_active"].isna().all()
    assert set(frame[frame.method == "oracle-gp-ts"]["model_priors"]) == {1}
    runs = prior_run_stats(_ps_frame(with_oracle=True)).set_index(["method", "seed"])
    assert runs.loc[("oracle-gp-ts", 0), "prior_accuracy"] == 1.0
    assert math.isnan(runs.loc[("oracle-gp-ts", 0), "eliminated"])  # nothing to eliminate


def test_reference_entropy():
    assert reference_entropy(1 / 3, 3) == pytest.approx(math.log(3))  # uniform
    assert reference_entropy(1.0, 3) == 0.0
    q = 0.8
    assert reference_entropy(q, 4) == pytest.approx(-q * math.log(q) - 0.2 * math.log(0.2 / 3))
    with pytest.raises(ValueError):
        reference_entropy(0.5, 1)


def test_prior_selection_outputs_only_with_diagnostics(tmp_path):
    plain_dir, ps_dir = tmp_path / "plain", tmp_path / "ps"
    plain_dir.mkdir()
    ps_dir.mkdir()
    plain = _frame(with_eps=False)
    summary, plots = write_report(plain, plain_dir)
    assert prior_selection_frame(plain).empty
    assert [p.name for p in plots] == ["regret_robust-peak.png", "selected_robust-peak.png"]
    assert sorted(p.name for p in plain_dir.iterdir()) == sorted(["summary.csv", *(p.name for p in plots)])
    pd.testing.assert_frame_equal(summary, summarize(plain))

    df = _ps_frame(with_oracle=True)
    summary, plots = write_report(df, ps_dir)
    names = {p.name for p in plots}
    for name in ("regret", "active_priors", "entropy", "confusion"):
        assert f"{name}_gp-toy.png" in names and (ps_dir / f"{name}_gp-toy.png").exists()
    assert list(summary.columns) == list(summarize(plain).columns)  # summary.csv as before
    table = pd.read_csv(ps_dir / "prior_selection.csv")
    assert sorted(table["method"]) == ["hp-gp-ts", "oracle-gp-ts", "pe-gp-ts"]
    # no hyperposterior or elimination rule: only the table and the confusion matrix
    only_pe = df[df.method != "hp-gp-ts"]
    pe_dir = tmp_path / "pe"
    pe_dir.mkdir()
    _, plots = write_report(only_pe, pe_dir)
    assert {p.name for p in plots} == {"regret_gp-toy.png", "active_priors_gp-toy.png", "confusion_gp-toy.png"}


def test_solved_seeds_count_runs_within_the_tolerance():
    df = _frame(with_eps=False)
    finals = df.sort_values("iteration").groupby("seed")["simple_regret"].last()
    for tol in (0.0, float(finals.min()), float(finals.max()), 1e9):
        assert summarize(df, solved_tol=tol).iloc[0]["solved_seeds"] == int((finals <= tol).sum())
