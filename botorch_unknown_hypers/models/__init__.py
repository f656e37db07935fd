r"""Batched candidate models."""

from botorch_unknown_hypers.models.candidate_gp import CANDIDATE_DIM, CandidateGP, CandidateModel
from botorch_unknown_hypers.models.grouped import GroupedCandidateModel

__all__ = ["CANDIDATE_DIM", "CandidateGP", "CandidateModel", "GroupedCandidateModel"]
