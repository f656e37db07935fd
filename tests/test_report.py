import json

import pandas as pd
import pytest

from botorch_unknown_hypers.report import eps_regret_frame, summarize, write_report


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
