r"""botorch-unknown-hypers: Bayesian optimisation with unknown GP hyperparameters, for BoTorch.

The building block is :class:`~botorch_unknown_hypers.models.CandidateGP`, one batched GPyTorch
model over K fixed hyperparameter candidates; the rules of the five papers are policies over it.

Importing the package loads the library (candidates, models, the loop and the method registry)
but not the benchmark harness: :func:`get_problem` (and with it the problems' pandas, Pyro and
SciPy dependencies) is imported on first use (PEP 562 module ``__getattr__``), and each rule's
module when the rule is first built.
"""

from __future__ import annotations

import importlib
from typing import Any

from botorch_unknown_hypers.candidates import KernelCandidates, geometric_ladder
from botorch_unknown_hypers.loop import AskTellOptimizer, initial_design, run
from botorch_unknown_hypers.models import CandidateGP, GroupedCandidateModel
from botorch_unknown_hypers.policies import make_policy

__version__ = "0.1.0"

_LAZY = {"get_problem": "botorch_unknown_hypers.problems"}
r"""Public names that live in heavy modules: name to the module imported on first access."""

__all__ = [
    "AskTellOptimizer",
    "CandidateGP",
    "GroupedCandidateModel",
    "KernelCandidates",
    "geometric_ladder",
    "get_problem",
    "initial_design",
    "make_policy",
    "run",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later lookups skip __getattr__
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
