r"""Property-based fuzzing of the policies' entry points with bad input (Hypothesis).

Every registered method, on a box and (where it supports one) a pool, as set up by the
golden-trace cases, receives generated bad input through ``suggest`` and ``observe``: a bad
batch size, points with NaN or inf, the wrong shape or width, bool, complex or text values,
points outside the box or not in the pool (also as integers or lower precision), ragged lists,
values that do not match the points, and empty observations. Each call is classified by its
outcome. The test fails on any exception other than ``ValueError`` / ``TypeError``, on any bad
input accepted silently, and on any change of the policy's saved JSON state. Hypothesis runs
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

from botorch_unknown_hypers.domains import FiniteDomain
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


def test_every_method_is_fuzzed_on_a_box_and_a_pool(policies):
    fuzzed = {key.split("@")[0] for key in policies}
    assert set(list_methods()) <= fuzzed
    pools = [key for key, (policy, _, _) in policies.items() if isinstance(policy.domain, FiniteDomain)]
    assert len(pools) >= 20


def test_bad_input_is_refused_cleanly_and_changes_no_state(policies, capsys):
    keys = sorted(policies)
    table: Counter[tuple[str, str, str]] = Counter()

    @settings(
        max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        key=st.sampled_from(keys),
        entry=st.sampled_from(ENTRIES),
        kind=st.sampled_from(CORRUPTIONS),
        row=st.integers(min_value=0, max_value=3),
        offset=st.floats(min_value=1e-3, max_value=1e3, allow_nan=False),
    )
    def check(key: str, entry: str, kind: str, row: int, offset: float) -> None:
        policy, X, Y = policies[key]
        if entry == "observe" and kind.startswith("q_"):
            entry = "suggest"  # observe has no batch size
        if entry == "suggest" and kind == "empty" and policy.min_observations == 0:
            kind = "X_nan"  # no data is valid input for rules that start from their prior
        kwargs = _corrupt(kind, policy, X, Y, row, offset)
        before = json.dumps(policy.state_dict(), sort_keys=True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _call(policy, entry, kwargs)
        except (ValueError, TypeError) as e:
            outcome = type(e).__name__
            assert str(e), f"{key} {entry} {kind}: empty message"
        except Exception as e:  # noqa: BLE001 - anything else is a defect
            raise AssertionError(f"{key} {entry} {kind}: {type(e).__name__}: {e}") from e
        else:
            raise AssertionError(f"{key} {entry} {kind}: bad input accepted silently")
        after = json.dumps(policy.state_dict(), sort_keys=True)
        assert after == before, f"{key} {entry} {kind}: the state changed after a refused call"
        table[(entry, kind, outcome)] += 1

    check()
    total = sum(table.values())
    with capsys.disabled():
        print(f"\nfuzz: {total} bad inputs over {len(keys)} (method, domain) cases")
        for (entry, kind, outcome), count in sorted(table.items()):
            print(f"  {entry:8s} {kind:18s} {outcome:10s} {count:5d}")
    assert total >= 1000
