r"""Aggregates of a BBOB sweep as the field reads them: ECDFs of targets, paired tables, ranks.

A run :math:`\rho` (function :math:`k`, instance :math:`i`, seed, method) has simple regret
:math:`r_\rho(n) = f^* - \max_{j \le n} f(x_j)` after :math:`n` evaluations, normalised by the
instance's spread :math:`s` (:mod:`~botorch_unknown_hypers.problems.bbob_problems`):
:math:`\tilde r_\rho(n) = r_\rho(n) / s`. With targets :math:`\tau_1, \dots, \tau_K` (default
:data:`TARGETS`, COCO's 51 log-spaced targets :math:`10^{2}, 10^{1.8}, \dots, 10^{-8}`, applied to
the normalised regret), the *empirical cumulative distribution* of a method over its runs
:math:`R` is

.. math::

    \mathrm{ECDF}(n) = \frac{1}{|R|\,K} \sum_{\rho \in R} \sum_{k=1}^K
        \mathbf 1\{\tilde r_\rho(n) \le \tau_k\},

the fraction of (function, instance, seed, target) tuples reached within :math:`n` evaluations
(COCO's runtime ECDF of a fixed budget). Against wall time, :math:`\tilde r_\rho(t)` is the
regret at the last evaluation whose cumulative proposal time is at most :math:`t`. The area
under the ECDF is its mean over the budget, :math:`\mathrm{AUC} = \frac1N \sum_{n=1}^N
\mathrm{ECDF}(n) \in [0, 1]`. A comparison uses only the (problem, seed) pairs every compared
method has run (:func:`common_runs`).

Per function, the table gives each method's mean final simple regret (raw, in the function's
units) and the paired difference against a reference method over the (instance, seed) pairs both
ran: mean :math:`\bar\delta` of :math:`\delta = r_\text{method} - r_\text{ref}`, its standard
error :math:`\mathrm{sd}(\delta)/\sqrt m` (``ddof = 1``), and the counts of pairs where the method
is better (:math:`\delta < 0`) and worse; *significant* means :math:`|\bar\delta| > 2\,\mathrm{SE}`.
The average rank ranks the methods on the final simple regret within each (function, instance,
seed) (ties get the mean of their ranks), then averages per function and over all.
:func:`report_bars` judges the ``auto`` presets against the peers by the bars of :data:`BARS`.

Reference:
    N. Hansen, A. Auger, D. Brockhoff, T. Tusar. Anytime performance assessment in blackbox
    optimization benchmarking. IEEE TEVC 26(6), 2022 (COCO's runtime ECDFs and targets).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from botorch_unknown_hypers.benchmarks.bbob import RECORD_FORMAT, RECORD_VERSION, group_name, record_store  # noqa: E402

TARGETS = np.logspace(2, -8, 51)
r"""COCO's 51 targets :math:`10^{2 - k/5}`, :math:`k = 0, \dots, 50`, on the normalised regret."""


def load_runs(out: str | Path, instances: Sequence[int] | None = None, dims: Sequence[int] | None = None) -> list[dict]:
    r"""The runs under ``out``: the complete run files (``d*/*/*.json``) and the study records
    (``d*/*.jsonl.gz``, :func:`~botorch_unknown_hypers.benchmarks.bbob.record_store`), in path
    order; with ``instances``, only the runs on those instances, and with ``dims``, only the
    groups of those dimensions (``d5`` and ``d5-noisy`` for 5), whose files alone are read."""
    groups = None if dims is None else [group_name(d, noisy) for d in dims for noisy in (False, True)]
    runs = []
    for path in sorted(p for group in (groups or ["d*"]) for p in Path(out).glob(f"{group}/*/*.json")):
        try:
            record = json.loads(path.read_text())
        except ValueError:
            continue
        if record.get("format") == RECORD_FORMAT and record.get("version") == RECORD_VERSION and record.get("complete"):
            runs.append(record)
    runs += list(record_store(out).records(groups))
    if instances is not None:
        keep = set(instances)
        runs = [run for run in runs if run["config"]["instance"] in keep]
    return runs


def runs_frame(runs: Sequence[dict]) -> pd.DataFrame:
    r"""One row per run: ``group`` (``d5`` or ``d5-noisy``), ``problem``, ``function``,
    ``function_name``, ``instance``, ``seed``, ``method``, ``final_simple_regret``, ``spread``, ``wall_time_s``
    (total proposal time), ``cpu_s`` and the traces ``regret`` (normalised, per evaluation)
    and ``time`` (cumulative proposal time, per evaluation)."""
    rows = []
    for run in runs:
        c = run["config"]
        rows.append(
            {
                "group": group_name(c["dim"], c["noisy"]),
                "problem": c["problem"],
                "function": c["function"],
                "function_name": c.get("function_name", ""),
                "instance": c["instance"],
                "seed": c["seed"],
                "method": c["method"],
                "final_simple_regret": run["final_simple_regret"],
                "spread": c["spread"],
                "wall_time_s": run["cumulative_time_s"][-1],
                "cpu_s": run.get("cpu_s"),
                "regret": np.asarray(run["simple_regret"], dtype=float) / c["spread"],
                "time": np.asarray(run["cumulative_time_s"], dtype=float),
            }
        )
    return pd.DataFrame(rows)


def common_runs(frame: pd.DataFrame, methods: Sequence[str] | None = None) -> pd.DataFrame:
    r"""The rows of ``methods`` (default: all) on the (problem, seed) pairs that every one of them ran."""
    methods = sorted(frame["method"].unique()) if methods is None else list(methods)
    sub = frame[frame["method"].isin(methods)]
    counts = sub.groupby(["problem", "seed"])["method"].nunique()
    keep = counts[counts == len(methods)].index
    return sub.set_index(["problem", "seed"]).loc[keep].reset_index() if len(keep) else sub.iloc[:0]


def _hits(regret: np.ndarray, targets: np.ndarray) -> np.ndarray:
    r"""``runs x N``: the fraction of targets reached by each run after each evaluation."""
    return (regret[:, :, None] <= targets[None, None, :]).mean(-1)


def ecdf_evaluations(frame: pd.DataFrame, targets: np.ndarray = TARGETS) -> dict[str, np.ndarray]:
    r"""Per method, :math:`\mathrm{ECDF}(n)` for :math:`n = 1, \dots, N` (one budget ``N`` in ``frame``)."""
    lengths = {len(r) for r in frame["regret"]}
    if len(lengths) != 1:
        raise ValueError(f"frame: runs of one budget expected (one dimension), got lengths {sorted(lengths)}.")
    return {
        method: _hits(np.stack(sub["regret"].to_list()), np.asarray(targets)).mean(0)
        for method, sub in frame.groupby("method")
    }


def ecdf_time(frame: pd.DataFrame, times: np.ndarray, targets: np.ndarray = TARGETS) -> dict[str, np.ndarray]:
    r"""Per method, :math:`\mathrm{ECDF}(t)` at each time of ``times`` (seconds of proposal time)."""
    out = {}
    for method, sub in frame.groupby("method"):
        regret_at = []
        for regret, time in zip(sub["regret"], sub["time"]):
            last = np.searchsorted(time, times, side="right") - 1  # last evaluation done by t
            regret_at.append(np.where(last >= 0, regret[np.maximum(last, 0)], np.inf))
        out[method] = _hits(np.stack(regret_at), np.asarray(targets)).mean(0)
    return out


def auc(curve: np.ndarray) -> float:
    r"""Area under an ECDF over evaluations, :math:`\frac1N \sum_n \mathrm{ECDF}(n)`."""
    return float(np.mean(curve))


def paired_table(frame: pd.DataFrame, reference: str) -> pd.DataFrame:
    r"""Per (function, method): the function's name, mean final simple regret, and against ``reference`` over the
    (instance, seed) pairs both ran: ``pairs``, ``mean_diff``, ``se``, ``better``, ``worse``,
    ``significant`` (``"better"``, ``"worse"`` or ``""``)."""
    rows = []
    for function, sub in frame.groupby("function"):
        name = str(sub["function_name"].iloc[0]) if "function_name" in sub else ""
        final = sub.pivot_table(index=["instance", "seed"], columns="method", values="final_simple_regret")
        for method in final.columns:
            row = {"function": function, "name": name, "method": method, "runs": int(final[method].notna().sum()),
                   "mean_final_regret": float(final[method].mean())}
            if method != reference and reference in final.columns:
                both = final[[method, reference]].dropna()
                diff = (both[method] - both[reference]).to_numpy()
                m = len(diff)
                se = float(diff.std(ddof=1) / math.sqrt(m)) if m > 1 else float("nan")
                mean = float(diff.mean()) if m else float("nan")
                row.update(pairs=m, mean_diff=mean, se=se, better=int((diff < 0).sum()), worse=int((diff > 0).sum()),
                           significant=("better" if mean < 0 else "worse") if m > 1 and abs(mean) > 2 * se else "")
            rows.append(row)
    return pd.DataFrame(rows)


def average_ranks(frame: pd.DataFrame) -> pd.DataFrame:
    r"""Methods x functions (plus ``all``): the mean rank of the final simple regret within each
    (function, instance, seed) that every method ran (1 = lowest regret, ties averaged)."""
    methods = sorted(frame["method"].unique())
    sub = common_runs(frame, methods)
    ranks = sub.assign(rank=sub.groupby(["problem", "seed"])["final_simple_regret"].rank(method="average"))
    table = ranks.pivot_table(index="method", columns="function", values="rank", aggfunc="mean")
    table["all"] = ranks.groupby("method")["rank"].mean()
    return table


SCORE_FLOOR = 1e-8
r"""Floor of the normalised final regret in a run's score (COCO's last target)."""


def run_scores(frame: pd.DataFrame) -> pd.Series:
    r"""Per run, :math:`s = \log_{10}\max(r / \mathrm{spread}, 10^{-8})` of the final simple regret
    :math:`r`: the decade of the normalised regret, so that every function weighs the same."""
    return np.log10(np.maximum(frame["final_simple_regret"] / frame["spread"], SCORE_FLOOR))


def _significant(diff: pd.Series, levels: list[str]) -> tuple[int, int]:
    r"""How many groups of ``diff`` (by its index ``levels``) have a mean below / above 2 SE of
    it (``ddof = 1``; groups of one pair count for neither)."""
    better = worse = 0
    for _, d in diff.groupby(level=levels) if len(diff) else []:
        k = len(d)
        if k > 1:
            mean, se = float(d.mean()), float(d.std(ddof=1) / math.sqrt(k))
            better += int(mean < -2 * se)
            worse += int(mean > 2 * se)
    return better, worse


def score_differences(scored: pd.DataFrame, reference: str, variant: str) -> pd.Series:
    r""":math:`s_\text{variant} - s_\text{reference}` over the runs both have, indexed by
    (function, instance, group, seed); ``scored`` holds :func:`run_scores` as ``score``."""
    both = scored[scored["method"].isin([reference, variant])]
    wide = both.pivot_table(index=["function", "instance", "group", "seed"], columns="method", values="score").dropna()
    if variant not in wide.columns or reference not in wide.columns or not len(wide):
        return pd.Series(dtype=float)
    return wide[variant] - wide[reference]


def variant_decision(
    frame: pd.DataFrame, baseline: str, variants: Sequence[str], expected_pairs: int | None = None
) -> tuple[pd.DataFrame, str | None]:
    r"""The decision rule of ``docs/bbob.md`` ("Choosing the `auto` presets"), applied as written.

    For each variant, over the problems (function, instance, noise setting; seed 0) that it and
    ``baseline`` both ran, the paired difference of the scores :math:`d = s_\text{variant} -
    s_\text{baseline}` (:func:`run_scores`): mean, :math:`\mathrm{SE} = \mathrm{sd}(d)/\sqrt m`
    (``ddof = 1``), and per function (pairs: its instances and noise settings) whether the
    variant is significantly better or worse (mean beyond 2 SE). A variant **beats** the
    baseline when its mean is below :math:`-2\,\mathrm{SE}` and it is significantly worse on at
    most as many functions as it is significantly better on; of those that beat it, the lowest
    mean is kept, else the baseline.

    Args:
        frame: :func:`runs_frame` rows (any methods; the others are ignored).
        baseline: The method label of V0.
        variants: The labels of the variants.
        expected_pairs: The grid's number of problems; while a variant has fewer pairs, the
            decision is not taken (``kept`` is ``None``).

    Returns:
        ``(table, kept)``: one row per variant (``pairs``, ``mean_diff``, ``se``, ``functions_better``,
        ``functions_worse``, ``beats``, and for the record ``settings_better`` / ``settings_worse``:
        the same count per function *and* noise setting, over its 5 instances, as the rule's text
        words it; the decision uses the per-function count) and the label kept (``None`` while
        runs are missing).
    """
    scored = frame.assign(score=run_scores(frame))
    rows, complete = [], True
    for variant in variants:
        diff = score_differences(scored, baseline, variant)
        m = len(diff)
        mean = float(diff.mean()) if m else float("nan")
        se = float(diff.std(ddof=1) / math.sqrt(m)) if m > 1 else float("nan")
        better, worse = _significant(diff, ["function"])
        beats = bool(m > 1 and mean < -2 * se and worse <= better)
        complete = complete and (expected_pairs is None or m >= expected_pairs)
        settings_better, settings_worse = _significant(diff, ["function", "group"])
        rows.append({"variant": variant, "pairs": m, "mean_diff": mean, "se": se,
                     "functions_better": better, "functions_worse": worse, "beats": beats,
                     "settings_better": settings_better, "settings_worse": settings_worse})
    table = pd.DataFrame(rows)
    if not complete:
        return table, None
    winners = table[table["beats"]]
    return table, (str(winners.sort_values("mean_diff")["variant"].iloc[0]) if len(winners) else baseline)


ADMISSIBLE = {"worse": 2, "tie_se": 1.0}
r"""The ``auto`` rule of ``docs/bbob.md``: at most ``worse`` functions significantly worse per
noise setting; a tie with H1 within ``tie_se`` SE goes to H1 (the first variant listed)."""


def admissible_variants(frame: pd.DataFrame, reference: str, variants: Sequence[str],
                        expected_pairs: int | None = None) -> tuple[pd.DataFrame, str | None]:
    r"""The ``auto`` decision rule of ``docs/bbob.md``, applied as written.

    Per variant and noise setting (``group``), over the problems it and ``reference`` both ran,
    the paired score difference :math:`d = s_\text{variant} - s_\text{reference}`
    (:func:`run_scores`): mean, SE and the functions significantly better / worse (per function
    over its instances, 2 SE). A variant is **admissible** when in every group it is
    significantly worse on at most ``ADMISSIBLE["worse"]`` functions and its mean is not above
    2 SE. Of the admissible ones the lowest mean over all pairs is kept, the first variant
    (H1) winning a tie within ``ADMISSIBLE["tie_se"]`` SE of it; with none admissible, the first.

    Returns:
        ``(table, kept)``: one row per (variant, group) and one per variant over all groups
        (``group = "all"``), with ``pairs``, ``mean_diff``, ``se``, ``functions_better``,
        ``functions_worse`` and ``admissible``; ``kept`` is ``None`` while a variant has fewer
        than ``expected_pairs`` pairs.
    """
    scored = frame.assign(score=run_scores(frame))
    rows, complete, totals = [], True, {}
    for variant in variants:
        diff = score_differences(scored, reference, variant)
        ok = len(diff) > 0
        for group in sorted(set(diff.index.get_level_values("group"))) if len(diff) else []:
            d = diff.xs(group, level="group", drop_level=False)
            m = len(d)
            mean, se = float(d.mean()), (float(d.std(ddof=1) / math.sqrt(m)) if m > 1 else float("nan"))
            better, worse = _significant(d, ["function"])
            good = bool(m > 1 and worse <= ADMISSIBLE["worse"] and not mean > 2 * se)
            ok = ok and good
            rows.append({"variant": variant, "group": group, "pairs": m, "mean_diff": mean, "se": se,
                         "functions_better": better, "functions_worse": worse, "admissible": good})
        m = len(diff)
        mean = float(diff.mean()) if m else float("nan")
        se = float(diff.std(ddof=1) / math.sqrt(m)) if m > 1 else float("nan")
        totals[variant] = (mean, se, ok)
        complete = complete and (expected_pairs is None or m >= expected_pairs)
        rows.append({"variant": variant, "group": "all", "pairs": m, "mean_diff": mean, "se": se,
                     "functions_better": None, "functions_worse": None, "admissible": ok})
    table = pd.DataFrame(rows)
    if not complete or not variants:
        return table, None
    good = [v for v in variants if totals[v][2]]
    if not good:
        return table, variants[0]
    best = min(good, key=lambda v: totals[v][0])
    first = variants[0]
    if first in good and totals[first][0] - totals[best][0] <= ADMISSIBLE["tie_se"] * totals[first][1]:
        return table, first
    return table, best


PRESETS = ("lb-gp-ucb-auto", "he-gp-ucb-auto", "auto")
r"""The methods the report's bars judge (:func:`report_bars`)."""

PEERS = ("qlognei", "optuna-gp")
r"""What they are judged against: BoTorch's default and Optuna's ``GPSampler``."""

BARS = {"lower": 0.6, "worse": 0.1, "pairs": 10}
r"""The bars of the report, fixed before its runs: a preset has the lower mean final simple regret
than the peer on at least ``lower`` of the functions and is significantly worse (paired, 2 SE) on at
most ``worse`` of them, from at least ``pairs`` (instance, seed) pairs per function."""


AUTO_BARS = {"worse": 0.1, "pairs": 10}
r"""The bars of ``auto``'s report (fixed with its hypotheses, before its runs): a higher ECDF area
than the peer, significantly worse (paired, 2 SE) on at most ``worse`` of the functions,
significantly better on more functions than significantly worse, at least ``pairs`` pairs per
function, and a median proposal time per run at most ``qlognei``'s (``holds_auto``)."""


def report_bars(
    frame: pd.DataFrame,
    presets: Sequence[str] = PRESETS,
    peers: Sequence[str] = PEERS,
    time_reference: str = "qlognei",
    targets: np.ndarray = TARGETS,
) -> pd.DataFrame:
    r"""Whether each preset clears the report's bars against each peer, per group (``d`` and noise).

    For a preset :math:`P` and a peer :math:`Q`, over the (problem, seed) pairs both ran
    (:func:`common_runs`): the areas under their ECDFs against evaluations (:func:`auc`); per
    function, whether :math:`P`'s mean final simple regret is below :math:`Q`'s and whether the
    paired difference is significantly worse (:func:`paired_table`, mean above 2 SE); and, over the
    pairs :math:`P` and ``time_reference`` both ran, the median total proposal time per run of each.
    :math:`P` **holds** against :math:`Q` when its AUC is higher, it is lower on at least
    ``BARS["lower"]`` of the functions, significantly worse on at most ``BARS["worse"]``, every
    function has at least ``BARS["pairs"]`` pairs, and its median time is at most the reference's.
    A function whose means are equal counts as not lower.

    Returns:
        One row per (group, preset, peer) that both ran: ``functions``, ``min_pairs``,
        ``auc_preset``, ``auc_peer``, ``lower``, ``worse`` (counts of functions),
        ``lower_fraction``, ``worse_fraction``, ``worse_functions`` (the significantly worse
        ones, comma-separated), ``median_time_preset``, ``median_time_reference`` (seconds) and
        ``holds``.
    """
    rows = []
    for group, sub in frame.groupby("group"):
        ran = set(sub["method"])
        for preset, peer in ((p, q) for p in presets for q in peers if p in ran and q in ran and p != q):
            both = common_runs(sub, [preset, peer])
            if both.empty:
                continue
            curves = ecdf_evaluations(both, targets)
            table = paired_table(both, peer)
            mine = table[table["method"] == preset]
            k = len(mine)
            lower, worse = int((mine["mean_diff"] < 0).sum()), int((mine["significant"] == "worse").sum())
            better = int((mine["significant"] == "better").sum())
            worse_functions = ",".join(str(f) for f in mine[mine["significant"] == "worse"]["function"])
            timed = common_runs(sub, [preset, time_reference]) if time_reference in ran else sub.iloc[:0]
            t_preset = float(timed[timed["method"] == preset]["wall_time_s"].median()) if len(timed) else float("nan")
            t_reference = float(timed[timed["method"] == time_reference]["wall_time_s"].median()) if len(timed) else float("nan")
            row = {
                "group": group, "preset": preset, "peer": peer, "functions": k, "min_pairs": int(mine["pairs"].min()),
                "auc_preset": auc(curves[preset]), "auc_peer": auc(curves[peer]), "lower": lower, "worse": worse,
                "better": better,
                "lower_fraction": lower / k, "worse_fraction": worse / k, "worse_functions": worse_functions,
                "median_time_preset": t_preset, "median_time_reference": t_reference,
            }
            row["holds"] = bool(
                row["auc_preset"] > row["auc_peer"]
                and row["lower_fraction"] >= BARS["lower"]
                and row["worse_fraction"] <= BARS["worse"]
                and row["min_pairs"] >= BARS["pairs"]
                and t_preset <= t_reference  # False where either is missing (nan)
            )
            row["holds_auto"] = bool(  # AUTO_BARS: no share of lower means, more better than worse
                row["auc_preset"] > row["auc_peer"]
                and row["worse_fraction"] <= AUTO_BARS["worse"]
                and better > worse
                and row["min_pairs"] >= AUTO_BARS["pairs"]
                and t_preset <= t_reference
            )
            rows.append(row)
    return pd.DataFrame(rows)


def method_colors(methods: Sequence[str]) -> dict[str, str]:
    r"""One colour per method (matplotlib's ``tab10`` in sorted name order), the same in every plot."""
    cycle = plt.get_cmap("tab10").colors
    return {m: matplotlib.colors.to_hex(cycle[i % len(cycle)]) for i, m in enumerate(sorted(methods))}


def plot_ecdfs(frame: pd.DataFrame, group: str, out: Path, targets: np.ndarray = TARGETS) -> list[Path]:
    r"""``ecdf_evaluations_{group}.png`` and ``ecdf_time_{group}.png``: one line per method."""
    colors = method_colors(frame["method"].unique())
    curves = ecdf_evaluations(frame, targets)
    n = np.arange(1, len(next(iter(curves.values()))) + 1)
    fig, ax = plt.subplots(figsize=(6, 4))
    for method, curve in sorted(curves.items()):
        ax.step(n, curve, where="post", color=colors[method], label=f"{method} (AUC {auc(curve):.3f})")
    ax.set(xlabel="function evaluations", ylabel="fraction of (function, instance, seed, target) reached",
           title=f"BBOB {group}: {frame['problem'].nunique()} problems, {len(targets)} targets", ylim=(0, 1))
    ax.legend(fontsize=8)
    paths = [out / f"ecdf_evaluations_{group}.png"]
    fig.tight_layout()
    fig.savefig(paths[0], dpi=120)
    plt.close(fig)
    positive = np.concatenate([t[t > 0] for t in frame["time"]])
    lo = max(float(positive.min()) if positive.size else 1e-3, 1e-4)
    times = np.logspace(np.log10(lo), np.log10(max(float(frame["wall_time_s"].max()), lo * 10)), 200)
    fig, ax = plt.subplots(figsize=(6, 4))
    for method, curve in sorted(ecdf_time(frame, times, targets).items()):
        ax.step(times, curve, where="post", color=colors[method], label=method)
    ax.set(xscale="log", xlabel="cumulative proposal time per run (s)",
           ylabel="fraction of (function, instance, seed, target) reached", title=f"BBOB {group}: against wall time",
           ylim=(0, 1))
    ax.legend(fontsize=8)
    paths.append(out / f"ecdf_time_{group}.png")
    fig.tight_layout()
    fig.savefig(paths[1], dpi=120)
    plt.close(fig)
    return paths


def markdown_table(table: pd.DataFrame, floatfmt: str = ".3g") -> str:
    r"""``table`` as a Markdown table (floats formatted with ``floatfmt``, NaN as an empty cell)."""
    cols = list(table.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for _, row in table.iterrows():
        cells = [format(v, floatfmt) if isinstance(v, float) and not math.isnan(v) else ("" if isinstance(v, float) else str(v)) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_report(out: str | Path, reference: str = "qlognei", report_dir: str | Path | None = None,
                 targets: np.ndarray = TARGETS, instances: Sequence[int] | None = None,
                 dims: Sequence[int] | None = None) -> Path:
    r"""Read the runs under ``out`` (run files or study records; only ``instances`` and ``dims``
    when given) and write ``report.md``, the tables as CSV and the ECDF plots (per group:
    dimension and noise) to ``report_dir`` (default ``out/report``)."""
    report_dir = Path(report_dir) if report_dir is not None else Path(out) / "report"
    runs = load_runs(out, instances=instances)
    if dims is not None:
        runs = [r for r in runs if r["config"]["dim"] in set(dims)]
    frame = runs_frame(runs)
    report_dir.mkdir(parents=True, exist_ok=True)
    if frame.empty:
        raise ValueError(f"out: no complete BBOB run files under {out}.")
    lines = [f"# BBOB report ({len(frame)} runs)", "",
             f"Targets: {len(targets)} log-spaced, {targets.max():.0e} to {targets.min():.0e} of the spread; "
             f"reference method `{reference}`; paired differences method - reference (negative: method better), "
             "`*` beyond 2 SE. Only (problem, seed) pairs run by every method enter the ECDFs and ranks."]
    for group, sub in frame.groupby("group"):
        common = common_runs(sub)
        lines += ["", f"## {group}: {common['problem'].nunique()} problems run by every method "
                      f"({sub['problem'].nunique()} in all)", ""]
        if common.empty:
            continue
        curves = ecdf_evaluations(common, targets)
        summary = pd.DataFrame({
            "method": sorted(curves),
            "AUC (evaluations)": [auc(curves[m]) for m in sorted(curves)],
            "median proposal time per run (s)": [float(common[common["method"] == m]["wall_time_s"].median()) for m in sorted(curves)],
            "median CPU time per run (s)": [float(pd.to_numeric(common[common["method"] == m]["cpu_s"]).median()) for m in sorted(curves)],
        })
        lines += [markdown_table(summary), ""]
        ranks = average_ranks(common)
        ranks.to_csv(report_dir / f"ranks_{group}.csv")
        lines += ["Average rank of the final simple regret (1 = best):", "",
                  markdown_table(ranks.reset_index().rename(columns=str), ".2f"), ""]
        table = paired_table(common, reference)
        table.to_csv(report_dir / f"paired_{group}.csv", index=False)
        if "mean_diff" in table.columns:
            shown = table.assign(
                diff=[("" if pd.isna(d) else f"{d:.3g}" + ("" if pd.isna(s) else f" ± {2 * s:.2g}") + ("*" if sig else ""))
                      for d, s, sig in zip(table["mean_diff"], table["se"], table["significant"].fillna(""))],
                better_worse=[("" if pd.isna(b) else f"{int(b)}/{int(w)}") for b, w in zip(table["better"], table["worse"])],
            )[["function", "name", "method", "runs", "mean_final_regret", "diff", "better_worse"]]
            lines += [f"Final simple regret per function; diff = mean paired difference against `{reference}` ± 2 SE; "
                      "better/worse = pairs where the method's regret is lower/higher:", "", markdown_table(shown), ""]
        for path in plot_ecdfs(common, group, report_dir, targets):
            lines.append(f"![{path.stem}]({path.name})")
    bars = report_bars(frame, targets=targets)
    if not bars.empty:
        bars.to_csv(report_dir / "bars.csv", index=False)
        lines += ["", "## The bars", "",
                  f"Each preset against each peer over the pairs both ran (`report_bars`): AUC higher, lower mean final "
                  f"simple regret on at least {BARS['lower']:.0%} of the functions, significantly worse (2 SE) on at most "
                  f"{BARS['worse']:.0%}, at least {BARS['pairs']} pairs per function, median proposal time per run at "
                  "most `qlognei`'s.", "", markdown_table(bars)]
    path = report_dir / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path


__all__ = [
    "ADMISSIBLE",
    "AUTO_BARS",
    "BARS",
    "PEERS",
    "PRESETS",
    "SCORE_FLOOR",
    "TARGETS",
    "admissible_variants",
    "auc",
    "average_ranks",
    "common_runs",
    "ecdf_evaluations",
    "ecdf_time",
    "load_runs",
    "markdown_table",
    "method_colors",
    "paired_table",
    "plot_ecdfs",
    "report_bars",
    "run_scores",
    "runs_frame",
    "score_differences",
    "variant_decision",
    "write_report",
]
