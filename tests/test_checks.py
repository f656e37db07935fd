"""Tests for botorch_unknown_hypers.checks (the argument checks shared by every layer)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from botorch_unknown_hypers.checks import check_bool, check_choice, check_int, check_nonnegative, check_positive

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


# --------------------------------------------------------------------------- #
# check_probability, Interval, check_entries, check_device
# --------------------------------------------------------------------------- #

from botorch_unknown_hypers.checks import (  # noqa: E402
    AT_LEAST_ONE,
    POSITIVE,
    PROBABILITY,
    Interval,
    check_device,
    check_entries,
    check_probability,
)


@pytest.mark.parametrize("value", [1e-12, 0.05, 0.5, 1 - 1e-12])
def test_check_probability_accepts_the_open_unit_interval(value):
    assert check_probability("delta", value) == value


@pytest.mark.parametrize("value", [0, 0.0, 1, 1.0, -0.1, 1.5, math.nan, math.inf, True, "0.1", None, torch.tensor(0.1)], ids=repr)
def test_check_probability_refuses_the_ends_and_non_numbers(value):
    with pytest.raises(ValueError, match=r"^delta must be a finite number > 0 and < 1, got "):
        check_probability("delta", value)


def test_check_probability_closed_ends_are_included_where_asked():
    assert check_probability("p", 0.0, closed_low=True) == 0.0
    assert check_probability("p", 1, closed_high=True) == 1.0
    with pytest.raises(ValueError, match=r"^p must be a finite number >= 0 and < 1, got 1\.$"):
        check_probability("p", 1, closed_low=True)


def test_an_interval_has_one_meaning_for_numbers_and_tensors():
    values = [-1.0, 0.0, 0.5, 1.0, 2.0, math.nan, math.inf]
    for interval in (POSITIVE, PROBABILITY, AT_LEAST_ONE, Interval(0, 1, closed_low=True, closed_high=True)):
        entrywise = interval.holds(torch.tensor(values, dtype=torch.float64)).tolist()
        for value, inside in zip(values, entrywise):
            try:
                from botorch_unknown_hypers.checks import check_number

                check_number("x", value, interval)
                scalar = True
            except ValueError:
                scalar = False
            assert scalar == inside, (interval, value)


def test_check_entries_names_the_argument_and_shows_the_offending_entries():
    t = torch.tensor([1.0, 2.0, 3.0])
    assert check_entries("t", t, AT_LEAST_ONE) is t
    with pytest.raises(ValueError, match=r"^t must be a finite number >= 1 everywhere, got \[0\.5\]\.$"):
        check_entries("t", torch.tensor([1.0, 2.0, 0.5, 3.0]), AT_LEAST_ONE)
    with pytest.raises(ValueError, match=r"^delta must be a finite number > 0 and < 1 everywhere"):
        check_entries("delta", torch.tensor([0.1, float("nan")]), PROBABILITY)
    with pytest.raises(ValueError, match=r"^delta must be a real tensor"):
        check_entries("delta", torch.tensor([True]), PROBABILITY)


def test_check_device_accepts_cpu_and_none():
    assert check_device("device", None) is None
    assert check_device("device", "cpu") == torch.device("cpu")
    assert check_device("device", torch.device("cpu")) == torch.device("cpu")


@pytest.mark.parametrize("value", ["bogus", "cpu:x", 3, 1.5, ["cpu"]], ids=repr)
def test_check_device_refuses_what_torch_cannot_use(value):
    with pytest.raises(ValueError, match=r"^device must be"):
        check_device("device", value)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
def test_check_device_refuses_an_absent_gpu():
    with pytest.raises(ValueError, match=r"^device must be a device torch can use, got 'cuda'"):
        check_device("device", "cuda")


# --------------------------------------------------------------------------- #
# Unchecked entries
# --------------------------------------------------------------------------- #


def _entry_checks(gain: torch.Tensor, B: torch.Tensor):
    from botorch_unknown_hypers.checks import NONNEGATIVE, PROBABILITY

    return (("gain", gain, NONNEGATIVE), ("B", B, NONNEGATIVE), ("delta", torch.tensor(0.05, dtype=torch.float64), PROBABILITY))


def test_unchecked_entries_read_nothing_and_checked_ones_refuse_the_first_failure(monkeypatch):
    from botorch_unknown_hypers.checks import check_all_entries
    from tests.host_reads import record_reads

    bad_gain, B = torch.tensor([0.0, -1e-3, 3.0], dtype=torch.float64), torch.tensor([-1.0, 2.0, 0.0], dtype=torch.float64)
    reads = record_reads(monkeypatch)
    check_all_entries(*_entry_checks(bad_gain, B), checked=False)  # the caller vouches: nothing read, nothing raised
    assert reads == []
    monkeypatch.undo()
    with pytest.raises(ValueError, match=r"^gain must be .*-0\.001"):  # both fail: the first in order is raised
        check_all_entries(*_entry_checks(bad_gain, B))


def test_unchecked_entries_still_refuse_a_non_real_tensor():
    from botorch_unknown_hypers.checks import NONNEGATIVE, check_all_entries

    with pytest.raises(ValueError, match="^flags must be a real tensor"):
        check_all_entries(("flags", torch.tensor([True]), NONNEGATIVE), checked=False)


def test_check_choice_returns_the_choice_itself_for_an_equal_value_of_the_same_type():
    assert check_choice("kernel", "rbf", ("rbf", "matern52")) == "rbf"
    chosen = check_choice("kernel", np.str_("matern52"), ("rbf", "matern52"))  # a str subclass, as pandas hands it
    assert chosen == "matern52" and type(chosen) is str


@pytest.mark.parametrize("value", ["cubic", None, ["rbf"], {"rbf": 1}, torch.tensor(1.0), 1, "RBF"])
def test_check_choice_refuses_other_values_naming_the_argument_and_listing_the_choices(value):
    with pytest.raises(ValueError, match=r"^kernel must be one of \('rbf', 'matern52'\), got "):
        check_choice("kernel", value, ("rbf", "matern52"))


def test_check_choice_never_takes_a_bool_for_an_integer_choice():
    assert check_choice("count", 1, (1, 2)) == 1
    with pytest.raises(ValueError, match=r"^count must be one of \[1, 2\], got True\."):
        check_choice("count", True, [1, 2])

