r"""botorch-unknown-hypers: Bayesian optimisation with unknown GP hyperparameters, for BoTorch.

The building block is :class:`~botorch_unknown_hypers.models.CandidateGP`, one batched GPyTorch
model over K fixed hyperparameter candidates; the rules of the five papers are policies over it.

Importing the package loads the candidate sets alone. Every other public name is imported on
first use (PEP 562 module ``__getattr__``): the models, the loop and the method registry when
one of their names is first asked for (they load BoTorch's acquisition layer, and with it
``scipy.spatial``), :func:`get_problem` with the problems' pandas, Pyro and SciPy dependencies,
each rule's module when the rule is first built, and BoTorch's optimisers (with
``scipy.optimize``) when a rule first maximises on a box or a pool.
"""

from __future__ import annotations

from botorch_unknown_hypers.candidates import KernelCandidates, geometric_ladder
from botorch_unknown_hypers.lazy import lazy_attributes

__version__ = "0.1.0"

_LAZY = {
    "AskTellOptimizer": "botorch_unknown_hypers.loop",
    "CandidateGP": "botorch_unknown_hypers.models",
    "GroupedCandidateModel": "botorch_unknown_hypers.models",
    "get_problem": "botorch_unknown_hypers.problems",
    "initial_design": "botorch_unknown_hypers.loop",
    "make_policy": "botorch_unknown_hypers.policies",
    "run": "botorch_unknown_hypers.loop",
}
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
