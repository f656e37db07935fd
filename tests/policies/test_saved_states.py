"""States saved by the releases with STATE_VERSION 3 and 4 (plays still pending) load, and the
restored policy makes the same next suggestion as the policy that saved them.

The states in ``saved_states/states_v3.json`` and ``states_v4.json`` were written by
``saved_states/record.py`` run on those releases: balancing (lb-, hb-, lb-auto), elimination (he-,
he-auto), prior (pe-gp-ts, pe-gp-ucb, hp-gp-ts) and robust (he-stableopt) rules, each saved with
plays awaiting their values. Version 4 kept balancing's survivor flags as ``active`` and prior
elimination's in a nested ``survivors``; both load into the one layout, ``alive``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from botorch_unknown_hypers import get_problem, make_policy
from tests.golden.cases import FAST, GoldenPool

CASES = [
    {**case, "version": version}
    for version in (3, 4)
    for case in json.loads((Path(__file__).parent / "saved_states" / f"states_v{version}.json").read_text())
]


@pytest.fixture
def one_thread():
    r"""The states were recorded with one intra-op thread, and so are they replayed: another
    thread count changes reductions in the last bits, and an argmax over 500 arms compared
    exactly need not survive that."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("case", CASES, ids=[f"v{c['version']}-{c['method']}" for c in CASES])
def test_a_saved_state_with_pending_plays_resumes_with_the_same_suggestion(case):
    assert case["state"]["version"] == case["version"]
    problem = GoldenPool() if case["problem"] == "golden-pool" else get_problem(case["problem"]).instance(0)
    policy = make_policy(case["method"], problem.domain, seed=0, **FAST)
    policy.bind_task(problem.task_info())
    policy.load_state_dict(case["state"])
    assert policy.state.pending  # the saved plays still await their values
    if case["method"] != "hp-gp-ts":  # every rule with survivors: the one layout
        saved = policy.state_dict()["state"]
        assert any(policy.state.alive) and "active" not in saved and "survivors" not in saved
    tensor = lambda v: torch.tensor(v, dtype=torch.float64)  # noqa: E731
    policy.observe(tensor(case["rest_X"]), tensor(case["rest_Y"]))
    assert not policy.state.pending  # every pending play took its value
    X = torch.cat([tensor(case["train_X"]), tensor(case["rest_X"])])
    Y = torch.cat([tensor(case["train_Y"]), tensor(case["rest_Y"])])
    suggested = policy.suggest(X, Y, q=case["q"])
    assert torch.equal(suggested, tensor(case["expected"]))  # pool points: exactly
    assert policy.selected == case["selected"]
