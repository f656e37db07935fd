"""Tests of the TS-RSR paper's sampling-based batch baselines (policies/batch/batch_sampling.py):
batch Thompson sampling (gp-ts), the stochastic policy (sp) and DPP-TS (dpp-ts)."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.models.deterministic import GenericDeterministicModel

from botorch_unknown_hypers.acquisition.pending import observation_noise_variance
from botorch_unknown_hypers.acquisition.thompson import PoolJointSampler
from botorch_unknown_hypers.domains import FiniteDomain
from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp
from botorch_unknown_hypers.policies.batch.batch_sampling import (
    BatchThompsonSampling,
    DPPThompsonSampling,
    StochasticPolicy,
    boltzmann_probabilities,
    dpp_acceptance_probability,
    dpp_log_det,
)
from tests.policies.batch_helpers import (
    DT,
    SPEC,
    check_batch_in_domain_deterministic_and_resumable,
    make,
    pool_index,
)

# --------------------------------------------------------------------------- #
# all sampling policies: domain, diversity, determinism, JSON state round trip
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("kind", ["box", "pool"])
@pytest.mark.parametrize("name", ["dpp-ts", "gp-ts", "sp"])
def test_batch_in_domain_deterministic_and_resumable(name, kind, box, box_data, pool, pool_data):
    domain, (X, Y) = (box, box_data) if kind == "box" else (pool, pool_data)
    check_batch_in_domain_deterministic_and_resumable(name, kind, domain, X, Y)


@pytest.mark.parametrize(
    "name, options",
    [
        ("sp", {"num_points": -1}),
        ("sp", {"n_init": -2}),
        ("dpp-ts", {"mcmc_steps": -1}),
        ("dpp-ts", {"dpp_lambda": 0.0}),
    ],
)
def test_bad_options_name_the_argument(name, options, box):
    with pytest.raises(ValueError, match=next(iter(options))):
        make(name, box, **options)


# --------------------------------------------------------------------------- #
# GP-TS
# --------------------------------------------------------------------------- #


def test_gp_ts_on_a_pool_plays_the_argmax_of_exact_joint_samples_from_its_generator(pool, pool_data):
    X, Y = pool_data
    policy = BatchThompsonSampling(pool, seed=4, surrogate="paper", surrogate_spec=SPEC)
    replay = torch.Generator().manual_seed(0)
    replay.set_state(policy.generator.get_state())
    batch = policy.suggest(X, Y, q=5)
    # the same five joint draws over the pool, replayed with the policy's random numbers
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec.from_dict(SPEC))
    draws = PoolJointSampler(model, pool.points).draw(5, replay)  # N x 5
    maxima, idx = draws.max(dim=0)
    assert pool_index(pool, batch) == idx.tolist()
    assert policy.last_info["sample_max"] == pytest.approx(maxima.tolist(), rel=1e-12)
    assert len(set(idx.tolist())) >= 2  # independent samples: not one point five times
    assert policy.state.n == 1 and policy.last_info["n"] == 0


# --------------------------------------------------------------------------- #
# SP
# --------------------------------------------------------------------------- #


def test_sp_frequencies_match_boltzmann_probabilities():
    means = torch.tensor([0.0, 0.4, 0.8, 1.2, 1.6, 2.0], dtype=DT)
    pool = FiniteDomain(torch.stack([means, torch.zeros_like(means)], dim=-1))
    policy = StochasticPolicy(pool, seed=5, surrogate="paper", surrogate_spec=SPEC, n_init=10)
    # A model whose posterior mean is the first coordinate: the constructed mean.
    policy.build_model = lambda X, Y: GenericDeterministicModel(lambda Z: Z[..., :1])
    draws = 6000
    batch = policy.suggest(pool.points[:2], torch.zeros(2, 1, dtype=DT), q=draws)
    beta = 3.0 * math.log(0 + 10 + 1) / 2.0  # C_range = max mu - min mu = 2
    expected = torch.softmax(beta * means, dim=0)
    assert policy.last_info["beta"] == pytest.approx(beta, rel=1e-12)
    counts = torch.bincount(torch.tensor(pool_index(pool, batch)), minlength=6).to(DT)
    chi2 = float(((counts - draws * expected) ** 2 / (draws * expected)).sum())
    assert chi2 < 25.0  # 5 degrees of freedom: P(chi2 > 25) ~ 1e-4
    probs, beta_fn = boltzmann_probabilities(means, 0, 10)
    assert torch.allclose(probs, expected) and beta_fn == pytest.approx(beta)


def test_sp_uniform_when_mean_is_flat_and_n_init_recorded():
    points = torch.linspace(0, 1, 5, dtype=DT).unsqueeze(-1)
    probs, beta = boltzmann_probabilities(torch.full((5,), 3.0, dtype=DT) + 1e-3 * points.squeeze(-1), 0, 15)
    assert beta == 0.0 and torch.allclose(probs, torch.full((5,), 0.2, dtype=DT))
    policy = StochasticPolicy(FiniteDomain(points), seed=0, surrogate="paper", surrogate_spec=SPEC)
    policy.suggest(points[:3], torch.tensor([[0.0], [1.0], [0.5]], dtype=DT), q=2)
    assert policy.state.n_init == 3 and policy.state_dict()["state"]["n_init"] == 3


def test_boltzmann_probabilities_hand_computed():
    # mean [0, 1, 3], n = 2, n_init = 5: C_range = 3, beta = 3 log(8) / 3 = log 8, p ~ 8^mean
    mean = torch.tensor([0.0, 1.0, 3.0], dtype=DT)
    probs, beta = boltzmann_probabilities(mean, 2, 5)
    assert beta == pytest.approx(math.log(8.0), rel=1e-12)
    torch.testing.assert_close(probs, torch.tensor([1.0, 8.0, 512.0], dtype=DT) / 521.0, rtol=1e-12, atol=0)
    # a shift of the mean changes nothing; C_range is the spread below the maximum
    shifted, beta_shifted = boltzmann_probabilities(mean - 7.0, 2, 5)
    torch.testing.assert_close(shifted, probs)
    assert beta_shifted == pytest.approx(beta)
    # the uniform rule applies at a range of at most 1e-2, not above
    at, beta_at = boltzmann_probabilities(torch.tensor([0.0, 0.01], dtype=DT), 0, 0)
    assert beta_at == 0.0 and at.tolist() == [0.5, 0.5]
    above, beta_above = boltzmann_probabilities(torch.tensor([0.0, 0.011], dtype=DT), 0, 1)
    assert beta_above == pytest.approx(3.0 * math.log(2.0) / 0.011) and float(above[1]) > 0.5


# --------------------------------------------------------------------------- #
# DPP-TS
# --------------------------------------------------------------------------- #


def hand_det(model, batch):
    with torch.no_grad():
        K = model.posterior(batch).mvn.covariance_matrix
    noise = observation_noise_variance(model, batch)
    return torch.det(torch.eye(batch.shape[0], dtype=DT) + K / noise.unsqueeze(-1).sqrt() / noise.sqrt())


def test_dpp_acceptance_is_determinant_ratio(box_data):
    X, Y = box_data
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec.from_dict(SPEC))
    current = torch.tensor([[0.5, 0.5], [-1.0, 1.2], [1.5, -1.5]], dtype=DT)
    crowded = current.clone()
    crowded[2] = torch.tensor([0.55, 0.5], dtype=DT)  # next to slot 0: less diverse
    spread = current.clone()
    spread[0] = torch.tensor([-1.9, -1.9], dtype=DT)
    ld_cur = float(dpp_log_det(model, current))
    assert ld_cur == pytest.approx(math.log(float(hand_det(model, current))), rel=1e-10)
    for proposed in (crowded, spread):
        ratio = float(hand_det(model, proposed) / hand_det(model, current))
        alpha = dpp_acceptance_probability(ld_cur, float(dpp_log_det(model, proposed)))
        assert alpha == pytest.approx(min(1.0, ratio), rel=1e-8)
    assert dpp_acceptance_probability(ld_cur, float(dpp_log_det(model, crowded))) < 1.0


def test_dpp_ts_chain_replays(pool, pool_data):
    X, Y = pool_data
    policy = DPPThompsonSampling(pool, seed=11, surrogate="paper", surrogate_spec=SPEC, mcmc_steps=8)
    batch = policy.suggest(X, Y, q=4)
    info = policy.last_info
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec.from_dict(SPEC))
    state = torch.tensor(info["initial_batch"], dtype=DT)
    proposals = torch.tensor(info["proposals"], dtype=DT)
    for step, proposal in zip(info["steps"], proposals):
        proposed = state.clone()
        proposed[step["slot"]] = proposal
        ratio = float(hand_det(model, proposed) / hand_det(model, state))
        assert step["acceptance_probability"] == pytest.approx(min(1.0, ratio), rel=1e-6)
        if step["accepted"]:
            state = proposed
    assert torch.equal(state, batch)
    assert info["accepted"] == sum(s["accepted"] for s in info["steps"])
    assert 0 < info["accepted"] <= 8


def test_dpp_log_det_with_lambda_is_the_brute_force_log_determinant(box_data):
    X, Y = box_data
    model = fixed_hyperparameter_gp(X, Y, SurrogateSpec.from_dict(SPEC))
    batch = torch.tensor([[0.1, 0.2], [-1.5, 1.0], [1.2, -0.7], [0.15, 0.25]], dtype=DT)
    with torch.no_grad():
        K = model.posterior(batch).mvn.covariance_matrix
    noise = observation_noise_variance(model, batch)
    for lam in (0.5, 1.0, 2.5):
        matrix = torch.eye(4, dtype=DT) + lam * K / torch.outer(noise.sqrt(), noise.sqrt())
        assert float(dpp_log_det(model, batch, lam)) == pytest.approx(math.log(float(torch.det(matrix))), rel=1e-10)
    # a larger lambda weighs the (positive definite) covariance more
    assert float(dpp_log_det(model, batch, 2.5)) > float(dpp_log_det(model, batch, 0.5)) > 0


def test_dpp_acceptance_probability_hand_values():
    assert dpp_acceptance_probability(0.0, -math.log(2.0)) == pytest.approx(0.5, rel=1e-14)
    assert dpp_acceptance_probability(1.3, 1.3 - math.log(4.0)) == pytest.approx(0.25, rel=1e-14)
    assert dpp_acceptance_probability(0.0, 3.0) == 1.0  # a larger determinant is always accepted
    assert dpp_acceptance_probability(2.0, 2.0) == 1.0
