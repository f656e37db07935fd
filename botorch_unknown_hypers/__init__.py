r"""botorch-unknown-hypers: Bayesian optimisation with unknown GP hyperparameters, for BoTorch.

The building block is :class:`~botorch_unknown_hypers.models.CandidateGP`, one batched GPyTorch
model over K fixed hyperparameter candidates; the rules of the five papers are policies over it.

Importing the package loads the library (candidates, models, the loop and the method registry)
but not the benchmark harness: :func:`get_problem` (and with it the problems' pandas, Pyro and
SciPy dependencies) is imported on first use (PEP 562 module ``__getattr__``), each rule's
module when the rule is first built, and BoTorch's optimisers (with ``scipy.optimize``) when a
rule first maximises on a box or a pool.
"""

from __future__ import annotations

from botorch_unknown_hypers.candidates import KernelCandidates, geometric_ladder
from botorch_unknown_hypers.lazy import lazy_attributes
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


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
