r"""Golden traces: the first rounds of every registered method, recorded before a refactor.

A *case* is (method, problem, options, batch size). :func:`trace` runs it with the public
``run`` loop for a few rounds and keeps what a refactor must not change: the suggested
points, the ``selected`` hyperparameter labels, ``n_candidates`` and the rule's
selected candidate or surviving set from its diagnostics. ``record.py`` writes the traces
to ``traces.json``; ``test_golden_traces.py`` replays them (pool points must match
exactly, box points to 1e-6).

Problems: ``bird2`` (the TS-RSR paper's 2-d box, with its fixed surrogate), a 60-point
2-d pool defined here, ``gp-kernel`` (prior selection on 500 arms, priors and the true
prior told by the problem), ``robust-peak`` (the robust pool), ``additive3d`` and ``hills``
(elimination over additive decompositions and prior means).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from botorch_unknown_hypers import get_problem, make_policy, run
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.problems.base import Problem
from botorch_unknown_hypers.domains import FiniteDomain
from botorch_unknown_hypers.problems.elimination_tasks import task_candidates

ROUNDS = 5
SEEDS = (0, 1)
FAST = {"num_restarts": 2, "raw_samples": 32}
DIAGNOSTIC_KEYS = ("played", "active", "alive", "prior", "u", "v")
r"""Diagnostics that name the rule's selected candidate or its surviving set."""


class GoldenPool(Problem):
    r"""60 scrambled-Sobol points of the unit square; a smooth bump plus a ridge, noise 0.01."""

    def __init__(self) -> None:
        points = torch.quasirandom.SobolEngine(2, scramble=True, seed=7).draw(60, dtype=torch.float64)
        super().__init__(name="golden-pool", domain=FiniteDomain(points), optimal_value=0.0, noise_std=0.01, n_init=6)
        self.optimal_value = float(self.evaluate_true(points).max())

    def evaluate_true(self, X: Tensor) -> Tensor:
        bump = torch.exp(-((X - X.new_tensor([0.7, 0.3])) ** 2).sum(-1) / 0.05)
        return bump + 0.3 * torch.sin(6 * X[..., 0]) * X[..., 1]


def _box_priors() -> KernelCandidates:
    return KernelCandidates.from_lengthscales(
        torch.tensor([0.4, 0.2, 0.1], dtype=torch.float64), kernel="matern52", noise=1e-2
    )


@dataclass(frozen=True)
class Case:
    method: str
    problem: str
    q: int = 1
    options: dict[str, Any] = field(default_factory=dict)
    n_init: int | None = None

    @property
    def key(self) -> str:
        return f"{self.method}@{self.problem}"

    @property
    def pool(self) -> bool:
        return self.problem not in ("bird2", "additive3d")

    def make_problem(self) -> Problem:
        return GoldenPool() if self.problem == "golden-pool" else get_problem(self.problem)

    def make_options(self) -> dict[str, Any]:
        options = dict(self.options)
        if options.get("candidates") in ("additive3d", "hills"):
            options["candidates"] = task_candidates(options["candidates"], noise_std=0.05 if self.problem == "hills" else 0.01)
        if options.get("priors") == "box":
            options["priors"] = _box_priors()
        return options


def _cases() -> list[Case]:
    cases: list[Case] = []
    both = ("bird2", "golden-pool")
    for method in ("lb-gp-ucb", "a-gp-ucb", "lnb-gp-ucb", "hb-gp-ucb", "he-gp-ucb", "mle-candidates",
                   "expected-ucb", "mle-gp-ucb", "ec-gp-ucb", "regret-balancing", "lb-gp-ucb-auto", "he-gp-ucb-auto"):
        cases += [Case(method, p, 1, dict(FAST)) for p in both]
    cases += [Case("phased-gp-us", p, 1, {}) for p in both]
    cases += [Case("nuts-gp-ucb", p, 1, {**FAST, "num_samples": 12, "warmup_steps": 12}) for p in both]
    for method in ("random",):
        cases += [Case(method, p, 2, {}) for p in both]
    for method in ("mle-gp-ts", "ts-rsr", "gp-ts", "bucb", "ucbpe", "sp", "kb-ei", "dpp-ts", "qlognei"):
        cases += [Case(method, p, 2, dict(FAST)) for p in both]
    for method in ("pe-gp-ts", "pe-gp-ucb", "hp-gp-ts", "map-gp-ts"):
        cases.append(Case(method, "gp-kernel", 1, {}))
        cases.append(Case(method, "bird2", 1, {**FAST, "priors": "box"}, n_init=4))
    for method in ("oracle-gp-ts", "oracle-gp-ucb"):
        cases.append(Case(method, "gp-kernel", 1, {}))
    for method in ("he-stableopt", "stableopt-mle"):
        cases.append(Case(method, "robust-peak", 1, {"noise_std": 0.01}))
    cases.append(Case("he-gp-ucb", "additive3d", 1, {**FAST, "candidates": "additive3d"}))
    cases.append(Case("he-gp-ucb", "hills", 1, {"candidates": "hills", "noise_std": 0.05}))
    return cases


CASES = _cases()


def trace(case: Case, seed: int) -> list[dict[str, Any]]:
    r"""The first :data:`ROUNDS` rounds of ``case`` at ``seed``: per round the points (pool
    indices on a pool), ``selected``, ``n_candidates`` and the diagnostics of
    :data:`DIAGNOSTIC_KEYS`."""
    problem = case.make_problem()
    policy = make_policy(case.method, problem.domain, seed=seed, **case.make_options())
    history = run(problem, policy, iterations=ROUNDS, seed=seed, batch_size=case.q, n_init=case.n_init)
    history = history[history["iteration"] > 0]
    out: list[dict[str, Any]] = []
    for _, rows in history.groupby("iteration", sort=True):
        X = torch.tensor([[float(v) for v in s.split(";")] for s in rows["x"]], dtype=torch.float64)
        record: dict[str, Any] = {"selected": list(rows["selected"]), "n_candidates": int(rows["n_candidates"].iloc[0])}
        if case.pool:
            instance = problem.instance(seed)
            record["index"] = instance.domain.index_of(X, atol=1e-8).tolist()
        else:
            record["x"] = X.tolist()
        text = rows["diagnostics"].iloc[0]
        if text:
            import json

            diag = json.loads(text)
            record["diagnostics"] = {k: diag[k] for k in DIAGNOSTIC_KEYS if k in diag}
        out.append(record)
    return out


def close(a: Any, b: Any, atol: float) -> bool:
    r"""Structural equality with a tolerance on floats (JSON values)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=0, abs_tol=atol)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y, atol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], atol) for k in a)
    return a == b
