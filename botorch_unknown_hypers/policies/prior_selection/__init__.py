r"""Prior selection in GP bandits (Sandberg & Haghir Chehreghani): PE-GP-TS, PE-GP-UCB, HP-GP-TS, MAP-GP-TS and the oracles."""
