import json

import pytest
import torch

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.loop import AskTellOptimizer, initial_design
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.policies import make_policy
from botorch_unknown_hypers.policies.balancing import nuts as nuts_module
from botorch_unknown_hypers.policies.balancing.nuts import NUTSGPUCB, sample_lengthscales
from botorch_unknown_hypers.problems import get_problem
from botorch_unknown_hypers.domains import FiniteDomain

SMALL = {"num_samples": 30, "warmup_steps": 30, "num_restarts": 2, "raw_samples": 32}


def test_samples_follow_prior_without_information_and_data_with_it():
    torch.manual_seed(0)
    # one point carries almost no information: the posterior is the Gamma(3, 6) prior (mean 0.5)
    X = torch.tensor([[0.5]], dtype=torch.float64)
    prior_like = sample_lengthscales(X, torch.zeros(1, dtype=torch.float64), num_samples=300, warmup_steps=100)
    assert prior_like.shape == (300,)
    assert 0.38 < float(prior_like.mean()) < 0.62
    # a rapidly varying function on 40 points: the posterior moves to short length scales
    X = torch.linspace(0, 1, 40, dtype=torch.float64).unsqueeze(-1)
    y = torch.sin(25 * X[:, 0])
    y = (y - y.mean()) / y.std()
    post = sample_lengthscales(X, y, num_samples=100, warmup_steps=100)
    assert float(post.mean()) < 0.15


def test_expected_ucb_is_mean_of_per_sample_ucbs():
    # on a pool, the suggestion is the argmax of (1/S) sum_s mu_s + beta sigma_s (brute force)
    gen = torch.Generator().manual_seed(0)
    points = torch.rand(60, 2, generator=gen, dtype=torch.float64)
    domain = FiniteDomain(points)
    f = lambda X: torch.sin(6 * X[:, 0]) + X[:, 1]  # noqa: E731
    X0 = points[:8]
    Y0 = f(X0).unsqueeze(-1)
    policy = NUTSGPUCB(domain, seed=0, beta=2.0, **SMALL)
    X = policy.suggest(X0, Y0)
    theta = torch.tensor(policy.state.samples, dtype=torch.float64)
    values = torch.zeros(60, dtype=torch.float64)
    for s in range(theta.numel()):
        single = KernelCandidates.from_lengthscales(theta[s : s + 1], noise=0.05)
        from botorch.models.transforms import Normalize, Standardize

        model = CandidateGP(
            X0, Y0, single, input_transform=Normalize(2, bounds=domain.bounds), outcome_transform=Standardize(m=1)
        ).select(0)
        post = model.posterior(points)
        values += post.mean.squeeze(-1) + 2.0 * post.variance.squeeze(-1).sqrt()
    values /= theta.numel()
    assert torch.equal(X, points[int(values.argmax())].unsqueeze(0))


def test_deterministic_and_state_round_trip():
    problem = get_problem("berkenkamp")
    runs = []
    for _ in range(2):
        policy = make_policy("nuts-gp-ucb", problem.domain, seed=5, **SMALL)
        opt = AskTellOptimizer(policy)
        X0 = initial_design(problem.domain, 3, seed=5)
        opt.tell(X0, problem.evaluate(X0)[0])
        torch.manual_seed(len(runs))  # the caller's global RNG must not matter
        X = opt.ask()
        opt.tell(X, problem.evaluate(X)[0])
        runs.append((X, policy.state.samples, opt))
    assert torch.equal(runs[0][0], runs[1][0]) and runs[0][1] == runs[1][1]
    opt = runs[0][2]
    state = json.loads(json.dumps(opt.state_dict()))
    clone = AskTellOptimizer(make_policy("nuts-gp-ucb", problem.domain, seed=1, **SMALL))
    clone.load_state_dict(state)
    assert torch.equal(clone.ask(), opt.ask())
    with pytest.raises(ValueError, match="samples"):
        clone.policy.load_state_dict({**state["policy"], "state": {**state["policy"]["state"], "samples": [-1.0]}})


def test_failed_sampling_reuses_previous_samples(monkeypatch):
    problem = get_problem("berkenkamp")
    policy = NUTSGPUCB(problem.domain, seed=0, **SMALL)
    X0 = initial_design(problem.domain, 3, seed=0)
    Y0 = problem.evaluate(X0)[0]
    policy.suggest(X0, Y0)
    previous = list(policy.state.samples)

    def boom(*args, **kwargs):
        raise RuntimeError("cholesky failed")

    monkeypatch.setattr(nuts_module, "sample_lengthscales", boom)
    with pytest.warns(RuntimeWarning, match="reusing the previous samples"):
        policy.suggest(X0, Y0)
    assert policy.state.samples == previous and policy.state.failures == 1
    fresh = NUTSGPUCB(problem.domain, seed=0, **SMALL)
    with pytest.raises(RuntimeError, match="cholesky"):
        fresh.suggest(X0, Y0)


def test_validation():
    domain = get_problem("berkenkamp").domain
    with pytest.raises(ValueError, match="prior"):
        NUTSGPUCB(domain, prior=(3.0, -1.0))
    with pytest.raises(ValueError, match="beta"):
        NUTSGPUCB(domain, beta=float("nan"))
    with pytest.raises(ValueError, match="num_samples"):
        NUTSGPUCB(domain, num_samples=0)
    with pytest.raises(ValueError, match="X must be"):
        sample_lengthscales(torch.zeros(3, 1), torch.zeros(2))
