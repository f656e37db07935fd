r"""Summaries and plots of a ``results.csv``.

- ``summary.csv``: one row per (problem, method) with the number of seeds, the
  mean and standard error (std / sqrt(seeds)) of the final simple and
  cumulative regret, and the mean wall time per run.
- ``regret_<problem>.png``: cumulative regret and simple (best) regret against
  the BO round, means with standard-error bands, one line per method.
- ``selected_<problem>.png``: histograms of the hyperparameter each method used
  (the ``selected`` column, first component), on a log axis, for the methods
  that log one;
- ``eps_regret_<problem>.png``: for robust rules (HE-StableOpt, StableOpt), the
  :math:`\varepsilon`-regret the loop records in ``diagnostics``, instantaneous
  and best so far; ``summary.csv`` then also has its final and best means and
  standard errors.
"""

from __future__ import annotations

import json
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


def eps_regret_frame(df: pd.DataFrame) -> pd.DataFrame:
    r"""Per BO round, the :math:`\varepsilon`-regret a robust rule recorded in ``diagnostics``.

    Columns ``problem, method, seed, iteration, eps_regret`` (the instantaneous
    :math:`r^\varepsilon_t` at the point the rule chose) and ``best_eps_regret``
    (:math:`\min_{s \le t} r^\varepsilon_s`); empty when no run recorded one.
    """
    columns = ["problem", "method", "seed", "iteration", "eps_regret", "best_eps_regret"]
    if "diagnostics" not in df.columns:
        return pd.DataFrame(columns=columns)
    sub = df[df["diagnostics"].astype(str).str.contains("eps_regret", regex=False)]
    if sub.empty:
        return pd.DataFrame(columns=columns)
    values = sub["diagnostics"].map(lambda d: float(json.loads(d)["eps_regret"]))
    out = sub[["problem", "method", "seed", "iteration"]].assign(eps_regret=values.to_numpy())
    out = out.sort_values(["problem", "method", "seed", "iteration"])
    out["best_eps_regret"] = out.groupby(["problem", "method", "seed"])["eps_regret"].cummin()
    return out.reset_index(drop=True)


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    r"""The ``summary.csv`` table of a results frame.

    Runs that recorded an :math:`\varepsilon`-regret (robust rules) also get
    ``eps_regret_final_*`` (the last round's) and ``best_eps_regret_*`` columns.
    """
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
    summary = pd.DataFrame(rows)
    eps = eps_regret_frame(df)
    if not eps.empty:
        last_eps = eps.groupby(["problem", "method", "seed"]).tail(1)
        stats = last_eps.groupby(["problem", "method"]).agg(
            eps_regret_final_mean=("eps_regret", "mean"),
            eps_regret_final_se=("eps_regret", _sem),
            best_eps_regret_mean=("best_eps_regret", "mean"),
            best_eps_regret_se=("best_eps_regret", _sem),
        )
        summary = summary.join(stats, on=["problem", "method"])
    return summary


def _curves(df: pd.DataFrame, column: str) -> pd.DataFrame:
    per_round = df.groupby(["method", "seed", "iteration"])[column].last().reset_index()
    return per_round.groupby(["method", "iteration"])[column].agg(["mean", _sem, "count"]).reset_index()


def _band_panels(panels: list[tuple[pd.DataFrame, str]], problem: str, xlabel: str, path: Path, log_right: bool) -> None:
    r"""Two panels of per-method mean curves with standard-error bands; ``panels``: (curves, title)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, (curves, title) in zip(axes, panels):
        for method, g in curves.groupby("method"):
            ax.plot(g["iteration"], g["mean"], label=f"{method} (n={int(g['count'].max())})")
            ax.fill_between(g["iteration"], g["mean"] - g["_sem"], g["mean"] + g["_sem"], alpha=0.25)
        ax.set_xlabel(xlabel)
        ax.set_title(f"{title}: {problem}")
        ax.grid(alpha=0.3)
    if log_right:
        axes[1].set_yscale("symlog", linthresh=1e-3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_regret(df: pd.DataFrame, problem: str, path: Path) -> None:
    sub = df[df["problem"] == problem]
    panels = [
        (_curves(sub, "cumulative_regret"), "Cumulative regret"),
        (_curves(sub, "simple_regret"), "Best (simple) regret"),
    ]
    _band_panels(panels, problem, "BO round t (0 = initial design)", path, log_right=True)


def plot_eps_regret(df: pd.DataFrame, problem: str, path: Path) -> bool:
    r"""Mean :math:`\varepsilon`-regret (instantaneous and best so far) with standard errors."""
    eps = eps_regret_frame(df[df["problem"] == problem])
    if eps.empty:
        return False
    panels = [
        (eps.groupby(["method", "iteration"])[column].agg(["mean", _sem, "count"]).reset_index(), title)
        for column, title in (("eps_regret", "epsilon-regret"), ("best_eps_regret", "Best epsilon-regret"))
    ]
    _band_panels(panels, problem, "BO round t", path, log_right=False)
    return True


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
        path = out / f"eps_regret_{problem}.png"
        if plot_eps_regret(df, problem, path):
            plots.append(path)
    return summary, plots
