r"""Stateful BO rules (policies) and the method registry.

The baseline rules are re-exported from :mod:`~botorch_unknown_hypers.policies.baselines.standard_baselines`,
imported on first access (it loads BoTorch's model fitting), like every rule's module through
the registry.
"""

from botorch_unknown_hypers.lazy import lazy_attributes
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.registry import METHODS, list_methods, make_policy, register_method

_LAZY = {name: "botorch_unknown_hypers.policies.baselines.standard_baselines" for name in ("RandomPolicy", "MLEGPUCB", "GPThompsonSampling")}
r"""Public names that live in rule modules: name to the module imported on first access."""

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

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
