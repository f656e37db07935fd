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


__all__ = ["BASE_OPTIONS", "METHODS", "N_INIT", "PROBLEMS", "T_BOX", "T_POOL", "fmt", "mean_se", "parse_method"]
