r"""Integrations with other optimisation frameworks (optional extras).

- :mod:`botorch_unknown_hypers.integrations.ax`: run any registered rule (``lb-gp-ucb``,
  ``he-gp-ucb``, ...) as a generation node of an Ax ``GenerationStrategy``
  (``pip install "botorch-unknown-hypers[ax]"``), with up to ``max_in_flight`` trials awaiting
  their results at once.
- :mod:`botorch_unknown_hypers.integrations.optuna`: run any registered rule as an Optuna sampler,
  :class:`~botorch_unknown_hypers.integrations.optuna.PolicySampler`
  (``pip install "botorch-unknown-hypers[optuna]"``).
- Both map named parameters (floats, linear or log scale, integers, stepped floats, categoricals)
  to the columns of a :class:`~botorch_unknown_hypers.domains.MixedDomain` (its box when all are
  continuous floats); the mapping is the domain's own and needs no framework.

Submodules import their framework on import; this package imports nothing.
"""
