r"""Recording and replaying golden traces round by round, through the public API only.

A recorded trace of a case at a seed holds the data the campaign evaluated (every point at
full precision and its noisy value, the initial design first) and, per round, what the
round produced (points, ``selected``, ``n_candidates``, decision diagnostics) and what it
started from: the policy's JSON :meth:`~botorch_unknown_hypers.policies.base.Policy.state_dict`
after the previous round, generator state included.

Recording (:func:`record_trace`) runs the public :func:`~botorch_unknown_hypers.loop.run`
itself: the problem is wrapped so that every evaluation is kept, and ``run``'s callback
saves the policy's state after each round.

Replaying (:func:`replay_trace`): round 1 is ``run`` for one round from a fresh policy (this
keeps ``run``'s initial design, noise and bookkeeping under the test); round ``t > 1``
rebuilds the policy (a copy of one built by ``make_policy`` and told ``bind_task`` as ``run``
tells it), loads the recorded data and state into an
:class:`~botorch_unknown_hypers.loop.AskTellOptimizer`, asks for the batch, then tells the *recorded* values (at the points just proposed, so that the policy's
pending plays match them) and reads the diagnostics. A last-bit difference of a CPU kernel
therefore changes one round's output by last bits and never reaches a later round.

The generator state (5,056 bytes) dominates a policy state; it is stored as the bytes that
changed since the previous round's state (since the freshly seeded generator for the first
one), as base64 runs, which keeps ``traces.json`` small.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import torch
from torch import Tensor

from botorch_unknown_hypers import AskTellOptimizer, make_policy, run
from tests.golden.cases import DIAGNOSTIC_KEYS, ROUNDS, Case


class RecordingProblem:
    r"""A black box that forwards everything to ``inner`` and appends every evaluation
    (``X``, ``y``) to ``log``; ``instance`` and ``to`` stay wrapped. A robust problem stays
    robust (its attributes are forwarded)."""

    def __init__(self, inner: Any, log: list[tuple[Tensor, Tensor]]) -> None:
        self.inner = inner
        self.log = log

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def instance(self, seed: int) -> RecordingProblem:
        return RecordingProblem(self.inner.instance(seed), self.log)

    def to(self, device: Any = None, dtype: Any = None) -> RecordingProblem:
        return RecordingProblem(self.inner.to(device=device, dtype=dtype), self.log)

    def evaluate(self, X: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        y, f = self.inner.evaluate(X, generator=generator)
        self.log.append((X.detach().clone(), y.detach().clone()))
        return y, f


def _policy(case: Case, seed: int):
    problem = case.make_problem()
    return problem, make_policy(case.method, problem.domain, seed=seed, **case.make_options())


def _outputs(history: Any) -> list[dict[str, Any]]:
    r"""Per BO round of a ``run`` history: ``x`` (as ``run`` formats it), ``selected``,
    ``n_candidates`` and the decision diagnostics."""
    rounds = []
    for _, rows in history[history["iteration"] > 0].groupby("iteration", sort=True):
        text = rows["diagnostics"].iloc[0]
        diag = json.loads(text) if text else {}
        rounds.append({
            "selected": list(rows["selected"]),
            "n_candidates": int(rows["n_candidates"].iloc[0]),
            "diagnostics": {k: diag[k] for k in DIAGNOSTIC_KEYS if k in diag},
        })
    return rounds


# ------------------------------------------------------------ generator state as a delta
def encode_generator(state: list[int], previous: list[int]) -> list[list[Any]]:
    r"""The bytes of ``state`` that differ from ``previous``: ``[[offset, base64], ...]`` runs."""
    runs: list[list[Any]] = []
    changed = [i for i, (a, b) in enumerate(zip(state, previous)) if a != b]
    for i in changed:
        if runs and i - runs[-1][1] <= 4:  # a short gap costs less inside a run than a new run
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    return [[a, base64.b64encode(bytes(state[a:b])).decode()] for a, b in runs]


def decode_generator(runs: list[list[Any]], previous: list[int]) -> list[int]:
    r"""Inverse of :func:`encode_generator`."""
    state = list(previous)
    for offset, text in runs:
        chunk = base64.b64decode(text)
        state[offset : offset + len(chunk)] = list(chunk)
    return state


def seeded_generator(seed: int) -> list[int]:
    r"""The state of a CPU generator freshly seeded with ``seed`` (a policy's at construction)."""
    return torch.Generator(device="cpu").manual_seed(seed).get_state().tolist()


def policy_states(trace: dict[str, Any]) -> list[dict[str, Any] | None]:
    r"""Per round, the full policy state it starts from (``None`` for round 1)."""
    previous = seeded_generator(trace["seed"])
    states: list[dict[str, Any] | None] = []
    for record in trace["rounds"]:
        state = record.get("start")
        if state is None:
            states.append(None)
            continue
        generator = decode_generator(state["generator"], previous)
        states.append({**state, "generator": generator})
        previous = generator
    return states


# ------------------------------------------------------------------------- record/replay
def record_trace(case: Case, seed: int) -> dict[str, Any]:
    r"""The recorded trace of ``case`` at ``seed`` (see the module docstring): ``run`` for
    :data:`ROUNDS` rounds, with every evaluation and the policy's state after each round."""
    problem, policy = _policy(case, seed)
    log: list[tuple[Tensor, Tensor]] = []
    states: list[dict[str, Any]] = []
    history = run(RecordingProblem(problem, log), policy, iterations=ROUNDS, seed=seed, batch_size=case.q,
                  n_init=case.n_init, callback=lambda t: states.append(policy.state_dict()))
    X = torch.cat([x for x, _ in log])
    Y = torch.cat([y.reshape(-1) for _, y in log])
    n_init = X.shape[0] - ROUNDS * case.q
    rounds = _outputs(history)
    previous = seeded_generator(seed)
    for t, record in enumerate(rounds[1:], start=1):
        state = dict(states[t - 1])
        state["generator"], previous = encode_generator(state["generator"], previous), state["generator"]
        record["start"] = state
    return {"seed": seed, "n_init": n_init, "X": X.tolist(), "Y": Y.tolist(), "rounds": rounds}


def round_rows(trace: dict[str, Any], q: int, t: int) -> slice:
    r"""Rows of round ``t`` (1-based) in the trace's data."""
    start = trace["n_init"] + (t - 1) * q
    return slice(start, start + q)


def replay_trace(case: Case, trace: dict[str, Any], rounds: int = ROUNDS) -> list[dict[str, Any]]:
    r"""Replay the first ``rounds`` rounds of a recorded ``trace`` (see the module docstring).

    Returns, per round, ``x`` (``q x d`` points as proposed, full precision), ``selected``,
    ``n_candidates`` and the decision diagnostics; round 1 also ``initial_X`` / ``initial_Y``,
    the initial design ``run`` evaluated and its values.
    """
    seed = trace["seed"]
    out: list[dict[str, Any]] = []
    problem, template = _policy(case, seed)
    policy = copy.deepcopy(template)
    log: list[tuple[Tensor, Tensor]] = []
    history = run(RecordingProblem(problem, log), policy, iterations=1, seed=seed, batch_size=case.q, n_init=case.n_init)
    first = _outputs(history)[0]
    X = log[-1][0]
    initial = log[:-1]
    out.append({"x": X.tolist(), **first,
                "initial_X": [row for x, _ in initial for row in x.tolist()],
                "initial_Y": [v for _, y0 in initial for v in y0.reshape(-1).tolist()]})
    # Every later round starts from a copy of one freshly built policy told about the task as
    # `run` tells it (building some rules takes seconds), then loads the recorded state.
    template.bind_task(problem.instance(seed).to(device=template.device, dtype=template.dtype).task_info())
    states = policy_states(trace)
    for t in range(2, rounds + 1):
        policy = copy.deepcopy(template)
        opt = AskTellOptimizer(policy)
        n = round_rows(trace, case.q, t).start
        opt.load_state_dict({"train_X": trace["X"][:n], "train_Y": [[v] for v in trace["Y"][:n]], "pending": [],
                             "pending_initial": False, "policy": states[t - 1]})
        X = opt.ask(case.q)
        y = torch.tensor(trace["Y"][round_rows(trace, case.q, t)], dtype=policy.dtype, device=policy.device)
        opt.tell(X, y)
        diag = policy.diagnostics
        out.append({"x": X.tolist(), "selected": list(policy.selected), "n_candidates": policy.n_candidates,
                    "diagnostics": json.loads(json.dumps({k: diag[k] for k in DIAGNOSTIC_KEYS if k in diag}))})
    return out
