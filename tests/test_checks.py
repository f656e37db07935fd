"""Tests for botorch_unknown_hypers.checks (scalar option checks shared by every layer)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from botorch_unknown_hypers.checks import check_bool, check_int, check_nonnegative, check_positive

# --------------------------------------------------------------------------- #
# check_int
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("value, minimum", [(0, 0), (1, 1), (7, 1), (-3, -5), (10**12, 1)])
def test_check_int_returns_accepted_values_unchanged(value, minimum):
    out = check_int("num_points", value, minimum=minimum)
    assert out == value and type(out) is int


@pytest.mark.parametrize(
    "value",
    [True, False, 1.0, 2.5, math.nan, math.inf, "3", None, [1], torch.tensor(3), np.int64(3)],
    ids=repr,
)
def test_check_int_refuses_non_integers_naming_the_argument(value):
    with pytest.raises(ValueError, match=r"^num_points must be an integer >= 1, got "):
        check_int("num_points", value, minimum=1)


@pytest.mark.parametrize("value, minimum", [(0, 1), (-1, 0), (4, 5)])
def test_check_int_refuses_values_below_the_minimum(value, minimum):
    with pytest.raises(ValueError, match=rf"mcmc_steps must be an integer >= {minimum}, got {value}\."):
        check_int("mcmc_steps", value, minimum=minimum)


# --------------------------------------------------------------------------- #
# check_positive
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("value", [1, 0.5, 1e-300, 3.0, 10**6])
def test_check_positive_returns_a_float(value):
    out = check_positive("delta", value)
    assert out == value and type(out) is float


@pytest.mark.parametrize(
    "value", [0, 0.0, -1e-12, -2, True, False, math.nan, math.inf, -math.inf, "0.1", None, torch.tensor(0.1)], ids=repr
)
def test_check_positive_refuses_non_positive_non_finite_and_non_numbers(value):
    with pytest.raises(ValueError, match=r"^delta must be a finite number > 0, got "):
        check_positive("delta", value)


def test_check_positive_upper_bound_is_exclusive():
    assert check_positive("delta", 0.999, upper=1.0) == 0.999
    for value in (1.0, 1, 1.5):
        with pytest.raises(ValueError, match=r"^delta must be a finite number > 0 and < 1\.0, got "):
            check_positive("delta", value, upper=1.0)
    # without an upper bound, large values pass
    assert check_positive("delta", 1.5) == 1.5


def test_check_positive_message_repeats_the_given_value():
    with pytest.raises(ValueError, match=r"got -0\.25\.$"):
        check_positive("dpp_lambda", -0.25)
    with pytest.raises(ValueError, match=r"got 'abc'\.$"):
        check_positive("dpp_lambda", "abc")


# --------------------------------------------------------------------------- #
# check_nonnegative
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("value", [0, 0.0, -0.0, 1, 2.5, 1e300])
def test_check_nonnegative_returns_a_float(value):
    out = check_nonnegative("eps", value)
    assert out == value and type(out) is float


@pytest.mark.parametrize("value", [-1e-300, -1, True, False, math.nan, math.inf, "1", None], ids=repr)
def test_check_nonnegative_refuses_negative_non_finite_and_non_numbers(value):
    with pytest.raises(ValueError, match=r"^eps must be a finite number >= 0, got "):
        check_nonnegative("eps", value)


# --------------------------------------------------------------------------- #
# check_bool
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("value", [True, False])
def test_check_bool_returns_the_flag(value):
    assert check_bool("share_data", value) is value


@pytest.mark.parametrize("value", [0, 1, 1.0, "True", "yes", None, np.bool_(True), torch.tensor(True)], ids=repr)
def test_check_bool_refuses_anything_but_a_bool(value):
    with pytest.raises(ValueError, match=r"^share_data must be a bool, got "):
        check_bool("share_data", value)
