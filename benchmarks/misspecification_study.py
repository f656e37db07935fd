r"""Misspecification study: EC-GP-UCB, Phased GP-US and regret balancing under sup-norm-eps perturbations.

Bogunovic & Krause (NeurIPS 2021) has no experiments; this is the check proposed in
the implementer's note (Sec. 2). On a finite grid of :math:`[0, 1]^d` (``d`` = 1 and 2),
:math:`f^* = \tilde f + m` with :math:`\lVert\tilde f\rVert_k = B = 1` exactly (RBF kernel,
length scale 0.2) and :math:`\max|m| = \epsilon` exactly, of four kinds (rough,
high-frequency, adversarial needle, biased half-space; see
:mod:`botorch_unknown_hypers.problems.misspecified_problems`), for
:math:`\epsilon \in \{0, 0.05, 0.1, 0.2\}`. Every method knows the kernel, :math:`B = 1`,
the noise level :math:`\sigma = 0.1` and uses :math:`\lambda = 1`, :math:`\delta = 0.05`
and the theoretical :math:`\beta_t` of Eq. 13 (variance form):

- ``gp-ucb``: EC-GP-UCB with :math:`\epsilon = 0`;
- ``ec-gp-ucb``, ``ec-gp-ucb/4``, ``ec-gp-ucb*4``: EC-GP-UCB with the true :math:`\epsilon`,
  :math:`\epsilon/4` and :math:`4\epsilon` (at :math:`\epsilon = 0` all three are GP-UCB);
- ``phased-gp-us``: Alg. 2 (no knowledge of :math:`\epsilon`);
- ``regret-balancing``: Alg. 3 with the paper's grid size :math:`M` (which is 1 at these
  horizons, because :math:`\gamma_T^2 > T`) and the package's practical constants;
- ``regret-balancing-m5``: the same with :math:`M = 5` bases (grid override), so that
  the grid reaches the studied :math:`\epsilon` values.

Each run has horizon ``T`` and no initial design; all methods of a seed see the same
:math:`\tilde f`, the same perturbations and the same noise sequence. The script writes
``results.csv`` (one row per run), ``table.csv`` (means and standard errors of the true
regret :math:`R^*_T` and the best-in-class regret :math:`R_T`), ``regret_vs_eps.png`` and
``rb_plays.png`` to ``--out`` and prints the table and the verdicts on four claims.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/misspecification_study.py --seeds 20 --T 256 --workers 2 --out study_out
"""

from __future__ import annotations

import argparse
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from botorch_unknown_hypers.models.kernel_ridge import greedy_information_gain, make_known_kernel
from botorch_unknown_hypers.policies.misspecified.misspecified_rules import ECGPUCB, PhasedGPUS, RegretBalancing
from botorch_unknown_hypers.misspecification import epsilon_grid, theoretical_bound_constants
from botorch_unknown_hypers.problems.misspecified_problems import PERTURBATIONS, MisspecifiedProblem

EPS = (0.0, 0.05, 0.1, 0.2)
DIMS = (1, 2)
METHODS = (
    "gp-ucb",
    "ec-gp-ucb",
    "ec-gp-ucb/4",
    "ec-gp-ucb*4",
    "phased-gp-us",
    "regret-balancing",
    "regret-balancing-m5",
)
KERNEL = dict(kernel="rbf", lengthscale=0.2, outputscale=1.0)
SETTINGS = dict(lam=1.0, noise_std=0.1, B=1.0, delta=0.05)
NOISE_STD = 0.1
RB_EXTENDED_BASES = 5
LINEAR_R2 = 0.8  # claim 1: "roughly linear" = least-squares fit with R^2 >= 0.8 and a positive slope
CONSTANT_FACTOR = 3.0  # claim 3: "within a constant factor" = mean regret ratio <= 3 in every cell


def gamma_T(dim: int, T: int) -> float:
    r"""Greedy :math:`\hat\gamma_T/(1 - 1/e)` on the study grid (what RegretBalancing computes by default)."""
    points = MisspecifiedProblem(dim=dim, eps=0.0).domain.points  # the grid, already the unit cube
    kernel = make_known_kernel(KERNEL["kernel"], KERNEL["lengthscale"], KERNEL["outputscale"], dim)
    greedy, _ = greedy_information_gain(kernel, points, SETTINGS["lam"], T)
    return greedy / (1.0 - 1.0 / math.e)


def make_method(method: str, problem: MisspecifiedProblem, eps: float, T: int, gamma: float, seed: int):
    common = dict(seed=seed, **KERNEL, **SETTINGS)
    domain = problem.domain
    if method == "gp-ucb":
        return ECGPUCB(domain, eps=0.0, **common)
    if method == "ec-gp-ucb":
        return ECGPUCB(domain, eps=eps, **common)
    if method == "ec-gp-ucb/4":
        return ECGPUCB(domain, eps=eps / 4, **common)
    if method == "ec-gp-ucb*4":
        return ECGPUCB(domain, eps=4 * eps, **common)
    if method == "phased-gp-us":
        return PhasedGPUS(domain, **common)
    if method == "regret-balancing":
        return RegretBalancing(domain, horizon=T, gamma_T=gamma, **common)
    if method == "regret-balancing-m5":
        return RegretBalancing(domain, horizon=T, gamma_T=gamma, num_bases=RB_EXTENDED_BASES, **common)
    raise ValueError(f"unknown method {method!r}")


def run_one(problem: MisspecifiedProblem, policy: Any, T: int, noise_seed: int) -> dict[str, Any]:
    r"""``T`` rounds without initial design; returns regrets and the policy's diagnostics."""
    dtype = torch.float64
    d = problem.dim
    X = torch.empty(0, d, dtype=dtype)
    Y = torch.empty(0, 1, dtype=dtype)
    noise = torch.randn(T, generator=torch.Generator().manual_seed(noise_seed), dtype=dtype) * problem.noise_std
    f_star, f_tilde = problem.optimal_value, problem.best_in_class_optimum
    true_regret = np.zeros(T)
    bic_regret = np.zeros(T)
    start = time.perf_counter()
    for t in range(T):
        x = policy.suggest(X, Y)
        f = problem.evaluate_true(x)
        y = (f + noise[t]).unsqueeze(-1)
        policy.observe(x, y)
        X, Y = torch.cat([X, x]), torch.cat([Y, y])
        true_regret[t] = f_star - float(f)
        bic_regret[t] = f_tilde - float(problem.evaluate_best_in_class(x))
    out = {
        "regret": float(true_regret.sum()),
        "bic_regret": float(bic_regret.sum()),
        "regret_first_half": float(true_regret[: T // 2].sum()),
        # share of the last quarter of rounds within eps/2 of the optimum (adversarial: on the needle)
        "final_at_optimum": float((true_regret[-(T // 4) :] < max(problem.metadata["eps"] / 2, 1e-9)).mean()),
        "wall_time_s": time.perf_counter() - start,
    }
    if isinstance(policy, RegretBalancing):
        out["rb_eps_grid"] = list(policy.eps_grid)
        out["rb_plays"] = list(policy.play_count)
        out["rb_eliminated"] = len(policy.eliminated_at)
    if isinstance(policy, PhasedGPUS):
        out["phased_episodes"] = policy.episode
        out["phased_final_size"] = len(policy.active)
    return out


def run_job(job: dict[str, Any]) -> list[dict[str, Any]]:
    r"""All methods on one (dim, kind, eps, seed); at eps = 0 the EC variants are GP-UCB."""
    torch.set_num_threads(1)
    dim, kind, eps, seed, T, gamma = job["dim"], job["kind"], job["eps"], job["seed"], job["T"], job["gamma"]
    problem_kind = PERTURBATIONS[0] if kind == "none" else kind  # eps = 0: m = 0 whatever the kind
    problem = MisspecifiedProblem(dim=dim, kind=problem_kind, eps=eps, seed=seed, noise_std=NOISE_STD)
    rows = []
    for method in METHODS:
        if eps == 0.0 and method in ("ec-gp-ucb", "ec-gp-ucb/4", "ec-gp-ucb*4"):
            continue  # identical to gp-ucb (eps = 0): copied below
        policy = make_method(method, problem, eps, T, gamma, seed)
        result = run_one(problem, policy, T, noise_seed=1_000_003 * (dim + 1) + seed)
        rows.append(dict(dim=dim, kind=kind, eps=eps, seed=seed, method=method, **result))
    if eps == 0.0:
        base = next(r for r in rows if r["method"] == "gp-ucb")
        rows += [dict(base, method=m) for m in ("ec-gp-ucb", "ec-gp-ucb/4", "ec-gp-ucb*4")]
    for row in rows:
        row["argmax_moved"] = problem.metadata["argmax_moved"]
        row["mode_gap"] = problem.metadata["mode_gap"]
    return rows


# --------------------------------------------------------------------------- #
# analysis
# --------------------------------------------------------------------------- #


def _se(x: pd.Series) -> float:
    return float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0


def expand_eps0(df: pd.DataFrame) -> pd.DataFrame:
    r"""The eps = 0 runs (m = 0, kind "none") count for every kind."""
    zero = df[df["eps"] == 0.0]
    rest = df[df["eps"] > 0.0]
    copies = [zero.assign(kind=kind) for kind in PERTURBATIONS]
    return pd.concat([rest, *copies], ignore_index=True)


def summary_table(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["dim", "kind", "eps", "method"])
    table = g.agg(
        seeds=("regret", "size"),
        regret_mean=("regret", "mean"),
        regret_se=("regret", _se),
        bic_regret_mean=("bic_regret", "mean"),
        bic_regret_se=("bic_regret", _se),
    ).reset_index()
    return table


def markdown(table: pd.DataFrame) -> str:
    methods = [m for m in METHODS if m in set(table["method"])]
    lines = ["| d | kind | eps | " + " | ".join(methods) + " |", "|---|---|---|" + "---|" * len(methods)]
    for (dim, kind, eps), g in table.groupby(["dim", "kind", "eps"], sort=True):
        cells = []
        for m in methods:
            r = g[g["method"] == m]
            cells.append(f"{r['regret_mean'].iloc[0]:.1f} ± {r['regret_se'].iloc[0]:.1f}" if len(r) else "")
        lines.append(f"| {dim} | {kind} | {eps:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def claim_linear(table: pd.DataFrame) -> tuple[bool, list[str], str]:
    lines, ok = [], True
    failures = []
    for (method, dim, kind), g in table.groupby(["method", "dim", "kind"]):
        g = g.sort_values("eps")
        x, y = g["eps"].to_numpy(), g["regret_mean"].to_numpy()
        slope, intercept = np.polyfit(x, y, 1)
        resid = y - (slope * x + intercept)
        r2 = 1.0 - resid.var() / y.var() if y.var() > 0 else 0.0
        passed = slope > 0 and r2 >= LINEAR_R2
        if not passed:
            failures.append(f"{method} d={dim} {kind}: slope {slope:.1f}, R^2 {r2:.2f}, means {np.round(y, 1).tolist()}")
        ok &= passed
    total = table.groupby(["method", "dim", "kind"]).ngroups
    lines.append(f"  {total - len(failures)}/{total} (method, d, kind) cells: slope > 0 and R^2 >= {LINEAR_R2}")
    lines += [f"  fails: {f}" for f in failures]
    reason = (
        "in the failing cells the regret first falls with eps, then rises: the method spends most rounds "
        "exploring (its eps = 0 regret is already large), and a perturbation that lowers f* by eps around the "
        "best-in-class optimum and raises it elsewhere shrinks the regret of every exploratory round until "
        "the optimum moves; the eps-linear term of the bound only takes over at the largest eps"
    )
    return ok, lines, reason


def claim_ec_vs_ucb(df: pd.DataFrame) -> tuple[bool, list[str], str]:
    lines, ok = [], True
    adv = df[(df["kind"] == "adversarial") & (df["eps"] > 0)]
    for (dim, eps), g in adv.groupby(["dim", "eps"]):
        ec = g[g["method"] == "ec-gp-ucb"].set_index("seed")["regret"]
        ucb = g[g["method"] == "gp-ucb"].set_index("seed")["regret"]
        diff = (ec - ucb).dropna()
        passed = diff.mean() < 0
        ok &= passed
        at_opt = {m: g[g["method"] == m]["final_at_optimum"].mean() for m in ("ec-gp-ucb", "gp-ucb")}
        lines.append(
            f"  d={dim} eps={eps:g}: EC {ec.mean():.1f} vs GP-UCB {ucb.mean():.1f}, paired diff "
            f"{diff.mean():.1f} ± {_se(diff):.1f} ({'lower' if passed else 'NOT lower'}); last-quarter rounds on the "
            f"needle: EC {at_opt['ec-gp-ucb']:.0%}, GP-UCB {at_opt['gp-ucb']:.0%}; best-in-class regret R_T: "
            f"EC {g[g['method'] == 'ec-gp-ucb']['bic_regret'].mean():.1f}, GP-UCB {g[g['method'] == 'gp-ucb']['bic_regret'].mean():.1f}"
        )
    reason = (
        "the bonus eps sqrt(t) / sqrt(lambda) sigma_{t-1}(x) is spread over the whole domain: it raises the "
        "best-in-class regret R_T without putting more late rounds on the needle than GP-UCB, whose Lemma 1 "
        "width (lambda = 1) already explores; the needle is narrower than the length scale, so sigma (and the "
        "bonus) there decays as its neighbours are sampled. Theorem 1 is a worst-case upper bound: it does "
        "not predict that EC-GP-UCB beats GP-UCB on a given instance at T = 256"
    )
    return ok, lines, reason


def claim_phased(table: pd.DataFrame) -> tuple[bool, list[str], str]:
    lines, ratios = [], []
    t = table[table["eps"] > 0]
    for (dim, kind, eps), g in t.groupby(["dim", "kind", "eps"]):
        phased = g[g["method"] == "phased-gp-us"]["regret_mean"].iloc[0]
        ec = g[g["method"] == "ec-gp-ucb"]["regret_mean"].iloc[0]
        ratios.append((phased / ec, dim, kind, eps))
    worst = max(ratios)
    ok = worst[0] <= CONSTANT_FACTOR
    values = np.array([r[0] for r in ratios])
    lines.append(
        f"  R*(phased) / R*(EC true eps) over {len(ratios)} cells: median {np.median(values):.2f}, "
        f"min {values.min():.2f}, max {worst[0]:.2f} (d={worst[1]}, {worst[2]}, eps={worst[3]:g}); "
        f"threshold {CONSTANT_FACTOR:g}"
    )
    by_eps = {eps: np.median([r[0] for r in ratios if r[3] == eps]) for eps in sorted({r[3] for r in ratios})}
    lines.append("  median ratio by eps: " + ", ".join(f"{e:g}: {v:.2f}" for e, v in by_eps.items()))
    zero = table[table["eps"] == 0.0].groupby(["dim", "method"])["regret_mean"].first().unstack()
    at_zero = ", ".join(f"d={d}: {zero.loc[d, 'phased-gp-us'] / zero.loc[d, 'ec-gp-ucb']:.1f}" for d in zero.index)
    lines.append(f"  ratio at eps = 0 (EC = GP-UCB there): {at_zero}")
    reason = (
        "the excess is eps-free: Phased GP-US samples by variance alone inside D_e and restarts every episode, "
        "and with beta sigma still large at m_e <= 128 it eliminates little (its regret at eps = 0 is already "
        "several times EC's); the ratio shrinks as eps grows, as a constant-factor bound in the eps-term "
        "would predict, but the log T factor and the exploration term dominate at T = 256"
    )
    return ok, lines, reason


def rb_allocation(df: pd.DataFrame, method: str = "regret-balancing-m5") -> pd.DataFrame:
    r"""Per (dim, kind, eps): play shares per base and the play-weighted geometric mean of eps_hat."""
    rows = []
    rb = df[df["method"] == method]
    for (dim, kind, eps), g in rb.groupby(["dim", "kind", "eps"]):
        plays = np.array(g["rb_plays"].tolist(), dtype=float).sum(axis=0)
        grid_values = np.array(g["rb_eps_grid"].iloc[0])
        share = plays / plays.sum()
        rows.append(
            dict(
                dim=dim, kind=kind, eps=eps, shares=share.round(3).tolist(), grid=grid_values.round(4).tolist(),
                geo_mean=float(np.exp((share * np.log(grid_values)).sum())),
                eliminations=float(g["rb_eliminated"].mean()),
            )
        )
    return pd.DataFrame(rows)


def claim_rb(alloc: pd.DataFrame) -> tuple[bool, list[str], str]:
    lines, moved_toward = [], 0
    cells = alloc[alloc["eps"] > 0]
    for _, r in cells.iterrows():
        zero = alloc[(alloc["dim"] == r["dim"]) & (alloc["kind"] == r["kind"]) & (alloc["eps"] == 0.0)].iloc[0]
        target = math.log2(r["eps"])
        closer = abs(math.log2(zero["geo_mean"]) - target) - abs(math.log2(r["geo_mean"]) - target)
        moved_toward += closer > 0.1
    ok = moved_toward >= 0.75 * len(cells)
    lines.append(f"  choices moved toward the true eps (geometric mean of the played eps_hat, by > 0.1 in log2) in {moved_toward}/{len(cells)} cells")
    for dim, g in alloc.groupby("dim"):
        zero = g[g["eps"] == 0.0].iloc[0]
        shares = np.array(g["shares"].tolist())
        change = float(np.abs(shares - np.array(zero["shares"])).max())
        geo = ", ".join(f"{r['kind']} {r['eps']:g}: {r['geo_mean']:.4f}" for _, r in g[g["eps"] > 0].iterrows())
        lines.append(
            f"  d={dim}: grid {zero['grid']}, play shares at eps = 0 {zero['shares']}; largest change of a share "
            f"in any eps > 0 cell {change:.3f}; eliminations per run {g['eliminations'].mean():.2f}"
        )
        lines.append(f"    geometric mean of played eps_hat (eps = 0: {zero['geo_mean']:.4f}): {geo}")
    reason = (
        "balancing allocates plays by the candidate bounds alone (most plays to the smallest eps_hat, whose "
        "bound grows slowest); only the elimination test of Eq. 24 reacts to the data, and with practical "
        "constants it rarely or never fires at T = 256: a base must trail the best base's average reward by "
        "more than R_i(N_i)/N_i plus two confidence terms (at least about 0.3 per play here), and the bases that "
        "trail (the robust, exploring ones) are those whose R_i(N)/N is largest; so the allocation cannot "
        "follow eps. With the paper's own M the grid has a single base"
    )
    return ok, lines, reason


def plot(table: pd.DataFrame, alloc: pd.DataFrame, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dims = sorted(table["dim"].unique())
    fig, axes = plt.subplots(len(dims), len(PERTURBATIONS), figsize=(4 * len(PERTURBATIONS), 3.4 * len(dims)), squeeze=False)
    for i, dim in enumerate(dims):
        for j, kind in enumerate(PERTURBATIONS):
            ax = axes[i][j]
            for method in METHODS:
                g = table[(table["dim"] == dim) & (table["kind"] == kind) & (table["method"] == method)].sort_values("eps")
                if len(g):
                    ax.errorbar(g["eps"], g["regret_mean"], yerr=g["regret_se"], marker="o", ms=3, capsize=2, label=method)
            ax.set_title(f"d={dim}, {kind}")
            ax.set_xlabel("eps")
            if j == 0:
                ax.set_ylabel("true regret R*_T")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "regret_vs_eps.png", dpi=120)
    plt.close(fig)

    if len(alloc):
        fig, axes = plt.subplots(1, len(dims), figsize=(5 * len(dims), 3.4), squeeze=False)
        for i, dim in enumerate(dims):
            ax = axes[0][i]
            a = alloc[alloc["dim"] == dim].groupby("eps")
            for eps, g in a:
                shares = np.mean(np.array(g["shares"].tolist()), axis=0)
                ax.plot(range(1, len(shares) + 1), shares, marker="o", label=f"eps={eps:g}")
            ax.set_xlabel("base i (eps_hat halves with i)")
            ax.set_ylabel("share of plays")
            ax.set_title(f"regret balancing (M={RB_EXTENDED_BASES}), d={dim}")
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "rb_plays.png", dpi=120)
        plt.close(fig)


def run_study(args: argparse.Namespace, gammas: dict[int, float]) -> pd.DataFrame:
    jobs = []
    for seed in range(args.seeds):
        for dim in args.dims:
            jobs.append(dict(dim=dim, kind="none", eps=0.0, seed=seed, T=args.T, gamma=gammas[dim]))
            for kind in PERTURBATIONS:
                for eps in EPS[1:]:
                    jobs.append(dict(dim=dim, kind=kind, eps=eps, seed=seed, T=args.T, gamma=gammas[dim]))
    jobs.sort(key=lambda j: -j["dim"])  # the slower 2-D jobs first, for a better load balance
    rows: list[dict[str, Any]] = []
    if args.workers > 1:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            futures = [pool.submit(run_job, job) for job in jobs]
            for future in tqdm(as_completed(futures), total=len(futures), desc="runs"):
                rows += future.result()
    else:
        for job in tqdm(jobs, desc="runs"):
            rows += run_job(job)
    df = pd.DataFrame(rows).sort_values(["dim", "kind", "eps", "seed", "method"], ignore_index=True)
    df.to_csv(args.out / "results.csv", index=False)
    return df


def load_results(path: Path) -> pd.DataFrame:
    r"""``results.csv`` of an earlier run, with its list columns parsed back."""
    import ast

    df = pd.read_csv(path)
    for column in ("rb_eps_grid", "rb_plays"):
        df[column] = df[column].map(lambda v: ast.literal_eval(v) if isinstance(v, str) else v)
    return df


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--T", type=int, default=256)
    parser.add_argument("--out", type=Path, default=Path("study_out"))
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--dims", type=int, nargs="+", default=list(DIMS))
    parser.add_argument(
        "--reanalyse", action="store_true", help="do not run; re-analyse OUT/results.csv (same --T and --dims)"
    )
    args = parser.parse_args(argv)
    if args.seeds < 2:
        parser.error("--seeds must be >= 2 (standard errors)")
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()

    gammas = {dim: gamma_T(dim, args.T) for dim in args.dims}
    if args.reanalyse:
        df = load_results(args.out / "results.csv")
        args.seeds = int(df["seed"].nunique())
    else:
        df = run_study(args, gammas)
    full = expand_eps0(df)
    table = summary_table(full)
    table.to_csv(args.out / "table.csv", index=False)
    alloc = rb_allocation(full)
    plot(table, alloc, args.out)

    print(f"\nTrue cumulative regret R*_T (mean ± standard error over {args.seeds} seeds), T = {args.T}:\n")
    print(markdown(table))
    bic = table.assign(regret_mean=table["bic_regret_mean"], regret_se=table["bic_regret_se"])
    print("\nBest-in-class regret R_T (against f-tilde):\n")
    print(markdown(bic))
    print()
    for dim in args.dims:
        grid_values = epsilon_grid(gammas[dim], args.T)
        c1, c2 = theoretical_bound_constants(gammas[dim], SETTINGS["B"], SETTINGS["lam"], SETTINGS["noise_std"], SETTINGS["delta"])
        vacuous = c1 * (SETTINGS["B"] * math.sqrt(gammas[dim]) + gammas[dim]) * math.sqrt(args.T) >= args.T
        print(
            f"d={dim}: gamma_T = {gammas[dim]:.2f}, paper M = {len(grid_values)}, eps_hat grid "
            f"{[round(v, 4) for v in grid_values]}; extended grid (M={RB_EXTENDED_BASES}) "
            f"{[round(v, 4) for v in epsilon_grid(gammas[dim], args.T, RB_EXTENDED_BASES)]}; theoretical "
            f"c'_1 = {c1:.2f}, c'_2 = {c2:.2f} (R_i(N) = N for every N <= T: {vacuous})"
        )
    moved = df[(df["method"] == "gp-ucb") & (df["kind"] == "adversarial")].groupby(["dim", "eps"])["argmax_moved"].mean()
    print("adversarial: share of seeds where argmax f* != argmax f-tilde: " + ", ".join(f"d={d} eps={e:g}: {v:.0%}" for (d, e), v in moved.items()))

    claims = [
        (
            "1. At fixed T, regret grows roughly linearly in eps for every method",
            claim_linear(table),
        ),
        (
            "2. At eps > 0, EC-GP-UCB (true eps) has lower regret than GP-UCB on the adversarial perturbation",
            claim_ec_vs_ucb(full),
        ),
        (
            "3. Phased GP-US comes within a constant factor of EC-GP-UCB (true eps) without knowing eps",
            claim_phased(table),
        ),
        (
            "4. Regret balancing's choices concentrate on eps_i near the true eps",
            claim_rb(alloc),
        ),
    ]
    print("\nClaims:")
    for title, (ok, lines, reason) in claims:
        print(f"\n{title}: {'CONFIRMED' if ok else 'REFUTED'}")
        for line in lines:
            print(line)
        if not ok:
            print(f"  likely reason: {reason}")
    print(f"\nwall time {time.perf_counter() - start:.0f} s; outputs in {args.out}{os.sep}")


if __name__ == "__main__":
    main()
