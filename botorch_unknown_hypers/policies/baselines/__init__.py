r"""The standard baselines: random search, GP-UCB with MLE hyperparameters, GP Thompson sampling."""
