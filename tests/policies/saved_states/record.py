r"""Record saved states of a release (``STATE_VERSION`` 3 and 4 so far), plays still pending.

Run from a checkout of that release (``PYTHONPATH=<checkout> python record.py OUT.json``), with
one intra-op thread. For
each case: two played rounds from an initial design, then a batch suggested and (for a batch
of two) one of its values told, so that the saved state holds pending plays; then the rest of
the batch is told and the next batch suggested. ``test_saved_states.py`` loads the saved state into
the current code, tells the same rows and checks that the next batch is the recorded one.

``states_v3.json`` was last written by the release with ``STATE_VERSION`` 3 with two later changes of the
``gp-kernel`` problem applied to it (``problems/prior_tasks.py::paper_arms``, arms without
``torch.linspace``, and ``models/tabular.py::TabularPriorGP.prior_factor``, the symmetric root):
a state names pool points by their exact coordinates and the next suggestion depends on the
problem's draw, so the states must be of today's problem; their format is the release's. ``states_v4.json`` was written by the last release with
``STATE_VERSION`` 4 (before the survivor flags took one layout), unchanged.
"""

from __future__ import annotations

import json
import sys

import torch

from botorch_unknown_hypers import get_problem, make_policy
from botorch_unknown_hypers.loop import initial_design

FAST = {"num_restarts": 2, "raw_samples": 32}
CASES = [  # (method, problem, q): balancing, elimination, prior and robust rules
    ("lb-gp-ucb", "golden-pool", 2),
    ("hb-gp-ucb", "golden-pool", 2),
    ("lb-gp-ucb-auto", "golden-pool", 2),
    ("he-gp-ucb", "golden-pool", 2),
    ("he-gp-ucb-auto", "golden-pool", 2),
    ("pe-gp-ts", "gp-kernel", 2),
    ("pe-gp-ucb", "gp-kernel", 1),
    ("hp-gp-ts", "gp-kernel", 2),
    ("he-stableopt", "robust-peak", 1),
]


def golden_pool():
    from tests.golden.cases import GoldenPool

    return GoldenPool()


def problem_of(name: str):
    return golden_pool() if name == "golden-pool" else get_problem(name).instance(0)


def record(method: str, problem_name: str, q: int) -> dict:
    problem = problem_of(problem_name)
    domain = problem.domain
    policy = make_policy(method, domain, seed=0, **FAST)
    policy.bind_task(problem.task_info())
    X = initial_design(domain, max(problem.n_init, 4), 0).to(torch.float64)
    Y = problem.evaluate_true(X).reshape(-1, 1)
    policy.observe(X, Y)
    for _ in range(2):
        x = policy.suggest(X, Y, q=q)
        y = problem.evaluate_true(x).reshape(-1, 1)
        policy.observe(x, y)
        X, Y = torch.cat([X, x]), torch.cat([Y, y])
    x = policy.suggest(X, Y, q=q)
    y = problem.evaluate_true(x).reshape(-1, 1)
    told = 1 if q > 1 else 0  # q = 1: the saved state holds the whole batch pending
    if told:
        policy.observe(x[:told], y[:told])
    X, Y = torch.cat([X, x[:told]]), torch.cat([Y, y[:told]])
    state = json.loads(json.dumps(policy.state_dict()))
    policy.observe(x[told:], y[told:])
    X_next, Y_next = torch.cat([X, x[told:]]), torch.cat([Y, y[told:]])
    expected = policy.suggest(X_next, Y_next, q=q)
    return {
        "method": method,
        "problem": problem_name,
        "q": q,
        "state": state,
        "train_X": X.tolist(),
        "train_Y": Y.tolist(),
        "rest_X": x[told:].tolist(),
        "rest_Y": y[told:].tolist(),
        "expected": expected.tolist(),
        "selected": list(policy.selected),
    }


if __name__ == "__main__":
    torch.set_num_threads(1)  # as the test replays them (another thread count changes the last bits)
    out = [record(*case) for case in CASES]
    from botorch_unknown_hypers.policies.base import STATE_VERSION

    assert all(o["state"]["version"] == STATE_VERSION for o in out)
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)
