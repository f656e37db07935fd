r"""Tables of the hyperparameter elimination paper's experiments (Sec. 7) from ``buh run`` results.

For every problem in the given result directories, and every method: the mean
and standard error over seeds of the cumulative and best (simple) regret at the
chosen rounds (default: 20 and the last), how often each candidate was used
(the ``selected`` column), and for ``he-gp-ucb`` the mean number of eliminated
candidates and the number of seeds in which the **true** candidate was
eliminated (the paper's guarantee: at most a fraction delta of the seeds).

True candidates: ``period`` 0 (the global fit), ``additive3d`` 1 ((1,2)(3)),
``hills`` the seed's own :math:`u^*` (``HillsProblem(seed).metadata``);
``berkenkamp`` has none (frequentist task, f is in every candidate's RKHS).

Usage::

    python benchmarks/hyperparameter_elimination.py runs/he_a runs/he_b runs/he_c runs/he_d --at 20
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pandas as pd

from botorch_unknown_hypers.problems.elimination_tasks import HILLS_CANDIDATES, HillsProblem, task_candidates
from botorch_unknown_hypers.results import ResultsStore

TRUE_CANDIDATE = {"period": 0, "additive3d": 1}


def _sem(x: pd.Series) -> float:
    return float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0


def true_candidate(problem: str, seed: int) -> int | None:
    r"""Index of the true candidate in the task's candidate set, or ``None``."""
    if problem == "hills":
        return HILLS_CANDIDATES.index(HillsProblem(seed=seed).metadata["true_candidate"])
    return TRUE_CANDIDATE.get(problem)


def regret_table(df: pd.DataFrame, rounds: list[int]) -> pd.DataFrame:
    rows = []
    for (problem, method), g in df.groupby(["problem", "method"]):
        T = int(g["iteration"].max())
        for t in sorted({*(r for r in rounds if r <= T), T}):
            at = g[g["iteration"] == t].groupby("seed").last()
            rows.append(
                {
                    "problem": problem,
                    "method": method,
                    "round": t,
                    "seeds": len(at),
                    "cumulative_regret": at["cumulative_regret"].mean(),
                    "cumulative_regret_se": _sem(at["cumulative_regret"]),
                    "best_regret": at["simple_regret"].mean(),
                    "best_regret_se": _sem(at["simple_regret"]),
                }
            )
    return pd.DataFrame(rows)


def elimination_table(df: pd.DataFrame) -> pd.DataFrame:
    r"""Per method: eliminations (``he-gp-ucb``) and the fraction of rounds that used the true candidate."""
    rows = []
    labels: dict[str, list[str]] = {}
    for (problem, method), g in df.groupby(["problem", "method"]):
        if true_candidate(problem, 0) is None:
            continue
        if problem not in labels:
            labels[problem] = task_candidates(problem, noise_std=0.01).labels()
        played = g[g["iteration"] > 0]
        truth = played["seed"].map(lambda s: labels[problem][true_candidate(problem, int(s))])
        row = {
            "problem": problem,
            "method": method,
            "seeds": played["seed"].nunique(),
            "true_selected_fraction": float((played["selected"].astype(str) == truth).mean()),
        }
        if method.startswith("he-gp-ucb"):
            last = g[g["iteration"] == g["iteration"].max()].groupby("seed").last()
            eliminated = {int(seed): json.loads(d).get("eliminated", {}) for seed, d in last["diagnostics"].items()}
            row["mean_eliminated"] = sum(map(len, eliminated.values())) / max(len(last), 1)
            row["true_eliminated_seeds"] = sum(str(true_candidate(problem, s)) in e for s, e in eliminated.items())
        rows.append(row)
    return pd.DataFrame(rows)


def selection_table(df: pd.DataFrame) -> pd.DataFrame:
    sub = df[df["iteration"] > 0]
    counts = sub.groupby(["problem", "method"])["selected"].value_counts(normalize=True)
    return counts.rename("fraction_of_rounds").reset_index()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--at", type=int, nargs="*", default=[20], help="rounds to tabulate besides the last")
    parser.add_argument("--out", type=Path, default=None, help="write the tables as CSV here")
    args = parser.parse_args()
    df = pd.concat([ResultsStore(d).read() for d in args.dirs], ignore_index=True)
    tables = {
        "regret": regret_table(df, args.at),
        "elimination": elimination_table(df),
        "selection": selection_table(df),
    }
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_colwidth", 60):
        for name, table in tables.items():
            print(f"\n== {name} ==")
            print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        for name, table in tables.items():
            table.to_csv(args.out / f"he_{name}.csv", index=False)


if __name__ == "__main__":
    main()
