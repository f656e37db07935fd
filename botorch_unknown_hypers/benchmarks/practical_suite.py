r"""The practical suite's definition: its ten problems, its methods and budget, and its summaries.

Ten problems, one configuration per method, no per-problem settings: boxes run
:data:`T_BOX` = 60 rounds and pools :data:`T_POOL` = 50, after :data:`N_INIT` = 10 initial points
(Sobol on a box, random pool points), one point per round. A method is ``name`` or
``name[key=value&...]`` (:func:`parse_method`), ``qlognei`` on BoTorch's default model
(:data:`BASE_OPTIONS`). ``benchmarks/practical_suite.py`` runs it and reports
(``benchmarks/batch_unknown_hypers.py`` and ``benchmarks/device_search.py`` reuse the problems).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

PROBLEMS = (
    "branin",
    "rosenbrock4",
    "ackley5",
    "hartmann6",
    "griewank8",
    "michalewicz5",
    "berkenkamp",
    "gp-rbf3",
    "agnp",
    "crossed-barrel",
)
METHODS = ("auto", "lb-gp-ucb-auto", "he-gp-ucb-auto", "lb-gp-ucb", "he-gp-ucb", "mle-gp-ucb", "qlognei", "optuna-gp", "random")
BASE_OPTIONS: dict[str, dict[str, Any]] = {"qlognei": {"surrogate": "fitted"}}
r"""Options every run of a method gets (BoTorch's default model for ``qlognei`` everywhere)."""
T_BOX, T_POOL, N_INIT = 60, 50, 10
KEY_FIELDS = ("problem", "method", "seed", "iterations", "n_init")
r"""The fields that identify a run of the suite (and of the mixed study), in a run file and in its study record."""


def parse_method(spec: str) -> tuple[str, dict[str, Any]]:
    r"""``"name[k=v&...]"`` -> ``(name, options)`` with JSON-decoded values, on top of :data:`BASE_OPTIONS`."""
    from botorch_unknown_hypers.policies.registry import parse_method_spec

    name, options = parse_method_spec(spec)
    return name, {**BASE_OPTIONS.get(name, {}), **options}


def mean_se(values: list[float]) -> tuple[float, float]:
    r"""Mean and standard error :math:`\mathrm{sd}/\sqrt n` (``ddof = 1``; 0 for one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def fmt(mean: float, se: float) -> str:
    r"""``mean ± se`` to 3 and 2 significant digits."""
    return f"{mean:.3g} ± {se:.2g}"


def paired(runs: dict[tuple[str, int], dict], method: str, ref: str, key: str) -> tuple[float, float, int] | None:
    r"""Mean ± SE of ``key`` of ``method`` minus ``ref`` over the seeds both have."""
    seeds = sorted({s for m, s in runs if m == method} & {s for m, s in runs if m == ref})
    if not seeds:
        return None
    diffs = [runs[(method, s)][key] - runs[(ref, s)][key] for s in seeds]
    mean, se = mean_se(diffs)
    return mean, se, len(seeds)


def beyond_2se(d: tuple[float, float, int] | None) -> bool:
    r"""Whether a :func:`paired` difference is beyond 2 SE (and its SE is positive): the table's
    ``*`` and the report's "significantly" (its sign says worse or better)."""
    return d is not None and d[1] > 0 and abs(d[0]) > 2 * d[1]


SPREAD_POINTS = 4096
r"""Scrambled Sobol points (seed 0) of a box problem's spread; a pool uses every point."""


def problem_spread(name: str) -> float:
    r"""The 5-95 % quantile range of the noiseless objective over the problem's domain: over
    :data:`SPREAD_POINTS` scrambled Sobol points of a box (of the codes of a mixed domain), over every point of a pool (as BBOB's
    spread, ``problems/bbob_problems.py``), the scale of the targets of :func:`practical_frame`."""
    import torch

    from botorch_unknown_hypers.domains import FiniteDomain
    from botorch_unknown_hypers.problems.problem_registry import get_problem

    problem = get_problem(name)
    domain = problem.domain
    X = domain.points if isinstance(domain, FiniteDomain) else domain.sample(SPREAD_POINTS, seed=0)  # Sobol (codes of a mixed domain)
    f = problem.evaluate_true(X).reshape(-1).double()
    low, high = torch.quantile(f, torch.tensor([0.05, 0.95], dtype=f.dtype)).tolist()
    return high - low


def practical_frame(records: list[dict[str, Any]], spread: Callable[[str], float], group: str = "practical") -> Any:
    r"""The runs as ``bbob_report.runs_frame`` rows, one ``group`` (``"practical"``; the mixed study's ``"mixed"``), each problem a
    ``function`` with one instance, so that ``bbob_report.report_bars`` judges them as it judges
    BBOB's: the simple regret divided by ``spread(problem)`` (:func:`problem_spread`; a problem
    without one has no ECDF targets and leaves the frame), every trace carried to the longest
    budget at its last value (a pool's 60 evaluations beside a box's 70: a finished run reaches
    nothing more), and the wall time of the run."""
    import numpy as np
    import pandas as pd

    scales: dict[str, float] = {}
    for name in sorted({r["problem"] for r in records}):
        try:
            scales[name] = spread(name)
        except ValueError:  # a problem the registry does not know
            scales[name] = math.nan
    kept = [r for r in records if scales[r["problem"]] > 0]
    longest = max((len(r["simple_regret"]) for r in kept), default=0)
    rows = []
    for r in kept:
        trace = np.asarray(r["simple_regret"], dtype=float) / scales[r["problem"]]
        rows.append({
            "group": group, "problem": r["problem"], "function": r["problem"], "function_name": r["problem"],
            "instance": 0, "seed": r["seed"], "method": r["method"], "final_simple_regret": r["final_simple_regret"],
            "spread": scales[r["problem"]], "wall_time_s": r["wall_time_s"], "cpu_s": r.get("cpu_s"),
            "regret": np.concatenate([trace, np.full(longest - len(trace), trace[-1])]),
        })
    return pd.DataFrame(rows)


__all__ = ["BASE_OPTIONS", "KEY_FIELDS", "METHODS", "N_INIT", "PROBLEMS", "SPREAD_POINTS", "T_BOX", "T_POOL", "beyond_2se", "fmt",
           "mean_se", "paired", "parse_method", "practical_frame", "problem_spread"]
