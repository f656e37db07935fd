r"""Batched candidate models."""

from botorch_unknown_hypers.models.cached_predictive import CachedExactPredictive
from botorch_unknown_hypers.models.candidate_gp import CANDIDATE_DIM, CandidateGP, CandidateModel
from botorch_unknown_hypers.models.grouped import GroupedCandidateModel
from botorch_unknown_hypers.models.tabular import TabularPriorGP
from botorch_unknown_hypers.models.tabular_priors import TabularPriors

__all__ = [
    "CANDIDATE_DIM",
    "CachedExactPredictive",
    "CandidateGP", "CandidateModel", "GroupedCandidateModel", "TabularPriorGP",
    "TabularPriors",
]
