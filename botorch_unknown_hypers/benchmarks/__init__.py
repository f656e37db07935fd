r"""Benchmark harnesses (the top layer, beside the CLI): grids of runs on the executors.

- :mod:`botorch_unknown_hypers.benchmarks.bbob`: the BBOB suite, the practitioners' peers,
  one JSON per run (``benchmarks/bbob.py`` is its command line; ``docs/bbob.md``).

Submodules import their optional extras (``ioh``, ``optuna``) only when a run needs them;
this package imports nothing.
"""
