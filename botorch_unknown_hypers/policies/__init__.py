r"""Stateful BO rules (policies) and the method registry."""

from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.baselines import GPThompsonSampling, MLEGPUCB, RandomPolicy
from botorch_unknown_hypers.policies.registry import METHODS, list_methods, make_policy, register_method

__all__ = [
    "Policy",
    "RandomPolicy",
    "MLEGPUCB",
    "GPThompsonSampling",
    "METHODS",
    "list_methods",
    "make_policy",
    "register_method",
]
