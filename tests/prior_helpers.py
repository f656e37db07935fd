r"""Shared set-up of the prior-selection tests (the rules in tests/policies, the (point, prior)
selections in tests/acquisition/test_prior_acquisition.py, the prior models in tests/models):
small priors, data and independent references.

Expected values are computed here, independently of TabularPriorGP: posteriors with one
``torch.linalg.solve`` per prior and evidences with ``torch.distributions.MultivariateNormal``.
"""

from __future__ import annotations

import torch
from botorch.models.transforms import Normalize

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.tabular_priors import TabularPriors
from botorch_unknown_hypers.problems.prior_tasks import paper_matern, paper_periodic, paper_rbf

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
TOLERANCE = {torch.float64: 1e-8, torch.float32: 1e-3}
NOISE = 0.25**2
BOX_OPTIONS = {"num_restarts": 4, "raw_samples": 64}  # small, fast multi-start (1-d box)


def small_priors(dtype=torch.float64, device="cpu", num_arms=15) -> TabularPriors:
    r"""Three priors on ``num_arms`` arms of [0, 20], with different kernels and means."""
    arms = torch.linspace(0, 20, num_arms, dtype=dtype, device=device).unsqueeze(-1)
    return TabularPriors.from_kernels(
        arms,
        [paper_rbf(4.0), paper_matern(1.5, 2.0), paper_periodic(5.0, 1.0)],
        [
            lambda X: torch.zeros_like(X[:, 0]),
            lambda X: 0.5 * torch.sin(X[:, 0]),
            lambda X: torch.full_like(X[:, 0], 0.3),
        ],
        noise=NOISE,
        names=["se4", "m32", "per"],
    )


def textbook_posterior(priors: TabularPriors, indices: list[int], y: torch.Tensor):
    r"""Per prior, float64: ``m + C[:, S] (C[S, S] + s^2 I)^{-1} (y - m[S])`` and the latent variances."""
    means, variances = [], []
    for k in range(len(priors)):
        m, C = priors.means[k].double().cpu(), priors.covariances[k].double().cpu()
        gram = C[indices][:, indices] + priors.noise * torch.eye(len(indices), dtype=torch.float64)
        cross = C[:, indices]
        means.append(m + cross @ torch.linalg.solve(gram, y.double().cpu() - m[indices]))
        variances.append(C.diagonal() - (cross * torch.linalg.solve(gram, cross.T).T).sum(-1))
    return torch.stack(means), torch.stack(variances)


def textbook_log_evidence(priors: TabularPriors, indices: list[int], y: torch.Tensor) -> torch.Tensor:
    values = []
    for k in range(len(priors)):
        m = priors.means[k].double().cpu()[indices]
        C = priors.covariances[k].double().cpu()[indices][:, indices] + priors.noise * torch.eye(len(indices), dtype=torch.float64)
        values.append(torch.distributions.MultivariateNormal(m, C).log_prob(y.double().cpu()))
    return torch.stack(values)


def data(priors: TabularPriors, indices: list[int], seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    y = torch.randn(len(indices), generator=gen, dtype=torch.float64)
    X = priors.arms[indices]
    return X, y.to(X).unsqueeze(-1)


def box_candidates(dtype=torch.float64, device="cpu") -> KernelCandidates:
    r"""Three Matern-5/2 priors (length scales in unit-cube units), noise 0.05^2."""
    ls = torch.tensor([0.05, 0.15, 0.4], dtype=dtype, device=device)
    return KernelCandidates.from_lengthscales(ls, kernel="matern52", noise=0.05**2)


def box_model(train_X, train_Y, cands, bounds, indices=None) -> CandidateGP:
    r"""The reference CandidateGP of the priors ``indices`` over all data (as the rules must build)."""
    cands = cands if indices is None else cands.subset(indices)
    return CandidateGP(train_X, train_Y, cands, input_transform=Normalize(bounds.shape[-1], bounds=bounds))
