r"""botorch-unknown-hypers: Bayesian optimisation with unknown GP hyperparameters, for BoTorch.

The building block is :class:`~botorch_unknown_hypers.models.CandidateGP`, one batched GPyTorch
model over K fixed hyperparameter candidates; the rules of the five papers are policies over it.
"""

from botorch_unknown_hypers.candidates import KernelCandidates, geometric_ladder
from botorch_unknown_hypers.loop import AskTellOptimizer, initial_design, run
from botorch_unknown_hypers.models import CandidateGP, GroupedCandidateModel
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.problems import get_problem

__version__ = "0.1.0"

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
