r"""Figures and tables of the length-scale balancing paper from ``buh run`` results.

Ziomek, Adachi, Osborne (NeurIPS 2024), Sec. 5. Reads one or more results
directories (each with a ``results.csv`` written by ``buh run``) and writes:

- ``fig3_<problem>.png``: cumulative and best regret against the BO round, means
  with standard-error bands (Figure 3);
- ``fig2_michalewicz5.png``: histogram of the length scales each method used on
  Michalewicz, with the :math:`\hat\theta^*` estimate of the paper (Figure 2):
  10,000 uniform points, the top 1% by objective, a Matern-5/2 length scale
  fitted by maximum likelihood to those 100 points in unit-cube units (the fit
  is multi-modal, so the median over five draws of the 10,000 points);
- ``table_at_T.csv``: per problem and method, the mean and standard error of
  the best and cumulative regret at round ``T`` (``--at problem=T``, default the
  last round), and the seeds whose best regret reached 0 (materials problems);
- ``table2_wall_time.csv``: the wall time per run (Table 2) and, per problem,
  the NUTS / LB ratio over the rounds both ran (NUTS may run fewer rounds).

Usage::

    buh run --problem michalewicz5 --method lb-gp-ucb,a-gp-ucb,mle-gp-ucb --seeds 10 --iterations 250 --out runs/lb
    buh run --problem michalewicz5 --method nuts-gp-ucb --seeds 10 --iterations 50 --out runs/nuts
    python benchmarks/length_scale_balancing.py runs/lb runs/nuts --out figures --at berkenkamp=100
"""

from __future__ import annotations

import argparse
import math
import platform
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from botorch_unknown_hypers.models.fitted import fit_single_task_gp  # noqa: E402
from botorch_unknown_hypers.problems import get_problem  # noqa: E402
from botorch_unknown_hypers.report import plot_regret, summarize  # noqa: E402

ORACLE_CODE = {"michalewicz5": 0.035411037051703544}  # the authors' stored estimate (oracle_dict)


def load(dirs: list[Path]) -> pd.DataFrame:
    frames = []
    for d in dirs:
        path = d / "results.csv"
        if not path.exists():
            raise SystemExit(f"{path} does not exist")
        frames.append(pd.read_csv(path))
    df = pd.concat(frames, ignore_index=True)
    return df.drop_duplicates(["problem", "method", "seed", "iteration", "batch_index"], keep="last")


def theta_hat_star(problem_name: str = "michalewicz5", n: int = 10_000, top: float = 0.01, seed: int = 0) -> float:
    r""":math:`\hat\theta^*`: MLE length scale (unit cube) on the top ``top`` fraction of ``n`` uniform points."""
    problem = get_problem(problem_name)
    lo, hi = problem.domain.bounds
    gen = torch.Generator().manual_seed(seed)
    X = lo + (hi - lo) * torch.rand(n, problem.dim, generator=gen, dtype=torch.float64)
    f = problem.evaluate_true(X)
    idx = f.topk(max(2, int(round(top * n)))).indices
    model = fit_single_task_gp(X[idx], f[idx].unsqueeze(-1), problem.domain.bounds)
    return float(model.covar_module.base_kernel.lengthscale.item())


def plot_fig2(df: pd.DataFrame, problem: str, theta_star: float, path: Path) -> None:
    sub = df[(df["problem"] == problem) & (df["iteration"] > 0)].copy()
    sub["value"] = pd.to_numeric(sub["selected"].astype(str).str.split(";").str[0], errors="coerce")
    sub = sub[np.isfinite(sub["value"]) & (sub["value"] > 0)]
    methods = sorted(sub["method"].unique())
    fig, axes = plt.subplots(1, len(methods), figsize=(3.2 * len(methods), 3.2), sharex=True, squeeze=False)
    lo, hi = min(sub["value"].min(), theta_star), max(sub["value"].max(), theta_star)
    bins = np.geomspace(lo * 0.9, hi * 1.1, 30)
    for ax, method in zip(axes[0], methods):
        ax.hist(sub.loc[sub["method"] == method, "value"], bins=bins, color="tab:blue", alpha=0.7)
        ax.axvline(theta_star, color="k", ls="--", label=r"$\hat\theta^*$ = %.4f" % theta_star)
        if problem in ORACLE_CODE:
            ax.axvline(ORACLE_CODE[problem], color="tab:red", ls=":", label="authors' estimate")
        ax.set_xscale("log")
        ax.set_title(method, fontsize=9)
        ax.set_xlabel("length scale (unit cube)")
    axes[0][0].set_ylabel("rounds (all seeds)")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"Selected length scales on {problem}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def table_at(df: pd.DataFrame, at: dict[str, int]) -> pd.DataFrame:
    parts = []
    for problem, g in df.groupby("problem"):
        T = at.get(problem)
        parts.append(summarize(g if T is None else g[g["iteration"] <= T]))
    return pd.concat(parts, ignore_index=True)


def wall_time_table(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    first = df[df["batch_index"] == 0]
    runs = first.groupby(["problem", "method", "seed"]).agg(
        run_time=("wall_time_s", "sum"), iterations=("iteration", "max")
    )
    rows = []
    for (problem, method), g in runs.groupby(level=[0, 1]):
        rows.append(
            {
                "problem": problem,
                "method": method,
                "seeds": len(g),
                "iterations": int(g["iterations"].max()),
                "wall_time_mean_s": g["run_time"].mean(),
                "wall_time_se_s": g["run_time"].std(ddof=1) / math.sqrt(len(g)) if len(g) > 1 else 0.0,
            }
        )
    lines = []
    for problem in sorted(df["problem"].unique()):
        sub = first[first["problem"] == problem]
        methods = set(sub["method"])
        if not {"nuts-gp-ucb", "lb-gp-ucb"} <= methods:
            continue
        T = int(min(sub[sub["method"] == m]["iteration"].max() for m in ("nuts-gp-ucb", "lb-gp-ucb")))
        per_run = sub[sub["iteration"] <= T].groupby(["method", "seed"])["wall_time_s"].sum().groupby("method").mean()
        ratio = per_run["nuts-gp-ucb"] / per_run["lb-gp-ucb"]
        lines.append(
            f"{problem}: NUTS / LB wall time over rounds 0..{T} = {per_run['nuts-gp-ucb']:.1f} s / "
            f"{per_run['lb-gp-ucb']:.1f} s = {ratio:.1f}x"
        )
    return pd.DataFrame(rows), lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", type=Path, nargs="+", help="results directories (buh run --out)")
    parser.add_argument("--out", type=Path, default=Path("figures"))
    parser.add_argument("--at", action="append", default=[], help="problem=T: report regret at round T")
    args = parser.parse_args()
    at = {}
    for item in args.at:
        name, _, value = item.partition("=")
        if not value.isdigit():
            raise SystemExit(f"--at expects problem=T, got {item!r}")
        at[name] = int(value)
    args.out.mkdir(parents=True, exist_ok=True)
    df = load(args.dirs)
    print(f"machine: {platform.processor() or platform.machine()}, torch {torch.__version__}")
    for problem in sorted(df["problem"].unique()):
        path = args.out / f"fig3_{problem}.png"
        plot_regret(df, problem, path)
        print(f"wrote {path}")
    if "michalewicz5" in set(df["problem"]):
        # The MLE on 100 points is multi-modal in the length scale: repeat over 5 draws, take the median.
        draws = [theta_hat_star(seed=s) for s in range(5)]
        theta_star = float(np.median(draws))
        print(
            "theta-hat* (michalewicz5, top 1% of 10,000 uniform points, MLE; median of 5 draws) = "
            f"{theta_star:.4f} (draws: {', '.join(f'{v:.4f}' for v in draws)}; authors' stored value 0.0354)"
        )
        path = args.out / "fig2_michalewicz5.png"
        plot_fig2(df, "michalewicz5", theta_star, path)
        print(f"wrote {path}")
    table = table_at(df, at)
    table.to_csv(args.out / "table_at_T.csv", index=False)
    cols = ["problem", "method", "seeds", "iterations", "simple_regret_mean", "simple_regret_se",
            "cumulative_regret_mean", "cumulative_regret_se", "solved_seeds"]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        times, ratios = wall_time_table(df)
        times.to_csv(args.out / "table2_wall_time.csv", index=False)
        print(times.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    for line in ratios:
        print(line)


if __name__ == "__main__":
    main()
