r"""Summaries and plots of a ``results.csv``.

:func:`write_report` writes ``summary.csv`` (per (problem, method): the number of
seeds, the mean and standard error, std / sqrt(seeds), of the final simple and
cumulative regret, and the mean wall time per run) and, per problem,
``regret_<problem>.png`` (cumulative and simple regret against the BO round),
``selected_<problem>.png`` (the hyperparameter each method used) and, for robust
rules, ``eps_regret_<problem>.png`` (the :math:`\varepsilon`-regret the loop records).

Prior-selection rules (Sandberg & Haghir Chehreghani, arXiv:2502.01226), recognised
by the ``true_prior`` key of their per-round ``diagnostics``, also get the paper's
Figs. 5-7 / 10 and ``prior_selection.csv`` with its metrics, among them the prior
accuracy

.. math::

    \frac1T \sum_{t \le T} 1\{p_t = p^*\},

with :math:`p_t` the prior used at round :math:`t` and :math:`p^*` the true one
(:func:`prior_selection_summary`, :func:`reference_entropy`, :func:`prior_confusion`).
Every file and column is described in ``docs/harness.md`` ("Reports").
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


SOLVED_TOLERANCE = 1e-6
r"""Default of ``solved_tol``: a run is *solved* when its final simple regret is at most this
(in the objective's units; ``buh report --solved-tol`` changes it)."""


def summarize(df: pd.DataFrame, solved_tol: float = SOLVED_TOLERANCE) -> pd.DataFrame:
    r"""The ``summary.csv`` table of a results frame.

    ``solved_seeds`` counts the runs whose final simple regret is at most ``solved_tol``.

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
                "solved_seeds": int((g["simple_regret"] <= solved_tol).sum()),
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


def _band_lines(ax: plt.Axes, curves: pd.DataFrame, colors: dict[str, str] | None = None) -> None:
    r"""One mean line per method with a :math:`\pm 1` standard-error band of the line's colour
    (``curves`` from :func:`_curves`; ``colors``: method -> colour, else the axes' cycle)."""
    for method, g in curves.groupby("method"):
        color = None if colors is None else colors.get(method)
        (line,) = ax.plot(g["iteration"], g["mean"], color=color, label=f"{method} (n={int(g['count'].max())})")
        band = (g["mean"] - g["_sem"], g["mean"] + g["_sem"])
        ax.fill_between(g["iteration"], *band, color=line.get_color(), alpha=0.25, lw=0)


def _band_panels(
    panels: list[tuple[pd.DataFrame, str, str]], problem: str, xlabel: str, path: Path, log_right: bool
) -> None:
    r"""Two panels of per-method mean curves with standard-error bands; ``panels``: (curves,
    title, y label). One colour per method in both panels, and a legend on each."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    colors = _method_colors(pd.concat([curves for curves, _, _ in panels]))
    for ax, (curves, title, ylabel) in zip(axes, panels):
        _band_lines(ax, curves, colors)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}: {problem}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    if log_right:
        axes[1].set_yscale("symlog", linthresh=1e-3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_regret(df: pd.DataFrame, problem: str, path: Path) -> None:
    sub = df[df["problem"] == problem]
    panels = [
        (_curves(sub, "cumulative_regret"), "Cumulative regret",
         r"cumulative regret $\sum_i f^* - f(x_i)$ (objective units)"),
        (_curves(sub, "simple_regret"), "Best (simple) regret",
         r"simple regret $f^* - \max_i f(x_i)$ (objective units)"),
    ]
    xlabel = "BO round t (0 = initial design)" if (sub["iteration"] == 0).any() else "BO round t"
    _band_panels(panels, problem, xlabel, path, log_right=True)


def plot_eps_regret(df: pd.DataFrame, problem: str, path: Path) -> bool:
    r"""Mean :math:`\varepsilon`-regret (instantaneous and best so far) with standard errors."""
    eps = eps_regret_frame(df[df["problem"] == problem])
    if eps.empty:
        return False
    panels = [
        (eps.groupby(["method", "iteration"])[column].agg(["mean", _sem, "count"]).reset_index(), title, ylabel)
        for column, title, ylabel in (
            ("eps_regret", "epsilon-regret", r"$\varepsilon$-regret of round t (objective units)"),
            ("best_eps_regret", "Best epsilon-regret", r"best $\varepsilon$-regret so far (objective units)"),
        )
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
    sub["value"] = sub["selected"].map(_first_float).astype(float)  # float even with no rows
    sub = sub[np.isfinite(sub["value"]) & (sub["value"] > 0)]
    if sub.empty:
        return False
    fig, ax = plt.subplots(figsize=(6, 4))
    colors = _method_colors(sub)
    lo, hi = sub["value"].min(), sub["value"].max()
    bins = np.geomspace(lo * 0.9, hi * 1.1, 30) if hi > lo else 10
    for method, g in sub.groupby("method"):
        ax.hist(g["value"], bins=bins, histtype="step", lw=1.8, color=colors[method], label=method)
    ax.set_xscale("log")
    ax.set_xlabel("selected hyperparameter (length scale, unit-cube inputs)")
    ax.set_ylabel("number of BO rounds (all seeds)")
    ax.set_title(f"Selected hyperparameters: {problem}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


# ---------------------------------------------------------------- prior selection
RUN_KEY = ["problem", "method", "seed"]
ENTROPY_REFERENCE_Q = (0.5, 0.8, 0.95)
r"""The :math:`q` of Fig. 6's dashed :math:`H_q` lines (the paper does not give its values)."""

PRIOR_SELECTION_COLUMNS = RUN_KEY + [
    "iteration",
    "batch_index",
    "row",
    "prior",
    "true_prior",
    "n_active",
    "entropy",
    "model_priors",
    "selected",
    "cumulative_regret",
]


def _diagnostic_number(diagnostics: pd.Series, key: str) -> np.ndarray:
    r"""The number stored under the top-level ``key`` of each JSON ``diagnostics`` string.

    A vectorised regular expression (``"key": <digits, sign, point, exponent>``)
    instead of ``json.loads`` per row (over 10x faster on 1.8M rows): the loop
    writes flat objects whose other values are numbers, booleans, ``null`` or
    lists of those, so ``"key":`` occurs once (``"prior":`` does not match
    ``"true_prior":``). NaN where the key is absent or ``null``.
    """
    found = diagnostics.str.extract(rf'"{key}"\s*:\s*([-+.\deE]+)', expand=False)
    try:
        values = found.astype("float64")
    except ValueError:  # a malformed number: NaN for it alone
        values = pd.to_numeric(found, errors="coerce")
    return values.to_numpy(dtype=float)


def prior_selection_frame(df: pd.DataFrame) -> pd.DataFrame:
    r"""Per round, what a prior-selection rule recorded in ``diagnostics``.

    Rows whose diagnostics carry a ``true_prior`` key (``null`` when the problem
    has no :math:`p^*`) and a ``prior``; columns ``problem, method, seed,
    iteration, batch_index``, ``row`` (position in ``df``), ``prior``
    (:math:`p_t`, the index of the prior used at round :math:`t` in the task's
    list), ``true_prior`` (:math:`p^*`, NaN if unknown), ``n_active``
    (:math:`|\mathcal{P}_t|` after round :math:`t`'s test, elimination rules
    only, else NaN), ``entropy`` (:math:`H(P_t) = -\sum_p P_t(p) \log P_t(p)`
    after round :math:`t`'s update, hyperposterior rules only, else NaN),
    ``model_priors`` (the number of priors the run's rule holds,
    :math:`\max_t` ``n_candidates``: :math:`|\mathcal{P}|`, or 1 for an oracle),
    ``selected`` (the prior's label) and ``cumulative_regret``. Sorted by round
    within each run; empty (with these columns) when no run is a prior-selection run.
    """
    empty = pd.DataFrame(columns=PRIOR_SELECTION_COLUMNS)
    if "diagnostics" not in df.columns or df.empty:
        return empty
    diagnostics = df["diagnostics"].astype(str)
    positions = np.flatnonzero(diagnostics.str.contains(r'"true_prior"\s*:', regex=True).to_numpy(dtype=bool))
    if positions.size == 0:
        return empty
    diagnostics = diagnostics.iloc[positions]
    prior = _diagnostic_number(diagnostics, "prior")
    keep = np.isfinite(prior)
    positions = positions[keep]
    diagnostics = diagnostics[keep]
    columns = RUN_KEY + ["iteration", "batch_index", "selected", "cumulative_regret", "n_candidates"]
    out = df.iloc[positions][columns].reset_index(drop=True)
    out["row"] = positions
    out["prior"] = prior[keep].astype(np.int64)
    for key in ("true_prior", "n_active", "entropy"):
        out[key] = _diagnostic_number(diagnostics, key)
    out["model_priors"] = out.groupby(RUN_KEY)["n_candidates"].transform("max").astype(np.int64)
    out = out.sort_values(["iteration", "batch_index"], kind="stable")
    return out.reset_index(drop=True)[PRIOR_SELECTION_COLUMNS]


def prior_labels(frame: pd.DataFrame) -> dict[str, list[str]]:
    r"""Per problem, the label of each prior :math:`0, \dots, K - 1` of its task.

    :math:`K` is the largest of ``model_priors`` and the largest prior index + 1
    seen; a label is the ``selected`` text of a round that used the prior (the
    oracles use :math:`p^*`), ``p<k>`` for a prior no run ever used.
    """
    labels = {}
    for problem, g in frame.groupby("problem", sort=True):
        indices = pd.concat([g["prior"], g["true_prior"].dropna()])
        k = int(max(g["model_priors"].max(), indices.max() + 1))
        named = g[g["selected"].astype(str) != ""].groupby("prior")["selected"].first()
        labels[str(problem)] = [str(named[i]) if i in named.index else f"p{i}" for i in range(k)]
    return labels


def prior_confusion(frame: pd.DataFrame, labels: list[str]) -> pd.DataFrame:
    r"""Row-normalised confusion matrix of :math:`p^*` against :math:`p_t` (Figs. 7, 10).

    .. math::

        C_{ij} = \frac{\#\{(\text{run}, t) : p^* = i,\ p_t = j\}}{\#\{(\text{run}, t) : p^* = i\}},

    pooled over every round and run of ``frame`` (a :func:`prior_selection_frame`,
    usually one problem and method; rounds with an unknown :math:`p^*` are left
    out). Rows (index ``p*``) and columns (``p_t``) are named by ``labels``
    (one per prior index); a row whose :math:`p^*` never occurs is NaN.
    """
    k = len(labels)
    known = frame[frame["true_prior"].notna()]
    true = known["true_prior"].to_numpy(dtype=np.int64)
    used = known["prior"].to_numpy(dtype=np.int64)
    if true.size and (min(true.min(), used.min()) < 0 or max(true.max(), used.max()) >= k):
        raise ValueError(f"prior indices must lie in [0, {k}) for {k} labels.")
    counts = np.bincount(true * k + used, minlength=k * k).reshape(k, k).astype(float)
    totals = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix = np.where(totals > 0, counts / totals, np.nan)
    return pd.DataFrame(
        matrix, index=pd.Index(labels, name="p*"), columns=pd.Index(labels, name="p_t")
    )


def prior_run_stats(df: pd.DataFrame, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    r"""Per (problem, method, seed) prior-selection run, the paper's metrics.

    Columns ``rounds`` (:math:`T`), ``model_priors``, ``cumulative_regret``
    (:math:`R_T`, the last round's), ``prior_accuracy``
    :math:`\frac1T \sum_{t \le T} 1\{p_t = p^*\}` (NaN if :math:`p^*` is
    unknown), ``eliminated`` :math:`|\mathcal{P}| - |\mathcal{P}_T|` (elimination
    rules with more than one prior, else NaN), and for hyperposterior rules,
    from :math:`P_T` (``json.loads`` of the run's last row only),
    ``final_top_mass`` :math:`\max_p P_T(p)` and ``final_top_is_true``
    :math:`1\{\arg\max_p P_T(p) = p^*\}` (first index on ties), else NaN.
    """
    frame = prior_selection_frame(df) if frame is None else frame
    true = frame["true_prior"].to_numpy(dtype=float)
    correct = np.where(np.isfinite(true), (frame["prior"].to_numpy() == true).astype(float), np.nan)
    groups = frame.assign(correct=correct).groupby(RUN_KEY, sort=True)
    last = groups.tail(1).set_index(RUN_KEY).sort_index()
    stats = pd.DataFrame({"rounds": groups.size(), "prior_accuracy": groups["correct"].mean()})
    stats["model_priors"] = last["model_priors"].astype(int)
    stats["cumulative_regret"] = last["cumulative_regret"]
    stats["eliminated"] = (last["model_priors"] - last["n_active"]).where(last["model_priors"] > 1)
    stats["final_top_mass"] = np.nan
    stats["final_top_is_true"] = np.nan
    hyper = last[last["entropy"].notna()]
    if not hyper.empty:
        posteriors = [json.loads(d)["hyperposterior"] for d in df["diagnostics"].iloc[hyper["row"].to_numpy()]]
        top = np.array([int(np.argmax(p)) for p in posteriors])
        stats.loc[hyper.index, "final_top_mass"] = [float(np.max(p)) for p in posteriors]
        stats.loc[hyper.index, "final_top_is_true"] = np.where(
            hyper["true_prior"].notna(), (top == hyper["true_prior"].to_numpy()).astype(float), np.nan
        )
    return stats.reset_index()


def prior_selection_summary(df: pd.DataFrame, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    r"""The ``prior_selection.csv`` table: :func:`prior_run_stats` averaged over seeds.

    Per (problem, method): ``seeds``, ``num_priors`` (the task's
    :math:`|\mathcal{P}|`), ``rounds`` (:math:`T`), and the mean and standard error
    (std / sqrt(seeds)) of ``cumulative_regret``, ``prior_accuracy``,
    ``eliminated`` and ``final_top_mass``, and ``final_top_is_true`` (the fraction
    of seeds whose most probable final prior is :math:`p^*`).
    """
    frame = prior_selection_frame(df) if frame is None else frame
    runs = prior_run_stats(df, frame)
    num_priors = {problem: len(labels) for problem, labels in prior_labels(frame).items()}
    table = runs.groupby(["problem", "method"], sort=True).agg(
        seeds=("seed", "size"),
        rounds=("rounds", "max"),
        cumulative_regret_mean=("cumulative_regret", "mean"),
        cumulative_regret_se=("cumulative_regret", _sem),
        prior_accuracy_mean=("prior_accuracy", "mean"),
        prior_accuracy_se=("prior_accuracy", _sem),
        eliminated_mean=("eliminated", "mean"),
        eliminated_se=("eliminated", _sem),
        final_top_mass_mean=("final_top_mass", "mean"),
        final_top_mass_se=("final_top_mass", _sem),
        final_top_is_true=("final_top_is_true", "mean"),
    )
    table.insert(1, "num_priors", [num_priors[p] for p in table.index.get_level_values("problem")])
    return table.reset_index()


def reference_entropy(q: float, num_priors: int) -> float:
    r"""Fig. 6's reference: the entropy of mass :math:`q` on one prior, the rest spread evenly.

    .. math::

        H_q = -q \log q - (1 - q) \log\frac{1 - q}{|\mathcal{P}| - 1}
        \quad (\text{natural log}; H_1 = 0,\ H_{1/|\mathcal{P}|} = \log |\mathcal{P}|).

    Example:
        >>> round(reference_entropy(0.5, 2), 4) == round(math.log(2), 4)
        True
    """
    if not 0 < q <= 1 or num_priors < 2:
        raise ValueError(f"need 0 < q <= 1 and num_priors >= 2, got q={q}, num_priors={num_priors}.")
    rest = 1.0 - q
    return -q * math.log(q) - (rest * math.log(rest / (num_priors - 1)) if rest > 0 else 0.0)


def _method_colors(frame: pd.DataFrame) -> dict[str, str]:
    r"""One distinct colour per sorted method: ``tab10`` up to 10 methods, ``tab20`` up to 20."""
    methods = sorted(frame["method"].unique())
    cmap = plt.get_cmap("tab10" if len(methods) <= 10 else "tab20")
    return {m: cmap(i % cmap.N) for i, m in enumerate(methods)}


def plot_active_priors(frame: pd.DataFrame, problem: str, num_priors: int, path: Path) -> bool:
    r"""Fig. 5: mean :math:`|\mathcal{P}_t|` against :math:`t` of the elimination rules (not the oracles)."""
    sub = frame[frame["problem"] == problem]
    colors = _method_colors(sub)
    sub = sub[sub["n_active"].notna() & (sub["model_priors"] > 1)]
    if sub.empty:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4))
    _band_lines(ax, _curves(sub, "n_active"), colors)
    ax.axhline(num_priors, color="0.5", ls=":", lw=1, label=f"|P| = {num_priors} (no elimination)")
    ax.set_ylim(0.9, num_priors + 0.1)
    ax.set_xlabel("BO round t")
    ax.set_ylabel(r"active priors $|\mathcal{P}_t|$")
    ax.set_title(f"Active priors: {problem}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def plot_prior_entropy(frame: pd.DataFrame, problem: str, num_priors: int, path: Path) -> bool:
    r"""Fig. 6: mean hyperposterior entropy :math:`H(P_t)` with the dashed :math:`H_q` references."""
    sub = frame[frame["problem"] == problem]
    colors = _method_colors(sub)
    sub = sub[sub["entropy"].notna()]
    if sub.empty or num_priors < 2:
        return False
    fig, ax = plt.subplots(figsize=(8, 4))
    _band_lines(ax, _curves(sub, "entropy"), colors)
    ax.axhline(math.log(num_priors), color="0.5", ls=":", lw=1, label=f"uniform: log {num_priors}")
    for q, shade in zip(ENTROPY_REFERENCE_Q, ("0.25", "0.45", "0.65")):
        ax.axhline(reference_entropy(q, num_priors), color=shade, ls="--", lw=1, label=f"$H_q$, q = {q}")
    ax.set_ylim(0, 1.05 * math.log(num_priors))
    ax.set_xlabel("BO round t")
    ax.set_ylabel(r"hyperposterior entropy $H(P_t)$ (nats)")
    ax.set_title(f"Hyperposterior entropy: {problem}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def plot_prior_confusion(frame: pd.DataFrame, problem: str, labels: list[str], path: Path) -> bool:
    r"""Figs. 7, 10: one :func:`prior_confusion` panel per non-oracle method, cell values printed."""
    sub = frame[(frame["problem"] == problem) & (frame["model_priors"] > 1) & frame["true_prior"].notna()]
    if sub.empty:
        return False
    methods = sorted(sub["method"].unique())
    k = len(labels)
    ncols = 2 if len(methods) == 4 else min(len(methods), 3)
    nrows = -(-len(methods) // ncols)
    size = max(3.2, 0.55 * k + 1.6)
    fig, axes = plt.subplots(nrows, ncols, figsize=(size * ncols, (size + 0.4) * nrows), squeeze=False)
    for ax in axes.flat[len(methods):]:
        ax.set_visible(False)
    for ax, method in zip(axes.flat, methods):
        g = sub[sub["method"] == method]
        matrix = prior_confusion(g, labels).to_numpy()
        accuracy = float((g["prior"] == g["true_prior"]).mean())
        ax.imshow(np.nan_to_num(matrix, nan=0.0), cmap="Blues", vmin=0.0, vmax=1.0)
        for i in range(k):
            for j in range(k):
                value = matrix[i, j]
                text = "-" if np.isnan(value) else f"{value:.2f}"
                color = "white" if np.isfinite(value) and value > 0.6 else "black"
                ax.text(j, i, text, ha="center", va="center", fontsize=7, color=color)
        ax.set_xticks(range(k), labels, rotation=45, ha="right", fontsize=8)
        ax.set_yticks(range(k), labels, fontsize=8)
        ax.set_xlabel("prior used $p_t$")
        ax.set_ylabel("true prior $p^*$")
        ax.set_title(f"{method}\naccuracy {accuracy:.3f}, n={g['seed'].nunique()}", fontsize=9)
    fig.suptitle(f"Prior confusion (rows normalised, all rounds and seeds): {problem}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def write_report(
    df: pd.DataFrame, out_dir: str | Path, solved_tol: float = SOLVED_TOLERANCE
) -> tuple[pd.DataFrame, list[Path]]:
    r"""Write ``summary.csv`` and the plots into ``out_dir``; returns (summary, plot paths).

    With prior-selection runs, also ``prior_selection.csv`` and their figures
    (see the module docstring and ``docs/harness.md``).
    """
    out = Path(out_dir)
    if df.empty:
        raise ValueError(f"no results to report in {out}.")
    summary = summarize(df, solved_tol)
    summary.to_csv(out / "summary.csv", index=False)
    frame = prior_selection_frame(df)
    labels = prior_labels(frame) if not frame.empty else {}
    if labels:
        prior_selection_summary(df, frame).to_csv(out / "prior_selection.csv", index=False)
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
        if problem in labels:
            k = len(labels[problem])
            for name, draw in (("active_priors", plot_active_priors), ("entropy", plot_prior_entropy)):
                path = out / f"{name}_{problem}.png"
                if draw(frame, problem, k, path):
                    plots.append(path)
            path = out / f"confusion_{problem}.png"
            if plot_prior_confusion(frame, problem, labels[problem], path):
                plots.append(path)
    return summary, plots
