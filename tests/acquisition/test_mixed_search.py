from __future__ import annotations

import itertools

import pytest
import torch
from botorch.acquisition import PosteriorMean, qUpperConfidenceBound
from botorch.models import SingleTaskGP

from botorch_unknown_hypers.acquisition.mixed_search import CodedAcquisition
from botorch_unknown_hypers.acquisition.optimize import joint_ucb_argmax, maximize, maximize_slot
from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.domains import CategoricalParameter, FloatParameter, IntParameter, MixedDomain, is_mixed
from botorch_unknown_hypers.models.candidate_gp import CandidateGP

DOMAIN = MixedDomain((IntParameter("a", 0, 4), CategoricalParameter("c", ("x", "y", "z")), FloatParameter("s", 0.0, 1.0, step=0.25)))


def every_point(domain: MixedDomain) -> torch.Tensor:
    r"""All points of a fully discrete domain, by enumeration of its named values."""
    a_values, s_values = range(0, 5), [0.0, 0.25, 0.5, 0.75, 1.0]
    rows = [domain.to_row({"a": a, "c": c, "s": s}) for a, c, s in itertools.product(a_values, ("x", "y", "z"), s_values)]
    return torch.tensor(rows, dtype=torch.float64)


def objective(X: torch.Tensor) -> torch.Tensor:
    return -((X[:, 0] - 2.6) ** 2) - 3 * (X[:, 4] - 0.6) ** 2 + X[:, 1:4] @ torch.tensor([0.0, 0.4, -0.2], dtype=X.dtype)


def fitted_gp(seed: int) -> SingleTaskGP:
    X = DOMAIN.sample(12, seed)
    return SingleTaskGP(X, objective(X).unsqueeze(-1))


def test_coded_acquisition_evaluates_the_points_of_codes():
    model = fitted_gp(0)
    acqf = PosteriorMean(model)
    points = every_point(DOMAIN)
    coded = CodedAcquisition(acqf, DOMAIN)
    with torch.no_grad():
        assert torch.allclose(coded(DOMAIN.to_codes(points).unsqueeze(-2)), acqf(points.unsqueeze(-2)))
    assert is_mixed(DOMAIN) and not is_mixed(MixedDomain((FloatParameter("f", 0.0, 1.0),)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_maximize_finds_the_brute_force_maximiser(seed):
    model = fitted_gp(seed)
    acqf = PosteriorMean(model)
    points = every_point(DOMAIN)
    with torch.no_grad():
        values = acqf(points.unsqueeze(-2))
    X, value = maximize(acqf, DOMAIN, torch.Generator().manual_seed(seed), num_restarts=4, raw_samples=64)
    assert X.shape == (1, DOMAIN.dim) and bool(DOMAIN.contains(X).all())
    assert torch.equal(X[0], points[values.argmax()])
    assert float(value) == pytest.approx(float(values.max()), rel=1e-9)
    # seeded: the same generator gives the same point
    again, _ = maximize(acqf, DOMAIN, torch.Generator().manual_seed(seed), num_restarts=4, raw_samples=64)
    assert torch.equal(again, X)


def test_a_slot_avoids_excluded_points_and_a_batch_is_filled_sequentially():
    model = fitted_gp(3)
    acqf = PosteriorMean(model)
    points = every_point(DOMAIN)
    with torch.no_grad():
        order = acqf(points.unsqueeze(-2)).argsort(descending=True)
    x, restarts = maximize_slot(acqf, DOMAIN, torch.Generator().manual_seed(0), num_restarts=4, raw_samples=64, exclude=points[order[:1]])
    assert restarts is None and torch.equal(x[0], points[order[1]])  # the best point outside the excluded one
    ucb = qUpperConfidenceBound(model, beta=4.0)
    X, _ = maximize(ucb, DOMAIN, torch.Generator().manual_seed(0), q=3, num_restarts=4, raw_samples=64)
    assert X.shape == (3, DOMAIN.dim) and bool(DOMAIN.contains(X).all())
    assert ucb.X_pending is None  # the batch's pending points are taken back


def test_joint_ucb_argmax_matches_brute_force_over_points_and_candidates():
    X = DOMAIN.sample(10, 4)
    cands = KernelCandidates.from_lengthscales(torch.tensor([0.8, 0.3, 0.1], dtype=torch.float64), noise=1e-2)
    model = CandidateGP(X, objective(X).unsqueeze(-1), cands)
    beta = torch.tensor([2.0, 1.5, 1.0], dtype=torch.float64)
    x, k, mean, sigma, restarts = joint_ucb_argmax(model, beta, DOMAIN, torch.Generator().manual_seed(0), num_restarts=4, raw_samples=64)
    points = every_point(DOMAIN)
    with torch.no_grad():
        m, v = model.marginal_mean_variance(points.unsqueeze(0))  # K x N
    ucb = m + beta.unsqueeze(-1) * v.clamp_min(0).sqrt()
    best = int(ucb.max(dim=0).values.argmax())
    assert restarts is None and torch.equal(x[0], points[best]) and k == int(ucb[:, best].argmax())
    assert float(mean + beta[k] * sigma) == pytest.approx(float(ucb.max()), rel=1e-9)
