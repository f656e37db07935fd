r"""Batch Bayesian optimisation (Ren & Li): TS-RSR, the paper's batch baselines and qLogNEI, on one GP surrogate."""
