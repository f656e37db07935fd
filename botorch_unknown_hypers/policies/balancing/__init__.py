r"""Hyperparameter balancing (Ziomek, Adachi, Osborne, NeurIPS 2024): LB-, LNB-, HB- and A-GP-UCB, and the NUTS baseline."""
