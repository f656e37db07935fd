r"""Batched candidate models.

:class:`TabularPriorGP` (the model of the prior-elimination rules) is imported on first access.
"""

from botorch_unknown_hypers.lazy import lazy_attributes
from botorch_unknown_hypers.models.cached_predictive import CachedExactPredictive
from botorch_unknown_hypers.models.candidate_gp import CANDIDATE_DIM, CandidateGP, CandidateModel
from botorch_unknown_hypers.models.grouped import GroupedCandidateModel
from botorch_unknown_hypers.models.tabular_priors import TabularPriors

_LAZY = {"TabularPriorGP": "botorch_unknown_hypers.models.tabular"}
r"""Public names that live in modules the package does not import: name to its module."""

__all__ = [
    "CANDIDATE_DIM",
    "CachedExactPredictive",
    "CandidateGP", "CandidateModel", "GroupedCandidateModel", "TabularPriorGP",
    "TabularPriors",
]

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
