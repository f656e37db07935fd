r"""Benchmark black boxes: domains, objectives, optima and a registry of names."""

from botorch_unknown_hypers.problems.problem import Problem
from botorch_unknown_hypers.domains import BoxDomain, Domain, FiniteDomain
from botorch_unknown_hypers.problems.materials import (
    MaterialsProblem,
    load_materials_problem,
    resolve_data_dir,
)
from botorch_unknown_hypers.problems.problem_registry import (
    PROBLEMS,
    get_problem,
    list_problems,
    register_problem,
)
from botorch_unknown_hypers.problems.synthetic import BoTorchTestProblem, Berkenkamp

__all__ = [
    "PROBLEMS",
    "BoTorchTestProblem",
    "Berkenkamp",
    "BoxDomain",
    "Domain",
    "FiniteDomain",
    "MaterialsProblem",
    "Problem",
    "get_problem",
    "list_problems",
    "load_materials_problem",
    "register_problem",
    "resolve_data_dir",
]
