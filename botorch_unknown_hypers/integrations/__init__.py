r"""Integrations with other optimisation frameworks (optional extras).

- :mod:`botorch_unknown_hypers.integrations.ax`: run any registered rule (``lb-gp-ucb``,
  ``he-gp-ucb``, ...) as a generation node of an Ax ``GenerationStrategy``
  (``pip install "botorch-unknown-hypers[ax]"``).

Submodules import their framework on import; this package imports nothing.
"""
