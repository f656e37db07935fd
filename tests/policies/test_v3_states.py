"""States saved by the release with STATE_VERSION 3 (plays still pending) load, and the restored
policy makes the same next suggestion as the policy that saved them.

The states in ``v3_states/states_v3.json`` were written by ``v3_states/record.py`` run on that
release: balancing (lb-, hb-, lb-auto), elimination (he-, he-auto), prior (pe-gp-ts, pe-gp-ucb,
hp-gp-ts) and robust (he-stableopt) rules, each saved with plays awaiting their values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from botorch_unknown_hypers import get_problem, make_policy
from tests.golden.cases import FAST, GoldenPool

CASES = json.loads((Path(__file__).parent / "v3_states" / "states_v3.json").read_text())


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
@pytest.mark.parametrize("case", CASES, ids=[c["method"] for c in CASES])
def test_a_v3_state_with_pending_plays_resumes_with_the_same_suggestion(case):
    assert case["state"]["version"] == 3
    problem = GoldenPool() if case["problem"] == "golden-pool" else get_problem(case["problem"]).instance(0)
    policy = make_policy(case["method"], problem.domain, seed=0, **FAST)
    policy.bind_task(problem.task_info())
    policy.load_state_dict(case["state"])
    assert policy.state.pending  # the saved plays still await their values
    tensor = lambda v: torch.tensor(v, dtype=torch.float64)  # noqa: E731
    policy.observe(tensor(case["rest_X"]), tensor(case["rest_Y"]))
    assert not policy.state.pending  # every pending play took its value
    X = torch.cat([tensor(case["train_X"]), tensor(case["rest_X"])])
    Y = torch.cat([tensor(case["train_Y"]), tensor(case["rest_Y"])])
    suggested = policy.suggest(X, Y, q=case["q"])
    assert torch.equal(suggested, tensor(case["expected"]))  # pool points: exactly
    assert policy.selected == case["selected"]
