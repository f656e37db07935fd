r"""Property-based fuzzing of the policies' entry points with bad input (Hypothesis).

Every registered method, on a box and (where it supports one) a pool, as set up by the
golden-trace cases, receives generated bad input through ``suggest`` and ``observe``: a bad
batch size, points with NaN or inf, the wrong shape or width, bool, complex or text values,
points outside the box or not in the pool (also as integers or lower precision), ragged lists,
values that do not match the points, and empty observations. Each call is classified by its
outcome. The test fails on any exception other than ``ValueError`` / ``TypeError``, on any bad
input accepted silently, and on any change of the policy's saved JSON state. The same holds on a
mixed domain (log float, integer, categorical, stepped and plain float parameters) for every rule
that takes one, with its own corruptions: an integer or a step off its grid, a categorical with
no, two or a fractional one-hot entry; and a float32, integer-typed or NumPy copy of valid mixed
points is accepted. Hypothesis runs
derandomised (a fixed seed, no example database), so every run draws the same cases.
"""

from __future__ import annotations

import json
import math
import warnings
from collections import Counter
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from botorch_unknown_hypers.domains import CategoricalParameter, FiniteDomain, FloatParameter, IntParameter, MixedDomain
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.registry import list_methods, make_policy
from tests.golden.cases import CASES

EXAMPLES = 1200
CORRUPTIONS = [
    "q_zero", "q_negative", "q_bool", "q_float", "q_text", "q_none",
    "X_nan", "X_inf", "X_wrong_width", "X_1d", "X_3d", "X_bool", "X_complex", "X_text", "X_none",
    "X_ragged", "X_outside", "X_outside_int", "X_outside_float32", "X_outside_numpy",
    "Y_nan", "Y_inf", "Y_rows", "Y_columns", "Y_bool", "Y_text", "empty",
]
ENTRIES = ["suggest", "observe"]


def _setup(case: Any) -> tuple[Policy, torch.Tensor, torch.Tensor]:
    problem = case.make_problem()
    policy = make_policy(case.method, problem.domain, seed=0, **case.make_options())
    task_info = getattr(problem, "task_info", None)
    if task_info is not None:
        policy.bind_task(task_info())
    n = max(policy.min_observations, 4)
    X = problem.domain.sample(n, 0)
    Y = torch.sin(X.sum(-1, keepdim=True))
    return policy, X, Y


@pytest.fixture(scope="module")
def policies() -> dict[str, tuple[Policy, torch.Tensor, torch.Tensor]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {case.key: _setup(case) for case in CASES if case.problem != "hills"}


def _outside(policy: Policy, X: torch.Tensor, row: int, offset: float) -> torch.Tensor:
    r"""``X`` with row ``row`` moved off the domain by ``offset`` (> 0) in its first coordinate."""
    bad = X.clone()
    domain = policy.domain
    if isinstance(domain, FiniteDomain):  # between pool points: halfway to the nearest other point, or beyond
        bad[row, 0] = domain.points[:, 0].max() + offset
    else:
        bad[row, 0] = domain.bounds[1, 0] + offset
    return bad


def _corrupt(kind: str, policy: Policy, X: torch.Tensor, Y: torch.Tensor, row: int, offset: float) -> dict[str, Any]:
    r"""Keyword arguments of one bad call; ``X, Y`` are valid observations."""
    q: Any = 1
    d = X.shape[-1]
    if kind.startswith("q_"):
        q = {"q_zero": 0, "q_negative": -1, "q_bool": True, "q_float": 1.5, "q_text": "1", "q_none": None}[kind]
    elif kind in ("X_nan", "X_inf"):
        X = X.clone()
        X[row, row % d] = math.nan if kind == "X_nan" else -math.inf
    elif kind == "X_wrong_width":
        X = torch.cat([X, X[:, :1]], dim=-1)
    elif kind == "X_1d":
        X = X[:, 0]
    elif kind == "X_3d":
        X = X.unsqueeze(0)
    elif kind == "X_bool":
        X = X > X.mean()
    elif kind == "X_complex":
        X = X.to(torch.complex128)
    elif kind == "X_text":
        X = [[str(v) for v in r] for r in X.tolist()]
    elif kind == "X_none":
        X = None
    elif kind == "X_ragged":
        X = [r[: 1 + (i % 2)] for i, r in enumerate(X.tolist())] if d > 1 else [[0.5], [0.5, 0.5]]
    elif kind == "X_outside":
        X = _outside(policy, X, row, offset)
    elif kind == "X_outside_int":
        X = _outside(policy, X, row, max(offset, 1.0)).ceil().to(torch.int64)
        X[row, 0] = int(policy.domain.bounds[1, 0].ceil()) + 1 + int(offset)
    elif kind == "X_outside_float32":
        X = _outside(policy, X, row, offset).to(torch.float32)
    elif kind == "X_outside_numpy":
        X = _outside(policy, X, row, offset).numpy()
    elif kind in ("Y_nan", "Y_inf"):
        Y = Y.clone()
        Y[row, 0] = math.nan if kind == "Y_nan" else math.inf
    elif kind == "Y_rows":
        Y = Y[:-1]
    elif kind == "Y_columns":
        Y = torch.cat([Y, Y], dim=-1)
    elif kind == "Y_bool":
        Y = Y > 0
    elif kind == "Y_text":
        Y = np.array([str(v) for v in Y.flatten().tolist()])
    elif kind == "empty":
        X, Y = X[:0], Y[:0]
    return {"X": X, "Y": Y, "q": q}


def _call(policy: Policy, entry: str, kwargs: dict[str, Any]) -> None:
    if entry == "suggest":
        policy.suggest(kwargs["X"], kwargs["Y"], q=kwargs["q"])
    else:
        policy.observe(kwargs["X"], kwargs["Y"])


def _refused_unchanged(policy: Policy, entry: str, kwargs: dict[str, Any], label: str) -> str:
    r"""Make the bad call; the name of the ``ValueError``/``TypeError`` it raised (with a message),
    after checking that the policy's saved state did not change. Anything else fails."""
    before = json.dumps(policy.state_dict(), sort_keys=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _call(policy, entry, kwargs)
    except (ValueError, TypeError) as e:
        outcome = type(e).__name__
        assert str(e), f"{label}: empty message"
    except Exception as e:  # noqa: BLE001 - anything else is a defect
        raise AssertionError(f"{label}: {type(e).__name__}: {e}") from e
    else:
        raise AssertionError(f"{label}: bad input accepted silently")
    after = json.dumps(policy.state_dict(), sort_keys=True)
    assert after == before, f"{label}: the state changed after a refused call"
    return outcome


def test_every_method_is_fuzzed_on_a_box_and_a_pool(policies):
    fuzzed = {key.split("@")[0] for key in policies}
    assert set(list_methods()) <= fuzzed
    pools = [key for key, (policy, _, _) in policies.items() if isinstance(policy.domain, FiniteDomain)]
    assert len(pools) >= 20


def _fuzz(cases: dict[str, tuple[Policy, torch.Tensor, torch.Tensor]], corrupt: Any, kinds: list[str], examples: int,
          instead_of_empty: str) -> Counter[tuple[str, str, str]]:
    r"""Run ``examples`` derandomised bad calls over ``cases`` (key -> policy and valid data), each
    built by ``corrupt(kind, policy, X, Y, row, offset)``; the count per (entry, kind, outcome).
    ``instead_of_empty``: the kind played for no data on a rule that starts from its prior (for
    which no data is valid input)."""
    keys = sorted(cases)
    table: Counter[tuple[str, str, str]] = Counter()

    @settings(max_examples=examples, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        key=st.sampled_from(keys),
        entry=st.sampled_from(ENTRIES),
        kind=st.sampled_from(kinds),
        row=st.integers(min_value=0, max_value=3),
        offset=st.floats(min_value=1e-3, max_value=1e3, allow_nan=False),
    )
    def check(key: str, entry: str, kind: str, row: int, offset: float) -> None:
        policy, X, Y = cases[key]
        if entry == "observe" and kind.startswith("q_"):
            entry = "suggest"  # observe has no batch size
        if entry == "suggest" and kind == "empty" and policy.min_observations == 0:
            kind = instead_of_empty
        table[(entry, kind, _refused_unchanged(policy, entry, corrupt(kind, policy, X, Y, row, offset), f"{key} {entry} {kind}"))] += 1

    check()
    return table


def test_bad_input_is_refused_cleanly_and_changes_no_state(policies, capsys):
    table = _fuzz(policies, _corrupt, CORRUPTIONS, EXAMPLES, "X_nan")
    total = sum(table.values())
    with capsys.disabled():
        print(f"\nfuzz: {total} bad inputs over {len(policies)} (method, domain) cases")
        for (entry, kind, outcome), count in sorted(table.items()):
            print(f"  {entry:8s} {kind:18s} {outcome:10s} {count:5d}")
    assert total >= 1000


# --------------------------------------------------------------------------- mixed domains
MIXED_EXAMPLES = 600
MIXED_CORRUPTIONS = [
    *[k for k in CORRUPTIONS if k not in ("X_outside_int",)],
    "X_int_off_grid", "X_step_off_grid", "X_no_hot", "X_two_hot", "X_half_hot", "X_hot_not_one",
]


def _mixed_domain() -> MixedDomain:
    return MixedDomain(
        (
            FloatParameter("lr", 1e-4, 1e-1, log=True),  # column 0
            IntParameter("n", 1, 5),  # column 1
            CategoricalParameter("act", ("relu", "tanh", "gelu")),  # columns 2-4
            FloatParameter("p", 0.0, 0.5, step=0.1),  # column 5
            FloatParameter("x", -1.0, 1.0),  # column 6
        )
    )


@pytest.fixture(scope="module")
def mixed_policies() -> dict[str, tuple[Policy, torch.Tensor, torch.Tensor]]:
    domain = _mixed_domain()
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in list_methods():
            try:
                policy = make_policy(method, domain, seed=0)
            except ValueError as e:  # the prior and robust rules refuse a mixed domain, naming it
                assert "MixedDomain" in str(e), (method, str(e))
                continue
            n = max(policy.min_observations, 4)
            X = domain.sample(n, 0)
            out[method] = (policy, X, torch.sin(X.sum(-1, keepdim=True)))
    return out


def _corrupt_mixed(kind: str, policy: Policy, X: torch.Tensor, Y: torch.Tensor, row: int, offset: float) -> dict[str, Any]:
    r"""Keyword arguments of one bad call on :func:`_mixed_domain`; the generic kinds as :func:`_corrupt`."""
    if not kind.startswith("X_") or kind in CORRUPTIONS:
        return _corrupt(kind, policy, X, Y, row, offset)
    bad = X.clone()
    fraction = 0.05 + 0.9 * (offset % 1.0)  # strictly between two grid values
    if kind == "X_int_off_grid":
        bad[row, 1] = min(bad[row, 1].item(), 4.0) + fraction
    elif kind == "X_step_off_grid":
        bad[row, 5] = min(bad[row, 5].item(), 0.4) + 0.1 * fraction
    elif kind == "X_no_hot":
        bad[row, 2:5] = 0.0
    elif kind == "X_two_hot":
        bad[row, 2:5] = torch.tensor([1.0, 1.0, 0.0], dtype=bad.dtype)
    elif kind == "X_half_hot":
        bad[row, 2:5] = torch.tensor([fraction, 1.0 - fraction, 0.0], dtype=bad.dtype)
    elif kind == "X_hot_not_one":
        bad[row, 2:5] = torch.tensor([0.0, 1.0 + offset, 0.0], dtype=bad.dtype)
    return {"X": bad, "Y": Y, "q": 1}


def test_every_rule_that_takes_a_mixed_domain_is_fuzzed_on_one(mixed_policies):
    assert len(mixed_policies) >= 25 and {"auto", "lb-gp-ucb-auto", "he-gp-ucb-auto", "qlognei"} <= set(mixed_policies)


def test_bad_input_on_a_mixed_domain_is_refused_cleanly_and_changes_no_state(mixed_policies, capsys):
    table = _fuzz(mixed_policies, _corrupt_mixed, MIXED_CORRUPTIONS, MIXED_EXAMPLES, "X_no_hot")
    total = sum(table.values())
    with capsys.disabled():
        print(f"\nmixed fuzz: {total} bad inputs over {len(mixed_policies)} rules")
    assert total >= 500 and {kind for _, kind, _ in table} >= set(MIXED_CORRUPTIONS) - {"X_outside_int"}


@pytest.mark.parametrize("copy", ["float32", "int64", "numpy"])
def test_a_lower_precision_or_integer_copy_of_mixed_points_is_accepted(copy):
    domain = MixedDomain((IntParameter("n", 1, 5), CategoricalParameter("act", ("relu", "tanh")), FloatParameter("p", 0.0, 0.5, step=0.25)))
    X = domain.sample(4, 0)
    X[:, -1] = torch.tensor([0.0, 0.25, 0.5, 0.0]) if copy != "int64" else 0.0  # an integer copy needs integer points
    Y = X.sum(-1, keepdim=True)
    X_copy: Any = {"float32": X.float(), "int64": X.long(), "numpy": X.numpy()}[copy]
    assert torch.equal(torch.as_tensor(X_copy).double(), X)
    for method in ("auto", "he-gp-ucb-auto", "random"):
        policy = make_policy(method, domain, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = policy.suggest(X_copy, Y)
        assert bool(domain.contains(x).all())
        reference = make_policy(method, domain, seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert torch.equal(reference.suggest(X, Y), x), method  # the copy is those points
