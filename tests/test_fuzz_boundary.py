r"""Property-based fuzzing of the package's other entry points with bad input (Hypothesis).

Extends ``tests/test_fuzz.py`` (the policies' ``suggest`` / ``observe``) to :func:`run`,
:class:`AskTellOptimizer`, the keyword arguments of :func:`make_policy` and the reading of a
``results.csv`` by ``buh report``; the ask/tell calls on a box, a pool and a mixed domain. Bad input must raise ``ValueError`` or ``TypeError`` with a
message (never ``AttributeError``, ``KeyError``, ``RuntimeError``, a pandas error or silence)
and leave the state as it was. Hypothesis runs derandomised (a fixed seed, no example
database), so every run draws the same cases.
"""

from __future__ import annotations

import inspect
import json
import math
import warnings
from typing import Any

import pandas as pd
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from botorch_unknown_hypers.domains import BoxDomain, CategoricalParameter, FiniteDomain, FloatParameter, IntParameter, MixedDomain
from botorch_unknown_hypers.loop import AskTellOptimizer, run
from botorch_unknown_hypers.policies.baselines.standard_baselines import RandomPolicy
from botorch_unknown_hypers.policies.registry import METHODS, list_methods, make_policy
from botorch_unknown_hypers.results import INTEGER_COLUMNS, REAL_COLUMNS, ResultsStore
from tests.test_loop import PoolProblem
from tests.test_results import fake_history

SETTINGS = dict(derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
BOX = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 2.0]], dtype=torch.float64))
MIXED = MixedDomain((IntParameter("n", 1, 4), CategoricalParameter("c", ("a", "b", "c")), FloatParameter("x", 0.0, 1.0, log=False)))


class Opaque:
    r"""An object of no expected type."""

    def __repr__(self) -> str:
        return "Opaque()"


# Values no argument of the package accepts (a string option is never "abc", a number never nan).
JUNK = st.sampled_from(
    ["abc", "", math.nan, math.inf, -math.inf, Opaque(), 1 + 2j, [Opaque()], {"x": Opaque()}, (Opaque(), Opaque())]
)
NOT_AN_INT = st.one_of(JUNK, st.sampled_from([None, True, False, 2.5, 1.0, "3", torch.tensor(3)]))


def _refused(call) -> str:
    r"""Call ``call``; the name of the ``ValueError``/``TypeError`` it raised, else an assertion."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except (ValueError, TypeError) as e:
        assert str(e), "empty message"
        return type(e).__name__
    except Exception as e:  # noqa: BLE001 - anything else is a defect
        raise AssertionError(f"{type(e).__name__}: {e}") from e
    raise AssertionError("bad input accepted silently")


def _state(obj: Any) -> str:
    return json.dumps(obj.state_dict(), sort_keys=True)


# --------------------------------------------------------------------------- #
# run
# --------------------------------------------------------------------------- #

RUN_BAD = {
    "problem": st.one_of(JUNK, st.sampled_from([None, "branin", BOX, 3])),
    "policy": st.one_of(JUNK, st.sampled_from([None, "random", RandomPolicy, 3])),
    "iterations": st.one_of(NOT_AN_INT, st.integers(max_value=-1)),
    "seed": st.one_of(NOT_AN_INT, st.integers(max_value=-1)),
    "batch_size": st.one_of(NOT_AN_INT, st.integers(max_value=0)),
    "n_init": st.one_of(NOT_AN_INT.filter(lambda v: v is not None), st.integers(max_value=-1)),
    "method": st.one_of(JUNK.filter(lambda v: not isinstance(v, str)), st.sampled_from([3, b"m"])),
    "callback": st.one_of(JUNK, st.sampled_from([3, "print"])),
}


@settings(max_examples=60, **SETTINGS)
@given(data=st.data(), argument=st.sampled_from(sorted(RUN_BAD)))
def test_run_refuses_bad_arguments_with_the_policy_untouched(data, argument):
    problem = PoolProblem()
    policy = RandomPolicy(problem.domain, seed=0)
    before = _state(policy)
    args: dict[str, Any] = dict(problem=problem, policy=policy, iterations=2)
    args[argument] = data.draw(RUN_BAD[argument], label=argument)
    _refused(lambda: run(args.pop("problem"), args.pop("policy"), **args))
    assert _state(policy) == before and policy.num_observed == 0


# --------------------------------------------------------------------------- #
# AskTellOptimizer
# --------------------------------------------------------------------------- #


@settings(max_examples=20, **SETTINGS)
@given(policy=st.one_of(JUNK, st.sampled_from([None, "lb-gp-ucb", BOX, RandomPolicy])))
def test_ask_tell_optimizer_refuses_anything_but_a_policy(policy):
    _refused(lambda: AskTellOptimizer(policy))


def _optimizer(domain) -> AskTellOptimizer:
    opt = AskTellOptimizer(RandomPolicy(domain, seed=0))
    X = domain.sample(3, 0)
    opt.tell(X, X.sum(-1, keepdim=True))
    opt.ask(1)  # one pending point
    return opt


ASK_TELL_CALLS = ["ask_q", "tell_X", "tell_Y", "tell_initial", "load_state_dict"]


@settings(max_examples=120, **SETTINGS)
@given(data=st.data(), call=st.sampled_from(ASK_TELL_CALLS), kind=st.sampled_from(["box", "pool", "mixed"]))
def test_ask_tell_optimizer_refuses_bad_calls_with_its_state_unchanged(data, call, kind):
    domain = {"box": BOX, "pool": FiniteDomain(BOX.sample(10, 1)), "mixed": MIXED}[kind]
    opt = _optimizer(domain)
    X = domain.sample(2, 5)
    Y = X.sum(-1, keepdim=True)
    if call == "ask_q":
        q = data.draw(st.one_of(NOT_AN_INT, st.integers(max_value=0)), label="q")
        action = lambda: opt.ask(q)  # noqa: E731
    elif call == "tell_X":
        bad = data.draw(st.one_of(JUNK, st.sampled_from([None, X[:, :1], X + 10.0, X.unsqueeze(0)])), label="X")
        action = lambda: opt.tell(bad, Y)  # noqa: E731
    elif call == "tell_Y":
        bad = data.draw(st.one_of(JUNK, st.sampled_from([None, Y[:1], torch.cat([Y, Y], -1), Y * math.nan])), label="Y")
        action = lambda: opt.tell(X, bad)  # noqa: E731
    elif call == "tell_initial":
        flag = data.draw(st.one_of(JUNK, st.sampled_from([0, 1, "yes"])), label="initial")
        action = lambda: opt.tell(X, Y, initial=flag)  # noqa: E731
    else:
        good = opt.state_dict()
        key = data.draw(st.sampled_from(["train_X", "train_Y", "pending", "policy"]), label="key")
        value = data.draw(st.one_of(JUNK, st.sampled_from([None, [[1.0]], [[math.nan, 0.0]], {}])), label="value")
        state = data.draw(st.sampled_from([{**good, key: value}, None, [], "state"]), label="state")
        action = lambda: opt.load_state_dict(state)  # noqa: E731
    before = _state(opt)
    _refused(action)
    assert _state(opt) == before


# --------------------------------------------------------------------------- #
# make_policy's keyword arguments
# --------------------------------------------------------------------------- #


def _options(name: str) -> list[str]:
    r"""The keyword arguments the rule registered as ``name`` takes (its classes' ``__init__``)."""
    found: list[str] = []
    for cls in METHODS[name].__mro__:
        init = cls.__dict__.get("__init__")
        if init is None:
            continue
        for p in inspect.signature(init).parameters.values():
            if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) or p.name in ("self", "domain", "seed", "device", "dtype"):
                continue
            if p.name not in found:
                found.append(p.name)
    return found


CASES = [(name, option) for name in list_methods() for option in _options(name)]


@settings(max_examples=150, **SETTINGS)
@given(case=st.sampled_from(CASES), value=JUNK)
def test_make_policy_refuses_junk_options(case, value):
    name, option = case
    try:
        _refused(lambda: make_policy(name, BOX, **{option: value}))
    except AssertionError as e:
        raise AssertionError(f"make_policy({name!r}, box, {option}={value!r}): {e}") from None


def test_make_policy_is_fuzzed_on_every_method():
    assert {name for name, _ in CASES} == set(list_methods())


# --------------------------------------------------------------------------- #
# buh report's reading of results.csv
# --------------------------------------------------------------------------- #


@settings(max_examples=40, **SETTINGS)
@given(
    column=st.sampled_from(INTEGER_COLUMNS + REAL_COLUMNS),
    row=st.integers(min_value=0, max_value=4),
    value=st.sampled_from(["abc", "1,5", "0x1", "--1", "1e", "[1]", "None", "true", " . "]),
)
def test_reading_a_results_file_names_a_non_numeric_value(tmp_path_factory, column, row, value):
    out = tmp_path_factory.mktemp("results")
    store = ResultsStore(out)
    store.append_run(fake_history("p", "m", 0, 2), horizon=2, batch_size=1)
    df = pd.read_csv(store.path, dtype=str, keep_default_na=False)
    df.loc[row, column] = value
    df.to_csv(store.path, index=False)
    raw = store.path.read_bytes()
    with pytest.raises(ValueError) as info:
        ResultsStore(out, read_only=True).read()
    assert str(info.value).startswith(f"{store.path}, line {row + 2}: column {column!r} must hold")
    assert store.path.read_bytes() == raw  # a read-only store never writes


@settings(max_examples=20, **SETTINGS)
@given(column=st.sampled_from(INTEGER_COLUMNS), value=st.sampled_from(["1.5", "nan", "inf", "-inf", ""]))
def test_an_integer_column_refuses_non_integers(tmp_path_factory, column, value):
    out = tmp_path_factory.mktemp("results")
    store = ResultsStore(out)
    store.append_run(fake_history("p", "m", 0, 2), horizon=2, batch_size=1)
    df = pd.read_csv(store.path, dtype=str, keep_default_na=False)
    df.loc[1, column] = value
    df.to_csv(store.path, index=False)
    with pytest.raises(ValueError, match=rf"line 3: column {column!r} must hold an integer"):
        ResultsStore(out, read_only=True).read()
