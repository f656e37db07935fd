r"""Acquisition functions over K-wide candidate models.

:func:`sample_candidate_maxima` is imported on first access (it loads BoTorch's pathwise
sampling, which only the Thompson-sampling rules use).
"""

from botorch_unknown_hypers.acquisition.optimize import optimize_ucb_per_candidate
from botorch_unknown_hypers.acquisition.ucb import CandidateUCB
from botorch_unknown_hypers.lazy import lazy_attributes

_LAZY = {"sample_candidate_maxima": "botorch_unknown_hypers.acquisition.prior_sampling"}
r"""Public names that live in modules the package does not import: name to its module."""

__all__ = ["CandidateUCB", "optimize_ucb_per_candidate", "sample_candidate_maxima"]

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
