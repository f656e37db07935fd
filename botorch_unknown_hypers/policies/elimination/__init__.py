r"""Hyperparameter elimination (Ziomek, Adachi, Osborne, "Beyond Lengthscales"): HE-GP-UCB, HE-StableOpt and the candidate-set baselines."""
