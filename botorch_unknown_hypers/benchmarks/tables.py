r"""The docs' study tables, computed from the committed study records alone.

Every table of a study in ``docs/`` sits between two markers,

.. code-block:: markdown

    <!-- table: bbob-d2-dev -->
    ...
    <!-- end table -->

and is the output of the function :data:`TABLES` names for it, computed from the records under
``benchmarks/results/`` (:mod:`~botorch_unknown_hypers.benchmarks.records`) without running
anything. :func:`regenerate` rewrites every marked table of the docs (``benchmarks/tables.py``),
or, with ``check=True``, only reports the tables whose text differs from what the records give,
so that a test can hold the docs to the records.

The tables:

- ``bbob-d{d}-dev`` / ``bbob-d{d}-report``: per noise setting, every method on the (problem,
  seed) pairs that every method ran (instances 1-5, resp. 16-25): the number of runs, the area
  under the ECDF of targets against evaluations, the average rank of the final simple regret,
  and the median proposal and CPU time per run
  (:mod:`~botorch_unknown_hypers.benchmarks.bbob_report` defines each).
- ``bbob-d{d}-auto-decision``: the ``auto`` decision rule of ``docs/bbob.md`` on the
  development instances (:func:`~botorch_unknown_hypers.benchmarks.bbob_report.admissible_variants`).
- ``bbob-d2-h{5,4,6}-decision``: the second to fourth rounds' rules (H5, H4, H6
  against H2a, ``docs/bbob.md``), with ``hpo-four``'s development failures (:func:`hypothesis_decision`);
  ``bbob-d2-h7-decision``: the fifth round's (H7 against H6, with CPU time, :func:`h7_decision`).
  ``bbob-d2-h8-decision``: the sixth round's (H8 against H6, with ``hpo-four``'s paired regrets,
  :func:`h8_decision`).
- ``bbob-d2-h3-decision``: the seventh round's (H3 against H6, beside the fully Bayesian anchor,
  :func:`h3_decision`); ``bbob-d2-h10-decision``: the eighth round's (H10 against H6, with the
  four-parameter objective's development runs through Optuna, :func:`h10_decision`);
  ``bbob-d2-h11-decision``: the ninth round's (H11 against H6 by the same rule,
  :func:`h11_decision`); ``bbob-d2-h12-decision``: the tenth round's (H12, :func:`h12_decision`);
  ``bbob-d2-h13-decision``: the eleventh round's (H13, :func:`h13_decision`);
  ``bbob-d2-h14-decision``: the twelfth round's (H14, :func:`h14_decision`);
  ``bbob-d2-h15-decision``: the thirteenth round's (H15, :func:`h15_decision`);
  ``bbob-h16-decision``: the fourteenth round's (H16, :func:`h16_decision`, d = 2 and d = 5);
  ``bbob-h17-decision``: the fifteenth round's (H17, :func:`h17_decision`, d = 2 and d = 5).
- ``bbob-d{d}-report-bars``: the report's bars of the presets and ``auto`` against ``qlognei`` and
  ``optuna-gp`` on the report instances (:func:`~botorch_unknown_hypers.benchmarks.bbob_report.report_bars`).
- ``needle-dev-check``: the needle check of ``docs/bbob.md`` on ``berkenkamp``'s development
  seeds (``benchmarks/results/needle-dev``): runs on the narrow peak per method (:func:`needle_check`);
  ``needle-dev-h14-check``: H14's, on ``berkenkamp2`` and ``berkenkamp3`` (:func:`needle_h14_check`).
- ``mixed-paired``: the mixed-problem study (``benchmarks/results/mixed``, ``docs/mixed.md``): per
  problem and method the mean final simple regret, the paired differences against ``optuna-gp``
  and ``mixed-qlognei`` with their verdicts at 2 SE, and the median wall time per run
  (:func:`mixed_paired`).
- ``mixed-summary``: the same runs as ``bbob-*`` summaries: ECDF area of BBOB's targets on the
  simple regret divided by each problem's spread, average rank, median times (:func:`mixed_frame`).
- ``tabular-paired``, ``tabular-summary``: the same two tables for the FCNet tabular problems
  (``benchmarks/results/tabular``, ``docs/mixed.md``).
- ``mixed-h14-paired``, ``mixed-h14-summary``, ``tabular-h14-paired``, ``tabular-h14-summary``:
  H14's report on both studies beside ``auto`` as shipped and the peers of issue 56's bar, seed
  counts only until H14 has every seed (:data:`H14_MIXED_METHODS`).
- ``bbob-d5-report``, ``bbob-d5-report-bars``: the d = 5 report, run counts only until every run
  of it is in (:func:`report_status`, :func:`until_complete`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from botorch_unknown_hypers.benchmarks.bbob import group_name
from botorch_unknown_hypers.benchmarks.bbob_report import (
    admissible_variants,
    auc,
    average_ranks,
    common_runs,
    ecdf_evaluations,
    load_runs,
    markdown_table,
    report_bars,
    run_scores,
    runs_frame,
    score_differences,
)
from botorch_unknown_hypers.benchmarks.practical_suite import KEY_FIELDS, beyond_2se, mean_se, paired, practical_frame, problem_spread
from botorch_unknown_hypers.problems.bbob_problems import DEV_INSTANCES

DEV_PAIRS = 24 * len(DEV_INSTANCES) * 2
r"""Problems of the d = 2 development grid: 24 functions, its instances, both noise settings."""
REPORT_INSTANCES = tuple(range(16, 26))
r"""The instances of the ``auto`` report (6-15 were read by an earlier report and choose nothing)."""
H6 = "auto[acquisition=lognei&kernel=rbf&lengthscale_prior=dim-scaled&noise_prior=lognormal]"
r"""The fourth round's variant (``docs/bbob.md``): H5 and H4 together, ``auto``'s default from
its rule until H14 took its place (run as ``auto[reduction=evidence&noise_floor=1e-6]`` before,
then as ``auto``; the label spells out the four options H14 changed)."""
H2A = "auto[reduction=map&noise_floor=null&acquisition=lognei&kernel=rbf&lengthscale_prior=dim-scaled&noise_prior=lognormal]"
r"""H2a, ``auto``'s default from the first round until H6 (``docs/bbob.md``): the MAP reduction with
``probe = 0.1`` and BoTorch's noise bound. Its runs made under ``auto`` (and its development runs
under ``auto[probe=0.1]``) carry this label since the default changed."""
AUTO_VARIANTS = ("auto[probe=0&reduction=map&noise_floor=null&acquisition=lognei&kernel=rbf&lengthscale_prior=dim-scaled&noise_prior=lognormal]", H2A, "auto[probe=0.25&reduction=map&noise_floor=null&acquisition=lognei&kernel=rbf&lengthscale_prior=dim-scaled&noise_prior=lognormal]")
r"""The variants of the first ``auto`` decision rule, H1 first (``docs/bbob.md``), under the labels
that spell out what differs from today's default (H1 ran as ``auto`` when ``probe = 0`` was its
default)."""
REPORT_METHODS = (H6, H2A, "lb-gp-ucb-auto", "he-gp-ucb-auto", "qlognei", "optuna-gp", "fb-qlognei", "random")
r"""The methods of the report's tables (``docs/bbob.md``): ``auto`` as shipped (H6), H2a (its
default before), the presets and the peers."""
REPORT_PRESETS = (H6, H2A, "lb-gp-ucb-auto", "he-gp-ucb-auto")
r"""The methods whose bars the report's tables show."""
MARKER = re.compile(r"(<!-- table: (?P<name>[\w.-]+) -->\n)(?P<body>.*?)(<!-- end table -->)", re.S)


def bbob_frame(results: Path, dim: int, instances: Sequence[int]) -> pd.DataFrame:
    r"""The BBOB records under ``results/bbob`` at dimension ``dim`` on ``instances``, as
    :func:`~botorch_unknown_hypers.benchmarks.bbob_report.runs_frame` rows."""
    runs = [r for r in load_runs(Path(results) / "bbob", instances=instances, dims=(dim,)) if r["config"]["dim"] == dim]
    return runs_frame(runs)


def summary(frame: pd.DataFrame, methods: Sequence[str] | None = None) -> str:
    r"""Per noise setting: runs, ECDF area, average rank, median proposal and CPU time of
    ``methods`` (default: all), on the pairs every one of them ran. A method with fewer
    (problem, seed) pairs than the most complete one (a grid still running) is left out of the
    table and named below it, so that it does not shrink the others' common problems."""
    if frame.empty:
        return "No records yet.\n"
    blocks = []
    for group, sub in frame.groupby("group"):
        pairs = sub.groupby("method")[["problem", "seed"]].apply(lambda g: len(g.drop_duplicates()))
        wanted = [m for m in (methods or sorted(sub["method"].unique())) if m in pairs.index]
        full = max((int(pairs[m]) for m in wanted), default=0)
        present = [m for m in wanted if pairs[m] == full]
        running = [f"`{m}` ({int(pairs[m])} of {full})" for m in wanted if pairs[m] < full]
        note = f"\nNot in the table until their grid is complete: {', '.join(running)}.\n" if running else ""
        common = common_runs(sub, present)
        if common.empty:
            blocks.append(f"**{group}**: no problem run by every method yet.\n" + note)
            continue
        curves = ecdf_evaluations(common)
        ranks = average_ranks(common)["all"]
        rows = [{
            "method": f"`{m}`",
            "runs": int((common["method"] == m).sum()),
            "ECDF area": auc(curves[m]),
            "average rank": float(ranks[m]),
            "median proposal s/run": float(common[common["method"] == m]["wall_time_s"].median()),
            "median CPU s/run": float(pd.to_numeric(common[common["method"] == m]["cpu_s"]).median()),
        } for m in present]
        table = pd.DataFrame(rows)
        if table["median CPU s/run"].isna().all():  # records written before their runs' CPU time was kept
            table = table.drop(columns="median CPU s/run")
            note = "\nThese records predate the CPU time's recording: proposal (wall) time only.\n" + note
        blocks.append(f"**{group}** ({common['problem'].nunique()} problems, every method on each):\n\n"
                      + markdown_table(table) + "\n" + note)
    return "\n".join(blocks)


def bbob_summary(results: Path, dim: int, instances: Sequence[int], methods: Sequence[str] | None = None) -> str:
    return summary(bbob_frame(results, dim, instances), methods)


def auto_decision(results: Path, dim: int) -> str:
    r"""The ``auto`` rule's table and verdict on the development instances at ``dim``."""
    frame = bbob_frame(results, dim, DEV_INSTANCES)
    expected = DEV_PAIRS
    if frame.empty or "qlognei" not in set(frame["method"]):
        return "No records yet.\n"
    table, kept = admissible_variants(frame, "qlognei", list(AUTO_VARIANTS), expected_pairs=expected)
    table = table.assign(variant=[f"`{v}`" for v in table["variant"]])
    verdict = f"kept: `{kept}`" if kept is not None else f"not decided yet (a variant has fewer than {expected} pairs)"
    return markdown_table(table) + f"\n\nDecision: {verdict}.\n"


H5 = "auto[reduction=evidence&noise_floor=null&acquisition=lognei&kernel=rbf&lengthscale_prior=dim-scaled&noise_prior=lognormal]"
r"""The second round's variant (``docs/bbob.md``): the likeliest survivor once MAP falls."""
H4 = "auto[noise_floor=1e-6&reduction=map&acquisition=lognei&kernel=rbf&lengthscale_prior=dim-scaled&noise_prior=lognormal]"
r"""The third round's variant (``docs/bbob.md``): MAP fits with the noise bounded below by 1e-6."""
FAILURE = 5e-3
r"""A ``hpo-four`` run *fails* when its final simple regret is at least this (``docs/mixed.md``)."""
DEV_SEEDS = tuple(range(100, 110))
r"""The development seeds of ``hpo-four`` and ``berkenkamp`` (never study seeds)."""


def dev_records(results: Path, study: str, problem: str) -> dict[tuple[str, int], dict[str, Any]]:
    r"""``(method, seed) -> record`` of every ``problem`` run of the practical-suite harness under
    ``results/<study>`` (``mixed-dev``, ``needle-dev``)."""
    from botorch_unknown_hypers.benchmarks.records import RecordStore

    store = RecordStore(Path(results) / study, KEY_FIELDS)
    return {(r["method"], r["seed"]): r for r in store.records() if r["problem"] == problem}


def hpo_dev_finals(results: Path) -> dict[tuple[str, int], float]:
    r"""``(method, seed) -> final simple regret`` of every ``hpo-four`` run under ``results/mixed-dev``."""
    return {key: r["final_simple_regret"] for key, r in dev_records(results, "mixed-dev", "hpo-four").items()}


def hpo_failures(results: Path, method: str) -> tuple[int, int]:
    r"""``(failed, runs)`` of ``method`` on ``hpo-four``'s development seeds (``results/mixed-dev``)."""
    finals = [f for (m, seed), f in hpo_dev_finals(results).items() if m == method and seed in DEV_SEEDS]
    return sum(f >= FAILURE for f in finals), len(finals)


def round_numbers(results: Path, variant: str, reference: str) -> tuple[pd.DataFrame, pd.DataFrame, bool, float, float, int] | None:
    r"""A round's numbers on the d = 2 development grid: the grid's frame, ``variant``'s
    admissibility table against ``qlognei`` (rule 1 of ``docs/bbob.md``) and its verdict over all
    groups, and its paired score difference against ``reference`` (mean, SE, pairs; negative:
    ``variant`` better); ``None`` before ``variant``'s first run."""
    frame = bbob_frame(results, 2, DEV_INSTANCES)
    if frame.empty or variant not in set(frame["method"]):
        return None
    table, _ = admissible_variants(frame, "qlognei", [variant], expected_pairs=DEV_PAIRS)
    table = table.assign(variant=[f"`{v}`" for v in table["variant"]])
    diff = score_differences(frame.assign(score=run_scores(frame)), reference, variant)
    m = len(diff)
    mean, se = mean_se([float(v) for v in diff]) if m else (math.nan, math.nan)
    admissible = bool(table[table["group"] == "all"]["admissible"].iloc[0])
    return frame, table, admissible, mean, se, m


def hypothesis_decision(results: Path, variant: str, label: str) -> str:
    r"""A later round's rule (``docs/bbob.md``), applied as written to ``variant`` (called
    ``label``): admissible against ``qlognei`` on the d = 2 development grid; its paired score
    difference against H2a over the same problems (mean ± SE, negative: the variant better); the
    ``hpo-four`` development failures of both; and the verdict once every run is in."""
    numbers = round_numbers(results, variant, H2A)
    if numbers is None:
        return "No records yet.\n"
    _, table, admissible, mean, se, m = numbers
    (new_failed, new_runs), (h2_failed, h2_runs) = hpo_failures(results, variant), hpo_failures(results, H2A)
    lines = [markdown_table(table), "",
             f"{label} − H2a over {m} development problems: {mean:+.3f} ± {se:.3f} decades (negative: {label} better).",
             f"`hpo-four` seeds 100-109, runs failing (final simple regret ≥ {FAILURE:g}): {label} {new_failed} of {new_runs}, "
             f"H2a {h2_failed} of {h2_runs}."]
    complete = m >= DEV_PAIRS and new_runs >= len(DEV_SEEDS) and h2_runs >= len(DEV_SEEDS)
    passes = admissible and mean < -se and new_failed < h2_failed
    return decision_text(lines, complete, passes, f"{label} replaces H2a as `auto`'s default", "`auto` stays H2a")


def decision_text(lines: list[str], complete: bool, passes: bool, replaced: str, stays: str) -> str:
    r"""A round's table and numbers (``lines``) and its verdict: undecided while runs are
    missing, else ``replaced`` where the rule ``passes`` and ``stays`` where it does not."""
    verdict = "not decided yet (runs missing)" if not complete else replaced if passes else stays
    return "\n".join(lines) + f"\n\nDecision: {verdict}.\n"


h5_decision = partial(hypothesis_decision, variant=H5, label="H5")
r"""The second round's rule: H5 against H2a."""
h4_decision = partial(hypothesis_decision, variant=H4, label="H4")
r"""The third round's rule: H4 against H2a."""
h6_decision = partial(hypothesis_decision, variant=H6, label="H6")
r"""The fourth round's rule: H6 against H2a."""
H7 = "auto[mean_start=false&acquisition=lognei&kernel=rbf&lengthscale_prior=dim-scaled&noise_prior=lognormal]"
r"""The fifth round's variant (``docs/bbob.md``): H6 without the posterior mean's maximiser as an
extra start of the acquisition's maximisation (the incumbent alone)."""


def cpu_medians(frame: pd.DataFrame, labels: Mapping[str, str]) -> tuple[pd.Series, str]:
    r"""The median CPU seconds per run of each method of ``labels`` (method to its label) per noise
    setting, on the problems they all ran, and the text that names them (a setting none of them
    shares yet is left out of the text)."""
    both = common_runs(frame, list(labels))
    cpu = both.assign(cpu_s=pd.to_numeric(both["cpu_s"])).groupby(["group", "method"])["cpu_s"].median()
    shared = [g for g in ("d2", "d2-noisy") if any((g, method) in cpu.index for method in labels)]
    text = "; ".join(
        f"{g}: " + ", ".join(f"{label} {cpu.get((g, method), math.nan):.2f} s" for method, label in labels.items())
        for g in shared
    ) or "none yet"
    return cpu, text


def failure_line(results: Path, labels: Mapping[str, str]) -> tuple[str, tuple[int, int], tuple[int, int]]:
    r"""``hpo-four``'s development failures of a variant and its reference (``labels``: the two
    methods to their labels, the variant first): the text and each one's ``(failed, runs)``."""
    (variant, label), (reference, ref_label) = labels.items()
    new, ref = hpo_failures(results, variant), hpo_failures(results, reference)
    text = (f"`hpo-four` seeds 100-109, runs failing (final simple regret ≥ {FAILURE:g}): {label} {new[0]} of {new[1]}, "
            f"{ref_label} {ref[0]} of {ref[1]}.")
    return text, new, ref


def h7_decision(results: Path) -> str:
    r"""The fifth round's rule (``docs/bbob.md``), applied as written: H7 admissible against
    ``qlognei`` on the d = 2 development grid; its paired score difference against H6 (``auto``)
    not above +1 SE; its median CPU time per run below H6's in each noise setting; and no more
    ``hpo-four`` development failures than H6's."""
    numbers = round_numbers(results, H7, H6)
    if numbers is None:
        return "No records yet.\n"
    frame, table, admissible, mean, se, m = numbers
    cpu, times = cpu_medians(frame, {H7: "H7", H6: "H6"})
    faster = all(cpu.get((g, H7), math.inf) < cpu.get((g, H6), -math.inf) for g in ("d2", "d2-noisy"))
    failures, (new_failed, new_runs), (h6_failed, h6_runs) = failure_line(results, {H7: "H7", H6: "H6"})
    lines = [markdown_table(table), "",
             f"H7 − H6 over {m} development problems: {mean:+.3f} ± {se:.3f} decades (negative: H7 better).",
             f"Median CPU per run on the problems both ran: {times}.", failures]
    complete = m >= DEV_PAIRS and new_runs >= len(DEV_SEEDS) and h6_runs >= len(DEV_SEEDS)
    passes = admissible and mean <= se and faster and new_failed <= h6_failed
    return decision_text(lines, complete, passes, "H7 replaces H6 as `auto`'s default", "`auto` stays H6")


H8 = "auto[lengthscale_prior=gamma&acquisition=lognei&kernel=rbf&noise_prior=lognormal]"
r"""The sixth round's variant (``docs/bbob.md``): H6 with its MAP fits under the Gamma(3, 6)
length-scale prior instead of BoTorch's dimension-scaled one."""


def paired_log_finals(finals: Mapping[tuple[str, int], float], variant: str, reference: str) -> tuple[list[int], float, float]:
    r"""The development seeds both ``variant`` and ``reference`` ran in ``finals`` (``(method, seed)``
    to final simple regret), and the mean and SE of their paired :math:`\log_{10}` differences
    (variant minus reference, regrets floored at :math:`10^{-12}`; NaN with fewer than two)."""
    seeds = [s for s in DEV_SEEDS if (variant, s) in finals and (reference, s) in finals]
    diffs = [math.log10(max(finals[(variant, s)], 1e-12)) - math.log10(max(finals[(reference, s)], 1e-12)) for s in seeds]
    mean, se = mean_se(diffs) if len(diffs) > 1 else (math.nan, math.nan)
    return seeds, mean, se


def h8_decision(results: Path) -> str:
    r"""The sixth round's rule (``docs/bbob.md``), applied as written: H8 admissible against
    ``qlognei`` on the d = 2 development grid; its paired score difference against H6 (``auto``)
    not above +1 SE; and on ``hpo-four``'s development seeds its paired difference of
    :math:`\log_{10}` final simple regret against H6 below zero by more than 2 SE."""
    numbers = round_numbers(results, H8, H6)
    if numbers is None:
        return "No records yet.\n"
    _, table, admissible, mean, se, m = numbers
    seeds, hpo_mean, hpo_se = paired_log_finals(hpo_dev_finals(results), H8, H6)
    lines = [markdown_table(table), "",
             f"H8 − H6 over {m} development problems: {mean:+.3f} ± {se:.3f} decades (negative: H8 better).",
             f"`hpo-four` seeds 100-109, paired log10 final simple regret H8 − H6 over {len(seeds)} seeds: "
             f"{hpo_mean:+.2f} ± {hpo_se:.2f} (negative: H8 better; floored at 1e-12)."]
    complete = m >= DEV_PAIRS and len(seeds) >= len(DEV_SEEDS)
    passes = admissible and mean <= se and hpo_mean < -2 * hpo_se
    return decision_text(lines, complete, passes, "H8 is to replace H6 as `auto`'s default once the reports are run for it",
                         "`auto` stays H6")


H3 = "auto[laplace_draws=16&acquisition=lognei&kernel=rbf&lengthscale_prior=dim-scaled&noise_prior=lognormal]"
r"""The seventh round's variant (``docs/bbob.md``): H6 with the standing MAP candidate's qLogNEI
averaged over 16 draws from the Laplace approximation of its hyperposterior."""
ANCHOR = "fb-qlognei"
r"""The fully Bayesian anchor (BoTorch's NUTS-sampled GP with qLogNEI) that H3 is judged against."""


def h3_decision(results: Path) -> str:
    r"""The seventh round's rule (``docs/bbob.md``), applied as written: H3 admissible against
    ``qlognei`` on the d = 2 development grid; its paired score difference against H6 (``auto``)
    below :math:`-1` SE; and no more ``hpo-four`` development failures than H6's. Reported beside
    it and not part of the adoption: H3 and H6 against the fully Bayesian anchor on the problems
    each shares with it (the averaging matches the anchor when H3 is not behind it by more than
    2 SE), and the median CPU time per run of H3, H6 and ``qlognei``."""
    numbers = round_numbers(results, H3, H6)
    if numbers is None:
        return "No records yet.\n"
    frame, table, admissible, mean, se, m = numbers
    scored = frame.assign(score=run_scores(frame))
    anchor_lines = []
    for method, label in ((H3, "H3"), (H6, "H6")):
        diff = score_differences(scored, ANCHOR, method)
        a_mean, a_se = mean_se([float(v) for v in diff]) if len(diff) > 1 else (math.nan, math.nan)
        anchor_lines.append(f"{label} − `{ANCHOR}` over the {len(diff)} development problems both ran: {a_mean:+.3f} ± {a_se:.3f} decades.")
    _, times = cpu_medians(frame, {H3: "H3", H6: "H6", "qlognei": "`qlognei`"})
    failures, (new_failed, new_runs), (h6_failed, h6_runs) = failure_line(results, {H3: "H3", H6: "H6"})
    lines = [markdown_table(table), "",
             f"H3 − H6 over {m} development problems: {mean:+.3f} ± {se:.3f} decades (negative: H3 better).",
             *anchor_lines, f"Median CPU per run on the problems all three ran: {times}.", failures]
    complete = m >= DEV_PAIRS and new_runs >= len(DEV_SEEDS) and h6_runs >= len(DEV_SEEDS)
    passes = admissible and mean < -se and new_failed <= h6_failed
    return decision_text(lines, complete, passes, "H3 is to replace H6 as `auto`'s default once the reports are run for it",
                         "`auto` stays H6")


H10 = "auto[fitted_mean=true&acquisition=lognei&kernel=rbf&lengthscale_prior=dim-scaled&noise_prior=lognormal]"
r"""The eighth round's variant (``docs/bbob.md``): H6 with every candidate carrying the constant
mean of the MAP fit it was proposed from (BoTorch's ``ConstantMean``) instead of a zero mean."""
OPTUNA_DEV_FIELDS = ("problem", "sampler", "seed", "trials")
r"""The key fields of ``benchmarks/mixed_optuna.py``'s records."""


def optuna_dev_finals(results: Path, trials: int = 30) -> dict[tuple[str, int], float]:
    r"""``(sampler, seed) -> final simple regret`` of the four-parameter objective's development runs
    through Optuna (``results/mixed-optuna-dev``, ``benchmarks/mixed_optuna.py``, ``trials`` trials)."""
    from botorch_unknown_hypers.benchmarks.records import RecordStore

    store = RecordStore(Path(results) / "mixed-optuna-dev", OPTUNA_DEV_FIELDS)
    return {
        (r["config"]["sampler"], r["config"]["seed"]): r["simple_regret"][-1]
        for r in store.records()
        if r["config"]["problem"] == "four" and r["config"]["trials"] == trials
    }


def four_parameter_decision(
    results: Path, variant: str, label: str, beside: Mapping[str, str] | None = None,
    reference: str = H6, ref_label: str = "H6",
    replaced: str | None = None, stays: str = "`auto` stays H6",
) -> str:
    r"""The rule of the eighth and later rounds (``docs/bbob.md``), applied as written to ``variant``
    (called ``label``) against ``reference`` (called ``ref_label``; H6, ``auto`` as shipped, unless
    a round names another): admissible against ``qlognei`` on the d = 2 development grid; its
    paired score difference against the reference not above +1 SE; on the four-parameter
    objective through Optuna (development seeds, 30 trials) its paired difference of
    :math:`\log_{10}` final simple regret against the reference below zero by more than 2 SE; and
    no more ``hpo-four`` development failures than the reference's. ``replaced`` and ``stays``
    are the verdicts' words. Reported beside it, not part of the rule: the same paired difference
    against Optuna's ``GPSampler`` (``gp``), issue 56's bar, and against each of ``beside``
    (method: label)."""
    numbers = round_numbers(results, variant, reference)
    if numbers is None:
        return "No records yet.\n"
    frame, table, admissible, mean, se, m = numbers
    finals = optuna_dev_finals(results)
    seeds, four_mean, four_se = paired_log_finals(finals, variant, reference)
    _, times = cpu_medians(frame, {variant: label, reference: ref_label, "qlognei": "`qlognei`"})
    failures, (new_failed, new_runs), (ref_failed, ref_runs) = failure_line(results, {variant: label, reference: ref_label})
    lines = [markdown_table(table), "",
             f"{label} − {ref_label} over {m} development problems: {mean:+.3f} ± {se:.3f} decades (negative: {label} better).",
             f"Four-parameter objective through Optuna, seeds 100-109, paired log10 final simple regret {label} − {ref_label} over "
             f"{len(seeds)} seeds: {four_mean:+.2f} ± {four_se:.2f} (negative: {label} better; floored at 1e-12).",
             *(f"Beside the rule: {label} − {other} on the same objective over {len(o_seeds)} seeds: {o_mean:+.2f} ± {o_se:.2f}."
               for method, other in {"gp": "`GPSampler`", **(beside or {})}.items()
               for o_seeds, o_mean, o_se in [paired_log_finals(finals, variant, method)]),
             failures, f"Median CPU per run on the problems all three ran: {times}."]
    complete = m >= DEV_PAIRS and len(seeds) >= len(DEV_SEEDS) and new_runs >= len(DEV_SEEDS) and ref_runs >= len(DEV_SEEDS)
    passes = admissible and mean <= se and four_mean < -2 * four_se and new_failed <= ref_failed
    adopted = replaced or f"{label} is to replace H6 as `auto`'s default once the reports are run for it"
    return decision_text(lines, complete, passes, adopted, stays)


def h10_decision(results: Path) -> str:
    r"""The eighth round's decision: :func:`four_parameter_decision` for H10."""
    return four_parameter_decision(results, H10, "H10")


H11 = "auto[acquisition=lognei&kernel=rbf&noise_prior=lognormal]"
r"""The ninth round's variant (``docs/bbob.md``): H6 with its MAP fits under Optuna ``GPSampler``'s
length-scale prior instead of BoTorch's dimension-scaled one."""


def h11_decision(results: Path) -> str:
    r"""The ninth round's decision: :func:`four_parameter_decision` for H11."""
    return four_parameter_decision(results, H11, "H11")


H12 = "auto[acquisition=lognei&kernel=rbf]"
r"""The tenth round's variant (``docs/bbob.md``): H11 with its MAP fits' noise variance under Optuna
``GPSampler``'s Gamma(1.1, 30) prior instead of BoTorch's LogNormal(-4, 1)."""


def h12_decision(results: Path) -> str:
    r"""The tenth round's decision: :func:`four_parameter_decision` for H12."""
    return four_parameter_decision(results, H12, "H12", beside={H11: "H11"})


H13 = "auto[acquisition=lognei]"
r"""The eleventh round's variant (``docs/bbob.md``): H12 with a Matérn-5/2 kernel in every MAP fit
and every candidate instead of BoTorch's RBF."""


def h13_decision(results: Path) -> str:
    r"""The eleventh round's decision: :func:`four_parameter_decision` for H13."""
    return four_parameter_decision(results, H13, "H13", beside={H12: "H12"})


H14 = "auto"
r"""The twelfth round's variant (``docs/bbob.md``): H13 with LogEI at the plug-in incumbent (each
candidate's best posterior mean at the observed points) in place of qLogNEI."""


def h14_decision(results: Path) -> str:
    r"""The twelfth round's decision: :func:`four_parameter_decision` for H14 against H13, the
    default-to-be (not H6)."""
    return four_parameter_decision(
        results, H14, "H14", reference=H13, ref_label="H13",
        replaced="H14 takes H13's place in the plan: it is to become `auto`'s default once its d = 2 and d = 5 reports are in",
        stays="the plan stays H13",
    )


H15 = "auto[probe_evidence=true]"
r"""The thirteenth round's variant (``docs/bbob.md``): H14 with the probing rounds of ``probe``
(every 10th) playing the survivors' doubly optimistic pair under ``reduction="evidence"``."""


def h15_decision(results: Path) -> str:
    r"""The thirteenth round's rule (``docs/bbob.md``), applied as written to H15 against H14: more
    ``berkenkamp2`` development seeds on the peak than H14 (decided alone, as a failure, once both
    have their ten seeds); admissible against ``qlognei`` on the d = 2 development grid; its paired
    score difference against H14 not above +1 SE; no more ``hpo-four`` development failures than
    H14's; and on the four-parameter objective's development seeds its paired :math:`\log_{10}`
    final regret against H14 not above +2 SE."""
    _, runs, on_peak = needle_rows(results, "berkenkamp2", (H15, H14))
    failures, (new_failed, new_runs), (ref_failed, ref_runs) = failure_line(results, {H15: "H15", H14: "H14"})
    seeds, four_mean, four_se = paired_log_finals(optuna_dev_finals(results), H15, H14)
    if not runs and not new_runs and not seeds:
        return "No records yet.\n"
    lines = [f"`berkenkamp2` seeds 100-109, runs on the peak: H15 {on_peak.get(H15, 0)} of {runs.get(H15, 0)}, "
             f"H14 {on_peak.get(H14, 0)} of {runs.get(H14, 0)}.", failures,
             f"Four-parameter objective through Optuna, seeds 100-109, paired log10 final simple regret H15 − H14 over "
             f"{len(seeds)} seeds: {four_mean:+.2f} ± {four_se:.2f} (negative: H15 better; floored at 1e-12)."]
    needle_in = all(runs.get(m, 0) == len(DEV_SEEDS) for m in (H15, H14))
    needle_passes = on_peak.get(H15, 0) > on_peak.get(H14, 0)
    numbers = round_numbers(results, H15, H14)
    if numbers is None:
        admissible, mean, se, m = False, math.nan, math.nan, 0
    else:
        frame, table, admissible, mean, se, m = numbers
        lines = [markdown_table(table), "", f"H15 − H14 over {m} development problems: {mean:+.3f} ± {se:.3f} decades (negative: H15 better).",
                 *lines, f"Median CPU per run on the problems all three ran: {cpu_medians(frame, {H15: 'H15', H14: 'H14', 'qlognei': '`qlognei`'})[1]}."]
    stays = "the plan stays H14"
    if needle_in and not needle_passes:  # part 3 fails: the round fails whatever the rest would show
        return decision_text(lines, True, False, "", stays + " (part 3 fails; the other runs are not made)")
    complete = needle_in and m >= DEV_PAIRS and len(seeds) >= len(DEV_SEEDS) and new_runs >= len(DEV_SEEDS) and ref_runs >= len(DEV_SEEDS)
    passes = needle_passes and admissible and mean <= se and new_failed <= ref_failed and four_mean <= 2 * four_se
    adopted = "H15 takes H14's place as the default-to-be: it is to become `auto`'s default once its d = 2 and d = 5 reports on 26-35 are in"
    return decision_text(lines, complete, passes, adopted, stays)


H16 = "auto[acquisition=lognei-if-noisy]"
r"""The fourteenth round's variant (``docs/bbob.md``): H14 with qLogNEI in place of the plug-in
LogEI on the rounds where the acquired candidate's noise variance exceeds BoTorch's
:math:`10^{-4}` (standardised units)."""
D5_DEV_NOISY_PAIRS = 24 * len(DEV_INSTANCES)


def d5_dev_numbers(results: Path, variant: str, reference: str, noisy: bool) -> tuple[float, float, int, pd.DataFrame] | None:
    r"""A round's numbers on one half of the d = 5 development grid (instances 1-5, ``noisy`` or
    not): ``variant``'s paired score difference against ``reference`` (mean, SE, pairs; negative:
    ``variant`` better) and, beside it, both against ``qlognei`` (admissibility table); ``None``
    before ``variant``'s first run there."""
    d5 = bbob_frame(results, 5, DEV_INSTANCES)
    d5 = d5[d5["group"] == group_name(5, noisy)] if not d5.empty else d5
    if d5.empty or variant not in set(d5["method"]):
        return None
    diff = score_differences(d5.assign(score=run_scores(d5)), reference, variant)
    m = len(diff)
    mean, se = mean_se([float(v) for v in diff]) if m else (math.nan, math.nan)
    beside, _ = admissible_variants(d5, "qlognei", [variant, reference])
    beside = beside[beside["group"] != "all"].assign(variant=lambda t: [f"`{v}`" for v in t["variant"]])
    return mean, se, m, beside


def d2_dev_lines(results: Path, variant: str, label: str) -> tuple[list[str], bool, float, float, int]:
    r"""A round's lines on the d = 2 development grid against H14 (:func:`round_numbers`: the
    admissibility table, the paired difference and the median CPU per run, ``variant`` called
    ``label``), its admissibility and the paired mean, SE and pairs; no lines (and NaNs) before
    ``variant``'s first run."""
    numbers = round_numbers(results, variant, H14)
    if numbers is None:
        return [], False, math.nan, math.nan, 0
    frame, table, admissible, mean, se, m = numbers
    lines = [markdown_table(table), "", f"{label} − H14 over {m} d = 2 development problems: {mean:+.3f} ± {se:.3f} decades (negative: {label} better).",
             f"Median CPU per run on the problems all three ran: {cpu_medians(frame, {variant: label, H14: 'H14', 'qlognei': '`qlognei`'})[1]}."]
    return lines, admissible, mean, se, m


def h16_decision(results: Path) -> str:
    r"""The fourteenth round's rule (``docs/bbob.md``), applied as written to H16 against H14:
    admissible against ``qlognei`` on the d = 2 development grid; its paired score difference
    against H14 there not above +1 SE; on the d = 5 noisy development grid (instances 1-5) its
    paired score difference against H14 below zero by more than 2 SE; no more ``hpo-four``
    development failures than H14's; and on the four-parameter objective's development seeds its
    paired :math:`\log_{10}` final regret against H14 not above +2 SE. Beside the rule: both
    against ``qlognei`` on the d = 5 noisy development grid."""
    lines, admissible, mean, se, m = d2_dev_lines(results, H16, "H16")
    noisy = d5_dev_numbers(results, H16, H14, noisy=True)
    if m == 0 and noisy is None:
        return "No records yet.\n"
    mean5, se5, m5 = math.nan, math.nan, 0
    if noisy is not None:
        mean5, se5, m5, beside = noisy
        lines.append(f"H16 − H14 over {m5} d = 5 noisy development problems: {mean5:+.3f} ± {se5:.3f} decades (negative: H16 better).")
        lines += ["", "Beside the rule, d = 5 noisy development grid against `qlognei`:", "", markdown_table(beside)]
    failures, (new_failed, new_runs), (ref_failed, ref_runs) = failure_line(results, {H16: "H16", H14: "H14"})
    seeds, four_mean, four_se = paired_log_finals(optuna_dev_finals(results), H16, H14)
    lines += ["", failures, f"Four-parameter objective through Optuna, seeds 100-109, paired log10 final simple regret H16 − H14 over "
              f"{len(seeds)} seeds: {four_mean:+.2f} ± {four_se:.2f} (negative: H16 better; floored at 1e-12)."]
    complete = (m >= DEV_PAIRS and m5 >= D5_DEV_NOISY_PAIRS and len(seeds) >= len(DEV_SEEDS)
                and new_runs >= len(DEV_SEEDS) and ref_runs >= len(DEV_SEEDS))
    passes = admissible and mean <= se and mean5 < -2 * se5 and new_failed <= ref_failed and four_mean <= 2 * four_se
    adopted = "H16 takes H14's place as the default-to-be: it is to become `auto`'s default once its d = 2 and d = 5 reports on instances 36-45 are in"
    return decision_text(lines, complete, passes, adopted, "`auto` stays H14")


H17 = "auto[acquisition=lognei-if-repeats-differ]"
r"""The fifteenth round's variant (``docs/bbob.md``): H14 whose acquisition follows one repeated
evaluation, qLogNEI once two observations at one point differ and the plug-in LogEI once they
agree (before the repeat, H16's switch)."""


def h17_decision(results: Path) -> str:
    r"""The fifteenth round's rule (``docs/bbob.md``), applied as written to H17 against H14:
    admissible against ``qlognei`` on the d = 2 development grid; its paired score difference
    against H14 there not above +1 SE; on the d = 5 noisy development grid below zero by more
    than 2 SE; on the d = 5 noise-free development grid not above +1 SE; no more ``hpo-four``
    development failures than H14's; and on the four-parameter objective's development seeds its
    paired :math:`\log_{10}` final regret against H14 not above +2 SE. Beside the rule: both
    against ``qlognei`` on each d = 5 development half."""
    lines, admissible, mean, se, m = d2_dev_lines(results, H17, "H17")
    halves = {noisy: d5_dev_numbers(results, H17, H14, noisy) for noisy in (True, False)}
    if m == 0 and all(h is None for h in halves.values()):
        return "No records yet.\n"
    d5: dict[bool, tuple[float, float, int]] = {}
    for noisy, half in halves.items():
        if half is None:
            d5[noisy] = (math.nan, math.nan, 0)
            continue
        mean5, se5, m5, beside = half
        d5[noisy] = (mean5, se5, m5)
        name = "noisy" if noisy else "noise-free"
        lines += ["", f"H17 − H14 over {m5} d = 5 {name} development problems: {mean5:+.3f} ± {se5:.3f} decades (negative: H17 better).",
                  "", f"Beside the rule, d = 5 {name} development grid against `qlognei`:", "", markdown_table(beside)]
    failures, (new_failed, new_runs), (ref_failed, ref_runs) = failure_line(results, {H17: "H17", H14: "H14"})
    seeds, four_mean, four_se = paired_log_finals(optuna_dev_finals(results), H17, H14)
    lines += ["", failures, f"Four-parameter objective through Optuna, seeds 100-109, paired log10 final simple regret H17 − H14 over "
              f"{len(seeds)} seeds: {four_mean:+.2f} ± {four_se:.2f} (negative: H17 better; floored at 1e-12)."]
    (noisy_mean, noisy_se, noisy_m), (free_mean, free_se, free_m) = d5[True], d5[False]
    complete = (m >= DEV_PAIRS and noisy_m >= D5_DEV_NOISY_PAIRS and free_m >= D5_DEV_NOISY_PAIRS and len(seeds) >= len(DEV_SEEDS)
                and new_runs >= len(DEV_SEEDS) and ref_runs >= len(DEV_SEEDS))
    passes = (admissible and mean <= se and noisy_mean < -2 * noisy_se and free_mean <= free_se
              and new_failed <= ref_failed and four_mean <= 2 * four_se)
    adopted = "H17 takes H14's place as the default-to-be: it is to become `auto`'s default once its d = 2 and d = 5 reports on instances 36-45 are in"
    return decision_text(lines, complete, passes, adopted, "`auto` stays H14")


def bbob_bars(
    results: Path, dim: int, instances: Sequence[int], methods: Sequence[str] = REPORT_METHODS,
    presets: Sequence[str] = REPORT_PRESETS,
) -> str:
    r"""The ``presets``' bars against ``qlognei`` and ``optuna-gp`` on ``instances``, among ``methods``."""
    frame = bbob_frame(results, dim, instances)
    frame = frame[frame["method"].isin(methods)] if not frame.empty else frame
    bars = report_bars(frame, presets=presets) if not frame.empty else frame
    if bars.empty:
        return "No records yet.\n"
    shown = bars[["group", "preset", "peer", "functions", "min_pairs", "auc_preset", "auc_peer", "lower", "better", "worse",
                  "worse_functions", "median_time_preset", "median_time_reference", "holds", "holds_auto"]]
    return markdown_table(shown) + "\n"


D5_REPORT_METHODS = (H6, "qlognei", "optuna-gp", "random")
r"""The methods of the d = 5 report (``docs/bbob.md``): ``auto`` as shipped (H6) and the peers that
have every run; the older presets and the fully Bayesian anchor were not run at d = 5."""


def report_status(results: Path, dim: int, instances: Sequence[int], methods: Sequence[str]) -> str | None:
    r"""``None`` when every one of ``methods`` has its run on every function and instance of
    ``instances`` (seed 0) in both noise settings at ``dim``; otherwise a table of the runs each
    has, and nothing else, so that a report still running is not read before its last run."""
    frame = bbob_frame(results, dim, instances)
    expected = 24 * len(instances)
    groups = (group_name(dim, False), group_name(dim, True))
    counts = {
        (g, m): 0 if frame.empty else int(((frame["group"] == g) & (frame["method"] == m) & (frame["seed"] == 0)).sum())
        for g in groups for m in methods
    }
    return progress_table(counts, groups, methods, expected, "runs recorded; the report is read once, after its last run")


def progress_table(
    counts: Mapping[tuple[str, str], int], columns: Sequence[str], methods: Sequence[str], expected: int, what: str
) -> str | None:
    r"""``None`` when every ``counts[column, method]`` has reached ``expected``; otherwise
    "Not complete yet (``what``)" and a table of the counts, one row per method (the closed
    tables of :func:`report_status` and :func:`study_status`)."""
    if all(counts[c, m] >= expected for c in columns for m in methods):
        return None
    rows = [{"method": f"`{m}`", **{c: f"{counts[c, m]} of {expected}" for c in columns}} for m in methods]
    return f"Not complete yet ({what}):\n\n" + markdown_table(pd.DataFrame(rows)) + "\n"


def until_complete(status: Callable[[Path], str | None], table: Callable[[Path], str]) -> Callable[[Path], str]:
    r"""A table that stays closed while its study runs: ``status(results)`` (the counts of
    :func:`report_status` or :func:`study_status`) until it is ``None``, then ``table(results)``."""

    def render(results: Path) -> str:
        counts = status(results)
        return counts if counts is not None else table(results)

    return render


MIXED_METHODS = (H6, "lb-gp-ucb-auto", "he-gp-ucb-auto", "qlognei", "mixed-qlognei", "optuna-gp", "optuna-tpe", "random")
r"""The methods of the mixed-problem study, in its tables' order."""
MIXED_PROBLEMS = ("ackley-mixed", "labs", "hpo-four")
TABULAR_PROBLEMS = ("fcnet-naval", "fcnet-parkinsons", "fcnet-protein", "fcnet-slice")
r"""The FCNet tabular problems (``problems/tabular_problems.py``), records under ``results/tabular``."""
REPORT_SEEDS = tuple(range(10))
r"""The seeds of the mixed and tabular studies (development seeds are 100-109)."""
MIXED_PAIRED_METHODS = (MIXED_METHODS[0], H2A, *MIXED_METHODS[1:])
r"""The paired table's methods: the study's, with H2a (``auto``'s default before H6) after ``auto``."""


def mixed_records(results: Path, methods: Sequence[str] = MIXED_METHODS, study: str = "mixed") -> list[dict[str, Any]]:
    r"""A mixed study's records (``results/<study>``: ``mixed``, or ``tabular`` for the FCNet
    problems) of ``methods``, one per (problem, method, seed)."""
    from botorch_unknown_hypers.benchmarks.records import RecordStore

    store = RecordStore(Path(results) / study, KEY_FIELDS)
    return [r for r in store.records() if r["method"] in methods]


def mixed_frame(results: Path, study: str = "mixed", methods: Sequence[str] = MIXED_METHODS) -> pd.DataFrame:
    r"""The runs of ``methods`` in a mixed study as the practical suite's frame
    (:func:`~botorch_unknown_hypers.benchmarks.practical_suite.practical_frame`, group ``study``):
    simple regret per evaluation divided by the problem's spread."""
    return practical_frame(mixed_records(results, methods, study), problem_spread, group=study)


def _verdict(d: tuple[float, float, int] | None) -> str:
    r"""A paired difference as ``mean ± SE (n, verdict)``, the verdict at 2 SE (:func:`beyond_2se`)."""
    if d is None or d[2] < 2:
        return ""
    mean, se, n = d
    word = ("worse" if mean > 0 else "better") if beyond_2se(d) else "level"
    return f"{mean:+.3g} ± {se:.2g} ({n}, {word})"


def mixed_paired(
    results: Path,
    study: str = "mixed",
    problems: Sequence[str] = MIXED_PROBLEMS,
    methods: Sequence[str] = MIXED_PAIRED_METHODS,
    peers: Sequence[str] = ("optuna-gp", "mixed-qlognei"),
) -> str:
    r"""Per problem of ``problems``: each of ``methods``' runs, mean final simple regret ± SE, the
    paired difference (method minus peer, negative: better) against each of ``peers`` with its
    verdict at 2 SE, and the median wall time per run (records of ``results/<study>``)."""
    records = mixed_records(results, (*methods, *(p for p in peers if p not in methods)), study)
    if not records:
        return "No records yet.\n"
    by_problem: dict[str, dict[tuple[str, int], dict[str, Any]]] = {}
    for r in records:
        by_problem.setdefault(r["problem"], {})[(r["method"], r["seed"])] = r
    rows = []
    for problem in [p for p in problems if p in by_problem]:
        runs = by_problem[problem]
        for method in [m for m in methods if any(k[0] == m for k in runs)]:
            own = [r for (m, _), r in runs.items() if m == method]
            mean, se = mean_se([r["final_simple_regret"] for r in own])
            rows.append({
                "problem": problem, "method": f"`{method}`", "runs": len(own), "mean final SR ± SE": f"{mean:.3g} ± {se:.2g}",
                **{f"− {peer}": "" if method == peer else _verdict(paired(runs, method, peer, "final_simple_regret"))
                   for peer in peers},
                "median wall s/run": float(np.median([r["wall_time_s"] for r in own])),
            })
    return markdown_table(pd.DataFrame(rows)) + "\n"


def study_status(results: Path, study: str, problems: Sequence[str], methods: Sequence[str], seeds: Sequence[int]) -> str | None:
    r"""``None`` when every one of ``methods`` has a record of every one of ``seeds`` on every one
    of ``problems`` under ``results/<study>``; otherwise a table of the seeds each has, and
    nothing else, so that a study still running is not read before its last run."""
    have = {(r["problem"], r["method"], r["seed"]) for r in mixed_records(results, methods, study)}
    counts = {(p, m): sum((p, m, s) in have for s in seeds) for p in problems for m in methods}
    return progress_table(counts, problems, methods, len(seeds), "seeds recorded; the study is read once, after its last run")


def mixed_summary(results: Path, study: str = "mixed", methods: Sequence[str] = MIXED_METHODS) -> str:
    r"""ECDF area, average rank and median times of ``methods`` in a mixed study (:func:`summary`)."""
    frame = mixed_frame(results, study, methods)
    return summary(frame, [m for m in methods if not frame.empty and m in set(frame["method"])])


ONE_HOT_CELLS = {
    ("one-hot", "10/512"): "qlognei",
    ("one-hot", "20/1024"): "qlognei[num_restarts=20&raw_samples=1024]",
    ("categorical", "10/512"): "mixed-qlognei[num_restarts=10&raw_samples=512]",
    ("categorical", "20/1024"): "mixed-qlognei",
}
r"""The two-by-two of the one-hot diagnosis (``docs/mixed.md``): (model, search effort) -> method."""
ONE_HOT_FLOOR = 1e-12


def one_hot_diagnosis(results: Path) -> str:
    r"""The one-hot diagnosis on ``hpo-four``'s development seeds (``results/mixed-dev``): per cell
    the mean :math:`\log_{10}` final simple regret (floored at :data:`ONE_HOT_FLOOR`) ± SE, then
    each factor's effect, the mean of its paired differences over seeds and the other factor's two
    levels (kernel: one-hot minus categorical; search: 10/512 minus 20/1024) ± SE, and the rule's
    verdict (the factor *carries the gap* when its effect exceeds 1 decade and 2 SE). Seeds that
    lack a cell are left out of every line."""
    score = {key: math.log10(max(final, ONE_HOT_FLOOR)) for key, final in hpo_dev_finals(results).items()}
    seeds = sorted(set.intersection(*({s for m, s in score if m == method} for method in ONE_HOT_CELLS.values())))
    if len(seeds) < 2:
        return "Fewer than two seeds with every cell yet.\n"
    rows = []
    for (model, effort), method in ONE_HOT_CELLS.items():
        mean, se = mean_se([score[(method, s)] for s in seeds])
        rows.append({"line": f"`{method}` ({model}, {effort})", "seeds": len(seeds), "log10 final SR ± SE": f"{mean:+.2f} ± {se:.2f}", "verdict": ""})
    factors = {
        "kernel: one-hot − categorical": [(("one-hot", e), ("categorical", e)) for e in ("10/512", "20/1024")],
        "search: 10/512 − 20/1024": [((m, "10/512"), (m, "20/1024")) for m in ("one-hot", "categorical")],
    }
    for name, pairs in factors.items():
        diffs = [score[(ONE_HOT_CELLS[a], s)] - score[(ONE_HOT_CELLS[b], s)] for a, b in pairs for s in seeds]
        mean, se = mean_se(diffs)
        carries = mean > 1.0 and mean > 2 * se
        rows.append({"line": name, "seeds": len(seeds), "log10 final SR ± SE": f"{mean:+.2f} ± {se:.2f} ({len(diffs)} pairs)",
                     "verdict": "carries the gap" if carries else "does not carry it"})
    return markdown_table(pd.DataFrame(rows)) + "\n"


NEEDLE_METHODS = (H6, H2A, "he-gp-ucb-auto", "qlognei")
r"""The methods of the needle check (``docs/bbob.md``), in its table's order."""
NEEDLE_H14_PROBLEMS = ("berkenkamp2", "berkenkamp3")
r"""The development needles of H14's needle check (``docs/bbob.md``): Berkenkamp's toy on
:math:`[0, 1]^2` and :math:`[0, 1]^3`."""
NEEDLE_H14_METHODS = (H14, "he-gp-ucb-auto", "qlognei", "optuna-gp", H6)
r"""The methods of H14's needle check, in its table's order; ``auto`` (H6, the default until the
switch) was added beside it once the check's first runs were in, choosing nothing."""


def needle_gap(problem: str = "berkenkamp") -> float:
    r""":math:`f^* - f(\mathbf 1)` of a Berkenkamp problem (0.145 for ``berkenkamp``, 0.144 in 2 and 3
    dimensions): a run stuck at the boundary's local maximum ends with this regret, up to the
    records' rounding, so a run counts as *on the peak* when its final simple regret is below half
    of it (its best value above :math:`(f^* + f(\mathbf 1))/2`, which only the bump reaches)."""
    from botorch_unknown_hypers.problems.problem_registry import get_problem

    built = get_problem(problem)
    return float(built.optimal_value) - float(built.metadata["local_optimal_value"])


def needle_rows(results: Path, problem: str, methods: tuple[str, ...]) -> tuple[list[dict[str, Any]], dict[str, int], dict[str, int]]:
    r"""Per method of ``methods`` with development runs of ``problem`` (seeds 100-109,
    ``results/needle-dev``): the runs, those on the narrow peak (final simple regret below half
    of :func:`needle_gap`), the mean final simple regret ± SE and the median wall time per run; with
    the runs and the runs on the peak of every method, by name."""
    finals: dict[str, dict[int, tuple[float, float]]] = {}
    for (method, seed), r in dev_records(results, "needle-dev", problem).items():
        if method in methods and seed in DEV_SEEDS:
            finals.setdefault(method, {})[seed] = (r["final_simple_regret"], r["wall_time_s"])
    gap = needle_gap(problem)
    on_peak = {m: sum(v < gap / 2 for v, _ in runs.values()) for m, runs in finals.items()}
    rows = []
    for m in [m for m in methods if m in finals]:
        mean, se = mean_se([v for v, _ in finals[m].values()])
        rows.append({"problem": problem, "method": f"`{m}`", "runs": len(finals[m]), "on the peak": on_peak[m],
                     "mean final SR ± SE": f"{mean:.3g} ± {se:.2g}",
                     "median wall s/run": float(np.median([t for _, t in finals[m].values()]))})
    return rows, {m: len(runs) for m, runs in finals.items()}, on_peak


def needle_verdict(runs: dict[str, int], on_peak: dict[str, int], method: str, label: str) -> str:
    r"""Whether ``method`` finds the peak on at least as many development seeds as
    ``he-gp-ucb-auto`` (``label`` names it in the verdict); not read while a run of either is
    missing, and no verdict where neither finds it on any seed."""
    mine, theirs = on_peak.get(method, 0), on_peak.get("he-gp-ucb-auto", 0)
    if not all(runs.get(m, 0) == len(DEV_SEEDS) for m in (method, "he-gp-ucb-auto")):
        return "not read yet (runs missing)"
    if mine == theirs == 0:
        return f"neither {label} nor `he-gp-ucb-auto` finds the peak on any seed, so the problem cannot tell"
    keeps = "keeps" if mine >= theirs else "does not keep"
    return f"{label} {keeps} the needle here ({mine} seed{'' if mine == 1 else 's'} against {theirs})"


def needle_check(results: Path) -> str:
    r"""The needle check of ``docs/bbob.md``: per method, the ``berkenkamp`` development runs
    (:func:`needle_rows`), and whether H6 (``auto`` when the check ran) finds the peak on at least
    as many seeds as ``he-gp-ucb-auto``."""
    rows, runs, on_peak = needle_rows(results, "berkenkamp", NEEDLE_METHODS)
    if not rows:
        return "No records yet.\n"
    table = pd.DataFrame(rows).drop(columns="problem")
    return markdown_table(table) + f"\n\nCheck: {needle_verdict(runs, on_peak, H6, '`auto` (H6)')}.\n"


def needle_h14_check(results: Path) -> str:
    r"""H14's needle check (``docs/bbob.md``): per problem of :data:`NEEDLE_H14_PROBLEMS` and
    method of :data:`NEEDLE_H14_METHODS`, the development runs (:func:`needle_rows`); per problem,
    whether ``qlognei`` misses the peak on a seed (else the problem cannot tell) and whether H14,
    and beside it ``auto`` (H6), finds it on at least as many seeds as ``he-gp-ucb-auto``."""
    rows, lines = [], []
    for problem in NEEDLE_H14_PROBLEMS:
        found, runs, on_peak = needle_rows(results, problem, NEEDLE_H14_METHODS)
        rows.extend(found)
        if runs.get("qlognei", 0) < len(DEV_SEEDS):
            informative = "not read yet (runs missing)"
        elif on_peak.get("qlognei", 0) < len(DEV_SEEDS):
            informative = f"a needle: `qlognei` misses it on {len(DEV_SEEDS) - on_peak.get('qlognei', 0)} of {len(DEV_SEEDS)} seeds"
        else:
            informative = "not a needle for `qlognei` (it finds the peak on every seed), so the check cannot tell"
        lines.append(f"`{problem}`: {informative}; {needle_verdict(runs, on_peak, H14, 'H14')}; "
                     f"beside it, {needle_verdict(runs, on_peak, H6, '`auto` (H6)')}.")
    if not rows:
        return "No records yet.\n"
    return markdown_table(pd.DataFrame(rows)) + "\n\n" + "\n".join(lines) + "\n"


FRESH_INSTANCES = tuple(range(26, 36))
r"""The instances of the report for a variant chosen after the report on :data:`REPORT_INSTANCES`
was read (H13 onwards, ``docs/bbob.md``): no method had run on them before that report."""
H13_REPORT_METHODS = (H13, "qlognei", "optuna-gp", "random")
r"""The methods of H13's report on :data:`FRESH_INSTANCES`: H13 and the peers, all run fresh."""
H14_REPORT_METHODS = (H14, *H13_REPORT_METHODS[1:])
r"""The methods of H14's report on :data:`FRESH_INSTANCES`: H14, run after H13's report was read,
and the peers' records of that report."""


def paired_scores(results: Path, dim: int, instances: Sequence[int], variant: str, peers: Sequence[str]) -> str:
    r"""Per peer, the paired difference of the run scores (:func:`run_scores`, decades of the
    normalised final regret) ``variant`` minus the peer on ``instances`` at ``dim``, mean ± SE
    (``ddof = 1``) per noise setting and over both; negative: ``variant`` better."""
    frame = bbob_frame(results, dim, instances)
    if frame.empty:
        return "No records yet.\n"
    scored = frame.assign(score=run_scores(frame))
    diffs = {peer: score_differences(scored, peer, variant) for peer in peers}
    lines = []
    for peer, diff in diffs.items():
        parts = []
        for label, sub in [*((g, diff.xs(g, level="group")) for g in sorted(set(diff.index.get_level_values("group")))),
                           ("all", diff)]:
            mean, se = mean_se([float(v) for v in sub]) if len(sub) else (math.nan, math.nan)
            parts.append(f"{label} {mean:+.3f} ± {se:.3f} ({len(sub)} pairs)")
        lines.append(f"`{variant}` − `{peer}`: " + "; ".join(parts) + ".")
    return "\n".join(lines) + "\n\nNegative: the variant better.\n"


D5_STATUS = partial(report_status, dim=5, instances=REPORT_INSTANCES, methods=D5_REPORT_METHODS)
r"""The d = 5 report's run counts (:func:`report_status`)."""
TABULAR_STATUS = partial(study_status, study="tabular", problems=TABULAR_PROBLEMS, methods=MIXED_METHODS, seeds=REPORT_SEEDS)
r"""The FCNet study's seed counts (:func:`study_status`)."""
H13_D2_STATUS = partial(report_status, dim=2, instances=FRESH_INSTANCES, methods=H13_REPORT_METHODS)
r"""H13's d = 2 report's run counts (:func:`report_status`)."""
H13_D5_STATUS = partial(report_status, dim=5, instances=FRESH_INSTANCES, methods=H13_REPORT_METHODS)
r"""H13's d = 5 report's run counts (:func:`report_status`)."""
H14_D2_STATUS = partial(report_status, dim=2, instances=FRESH_INSTANCES, methods=H14_REPORT_METHODS)
r"""H14's d = 2 report's run counts (:func:`report_status`)."""
H14_D5_STATUS = partial(report_status, dim=5, instances=FRESH_INSTANCES, methods=H14_REPORT_METHODS)
r"""H14's d = 5 report's run counts (:func:`report_status`)."""
H14_MIXED_METHODS = (H14, H6, "mixed-qlognei", "optuna-gp")
r"""The methods of H14's mixed and tabular reports (``docs/mixed.md``): H14, ``auto`` as shipped
(H6) and the two peers of issue 56's bar."""
H14_MIXED_STATUS = partial(study_status, study="mixed", problems=MIXED_PROBLEMS, methods=H14_MIXED_METHODS, seeds=REPORT_SEEDS)
r"""H14's mixed-study report's seed counts (:func:`study_status`)."""
H14_TABULAR_STATUS = partial(study_status, study="tabular", problems=TABULAR_PROBLEMS, methods=H14_MIXED_METHODS, seeds=REPORT_SEEDS)
r"""H14's FCNet report's seed counts (:func:`study_status`)."""
H6_BESIDE_STATUS = partial(report_status, dim=2, instances=FRESH_INSTANCES, methods=(H13, H6))
r"""The run counts of ``auto`` as shipped (H6) beside H13's d = 2 report (:func:`report_status`)."""


def fresh_report_tables(
    variant: str, label: str, dim: int, status: Callable[[Path], str | None], beside: Sequence[str] = ()
) -> dict[str, Callable[[Path], str]]:
    r"""A variant's report tables at ``dim`` on :data:`FRESH_INSTANCES` (summary, bars, paired
    scores against the peers and each of ``beside``), named ``bbob-d{dim}-{label}-report*`` and
    each closed behind ``status`` (:func:`until_complete`) until the report's last run."""
    methods = (variant, *H13_REPORT_METHODS[1:])
    tables: dict[str, Callable[[Path], str]] = {
        "": partial(bbob_summary, dim=dim, instances=FRESH_INSTANCES, methods=methods),
        "-bars": partial(bbob_bars, dim=dim, instances=FRESH_INSTANCES, methods=methods, presets=(variant,)),
        "-paired": partial(paired_scores, dim=dim, instances=FRESH_INSTANCES, variant=variant, peers=("qlognei", "optuna-gp", *beside)),
    }
    return {f"bbob-d{dim}-{label}-report{suffix}": until_complete(status, table) for suffix, table in tables.items()}


TABLES: dict[str, Callable[[Path], str]] = {
    "bbob-d2-dev": partial(bbob_summary, dim=2, instances=DEV_INSTANCES),
    "bbob-d2-auto-decision": partial(auto_decision, dim=2),
    "bbob-d2-h5-decision": h5_decision,
    "bbob-d2-h4-decision": h4_decision,
    "bbob-d2-h6-decision": h6_decision,
    "bbob-d2-h7-decision": h7_decision,
    "bbob-d2-h8-decision": h8_decision,
    "bbob-d2-h3-decision": h3_decision,
    "bbob-d2-h10-decision": h10_decision,
    "bbob-d2-h11-decision": h11_decision,
    "bbob-d2-h12-decision": h12_decision,
    "bbob-d2-h13-decision": h13_decision,
    "bbob-d2-h14-decision": h14_decision,
    "bbob-d2-h15-decision": h15_decision,
    "bbob-h16-decision": h16_decision,
    "bbob-h17-decision": h17_decision,
    "bbob-d2-report": partial(bbob_summary, dim=2, instances=REPORT_INSTANCES, methods=REPORT_METHODS),
    "bbob-d2-report-bars": partial(bbob_bars, dim=2, instances=REPORT_INSTANCES),
    "bbob-d5-report": until_complete(D5_STATUS, partial(bbob_summary, dim=5, instances=REPORT_INSTANCES, methods=D5_REPORT_METHODS)),
    "bbob-d5-report-bars": until_complete(
        D5_STATUS, partial(bbob_bars, dim=5, instances=REPORT_INSTANCES, methods=D5_REPORT_METHODS, presets=(H6,))
    ),
    **fresh_report_tables(H13, "h13", 2, H13_D2_STATUS),
    **fresh_report_tables(H13, "h13", 5, H13_D5_STATUS),
    **fresh_report_tables(H14, "h14", 2, H14_D2_STATUS, beside=(H13,)),
    **fresh_report_tables(H14, "h14", 5, H14_D5_STATUS),
    "bbob-d2-h13-report-h6": until_complete(
        H6_BESIDE_STATUS, partial(paired_scores, dim=2, instances=FRESH_INSTANCES, variant=H13, peers=(H6,))
    ),
    "bbob-d2-h13-report-h6-bars": until_complete(
        H6_BESIDE_STATUS, partial(bbob_bars, dim=2, instances=FRESH_INSTANCES, methods=(H6, *H13_REPORT_METHODS[1:]), presets=(H6,))
    ),
    "needle-dev-check": needle_check,
    "needle-dev-h14-check": needle_h14_check,
    "mixed-paired": mixed_paired,
    "mixed-summary": mixed_summary,
    "mixed-one-hot": one_hot_diagnosis,
    "tabular-paired": until_complete(TABULAR_STATUS, partial(mixed_paired, study="tabular", problems=TABULAR_PROBLEMS)),
    "tabular-summary": until_complete(TABULAR_STATUS, partial(mixed_summary, study="tabular")),
    **{
        f"{study}-h14-{kind}": until_complete(status, table)
        for study, problems, status in (("mixed", MIXED_PROBLEMS, H14_MIXED_STATUS), ("tabular", TABULAR_PROBLEMS, H14_TABULAR_STATUS))
        for kind, table in (
            ("paired", partial(mixed_paired, study=study, problems=problems, methods=H14_MIXED_METHODS, peers=("optuna-gp", "mixed-qlognei", H6))),
            ("summary", partial(mixed_summary, study=study, methods=H14_MIXED_METHODS)),
        )
    },
}
r"""Table name (the docs' marker) -> its function of the results folder."""


def regenerate(docs: str | Path, results: str | Path, check: bool = False) -> list[str]:
    r"""Rewrite every marked table of the Markdown files under ``docs`` from the records under
    ``results``; with ``check``, write nothing. Returns ``"file: table"`` for each table whose
    text changed (would change).

    Raises:
        ValueError: naming the file, for a marker whose table is not in :data:`TABLES`.
    """
    changed = []
    for path in sorted(Path(docs).rglob("*.md")):
        text = path.read_text()
        cache: dict[str, str] = {}

        def table(match: re.Match[str], path: Path = path, cache: dict[str, str] = cache) -> str:
            name = match.group("name")
            if name not in TABLES:
                raise ValueError(f"{path}: table {name!r} is not one of {sorted(TABLES)}.")
            if name not in cache:
                cache[name] = TABLES[name](Path(results))
            if cache[name] != match.group("body"):
                changed.append(f"{path.name}: {name}")
            return match.group(1) + cache[name] + match.group(4)

        new = MARKER.sub(table, text)
        if new != text and not check:
            path.write_text(new)
    return changed


__all__ = ["AUTO_VARIANTS", "FRESH_INSTANCES", "H13_REPORT_METHODS", "H13_D2_STATUS", "H13_D5_STATUS", "H14_REPORT_METHODS", "H14_D2_STATUS", "H14_D5_STATUS", "H14_MIXED_METHODS", "H14_MIXED_STATUS", "H14_TABULAR_STATUS", "fresh_report_tables", "H6_BESIDE_STATUS", "paired_scores", "D5_REPORT_METHODS", "until_complete", "progress_table", "report_status", "H2A", "needle_gap", "NEEDLE_METHODS", "needle_check", "NEEDLE_H14_PROBLEMS", "NEEDLE_H14_METHODS", "needle_rows", "needle_verdict", "needle_h14_check", "H4", "H5", "H6", "H7", "h7_decision", "H8", "h8_decision", "H3", "ANCHOR", "h3_decision", "H10", "h10_decision", "H11", "h11_decision", "H12", "h12_decision", "H13", "h13_decision", "H14", "h14_decision", "H15", "h15_decision", "H16", "h16_decision", "H17", "h17_decision", "d5_dev_numbers", "d2_dev_lines", "D5_DEV_NOISY_PAIRS", "four_parameter_decision", "optuna_dev_finals", "paired_log_finals", "cpu_medians", "failure_line", "round_numbers", "decision_text", "REPORT_PRESETS", "MIXED_METHODS", "ONE_HOT_CELLS", "one_hot_diagnosis", "MIXED_PROBLEMS", "TABULAR_PROBLEMS", "REPORT_SEEDS", "study_status", "REPORT_INSTANCES", "REPORT_METHODS", "TABLES", "auto_decision", "bbob_bars", "h4_decision", "h6_decision", "h5_decision", "hypothesis_decision", "dev_records", "hpo_dev_finals", "hpo_failures",
           "bbob_frame", "bbob_summary", "mixed_frame", "mixed_paired", "mixed_records", "mixed_summary", "regenerate",
           "summary"]
