"""Tests of the closed-form widths and regret bounds of misspecified kernelised bandits
(botorch_unknown_hypers.misspecification), hand-computed from the paper's equations."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_unknown_hypers.misspecification import (
    balancing_eliminations,
    candidate_regret_bounds,
    confidence_width,
    enlarged_width,
    epsilon_grid,
    phased_elimination,
    theoretical_bound_constants,
)

# --------------------------------------------------------------------------- #
# widths (Eqs. 13, 14) and phased elimination (Eq. 20)
# --------------------------------------------------------------------------- #


def test_confidence_width_is_eq13_variance_form():
    # beta = sigma / sqrt(lam) * sqrt(2 ln(1/delta) + sum ln(1 + sigma^2 / lam)) + B
    assert confidence_width(1.5, 0.1, 0.25, 0.05, 2.0) == pytest.approx(0.1 / 0.5 * math.sqrt(2 * math.log(20) + 1.5) + 2.0)
    assert enlarged_width(1.0, 0.2, 9, 0.25) == pytest.approx(1.0 + 0.2 * 3 / 0.5)


def test_confidence_width_grows_with_information_and_ignores_a_negative_log_det():
    widths = [confidence_width(L, 0.1, 0.25, 0.05, 2.0) for L in (0.0, 1.0, 10.0)]
    assert widths == sorted(widths) and widths[0] < widths[-1]
    assert confidence_width(-3.0, 0.1, 0.25, 0.05, 2.0) == widths[0]  # L >= 0 by definition
    assert confidence_width(0.0, 0.0, 1.0, 0.05, 1.5) == 1.5  # no noise: just B
    assert enlarged_width(2.0, 0.0, 100, 1.0) == 2.0  # eps = 0: GP-UCB's width


def test_phased_elimination_rule_hand_computed():
    mean = torch.tensor([0.0, 1.0, 0.5, 0.9])
    std = torch.tensor([0.1, 0.1, 0.2, 0.05])
    # UCB = [0.1, 1.1, 0.7, 0.95]; LCB = [-0.1, 0.9, 0.3, 0.85]; max LCB = 0.9
    assert phased_elimination(mean, std.square(), 1.0).tolist() == [False, True, False, True]  # takes the variance


def test_phased_elimination_keeps_the_lower_bound_maximiser_and_all_at_beta_infinity():
    g = torch.Generator().manual_seed(0)
    mean = torch.randn(50, generator=g, dtype=torch.float64)
    variance = torch.rand(50, generator=g, dtype=torch.float64)
    for beta in (0.0, 0.5, 2.0):
        keep = phased_elimination(mean, variance, beta)
        lcb = mean - beta * variance.sqrt()
        ucb = mean + beta * variance.sqrt()
        assert bool(keep[int(lcb.argmax())])
        assert keep.tolist() == (ucb >= lcb.max()).tolist()
    assert phased_elimination(mean, variance, 0.0).sum() == 1  # beta = 0: only the argmax of the mean
    assert bool(phased_elimination(mean, variance, 1e6).all())


# --------------------------------------------------------------------------- #
# regret-bound balancing (Alg. 3, Eqs. 23, 24, 85)
# --------------------------------------------------------------------------- #


def test_epsilon_grid_and_clamped_number_of_bases():
    assert epsilon_grid(2.0, 256) == pytest.approx([2.0 ** (1 - i) / math.sqrt(2.0) for i in range(1, 5)])  # M = 4
    assert len(epsilon_grid(30.0, 256)) == 1  # gamma_T^2 > T: M clamped to 1
    assert len(epsilon_grid(30.0, 256, num_bases=3)) == 3


def test_candidate_bounds_eq85_hand_computed():
    # gamma_T = 4, B = 1: c1 (B sqrt(gamma) + gamma) = 0.1 * 6 = 0.6; c2 eps_hat sqrt(gamma) = eps_hat * 2
    eps_hat = torch.tensor([0.5, 0.25, 0.125], dtype=torch.float64)
    bounds = candidate_regret_bounds(torch.tensor([1, 1, 4]), eps_hat, 4.0, 1.0, 0.1, 1.0)
    assert bounds.tolist() == pytest.approx([1.0, 1.0, 0.6 * 2 + 0.25 * 4])
    assert candidate_regret_bounds(torch.tensor([0, 0, 0]), eps_hat, 4.0, 1.0, 0.1, 1.0).tolist() == [0, 0, 0]


def test_candidate_bounds_are_capped_at_r_n_and_non_decreasing():
    # gamma_T = 4, B = 1, c1 = 0.1, c2 = 1, eps_hat = 0.5: 0.6 sqrt(N) + N, capped at 1.05 N
    eps_hat = torch.full((5,), 0.5, dtype=torch.float64)
    counts = torch.tensor([0, 1, 4, 100, 10000])
    bounds = candidate_regret_bounds(counts, eps_hat, 4.0, 1.0, 0.1, 1.0, regret_cap=1.05)
    concave = 0.6 * counts.double().sqrt() + counts.double()
    torch.testing.assert_close(bounds, torch.minimum(concave, 1.05 * counts.double()))
    assert float(bounds[1]) == pytest.approx(1.05)  # the cap binds for few plays ...
    assert float(bounds[-1]) == pytest.approx(10060.0)  # ... the concave bound for many
    assert bool((bounds.diff() >= 0).all()) and bounds.dtype == torch.float64


def test_balancing_elimination_hand_computed():
    N = torch.tensor([10, 10, 10])
    J = torch.tensor([9.0, 9.0, 2.0], dtype=torch.float64)
    R = torch.ones(3, dtype=torch.float64)
    active = torch.tensor([True, True, True])
    conf = 0.1 * math.sqrt(10 * math.log(3 * math.log(10) / 0.05))  # 0.702
    # normalised: upper = (J + R + conf) / N = [1.07, 1.07, 0.37]; max lower = (9 - conf) / 10 = 0.83
    assert (2 + 1 + conf) / 10 < (9 - conf) / 10 < (9 + 1 + conf) / 10
    assert balancing_eliminations(J, N, R, active, 0.1, 0.05).tolist() == [False, False, True]
    # an inactive or never-played base is not tested
    assert balancing_eliminations(J, torch.tensor([10, 10, 0]), R, active, 0.1, 0.05).tolist() == [False] * 3


def test_normalised_test_is_shift_invariant_and_printed_one_is_not():
    # both bases have mean reward 0.5; base 0 was played 4 times, base 1 16 times
    N = torch.tensor([4, 16])
    J = torch.tensor([2.0, 8.0], dtype=torch.float64)
    R = torch.ones(2, dtype=torch.float64)
    active = torch.tensor([True, True])
    for shift in (0.0, -3.0, 5.0):
        Js = J + shift * N
        assert balancing_eliminations(Js, N, R, active, 0.0, 0.05).tolist() == [False, False]
    assert balancing_eliminations(J, N, R, active, 0.0, 0.05, test="as-printed").tolist() == [True, False]
    assert balancing_eliminations(J - 1.0 * N, N, R, active, 0.0, 0.05, test="as-printed").tolist() == [False, True]


def test_balancing_eliminations_refuses_an_unknown_test_and_spares_inactive_bases():
    N = torch.tensor([10, 10])
    J = torch.tensor([9.0, 0.0], dtype=torch.float64)
    R = torch.zeros(2, dtype=torch.float64)
    with pytest.raises(ValueError, match="elimination_test must be one of"):
        balancing_eliminations(J, N, R, torch.tensor([True, True]), 0.0, 0.05, test="printed")
    assert balancing_eliminations(J, N, R, torch.tensor([True, True]), 0.0, 0.05).tolist() == [False, True]
    assert balancing_eliminations(J, N, R, torch.tensor([True, False]), 0.0, 0.05).tolist() == [False, False]
    assert balancing_eliminations(J, N, R, torch.tensor([False, False]), 0.0, 0.05).tolist() == [False, False]


def test_theoretical_constants_make_bounds_vacuous():
    # note gotcha 15: gamma = 20, lam = 1, delta = 0.01, B = 1, sigma = 1 -> sqrt(N) coefficient ~ 124
    c1, _ = theoretical_bound_constants(20.0, 1.0, 1.0, 1.0, 0.01, true_regret=False)
    assert c1 * (math.sqrt(20) + 20) == pytest.approx(124.2, rel=2e-3)


@pytest.mark.parametrize("true_regret", [True, False])
def test_theoretical_constants_reproduce_eq39(true_regret):
    gamma_T, B, lam, sigma, delta, eps = 6.0, 2.0, 0.5, 0.3, 0.05, 0.02
    c1, c2 = theoretical_bound_constants(gamma_T, B, lam, sigma, delta, true_regret=true_regret)
    root = math.sqrt((2 * lam + 1) * gamma_T)
    for N in (1, 7, 250):
        eq39 = 2 * (sigma / math.sqrt(lam) * math.sqrt(2 * math.log(1 / delta) + 2 * gamma_T) + B) * root * math.sqrt(N)
        eq39 += 2 * eps / math.sqrt(lam) * N * root + (2 * eps * N if true_regret else 0.0)
        bound = candidate_regret_bounds(torch.tensor([N]), torch.tensor([eps], dtype=torch.float64), gamma_T, B, c1, c2, 1e9)
        assert float(bound) == pytest.approx(eq39, rel=1e-12)
