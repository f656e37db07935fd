r"""Misspecified kernelised bandits (Bogunovic & Krause, NeurIPS 2021): EC-GP-UCB, phased uncertainty sampling, regret balancing."""
