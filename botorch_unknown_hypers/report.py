r"""Summaries and plots of a ``results.csv``.

- ``summary.csv``: one row per (problem, method) with the number of seeds, the
  mean and standard error (std / sqrt(seeds)) of the final simple and
  cumulative regret, and the mean wall time per run.
- ``regret_<problem>.png``: cumulative regret and simple (best) regret against
  the BO round, means with standard-error bands, one line per method.
- ``selected_<problem>.png``: histograms of the hyperparameter each method used
  (the ``selected`` column, first component), on a log axis, for the methods
  that log one.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def _sem(x: pd.Series) -> float:
    return float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0


def final_rows(df: pd.DataFrame) -> pd.DataFrame:
    r"""The last row of every (problem, method, seed) run."""
    return df.sort_values(["iteration", "batch_index"]).groupby(["problem", "method", "seed"]).tail(1)


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    r"""The ``summary.csv`` table of a results frame."""
    last = final_rows(df)
    per_run_time = (
        df[df["batch_index"] == 0].groupby(["problem", "method", "seed"])["wall_time_s"].sum().rename("run_time")
    )
    last = last.join(per_run_time, on=["problem", "method", "seed"])
    rows = []
    for (problem, method), g in last.groupby(["problem", "method"]):
        rows.append(
            {
                "problem": problem,
                "method": method,
                "seeds": len(g),
                "iterations": int(g["iteration"].max()),
                "simple_regret_mean": g["simple_regret"].mean(),
                "simple_regret_se": _sem(g["simple_regret"]),
                "cumulative_regret_mean": g["cumulative_regret"].mean(),
                "cumulative_regret_se": _sem(g["cumulative_regret"]),
                "solved_seeds": int((g["simple_regret"] <= 1e-12).sum()),
                "wall_time_per_run_s": g["run_time"].mean(),
            }
        )
    return pd.DataFrame(rows)


def _curves(df: pd.DataFrame, column: str) -> pd.DataFrame:
    per_round = df.groupby(["method", "seed", "iteration"])[column].last().reset_index()
    return per_round.groupby(["method", "iteration"])[column].agg(["mean", _sem, "count"]).reset_index()


def plot_regret(df: pd.DataFrame, problem: str, path: Path) -> None:
    sub = df[df["problem"] == problem]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, column, title in (
        (axes[0], "cumulative_regret", "Cumulative regret"),
        (axes[1], "simple_regret", "Best (simple) regret"),
    ):
        curves = _curves(sub, column)
        for method, g in curves.groupby("method"):
            ax.plot(g["iteration"], g["mean"], label=f"{method} (n={int(g['count'].max())})")
            ax.fill_between(g["iteration"], g["mean"] - g["_sem"], g["mean"] + g["_sem"], alpha=0.25)
        ax.set_xlabel("BO round t (0 = initial design)")
        ax.set_title(f"{title}: {problem}")
        ax.grid(alpha=0.3)
    axes[1].set_yscale("symlog", linthresh=1e-3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _first_float(label: str) -> float:
    try:
        return float(str(label).split(";")[0])
    except ValueError:
        return float("nan")


def plot_selected(df: pd.DataFrame, problem: str, path: Path) -> bool:
    sub = df[(df["problem"] == problem) & (df["iteration"] > 0)].copy()
    sub["value"] = sub["selected"].map(_first_float)
    sub = sub[np.isfinite(sub["value"]) & (sub["value"] > 0)]
    if sub.empty:
        return False
    fig, ax = plt.subplots(figsize=(6, 4))
    lo, hi = sub["value"].min(), sub["value"].max()
    bins = np.geomspace(lo * 0.9, hi * 1.1, 30) if hi > lo else 10
    for method, g in sub.groupby("method"):
        ax.hist(g["value"], bins=bins, alpha=0.5, label=method)
    ax.set_xscale("log")
    ax.set_xlabel("selected hyperparameter (length scale, unit-cube inputs)")
    ax.set_ylabel("rounds")
    ax.set_title(f"Selected hyperparameters: {problem}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def write_report(df: pd.DataFrame, out_dir: str | Path) -> tuple[pd.DataFrame, list[Path]]:
    r"""Write ``summary.csv`` and the plots into ``out_dir``; returns (summary, plot paths)."""
    out = Path(out_dir)
    if df.empty:
        raise ValueError(f"no results to report in {out}.")
    summary = summarize(df)
    summary.to_csv(out / "summary.csv", index=False)
    plots = []
    for problem in sorted(df["problem"].unique()):
        path = out / f"regret_{problem}.png"
        plot_regret(df, problem, path)
        plots.append(path)
        path = out / f"selected_{problem}.png"
        if plot_selected(df, problem, path):
            plots.append(path)
    return summary, plots
