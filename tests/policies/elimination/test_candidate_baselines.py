import pytest
import torch

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.policies.elimination.candidate_baselines import ExpectedUCB, MLECandidates
from botorch_unknown_hypers.domains import FiniteDomain


def _setup():
    points = torch.linspace(0, 1, 51, dtype=torch.float64).unsqueeze(-1)
    cands = KernelCandidates.from_lengthscales(torch.tensor([0.05, 0.2, 1.0], dtype=torch.float64), noise=1e-4)
    X0 = points[[0, 10, 25, 40, 50]]
    Y0 = torch.sin(12 * X0)  # a wiggly function: the short length scales explain it best
    return FiniteDomain(points), cands, points, X0, Y0


def test_mle_candidates_picks_the_max_marginal_likelihood_candidate():
    domain, cands, points, X0, Y0 = _setup()
    policy = MLECandidates(domain, candidates=cands, beta=1.0, noise_std=0.01)
    X = policy.suggest(X0, Y0)
    lml = torch.tensor(policy.diagnostics["log_marginal_likelihood"])
    k = int(lml.argmax())
    assert policy.selected == [cands.labels()[k]]
    model = policy._model(X0, Y0, [k])
    mean, var = model.marginal_mean_variance(points.unsqueeze(0).unsqueeze(0))  # 1 x 1 x N
    ucb = (mean + var.sqrt()).reshape(-1)
    assert torch.equal(X, points[int(ucb.argmax())].unsqueeze(0))


def test_expected_ucb_weights_are_the_normalised_likelihoods():
    domain, cands, points, X0, Y0 = _setup()
    policy = ExpectedUCB(domain, candidates=cands, beta=2.0, noise_std=0.01)
    X = policy.suggest(X0, Y0)
    model = policy._model(X0, Y0, [0, 1, 2])
    lml = model.log_marginal_likelihood()
    w = torch.exp(lml - lml.max())
    w = w / w.sum()
    assert policy.diagnostics["weights"] == pytest.approx(w.tolist(), rel=1e-9)
    assert sum(policy.diagnostics["weights"]) == pytest.approx(1.0)
    mean, var = model.marginal_mean_variance(points.unsqueeze(0).unsqueeze(0))  # 1 x K x N
    ucb = (w.unsqueeze(-1) * (mean[0] + 2.0 * var[0].sqrt())).sum(0)
    assert torch.equal(X, points[int(ucb.argmax())].unsqueeze(0))
