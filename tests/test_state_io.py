"""Tests of policy state files: resume in a new process, reject corrupted or hostile files."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import pytest
import torch

from botorch_unknown_hypers.loop import AskTellOptimizer, initial_design
from botorch_unknown_hypers.policies.registry import make_policy
from botorch_unknown_hypers.problems.problem_registry import get_problem
from botorch_unknown_hypers.state_io import (
    DEFAULT_MAX_BYTES,
    load_policy_state,
    read_state_file,
    save_policy_state,
)

METHODS = ["lb-gp-ucb", "he-gp-ucb", "mle-gp-ts"]

RESUME_SCRIPT = """
import json, sys
from botorch_unknown_hypers.loop import AskTellOptimizer
from botorch_unknown_hypers.policies.registry import make_policy
from botorch_unknown_hypers.problems.problem_registry import get_problem
from botorch_unknown_hypers.state_io import load_policy_state

suggestions = {}
for method, path in json.loads(sys.argv[1]).items():
    # another seed on purpose: the generator state comes from the file
    opt = AskTellOptimizer(make_policy(method, get_problem("berkenkamp").domain, seed=999))
    load_policy_state(opt, path)
    suggestions[method] = [v.hex() for v in opt.ask().flatten().tolist()]
print(json.dumps(suggestions))
"""


def campaign(method: str, rounds: int = 3, seed: int = 7) -> AskTellOptimizer:
    r"""An optimizer on ``berkenkamp`` after the initial design and ``rounds`` rounds."""
    problem = get_problem("berkenkamp")
    noise = torch.Generator().manual_seed(seed)
    opt = AskTellOptimizer(make_policy(method, problem.domain, seed=seed))
    X0 = initial_design(problem.domain, problem.n_init, seed)
    opt.tell(X0, problem.evaluate(X0, generator=noise)[0])
    for _ in range(rounds):
        X = opt.ask()
        opt.tell(X, problem.evaluate(X, generator=noise)[0])
    return opt


def snapshot(opt: AskTellOptimizer) -> str:
    return json.dumps(opt.state_dict(), sort_keys=True)


def test_resume_in_a_new_process_gives_the_identical_next_suggestion(tmp_path):
    paths, expected = {}, {}
    for method in METHODS:
        opt = campaign(method)
        paths[method] = str(save_policy_state(opt, tmp_path / f"{method}.json"))
        expected[method] = [v.hex() for v in opt.ask().flatten().tolist()]  # this process's next suggestion
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{m}.json" for m in METHODS)  # no temp files
    proc = subprocess.run(
        [sys.executable, "-c", RESUME_SCRIPT, json.dumps(paths)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == expected


def test_policy_state_round_trip_and_kind_checks(tmp_path):
    opt = campaign("lb-gp-ucb", rounds=2)
    save_policy_state(opt.policy, tmp_path / "policy.json")
    save_policy_state(opt.policy, tmp_path / "policy.json")  # atomic replace of an existing file
    assert [p.name for p in tmp_path.iterdir()] == ["policy.json"]
    assert read_state_file(tmp_path / "policy.json")["kind"] == "policy"
    fresh = make_policy("lb-gp-ucb", get_problem("berkenkamp").domain, seed=0)
    load_policy_state(fresh, tmp_path / "policy.json")
    assert fresh.state_dict() == opt.policy.state_dict()
    other = AskTellOptimizer(make_policy("lb-gp-ucb", get_problem("berkenkamp").domain))
    with pytest.raises(ValueError, match="state of a policy, not of a optimizer"):
        load_policy_state(other, tmp_path / "policy.json")
    he = make_policy("he-gp-ucb", get_problem("berkenkamp").domain)
    before = json.dumps(he.state_dict())
    with pytest.raises(ValueError, match="'lb-gp-ucb', not of 'he-gp-ucb'"):
        load_policy_state(he, tmp_path / "policy.json")
    assert json.dumps(he.state_dict()) == before
    with pytest.raises(FileNotFoundError):
        load_policy_state(he, tmp_path / "missing.json")


class Payload:
    r"""Unpickling this creates ``marker``: proof that a loader executed the file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _edit(text: str, change) -> str:
    envelope = json.loads(text)
    change(envelope)
    return json.dumps(envelope)


def _set(path: list, value):
    def change(envelope):
        node = envelope
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


BAD_FILES = {
    "truncated": (lambda text, marker: text[: len(text) // 2], "not valid JSON"),
    "empty": (lambda text, marker: "", "not valid JSON"),
    "not json": (lambda text, marker: "train_X = [[0.5]]\n", "not valid JSON"),
    "a bare state dict": (lambda text, marker: json.dumps(json.loads(text)["state"]), "not a buh policy state file"),
    "a top-level list": (lambda text, marker: "[1, 2, 3]", "not a buh policy state file"),
    "another file version": (lambda text, marker: _edit(text, _set(["version"], 2)), "file version 2"),
    "state of the wrong type": (lambda text, marker: _edit(text, _set(["state"], [])), '"state" must be an object'),
    "generator of the wrong type": (
        lambda text, marker: _edit(text, _set(["state", "policy", "generator"], "abc")), "state['generator']"
    ),
    "train_X of the wrong type": (
        lambda text, marker: _edit(text, _set(["state", "train_X"], "abc")), "rejected by 'lb-gp-ucb'"
    ),
    "negative counter": (
        lambda text, marker: _edit(text, _set(["state", "policy", "num_observed"], -1)), "num_observed"
    ),
    "NaN": (lambda text, marker: text.replace('"train_Y":[[', '"train_Y":[[NaN,', 1), "non-finite number NaN"),
    "Infinity": (lambda text, marker: text.replace('"train_Y":[[', '"train_Y":[[-Infinity,', 1), "non-finite"),
    "overflowing float": (lambda text, marker: text.replace('"train_Y":[[', '"train_Y":[[1e999,', 1), "overflows"),
    "huge integer": (lambda text, marker: text.replace('"train_Y":[[', '"train_Y":[[' + "9" * 5000 + ",", 1), "invalid"),
    "duplicate keys": (lambda text, marker: text[:-1] + ',"state":{}}', "duplicate key 'state'"),
    "JSON bomb of deep nesting": (
        lambda text, marker: text[:-1] + ',"x":' + "[" * 200_000 + "]" * 200_000 + "}", "nested deeper"
    ),
    "moderate nesting": (lambda text, marker: text[:-1] + ',"x":' + "[" * 40 + "]" * 40 + "}", "nested deeper"),
    "pickle (protocol 0, text)": (
        lambda text, marker: pickle.dumps(Payload(marker), protocol=0).decode("latin-1"), "not valid JSON"
    ),
    "pickle (protocol 4, binary)": (lambda text, marker: pickle.dumps(Payload(marker), protocol=4), "not UTF-8"),
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[AskTellOptimizer, str]:
    r"""A campaign mid-way and the text of its state file."""
    opt = campaign("lb-gp-ucb", rounds=2)
    path = save_policy_state(opt, tmp_path_factory.mktemp("state") / "good.json")
    return opt, path.read_text()


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_corrupted_or_hostile_file_is_rejected_unchanged_and_executes_nothing(saved, tmp_path, case):
    opt, good = saved
    marker = tmp_path / "executed"
    make, message = BAD_FILES[case]
    content = make(good, str(marker))
    path = tmp_path / "state.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    before = snapshot(opt)
    with pytest.raises(ValueError) as info:
        load_policy_state(opt, path)
    assert str(path) in str(info.value) and message in str(info.value)
    assert "nothing was loaded" in str(info.value)
    assert snapshot(opt) == before
    assert not marker.exists()  # the payload was never unpickled
    # the good file is still accepted
    path.write_text(good)
    load_policy_state(opt, path)
    assert snapshot(opt) == before


def test_oversized_file_is_rejected_unread(saved, tmp_path):
    opt, _ = saved
    path = tmp_path / "huge.json"
    with open(path, "wb") as fh:  # sparse: no disk space used
        fh.truncate(DEFAULT_MAX_BYTES + 1)
    before = snapshot(opt)
    with pytest.raises(ValueError, match="larger than the"):
        load_policy_state(opt, path)
    small = tmp_path / "small.json"
    small.write_text("x" * 101)
    with pytest.raises(ValueError, match="larger than the 100-byte limit"):
        load_policy_state(opt, small, max_bytes=100)
    assert snapshot(opt) == before


def test_failure_after_a_partial_load_is_rolled_back(tmp_path, monkeypatch):
    early = campaign("lb-gp-ucb", rounds=1)
    path = save_policy_state(early.policy, tmp_path / "early.json")
    policy = campaign("lb-gp-ucb", rounds=3).policy
    before = json.dumps(policy.state_dict())
    assert before != json.dumps(early.policy.state_dict())

    original = type(policy)._after_load
    calls = []

    def broken_once(self):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("disk on fire")
        original(self)

    # the base class has already restored generator, counters and state when this raises
    monkeypatch.setattr(type(policy), "_after_load", broken_once)
    with pytest.raises(ValueError, match="disk on fire"):
        load_policy_state(policy, path)
    monkeypatch.undo()
    assert len(calls) == 2  # the failed load, then the rollback
    assert json.dumps(policy.state_dict()) == before
