r"""Golden traces: the first rounds of every registered method, recorded before a refactor.

A *case* is (method, problem, options, batch size). Its trace (:mod:`tests.golden.replay`)
keeps, for :data:`ROUNDS` rounds of the public ``run`` loop, what a refactor must not
change: the suggested points, the ``selected`` hyperparameter labels, ``n_candidates`` and
the rule's selected candidate or surviving set from its diagnostics, with the data and
policy state each round starts from. ``record.py`` writes the traces to ``traces.json``;
``test_golden_traces.py`` replays them round by round (pool points and decisions exactly,
box points to the resolution of L-BFGS-B's stopping rule).

Problems: ``bird2`` (the TS-RSR paper's 2-d box, with its fixed surrogate), a 60-point
2-d pool defined here, ``gp-kernel`` (prior selection on 500 arms, priors and the true
prior told by the problem), ``robust-peak`` (the robust pool), ``additive3d`` and ``hills``
(elimination over additive decompositions and prior means).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from botorch_unknown_hypers import get_problem
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.problems.problem import Problem
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
                   "expected-ucb", "mle-gp-ucb", "ec-gp-ucb", "regret-balancing", "lb-gp-ucb-auto", "he-gp-ucb-auto", "auto"):
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
