r"""The TS-RSR paper's tables (Ren & Li, Tables 1-3) from ``buh run`` results.

For every problem: the final simple regret :math:`f^* - \max_{s \le T} f(x_s)` of
each run (the ``simple_regret`` of its last row), mean (± standard deviation across
seeds, as the paper's tables) in the paper's units (x 10^-k per problem), and the
rank [R: k] of the mean among the paper's seven methods (``ts-rsr``, ``gp-ts``,
``bucb``, ``ucbpe``, ``sp``, ``kb-ei``, ``dpp-ts``). ``qlognei`` (not in the paper)
is shown with its rank among the seven plus itself in a separate column. The last
lines count the problems on which ``ts-rsr`` ranks 1st or 2nd.

Usage::

    python benchmarks/batch_table.py runs/tsrsr [more dirs...] [--csv table.csv]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

PAPER_METHODS = ["ts-rsr", "gp-ts", "bucb", "ucbpe", "sp", "kb-ei", "dpp-ts"]
PROBLEMS = [
    "gp-rbf2", "gp-rbf3", "ackley2", "rosenbrock2", "bird2", "ackley3", "hartmann6", "griewank8", "michalewicz10",
]
# The paper's display units (Tables 1-3): value x 10^-k is shown as value / 10^-k.
UNITS = {
    "gp-rbf2": -2, "gp-rbf3": -2, "ackley2": -3, "rosenbrock2": -3, "bird2": -4, "ackley3": -2,
    "hartmann6": -2, "griewank8": -2, "michalewicz10": 0,
}


def final_regrets(dirs: list[Path]) -> pd.DataFrame:
    r"""One row per (problem, method, seed): the final simple regret."""
    frames = [pd.read_csv(d / "results.csv") for d in dirs]
    df = pd.concat(frames, ignore_index=True)
    df["method"] = df["method"].astype(str).str.split("[").str[0]
    last = df.sort_values(["iteration", "batch_index"]).groupby(["problem", "method", "seed"]).tail(1)
    return last[["problem", "method", "seed", "simple_regret"]].reset_index(drop=True)


def table(final: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for problem in [p for p in PROBLEMS if p in set(final.problem)] + sorted(set(final.problem) - set(PROBLEMS)):
        sub = final[final.problem == problem]
        stats = sub.groupby("method").simple_regret.agg(["mean", "std", "count"])
        paper = stats.loc[[m for m in PAPER_METHODS if m in stats.index]]
        ranks = paper["mean"].rank(method="min").astype(int)
        with_q = stats.loc[[m for m in PAPER_METHODS + ["qlognei"] if m in stats.index]]["mean"].rank(method="min")
        k = UNITS.get(problem, 0)
        for method, row in stats.iterrows():
            rows.append(
                {
                    "problem": problem,
                    "unit": f"1e{k}",
                    "method": method,
                    "mean": row["mean"],
                    "std": row["std"],
                    "seeds": int(row["count"]),
                    "shown": f"{row['mean'] / 10.0**k:.3g} (±{row['std'] / 10.0**k:.3g})",
                    "rank_paper7": int(ranks[method]) if method in ranks.index else None,
                    "rank_with_qlognei": int(with_q[method]) if method in with_q.index else None,
                }
            )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", type=Path, nargs="+")
    parser.add_argument("--csv", type=Path, default=None)
    args = parser.parse_args()
    tab = table(final_regrets(args.dirs))
    if args.csv is not None:
        tab.to_csv(args.csv, index=False)
    methods = [m for m in PAPER_METHODS + ["qlognei"] if m in set(tab.method)]
    problems = list(dict.fromkeys(tab.problem))
    print("| method | " + " | ".join(f"{p} (x{tab[tab.problem == p].unit.iloc[0]})" for p in problems) + " |")
    print("|---" * (len(problems) + 1) + "|")
    for m in methods:
        cells = []
        for p in problems:
            r = tab[(tab.problem == p) & (tab.method == m)]
            if r.empty:
                cells.append("")
                continue
            r = r.iloc[0]
            rank = r.rank_paper7 if m != "qlognei" else r.rank_with_qlognei
            tag = "R" if m != "qlognei" else "R8"
            cells.append(f"{r.shown} [{tag}: {int(rank)}] n={r.seeds}")
        print(f"| {m} | " + " | ".join(cells) + " |")
    ts = tab[tab.method == "ts-rsr"]
    top2 = int((ts.rank_paper7 <= 2).sum())
    print(f"\nts-rsr ranks 1st or 2nd among the paper's 7 methods on {top2} of {len(ts)} problems "
          f"(1st on {int((ts.rank_paper7 == 1).sum())}).")


if __name__ == "__main__":
    main()
