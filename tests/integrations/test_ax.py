"""Tests of the Ax integration: a rule as an Ax generation node, end to end with ``Client``."""

from __future__ import annotations

import json
import logging
import math

import pytest
import torch

pytest.importorskip("ax")
pytestmark = [  # Ax 1.3's own pandas / API deprecations
    pytest.mark.filterwarnings("ignore:The inplace keyword"),
    pytest.mark.filterwarnings("ignore:The 'future.infer_string' option"),
    pytest.mark.filterwarnings("ignore:add_tracking_metric is deprecated"),
]

from ax.api.client import Client
from ax.api.configs import ChoiceParameterConfig, RangeParameterConfig
from ax.core.trial_status import TrialStatus
from ax.exceptions.core import UserInputError
from ax.exceptions.generation_strategy import MaxParallelismReachedException

from botorch_unknown_hypers.integrations.ax import (
    METHOD_KEY,
    NODE_KEY,
    OBSERVED_KEY,
    SELECTED_KEY,
    STATE_KEY,
    PolicyGenerationNode,
    SearchSpaceMap,
    _json_store_precision,
    load_client,
    policy_generation_strategy,
    policy_state,
    save_client,
)
from botorch_unknown_hypers.loop import AskTellOptimizer
from botorch_unknown_hypers.policies.registry import make_policy
from botorch_unknown_hypers.domains import BoxDomain

FAST = {"num_restarts": 2, "raw_samples": 32}
N_INIT = 5
N_TRIALS = 15
BOUNDS = {"x1": (-1.0, 2.0), "x2": (0.0, 1.0)}


@pytest.fixture(autouse=True)
def quiet_ax():
    logger = logging.getLogger("ax")
    level = logger.level
    logger.setLevel(logging.WARNING)
    yield
    logger.setLevel(level)


def reward(params: dict[str, float]) -> float:
    r"""A cheap 2-d function to maximise (one broad bump and a ripple)."""
    x1, x2 = params["x1"], params["x2"]
    return math.exp(-((x1 - 0.6) ** 2) - 4 * (x2 - 0.3) ** 2) + 0.1 * math.sin(5 * x1)


def new_client(method: str, minimize: bool = True, **options) -> Client:
    client = Client()
    client.configure_experiment(
        parameters=[RangeParameterConfig(name=n, bounds=b, parameter_type="float") for n, b in BOUNDS.items()]
    )
    client.configure_optimization(objective="-loss" if minimize else "score")
    client.set_generation_strategy(policy_generation_strategy(method, n_init=N_INIT, seed=3, options={**FAST, **options}))
    return client


def run_trials(client: Client, num: int, minimize: bool = True) -> list[tuple[int, dict[str, float]]]:
    out = []
    for _ in range(num):
        ((index, params),) = client.get_next_trials(max_trials=1).items()
        value = reward(params)
        client.complete_trial(index, raw_data={"loss": -value} if minimize else {"score": value})
        out.append((index, params))
    return out


def generator_run(client: Client, index: int):
    (gr,) = client._experiment.trials[index].generator_runs
    return gr


@pytest.fixture(scope="module")
def lb_campaign() -> tuple[Client, list[tuple[int, dict[str, float]]]]:
    client = new_client("lb-gp-ucb")
    return client, run_trials(client, N_TRIALS)


def test_lb_gp_ucb_experiment_runs_end_to_end(lb_campaign):
    client, trials = lb_campaign
    experiment = client._experiment
    assert len(experiment.trials) == N_TRIALS
    assert all(t.status == TrialStatus.COMPLETED for t in experiment.trials.values())
    for index, _ in trials:
        gr = generator_run(client, index)
        metadata = gr.gen_metadata or {}
        if index < N_INIT:
            assert gr._generation_node_name == "Sobol" and STATE_KEY not in metadata
        else:
            assert gr._generation_node_name == "lb-gp-ucb"
            assert metadata[NODE_KEY] == "lb-gp-ucb" and metadata[METHOD_KEY] == "lb-gp-ucb"
            assert float(metadata[SELECTED_KEY]) > 0  # the length scale played
    for name, (low, high) in BOUNDS.items():
        assert all(low <= p[name] <= high for _, p in trials)


def test_policy_state_round_trips_through_metadata(lb_campaign):
    client, trials = lb_campaign
    domain = BoxDomain(torch.tensor([[-1.0, 0.0], [2.0, 1.0]], dtype=torch.float64))
    for index, _ in trials[N_INIT:]:
        state = policy_state(generator_run(client, index))
        assert json.loads(json.dumps(state)) == state  # JSON-safe
        policy = make_policy("lb-gp-ucb", domain, seed=3, **FAST)
        policy.load_state_dict(state)
        assert policy.state_dict() == state
        # the state after round t's suggest: t - 1 plays recorded, round t pending
        assert state["state"]["round"] == index - N_INIT
        assert len(state["state"]["play_candidate"]) == index - N_INIT
        assert state["state"]["pending"] is not None


def test_node_runs_the_same_rule_as_ask_tell(lb_campaign):
    r"""Ax's stateless regeneration reproduces an uninterrupted ask/tell run exactly."""
    _, trials = lb_campaign
    domain = BoxDomain(torch.tensor([[-1.0, 0.0], [2.0, 1.0]], dtype=torch.float64))
    opt = AskTellOptimizer(make_policy("lb-gp-ucb", domain, seed=3, **FAST))

    def xy(params_list):
        X = torch.tensor([[p["x1"], p["x2"]] for p in params_list], dtype=torch.float64)
        Y = torch.tensor(_json_store_precision([reward(p) for p in params_list]), dtype=torch.float64)
        return X, Y

    opt.tell(*xy([p for _, p in trials[:N_INIT]]))
    for _, params in trials[N_INIT:]:
        x = opt.ask()
        assert torch.equal(x, xy([params])[0])
        opt.tell(x, xy([params])[1])


def test_minimised_objective_is_negated(lb_campaign):
    client, trials = lb_campaign
    node = client._generation_strategy.nodes_by_name["lb-gp-ucb"]
    expected = torch.tensor(_json_store_precision([reward(p) for _, p in trials[:-1]]), dtype=torch.float64)
    assert torch.equal(node.train_Y.squeeze(-1), expected)  # the data of the last generation


def test_regeneration_after_restart_gives_the_same_candidate(lb_campaign, tmp_path):
    client, _ = lb_campaign
    path = tmp_path / "snapshot.json"
    save_client(client, path)
    expected = load_client(path).get_next_trials(max_trials=1)
    # a fresh process would see only the file; a new strategy object must agree too
    again = load_client(path, generation_strategy=policy_generation_strategy("lb-gp-ucb", n_init=N_INIT, seed=3, options=FAST))
    assert again.get_next_trials(max_trials=1) == expected
    assert client.get_next_trials(max_trials=1) == expected  # the uninterrupted client
    # one trial of the node in flight at a time: the rules are sequential
    with pytest.raises(MaxParallelismReachedException):
        client.get_next_trials(max_trials=1)


def test_he_gp_ucb_experiment_and_failed_trial():
    client = new_client("he-gp-ucb", minimize=False)
    trials = run_trials(client, N_TRIALS - 1, minimize=False)
    ((index, _),) = client.get_next_trials(max_trials=1).items()
    client.mark_trial_failed(index)  # dropped from the record; the next round replaces it
    ((nxt, _),) = client.get_next_trials(max_trials=1).items()
    experiment = client._experiment
    assert len(trials) == N_TRIALS - 1 and nxt == N_TRIALS
    assert sum(t.status == TrialStatus.COMPLETED for t in experiment.trials.values()) == N_TRIALS - 1
    last = policy_state(generator_run(client, nxt))
    failed = policy_state(generator_run(client, index))
    assert last["state"]["round"] == failed["state"]["round"] == N_TRIALS - 1 - N_INIT
    labels = {generator_run(client, i).gen_metadata[SELECTED_KEY] for i in range(N_INIT, N_TRIALS)}
    assert labels <= {"0.3", "0.4", "0.5", "0.7", "1"}  # task (a)'s length scales, the default set
    assert sum(last["state"]["alive"]) >= 1
    node = client._generation_strategy.nodes_by_name["he-gp-ucb"]
    expected = torch.tensor(_json_store_precision([reward(p) for _, p in trials]), dtype=torch.float64)
    assert torch.equal(node.train_Y.squeeze(-1), expected)  # maximised objective: not negated


def test_unsupported_search_spaces_and_methods():
    with pytest.raises(UserInputError, match="unknown method"):
        PolicyGenerationNode("no-such-rule")
    client = Client()
    client.configure_experiment(
        parameters=[
            RangeParameterConfig(name="x", bounds=(0.0, 1.0), parameter_type="float"),
            ChoiceParameterConfig(name="c", values=["a", "b", "c"], parameter_type="str", is_ordered=False),
        ]
    )
    space = SearchSpaceMap.from_search_space(client._experiment.search_space)
    assert space.names == ("x", "c") and space.dim == 4  # c: three one-hot columns


def test_search_space_map_log_scale_and_fixed():
    client = Client()
    client.configure_experiment(
        parameters=[
            RangeParameterConfig(name="lr", bounds=(1e-4, 1e-1), parameter_type="float", scaling="log"),
            RangeParameterConfig(name="x", bounds=(0.0, 1.0), parameter_type="float"),
        ]
    )
    space = SearchSpaceMap.from_search_space(client._experiment.search_space)
    bounds = space.domain(torch.float64, torch.device("cpu")).bounds
    assert space.names == ("lr", "x") and [p.log for p in space.space.parameters] == [True, False]
    assert torch.allclose(bounds[:, 0], torch.tensor([math.log(1e-4), math.log(1e-1)], dtype=torch.float64))
    params = space.to_parameters(bounds[1])
    assert params == {"lr": 1e-1, "x": 1.0}  # clamped to Ax's bounds after exp(log(u))
    assert space.to_row({"lr": 1e-2, "x": 0.5}) == pytest.approx([math.log(1e-2), 0.5])


@pytest.mark.parametrize("method", ["lb-gp-ucb-auto", "he-gp-ucb-auto"])
def test_auto_presets_run_in_ax(method):
    client = new_client(method, minimize=False)
    trials = run_trials(client, N_TRIALS, minimize=False)
    assert len(trials) == N_TRIALS
    last = policy_state(generator_run(client, N_TRIALS - 1))
    assert last["name"] == method and last["state"]["proposed_at"][0] == N_INIT
    labels = {generator_run(client, i).gen_metadata[SELECTED_KEY] for i in range(N_INIT, N_TRIALS)}
    assert all(";" in label for label in labels)  # ARD candidates: one length scale per input


@pytest.mark.parametrize("method", ["lb-gp-ucb", "he-gp-ucb"])
def test_five_batch_trials_of_four_arms(method):
    import pandas as pd
    from ax.core.data import Data

    client = new_client(method)
    run_trials(client, N_INIT)  # the Sobol design, one arm per trial
    experiment, strategy = client._experiment, client._generation_strategy
    arms_seen = []
    for _ in range(5):
        ((gr,),) = strategy.gen(experiment=experiment, n=4)
        assert gr._generation_node_name == method and len(gr.arms) == 4
        trial = experiment.new_batch_trial(generator_run=gr)
        trial.mark_running(no_runner_required=True)
        values = [-reward(arm.parameters) for arm in trial.arms]  # the loss, minimised
        rows = [
            {"trial_index": trial.index, "arm_name": arm.name, "metric_name": "loss", "metric_signature": "loss", "mean": v, "sem": 0.0}
            for arm, v in zip(trial.arms, values)
        ]
        experiment.attach_data(Data(df=pd.DataFrame(rows)))
        trial.mark_completed()
        points = [[arm.parameters["x1"], arm.parameters["x2"]] for arm in trial.arms]
        assert len({tuple(p) for p in points}) == 4  # four distinct arms per batch
        arms_seen += points
        state = policy_state(gr)
        assert len(state["state"]["pending"]) == 4  # the batch's four plays await their values
    # the batches' values entered the rule: each of the 20 arms is a recorded play
    ((gr,),) = strategy.gen(experiment=experiment, n=1)
    played = policy_state(gr)["state"]
    assert played["round"] == 20 and len(played["pending"]) == 1
    assert len(arms_seen) == 20


# ------------------------------------------------------------------ trials in flight
def as_xy(params_list: list[dict[str, float]]) -> tuple[torch.Tensor, torch.Tensor]:
    X = torch.tensor([[p["x1"], p["x2"]] for p in params_list], dtype=torch.float64)
    Y = torch.tensor(_json_store_precision([reward(p) for p in params_list]), dtype=torch.float64)
    return X, Y


def fill(client: Client, in_flight: int) -> dict[int, dict[str, float]]:
    r"""Ask until ``in_flight`` trials run (Ax gives one trial in the call that leaves Sobol)."""
    out: dict[int, dict[str, float]] = {}
    while len(out) < in_flight:
        out.update(client.get_next_trials(max_trials=in_flight - len(out)))
    return out


@pytest.mark.parametrize("method", ["lb-gp-ucb-auto", "he-gp-ucb"])
def test_four_trials_in_flight_completed_in_reverse(method, tmp_path):
    r"""Four trials in flight, results in reverse order, a snapshot with two still running: the
    node gives the points, the record and the state of the ask/tell path fed the same values."""
    client = Client()
    client.configure_experiment(
        parameters=[RangeParameterConfig(name=n, bounds=b, parameter_type="float") for n, b in BOUNDS.items()]
    )
    client.configure_optimization(objective="score")
    client.set_generation_strategy(policy_generation_strategy(method, n_init=N_INIT, seed=3, options=FAST, max_in_flight=4))
    design = run_trials(client, N_INIT, minimize=False)
    domain = BoxDomain(torch.tensor([[-1.0, 0.0], [2.0, 1.0]], dtype=torch.float64))
    opt = AskTellOptimizer(make_policy(method, domain, seed=3, **FAST))  # the sequential path
    opt.tell(*as_xy([p for _, p in design]))

    def complete(clients, index, params):
        for c in clients:
            c.complete_trial(index, raw_data={"score": reward(params)})
        opt.tell(*as_xy([params]))

    def same_as_ask_tell(client, trials):
        for index in sorted(trials):  # generated in index order, each conditioned on the earlier ones
            X, _ = as_xy([trials[index]])
            assert torch.equal(opt.ask(), X)
            assert policy_state(generator_run(client, index)) == opt.policy.state_dict()

    first = fill(client, 4)
    assert sorted(first) == [5, 6, 7, 8]
    assert len({tuple(p.values()) for p in first.values()}) == 4  # four distinct points
    with pytest.raises(MaxParallelismReachedException):
        client.get_next_trials(max_trials=1)
    same_as_ask_tell(client, first)
    assert len(opt.policy.state.pending) == 4  # four plays await their values

    # results in reverse order; a snapshot while trials 5 and 6 still run
    for index in (8, 7):
        complete([client], index, first[index])
    path = tmp_path / "snapshot.json"
    save_client(client, path)
    loaded = load_client(path)
    second = client.get_next_trials(max_trials=2)
    assert loaded.get_next_trials(max_trials=2) == second
    assert sorted(second) == [9, 10]
    same_as_ask_tell(client, second)
    for index in (10, 9, 6, 5):
        complete([client, loaded], index, {**first, **second}[index])
    third = client.get_next_trials(max_trials=1)
    assert loaded.get_next_trials(max_trials=1) == third
    same_as_ask_tell(client, third)
    (index,) = third
    assert generator_run(client, index).gen_metadata[OBSERVED_KEY] == [0, 1, 2, 3, 4, 8, 7, 10, 9, 6, 5]
    state = policy_state(generator_run(client, index))["state"]
    assert len(state["pending"]) == 1  # only the new trial's play awaits its value
    assert len(state["play_candidate"]) == state["round"] == 6  # each result entered the record once
    for c in (client, loaded):
        assert all(t.status == TrialStatus.COMPLETED for i, t in c._experiment.trials.items() if i != index)


def test_max_in_flight_needs_a_rule_with_pending_points():
    with pytest.raises(UserInputError, match="max_in_flight=2: a-gp-ucb does not condition on pending points"):
        policy_generation_strategy("a-gp-ucb", max_in_flight=2)
    for bad in (0, 1.5, True, "4"):
        with pytest.raises(UserInputError, match="max_in_flight must be an int >= 1"):
            PolicyGenerationNode("lb-gp-ucb", max_in_flight=bad)
    node = PolicyGenerationNode("a-gp-ucb", max_in_flight=1)  # a sequential rule keeps one
    assert [c.threshold for c in node.pausing_criteria] == [1]
    node = PolicyGenerationNode.from_json_dict(PolicyGenerationNode("he-gp-ucb", max_in_flight=3).to_json_dict())
    assert node.max_in_flight == 3 and [c.threshold for c in node.pausing_criteria] == [3]


def test_choice_and_integer_parameters_run_and_round_trip(tmp_path):
    client = Client()
    client.configure_experiment(
        parameters=[
            RangeParameterConfig(name="x", bounds=(0.0, 1.0), parameter_type="float"),
            RangeParameterConfig(name="n", bounds=(1, 6), parameter_type="int"),
            ChoiceParameterConfig(name="act", values=["relu", "tanh", "gelu"], parameter_type="str", is_ordered=False),
        ]
    )
    client.configure_optimization(objective="-loss")
    client.set_generation_strategy(policy_generation_strategy("lb-gp-ucb-auto", n_init=4, seed=5, options=FAST))

    def loss(p: dict) -> float:
        return (p["x"] - 0.3) ** 2 + 0.1 * (p["n"] - 3) ** 2 + {"relu": 0.0, "tanh": 0.5, "gelu": 0.2}[p["act"]]

    for _ in range(7):
        ((index, params),) = client.get_next_trials(max_trials=1).items()
        assert isinstance(params["n"], int) and 1 <= params["n"] <= 6 and params["act"] in ("relu", "tanh", "gelu")
        client.complete_trial(index, raw_data={"loss": loss(params)})
    node = client._generation_strategy.nodes_by_name["lb-gp-ucb-auto"]
    assert node.space.dim == 5 and node.policy.domain.dim == 5  # act: three one-hot columns
    for index in range(4, 7):  # the rule's rows are the arms' parameters, exactly
        (arm,) = client._experiment.trials[index].arms
        row = torch.tensor(node.space.to_row(arm.parameters), dtype=torch.float64)
        assert node.space.to_parameters(row) == arm.parameters
    path = tmp_path / "mixed.json"
    save_client(client, path)
    expected = load_client(path).get_next_trials(max_trials=1)
    assert client.get_next_trials(max_trials=1) == expected  # the reloaded rule proposes the same arm
