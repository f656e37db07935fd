r"""The results.csv columns the ``buh`` contract promises (DESIGN.md, Sec. 4)."""

CONTRACT_COLUMNS = [
    "problem",
    "method",
    "seed",
    "iteration",
    "batch_index",
    "y",
    "f",
    "simple_regret",
    "cumulative_regret",
    "selected",
    "n_candidates",
    "wall_time_s",
]
