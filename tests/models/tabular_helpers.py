r"""Shared set-up of the tabular-prior tests (test_tabular, test_tabular_priors): five priors on
twelve arms with four kernels, a rank-one linear prior and non-zero means."""

from __future__ import annotations

import torch

from botorch_unknown_hypers.models.tabular_priors import TabularPriors
from botorch_unknown_hypers.problems.prior_tasks import paper_linear, paper_matern, paper_periodic, paper_rbf, paper_rq

NOISE = 0.25**2


def small_priors(dtype=torch.float64, device="cpu", num_arms=12) -> TabularPriors:
    r"""Five priors on ``num_arms`` arms of [0, 6]: four kernels and a rank-one linear one, non-zero means."""
    arms = torch.linspace(0, 6, num_arms, dtype=dtype, device=device).unsqueeze(-1)
    kernels = [
        paper_rbf(1.0),
        paper_matern(1.5, 2.0),
        paper_periodic(2.5, 1.0),
        paper_linear(0.2**2),
        paper_rq(0.5, 1.0),
    ]
    means = [
        lambda X: 0.3 * torch.sin(X[:, 0]),
        lambda X: torch.zeros_like(X[:, 0]),
        lambda X: 0.1 * X[:, 0] - 0.2,
        lambda X: torch.zeros_like(X[:, 0]),
        lambda X: torch.full_like(X[:, 0], 0.5),
    ]
    return TabularPriors.from_kernels(
        arms, kernels, means, noise=NOISE, names=["se", "m32", "per", "lin", "rq"]
    )
