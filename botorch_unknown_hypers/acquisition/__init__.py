r"""Acquisition functions over K-wide candidate models."""

from botorch_unknown_hypers.acquisition.optimize import optimize_ucb_per_candidate
from botorch_unknown_hypers.acquisition.prior_sampling import sample_candidate_maxima
from botorch_unknown_hypers.acquisition.ucb import CandidateUCB

__all__ = ["CandidateUCB", "optimize_ucb_per_candidate", "sample_candidate_maxima"]
