"""Tests for botorch_unknown_hypers.confidence (expected values computed by hand here)."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_unknown_hypers.confidence import (
    bayesian_beta_continuous,
    bayesian_beta_finite,
    box_num_arms,
    frequentist_beta,
    pe_beta,
    xi,
)
from botorch_unknown_hypers.policies.round.candidate_set import elimination_xi


# --------------------------------------------------------------------------- #
# xi
# --------------------------------------------------------------------------- #

# HE note, section 1.2: xi_t / R^2 at delta = 0.1 with delta_B = delta / 2.
HE_XI_TABLE = {
    5: {1: 10.206, 50: 25.854, 100: 28.626},
    4: {1: 9.759, 50: 25.408, 100: 28.180},
    11: {1: 11.783, 50: 27.431, 100: 30.203},
}


@pytest.mark.parametrize("num_candidates", sorted(HE_XI_TABLE))
@pytest.mark.parametrize("t", [1, 50, 100])
def test_xi_matches_he_table(num_candidates: int, t: int) -> None:
    delta = 0.1
    value = xi(t, num_candidates, R=1.0, delta=delta / 2)
    assert value.dtype == torch.float64
    assert float(value) == pytest.approx(HE_XI_TABLE[num_candidates][t], abs=1e-3)
    # independent form: 2 log(|U| pi^2 t^2 / (3 delta))
    expected = 2.0 * math.log(num_candidates * math.pi**2 * t**2 / (3.0 * delta))
    assert float(value) == pytest.approx(expected, rel=1e-12)


def test_xi_scales_with_r_squared_and_broadcasts() -> None:
    t = torch.tensor([1.0, 50.0, 100.0], dtype=torch.float64)
    values = xi(t, 5, R=1e-4, delta=0.05)
    assert values.shape == (3,)
    expected = torch.tensor([10.206, 25.854, 28.626], dtype=torch.float64) * 1e-8
    torch.testing.assert_close(values, expected, atol=1e-11, rtol=0)
    # LB authors' code: 2 R^2 ln(n_U pi^2 t^2 / (6 tol)), R = 1e-4, tol = 0.01
    n_u = torch.tensor([[1.0], [6.0]])
    grid = xi(torch.tensor([[1.0, 10.0, 250.0]]), n_u, 1e-4, 0.01)
    assert grid.shape == (2, 3)
    assert float(grid[1, 2]) == pytest.approx(
        2e-8 * math.log(6 * math.pi**2 * 250**2 / 0.06), rel=1e-5
    )
    assert float(xi(3, 2, 0.0, 0.1)) == 0.0


# --------------------------------------------------------------------------- #
# betas
# --------------------------------------------------------------------------- #


def test_bayesian_beta_finite() -> None:
    for t, n, delta in [(1, 10, 0.1), (7, 1000, 0.05), (250, 3, 0.5)]:
        expected = math.sqrt(2 * math.log(n * t**2 * math.pi**2 / (6 * delta)))
        assert float(bayesian_beta_finite(t, n, delta)) == pytest.approx(expected, rel=1e-12)
    # HE Thm 4.2 (A): delta_A = delta / 2 -> |X| pi^2 t^2 / (3 delta)
    he = bayesian_beta_finite(4, 100, 0.1 / 2)
    assert float(he) == pytest.approx(
        math.sqrt(2 * math.log(100 * math.pi**2 * 16 / (3 * 0.1))), rel=1e-12
    )
    # multiplier of sigma: squaring gives Srinivas' beta
    t = torch.arange(1, 6, dtype=torch.float64)
    b = bayesian_beta_finite(t, 50, 0.1)
    torch.testing.assert_close(b.square(), 2 * torch.log(50 * t**2 * math.pi**2 / 0.6))
    assert bool((b.diff() > 0).all())


def test_bayesian_beta_continuous() -> None:
    t, d, delta, a, b, r = 5, 2, 0.1, 1.0, 2.0, 1.0
    tau = t**2 * d * b * r * math.sqrt(math.log(4 * d * a / delta))
    expected = math.sqrt(
        2 * math.log(2 * t**2 * math.pi**2 / (3 * delta)) + 2 * d * math.log(tau)
    )
    assert float(bayesian_beta_continuous(t, d, delta, a, b, r)) == pytest.approx(
        expected, rel=1e-12
    )
    # tau < 1: discretisation has at least one point per axis -> second term 0
    tiny = bayesian_beta_continuous(1, 1, 0.1, 1.0, 1e-3, 1e-3)
    assert float(tiny) == pytest.approx(
        math.sqrt(2 * math.log(2 * math.pi**2 / 0.3)), rel=1e-12
    )
    ts = torch.tensor([1.0, 10.0, 100.0])
    out = bayesian_beta_continuous(ts, 3, 0.05, 1.0, 1.0, 1.0)
    assert out.shape == (3,) and out.dtype == torch.float32
    assert bool((out.diff() > 0).all())


def test_frequentist_beta_authors_constants() -> None:
    # LB code: B = 1, R = 1e-4, tol = delta = 0.01, ln(2 / tol) -> pass delta / 2
    beta = frequentist_beta(0.0, B=1.0, R=1e-4, delta=0.01 / 2)
    assert float(beta) == pytest.approx(1.0, abs=1e-3)
    expected = 1.0 + 1e-4 * math.sqrt(2 * (0.0 + 1.0 + math.log(2 / 0.01)))
    assert float(beta) == pytest.approx(expected, rel=1e-12)
    big = frequentist_beta(50.0, 1.0, 1e-4, 0.005)
    assert float(big) == pytest.approx(1.0, abs=2e-3)


def test_frequentist_beta_formula_and_broadcast() -> None:
    ig = torch.tensor([0.0, 1.5, 10.0, 100.0], dtype=torch.float64)
    out = frequentist_beta(ig, B=2.0, R=0.5, delta=0.1)
    expected = torch.tensor(
        [2.0 + 0.5 * math.sqrt(2 * (g + 1 + math.log(10.0))) for g in ig.tolist()],
        dtype=torch.float64,
    )
    torch.testing.assert_close(out, expected)
    # K candidates x 3 time steps
    grid = frequentist_beta(ig[:, None], torch.tensor([1.0, 2.0, 3.0]), 0.5, 0.1)
    assert grid.shape == (4, 3)


# --------------------------------------------------------------------------- #
# the prior-selection paper's Theorem 4.1 constants
# --------------------------------------------------------------------------- #


def test_theorem_4_1_constants():
    # the implementer's note's table (delta = 0.05, sigma = 0.25)
    assert pe_beta(1, 500, 6, 0.05) == pytest.approx(25.8, abs=0.05)
    assert pe_beta(500, 500, 6, 0.05) == pytest.approx(50.6, abs=0.05)
    assert pe_beta(500, 500, 4, 0.05) == pytest.approx(49.8, abs=0.05)
    # the oracles (|P| = 1): 47.05, which the note rounds to "47.1"
    assert pe_beta(500, 500, 1, 0.05) == pytest.approx(47.05, abs=0.005)
    assert elimination_xi(1, 6, 0.25, 0.05) == pytest.approx(0.75, abs=0.005)
    assert elimination_xi(500, 6, 0.25, 0.05) == pytest.approx(2.30, abs=0.005)
    # the delta-split reading: sqrt(beta_t) is Srinivas' finite-domain multiplier at delta / 4
    for t in (1, 7, 500):
        assert math.sqrt(pe_beta(t, 500, 5, 0.05)) == pytest.approx(float(bayesian_beta_finite(t, 2500, 0.0125)))
    with pytest.raises(ValueError, match="delta"):
        pe_beta(1, 500, 6, 1.5)


def test_box_beta_is_srinivas_continuous_beta_for_one_prior():
    for t, d in [(1, 1), (7, 1), (100, 2)]:
        num = box_num_arms(t, d, 0.05)
        assert pe_beta(t, num, 1, 0.05) == pytest.approx(float(bayesian_beta_continuous(t, d, 0.05, 1.0, 1.0, 1.0)) ** 2)
    assert box_num_arms(3, 1, 0.05, a=2.0, b=0.5) == pytest.approx(9 * 0.5 * math.sqrt(math.log(160.0)))
    assert box_num_arms(1, 1, 0.05, b=1e-3) == 1.0  # max(tau, 1)
    with pytest.raises(ValueError, match="^a must be a finite number > 0"):
        box_num_arms(1, 1, 0.05, a=0.0)


# --------------------------------------------------------------------------- #
# dtype handling
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_tensor_dtype_is_kept(dtype: torch.dtype) -> None:
    t = torch.tensor([1.0, 2.0, 30.0], dtype=dtype)
    results = [
        xi(t, 4, 0.1, 0.05),
        bayesian_beta_finite(t, 10, 0.1),
        bayesian_beta_continuous(t, 2, 0.1, 1.0, 1.0, 1.0),
        frequentist_beta(t, 1.0, 0.1, 0.05),
    ]
    for r in results:
        assert r.dtype == dtype and r.shape == (3,)


def test_python_numbers_give_float64() -> None:
    assert xi(2, 3, 1.0, 0.1).dtype == torch.float64
    assert isinstance(frequentist_beta(1, 1, 1, 0.5), torch.Tensor)


# --------------------------------------------------------------------------- #
# validation
# --------------------------------------------------------------------------- #

BAD_CALLS = [
    ("t", lambda: xi(0, 5, 1.0, 0.05)),
    ("t", lambda: xi(torch.tensor([1.0, 0.5]), 5, 1.0, 0.05)),
    ("num_candidates", lambda: xi(1, 0, 1.0, 0.05)),
    ("R", lambda: xi(1, 2, -1.0, 0.05)),
    ("delta", lambda: xi(1, 2, 1.0, 0.0)),
    ("delta", lambda: xi(1, 2, 1.0, 1.0)),
    ("delta", lambda: xi(1, 2, 1.0, float("nan"))),
    ("t", lambda: bayesian_beta_finite(0.5, 10, 0.1)),
    ("num_points", lambda: bayesian_beta_finite(1, 0, 0.1)),
    ("delta", lambda: bayesian_beta_finite(1, 10, 1.5)),
    ("t", lambda: bayesian_beta_continuous(0, 1, 0.1, 1.0, 1.0, 1.0)),
    ("dim", lambda: bayesian_beta_continuous(1, 0, 0.1, 1.0, 1.0, 1.0)),
    ("dim", lambda: bayesian_beta_continuous(1, 1.5, 0.1, 1.0, 1.0, 1.0)),
    ("delta", lambda: bayesian_beta_continuous(1, 1, -0.1, 1.0, 1.0, 1.0)),
    ("a", lambda: bayesian_beta_continuous(1, 1, 0.1, 0.0, 1.0, 1.0)),
    ("a", lambda: bayesian_beta_continuous(1, 1, 0.5, 0.1, 1.0, 1.0)),
    ("b", lambda: bayesian_beta_continuous(1, 1, 0.1, 1.0, -1.0, 1.0)),
    ("r", lambda: bayesian_beta_continuous(1, 1, 0.1, 1.0, 1.0, 0.0)),
    ("information_gain", lambda: frequentist_beta(-1.0, 1.0, 1.0, 0.1)),
    ("B", lambda: frequentist_beta(0.0, -1.0, 1.0, 0.1)),
    ("R", lambda: frequentist_beta(0.0, 1.0, -1.0, 0.1)),
    ("delta", lambda: frequentist_beta(0.0, 1.0, 1.0, 2.0)),
]


@pytest.mark.parametrize("name,call", BAD_CALLS, ids=[f"{i}-{n}" for i, (n, _) in enumerate(BAD_CALLS)])
def test_bad_inputs_raise_value_error_naming_argument(name: str, call) -> None:
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


def test_practical_beta_is_the_scaled_srinivas_rate():
    from botorch_unknown_hypers.confidence import practical_beta

    assert float(practical_beta(1, 5)) == pytest.approx(math.sqrt(0.2 * 5 * math.log(2)))
    assert float(practical_beta(60, 8)) == pytest.approx(math.sqrt(1.6 * math.log(120)))
    with pytest.raises(ValueError, match="t"):
        practical_beta(0, 2)


def test_xi_number_is_xi_bit_for_bit():
    from botorch_unknown_hypers.confidence import xi_number

    for t in (1, 2, 3, 7, 50, 99, 100, 257, 1000, 4096):
        for num_candidates in (1, 2, 5, 16, 100):
            for R in (0.0, 1e-4, 0.01, 0.25, 1.0, 2.3):
                for delta in (0.3, 0.05, 0.025, 0.01, 1e-6):
                    value = xi_number(t, num_candidates, R, delta)
                    assert type(value) is float
                    assert value == float(xi(t, num_candidates, R, delta))


def test_elimination_xi_checks_its_numbers_on_the_host_and_reads_nothing(monkeypatch):
    from tests.host_reads import record_reads

    reads = record_reads(monkeypatch)
    values = [elimination_xi(t, 6, 0.25, 0.05) for t in (1, 7, 500)] + [elimination_xi(3, 4, 0.5, 0.1, split=1.0)]
    assert reads == []  # computed on the host from the numbers
    monkeypatch.undo()
    expected = [float(xi(t, 6, 0.25, 0.025)) for t in (1, 7, 500)] + [float(xi(3, 4, 0.5, 0.1))]
    assert values == expected  # bit for bit
    for args, match in (((0, 6, 0.25, 0.05), "t must be"), ((1, 0, 0.25, 0.05), "num_candidates"),
                        ((1, 6, -1.0, 0.05), "R must be"), ((1, 6, 0.25, 2.5), "delta"), ((1, 6, math.nan, 0.05), "R must be")):
        with pytest.raises(ValueError, match=match):
            elimination_xi(*args)
    assert float(xi(2, 3, 0.5, 0.1, validate_args=False)) == float(xi(2, 3, 0.5, 0.1))


def test_unchecked_frequentist_beta_reads_nothing_and_equals_the_checked_one(monkeypatch):
    from tests.host_reads import record_reads

    gain = torch.tensor([0.0, 0.7, 12.5], dtype=torch.float64)
    B = torch.tensor([1.0, 0.0, 3.0], dtype=torch.float64)
    reads = record_reads(monkeypatch)
    beta = frequentist_beta(gain, B=B, R=0.1, delta=0.025, checked=False)
    assert reads == []  # the caller vouches for the four arguments
    monkeypatch.undo()
    torch.testing.assert_close(beta, frequentist_beta(gain, B=B, R=0.1, delta=0.025), rtol=0, atol=0)
    with pytest.raises(ValueError, match="^information_gain must be"):
        frequentist_beta(gain - 1.0, B=B, R=0.1, delta=0.025)


def test_elimination_statistics_are_the_index_add_sums_bit_for_bit_and_read_nothing(monkeypatch):
    from botorch_unknown_hypers.confidence import elimination_statistics
    from tests.host_reads import record_reads

    gen = torch.Generator().manual_seed(7)
    played = torch.randint(0, 5, (40,), generator=gen).tolist()  # candidate 4 may be unplayed
    residual = (torch.randn(40, generator=gen, dtype=torch.float64) * 3).tolist()
    width = torch.rand(40, generator=gen, dtype=torch.float64).tolist()
    xi_t = 2.718281828
    idx, zeros = torch.tensor(played), torch.zeros(6, dtype=torch.float64)  # K = 6: one never played
    counts = zeros.index_add(0, idx, torch.ones(40, dtype=torch.float64))
    eta = zeros.index_add(0, idx, torch.tensor(residual, dtype=torch.float64))
    widths = zeros.index_add(0, idx, torch.tensor(width, dtype=torch.float64))
    reads = record_reads(monkeypatch)
    stat, threshold = elimination_statistics(played, residual, width, 6, xi_t)
    monkeypatch.undo()
    assert reads == [] and all(isinstance(v, float) for v in stat + threshold)
    assert stat == eta.abs().tolist() and threshold == ((xi_t * counts).sqrt() + widths).tolist()
    assert stat[5] == 0.0 and threshold[5] == 0.0
    with pytest.raises(ValueError, match=r"^played must hold candidate indices in \[0, 6\), got \[0, 6\]\.$"):
        elimination_statistics([0, 6], [0.1, 0.2], [0.1, 0.1], 6, xi_t)
    with pytest.raises(ValueError, match=r"^played must hold candidate indices in \[0, 2\), got \[-1\]\.$"):
        elimination_statistics([-1], [0.1], [0.1], 2, xi_t)


def test_theorem_beta_is_the_igp_ucb_width_at_half_delta():
    import math

    import torch

    from botorch_unknown_hypers.confidence import frequentist_beta, theorem_beta

    gains = torch.tensor([0.0, 1.5, 40.0], dtype=torch.float64)
    expected = [2.0 + 0.1 * math.sqrt(2 * (g + 1 + math.log(2 / 0.01))) for g in gains.tolist()]
    assert torch.allclose(theorem_beta(gains, B=2.0, R=0.1, delta=0.01), torch.tensor(expected, dtype=torch.float64), rtol=1e-14)
    assert torch.equal(theorem_beta(gains, 2.0, 0.1, 0.01), frequentist_beta(gains, 2.0, 0.1, 0.005))
    with pytest.raises(ValueError, match="delta"):
        theorem_beta(gains, 2.0, 0.1, 1.5)
