r"""Ax integration: any registered rule as a generation node of an Ax experiment.

Ax (https://ax.dev) runs an experiment through a ``GenerationStrategy``, a graph of
``GenerationNode``\ s. :class:`PolicyGenerationNode` subclasses Ax's
``ExternalGenerationNode`` and runs any method of
:mod:`botorch_unknown_hypers.policies.registry` (``lb-gp-ucb``, ``he-gp-ucb``,
``mle-gp-ucb``, ...) on an experiment whose search space is a box of float range
parameters. :func:`policy_generation_strategy` puts Ax's Sobol generator in front of it
for the initial design, with Ax's ``MinTrials`` criteria for the hand-over, so Ax's
``Client`` drives it like any other strategy. Nothing of Ax is forked or patched.

Example:
    >>> from ax.api.client import Client
    >>> from ax.api.configs import RangeParameterConfig
    >>> from botorch_unknown_hypers.integrations.ax import policy_generation_strategy
    >>> client = Client()
    >>> client.configure_experiment(parameters=[
    ...     RangeParameterConfig(name="x1", bounds=(0.0, 1.0), parameter_type="float"),
    ...     RangeParameterConfig(name="x2", bounds=(0.0, 1.0), parameter_type="float"),
    ... ])
    >>> client.configure_optimization(objective="-loss")   # minimised: the rule sees -loss
    >>> client.set_generation_strategy(policy_generation_strategy("lb-gp-ucb", n_init=5))
    >>> for _ in range(15):
    ...     ((index, params),) = client.get_next_trials(max_trials=1).items()
    ...     client.complete_trial(index, raw_data={"loss": my_loss(params)})

Range parameters (float or integer, log-scale ones in log space) and choice parameters become
the parameters of a :class:`~botorch_unknown_hypers.domains.MixedDomain` (the columns of a
:class:`~botorch_unknown_hypers.domains.BoxDomain` when all are floats); every
rule maximises, so a minimised objective is negated. The node keeps nothing between
calls: it rebuilds the data from the experiment, and the rule's state (the JSON of
``policy.state_dict()``) is stored in each generator run's
``gen_metadata["buh_policy_state"]``, so a fresh process (:func:`load_client` of a
snapshot written by :func:`save_client`) proposes the same point as the uninterrupted
run.

**Trials in flight.** ``max_in_flight`` trials may await their results at once, each the rule's
next slot conditioned on the ones pending (``suggest(..., X_pending=...)``); only rules with
``Policy.supports_pending`` take more than one (for the others it is an error). Results may come
in any order: the next generation tells the rule the trials completed since its stored state
(``gen_metadata["buh_observed"]``) in completion order, each value matched to its own play. A
batch trial of ``n`` arms is the rule's batch of ``n`` slots. Details: ``docs/harness.md``.

References:
    - Ax's ``ExternalGenerationNode`` (``ax.generation_strategy.external_generation_node``),
      the extension point for candidate generators that are not Ax models.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from ax.adapter.registry import Generators
from ax.api.client import Client
from ax.core.data import Data
from ax.core.experiment import Experiment
from ax.core.experiment_status import ExperimentStatus
from ax.core.generator_run import GeneratorRun
from ax.core.observation import ObservationFeatures
from ax.core.parameter import ChoiceParameter, FixedParameter, ParameterType, RangeParameter
from ax.core.search_space import SearchSpace
from ax.core.trial_status import TrialStatus
from ax.core.types import TParameterization
from ax.exceptions.core import UnsupportedError, UserInputError
from ax.generation_strategy.external_generation_node import ExternalGenerationNode
from ax.generation_strategy.generation_node import GenerationNode
from ax.generation_strategy.generation_strategy import GenerationStrategy
from ax.generation_strategy.generator_spec import GeneratorSpec
from ax.generation_strategy.transition_criterion import (
    MaxGenerationParallelism,
    MaxTrialsAwaitingData,
    MinTrials,
    PausingCriterion,
)
from ax.storage.json_store.decoder import (
    generation_strategy_from_json,
    object_from_json,
)
from ax.storage.json_store.encoder import object_to_json
from ax.storage.json_store.registry import (
    CORE_CLASS_DECODER_REGISTRY,
    CORE_ENCODER_REGISTRY,
)
from torch import Tensor

from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.registry import METHODS, make_policy
from botorch_unknown_hypers.domains import CategoricalParameter, Domain, FloatParameter, IntParameter, MixedDomain, Parameter

__all__ = [
    "CLASS_DECODER_REGISTRY",
    "DIAGNOSTICS_KEY",
    "ENCODER_REGISTRY",
    "METHOD_KEY",
    "NODE_KEY",
    "N_CANDIDATES_KEY",
    "OBSERVED_KEY",
    "SELECTED_KEY",
    "STATE_KEY",
    "PolicyGenerationNode",
    "SearchSpaceMap",
    "load_client",
    "objective_metric",
    "policy_generation_strategy",
    "policy_state",
    "save_client",
]

STATE_KEY = "buh_policy_state"
r"""``gen_metadata`` key: JSON text of ``policy.state_dict()`` right after ``suggest``."""
NODE_KEY = "buh_node"
r"""``gen_metadata`` key: name of the :class:`PolicyGenerationNode` that made the run."""
METHOD_KEY = "buh_method"
SELECTED_KEY = "buh_selected"
r"""``gen_metadata`` key: label of the hyperparameter the rule played (``policy.selected``)."""
N_CANDIDATES_KEY = "buh_n_candidates"
DIAGNOSTICS_KEY = "buh_diagnostics"
r"""``gen_metadata`` key: JSON text of ``policy.diagnostics`` after ``suggest`` (if any)."""
OBSERVED_KEY = "buh_observed"
r"""``gen_metadata`` key: the trial indices whose results the state of :data:`STATE_KEY` holds,
in the order the rule was told them (runs saved without it: every observed trial before the run's)."""

_OBSERVED = (TrialStatus.COMPLETED, TrialStatus.EARLY_STOPPED)


@dataclass(frozen=True)
class SearchSpaceMap:
    r"""Ax parameters to and from the rows of the rule's domain.

    Float range parameters (linear or log), integer range parameters (linear or log) and choice
    parameters (categoricals, one-hot) become the parameters of a
    :class:`~botorch_unknown_hypers.domains.MixedDomain`, in Ax's order; the rule runs on its box
    when every one is a float (:meth:`domain`).

    Attributes:
        space: The tunable parameters, as a mixed domain whose columns are the rule's.
        fixed: Fixed parameters, added to every proposal.
    """

    space: MixedDomain
    fixed: tuple[tuple[str, Any], ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        r"""The tunable parameters, in the domain's order."""
        return tuple(p.name for p in self.space.parameters)

    @property
    def dim(self) -> int:
        r"""The number of the domain's columns."""
        return self.space.dim

    @classmethod
    def from_search_space(cls, search_space: SearchSpace) -> SearchSpaceMap:
        r"""Read a search space of range, choice and fixed parameters.

        Raises:
            UnsupportedError: for parameter constraints, a logit scale, or another parameter type.
        """
        if search_space.parameter_constraints:
            raise UnsupportedError(
                "PolicyGenerationNode supports search spaces without parameter constraints; remove them."
            )
        params: list[Parameter] = []
        fixed = []
        for name, parameter in search_space.parameters.items():
            if isinstance(parameter, FixedParameter):
                fixed.append((name, parameter.value))
            elif isinstance(parameter, RangeParameter) and parameter.parameter_type in (ParameterType.FLOAT, ParameterType.INT):
                if parameter.logit_scale:
                    raise UnsupportedError(f"parameter {name!r}: logit scale is not supported; use a linear or log scale.")
                if parameter.parameter_type == ParameterType.INT:
                    params.append(IntParameter(name, int(parameter.lower), int(parameter.upper), log=bool(parameter.log_scale)))
                else:
                    params.append(FloatParameter(name, float(parameter.lower), float(parameter.upper), log=bool(parameter.log_scale)))
            elif isinstance(parameter, ChoiceParameter):
                params.append(CategoricalParameter(name, tuple(parameter.values)))
            else:
                raise UnsupportedError(
                    f"parameter {name!r} ({type(parameter).__name__}, {parameter.parameter_type.name}): "
                    "PolicyGenerationNode supports range, choice and fixed parameters."
                )
        if not params:
            raise UnsupportedError("the search space has no range or choice parameter to optimise.")
        return cls(MixedDomain(tuple(params)), tuple(fixed))

    def domain(self, dtype: torch.dtype, device: torch.device) -> Domain:
        r"""The rule's domain: the box of the columns when every parameter is a continuous float,
        else the mixed domain."""
        space = self.space.to(device=device, dtype=dtype)
        return space.as_box() if space.is_box else space

    def to_row(self, values: Mapping[str, Any]) -> list[float]:
        r"""The ``d`` columns of an Ax parameterisation (fixed parameters ignored)."""
        return self.space.to_row(values)

    def to_parameters(self, x: Tensor) -> TParameterization:
        r"""Ax parameterisation of a ``d``-dim domain point (clamped to Ax's bounds), with the fixed parameters."""
        out: dict[str, Any] = dict(self.space.to_values(x))
        out.update(dict(self.fixed))
        return out


def objective_metric(experiment: Experiment) -> tuple[str, float]:
    r"""Name of the objective metric and the sign that turns it into a reward to maximise.

    Raises:
        UserInputError: if the experiment has no optimisation config.
        UnsupportedError: for multi-objective or scalarised objectives, or outcome constraints.
    """
    config = experiment.optimization_config
    if config is None:
        raise UserInputError("the experiment has no optimization config; call configure_optimization first.")
    objective = config.objective
    if not objective.is_single_objective:
        raise UnsupportedError(f"objective {objective.expression!r}: the rules optimise a single metric.")
    if config.all_constraints:
        raise UnsupportedError("outcome constraints are not supported by the rules; remove them.")
    return objective.metric_names[0], -1.0 if objective.minimize else 1.0


def _json_store_precision(values: list[float]) -> list[float]:
    r"""``values`` as Ax's JSON store keeps them (pandas ``to_json``: 10 decimal places).

    Ax writes ``Data`` through ``DataFrame.to_json`` and reads it back with
    ``pandas.read_json``; passing every value through the same round trip (which is
    idempotent) makes an experiment reloaded from JSON give the rule bit-identical
    data, hence the same next candidate.
    """
    if not values:
        return []
    text = pd.DataFrame({"mean": values}).to_json()
    return pd.read_json(StringIO(text), dtype=False)["mean"].astype(float).tolist()


def _observations(
    experiment: Experiment, data: Data, metric: str, sign: float, space: SearchSpaceMap
) -> dict[int, tuple[list[list[float]], list[float]]]:
    r"""Trial index -> (rows, rewards) of every completed trial with objective values, in trial order."""
    df = data.df
    df = df[df["metric_name"] == metric]
    values = _json_store_precision(df["mean"].to_numpy(dtype=float).tolist())
    means = {(int(i), str(a)): m for i, a, m in zip(df["trial_index"], df["arm_name"], values)}
    out: dict[int, tuple[list[list[float]], list[float]]] = {}
    for index in sorted(experiment.trials):
        trial = experiment.trials[index]
        if trial.status not in _OBSERVED:
            continue
        rows, rewards = [], []
        for arm in trial.arms:
            value = means.get((index, arm.name))
            if value is not None and math.isfinite(value):
                rows.append(space.to_row(arm.parameters))
                rewards.append(sign * value)
        if rows:
            out[index] = (rows, rewards)
    return out


def policy_state(generator_run: GeneratorRun) -> dict[str, Any] | None:
    r"""The policy state stored in a generator run of a :class:`PolicyGenerationNode` (else ``None``)."""
    metadata = generator_run.gen_metadata or {}
    text = metadata.get(STATE_KEY)
    return None if text is None else json.loads(text)


def _completion_order(experiment: Experiment, indices: Sequence[int]) -> list[int]:
    r"""``indices`` in the order their trials completed (then by index; no completion time: last)."""
    done = {i: experiment.trials[i].time_completed for i in indices}
    return sorted(indices, key=lambda i: (done[i] is None, done[i] or 0, i))


def _told_before(generator_run: GeneratorRun, index: int, observed: Mapping[int, Any]) -> list[int]:
    r"""The trials whose results the state stored in ``generator_run`` (of trial ``index``) holds."""
    told = (generator_run.gen_metadata or {}).get(OBSERVED_KEY)
    if told is None:  # saved one trial at a time: every observed trial before its own
        return [i for i in observed if i < index]
    return [int(i) for i in told]


def _check_max_in_flight(method: str, max_in_flight: int, supports_pending: bool | None) -> int:
    r"""``max_in_flight`` checked against the rule (``supports_pending`` ``None``: not known yet)."""
    if isinstance(max_in_flight, bool) or not isinstance(max_in_flight, int) or max_in_flight < 1:
        raise UserInputError(f"max_in_flight must be an int >= 1, got {max_in_flight!r}.")
    if max_in_flight > 1 and supports_pending is False:
        raise UserInputError(
            f"max_in_flight={max_in_flight}: {method} does not condition on pending points (a sequential "
            "rule), so it runs one trial at a time; use max_in_flight=1 or a rule that supports pending "
            "points (Policy.supports_pending, shown by `buh list`)."
        )
    return max_in_flight


class PolicyGenerationNode(ExternalGenerationNode):
    r"""An Ax generation node that runs a registered rule (module docstring, ``docs/harness.md``).

    Args:
        method: A registered method name (``buh list``), e.g. ``"lb-gp-ucb"``, ``"he-gp-ucb"``.
        options: Keyword options of the method (``make_policy(method, domain, **options)``);
            JSON-safe values if the generation strategy is to be saved with
            :func:`save_client`.
        seed: Seed of the rule's random generator (its first call).
        name: Node name (default ``method``); it tags the node's generator runs.
        dtype: Dtype of the rule's tensors.
        device: Device of the rule's tensors (default CPU).
        max_in_flight: How many of the node's trials may await their results at once (>= 1).
            More than 1 needs a rule that conditions on pending points
            (``Policy.supports_pending``); a sequential rule with ``max_in_flight > 1`` raises
            ``UserInputError``.

    Raises:
        UserInputError: For an unknown method or a bad ``max_in_flight``.

    Example:
        >>> node = PolicyGenerationNode("lb-gp-ucb-auto", options={"num_restarts": 2}, max_in_flight=4)
        >>> node.max_in_flight
        4
    """

    def __init__(
        self,
        method: str,
        options: Mapping[str, Any] | None = None,
        seed: int = 0,
        name: str | None = None,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str | None = None,
        max_in_flight: int = 1,
    ) -> None:
        if method not in METHODS:
            raise UserInputError(f"unknown method {method!r}; valid methods: {', '.join(sorted(METHODS))}.")
        # A registered class declares it; a plain factory is checked on its first policy.
        self.max_in_flight = _check_max_in_flight(method, max_in_flight, getattr(METHODS[method], "supports_pending", None))
        super().__init__(
            name=name or method,
            suggested_experiment_status=ExperimentStatus.OPTIMIZATION,
            should_deduplicate=False,
        )
        self.method = method
        self.options = dict(options or {})
        self.seed = int(seed)
        self.dtype = dtype
        self.device = None if device is None else torch.device(device)
        self._in_flight = [
            MaxGenerationParallelism(
                threshold=self.max_in_flight,
                not_in_statuses=[s for s in TrialStatus if s.is_terminal],
            )
        ]
        self.policy: Policy | None = None
        self.space: SearchSpaceMap | None = None
        self.train_X: Tensor | None = None
        self.train_Y: Tensor | None = None
        self.told: list[int] = []
        self._proposed_state: dict[str, Any] | None = None
        self._arms_in_run = 0

    @property
    def pausing_criteria(self) -> Sequence[PausingCriterion]:
        r"""At most ``max_in_flight`` trials of this node awaiting their results."""
        return self._in_flight

    def last_generator_run(self, experiment: Experiment) -> tuple[int, GeneratorRun] | None:
        r"""``(trial index, generator run)`` of this node's latest trial that carries a state."""
        latest = None
        for index in sorted(experiment.trials):
            for gr in experiment.trials[index].generator_runs:
                metadata = gr.gen_metadata or {}
                if metadata.get(NODE_KEY) == self.name and STATE_KEY in metadata:
                    latest = (index, gr)
        return latest

    # ------------------------------------------------ ExternalGenerationNode API
    def update_generator_state(self, experiment: Experiment, data: Data) -> None:
        r"""Rebuild the data, the domain and the rule's state from the experiment: the state of
        the node's latest generator run, told the trials completed since in the order they
        completed (each value meets its own play); before the node's first run every observed
        trial is the initial design (data, not plays)."""
        space = SearchSpaceMap.from_search_space(experiment.search_space)
        metric, sign = objective_metric(experiment)
        observed = _observations(experiment, data, metric, sign, space)
        device = self.device or torch.device("cpu")
        domain = space.domain(self.dtype, device)
        policy = make_policy(self.method, domain, seed=self.seed, device=device, dtype=self.dtype, **self.options)
        _check_max_in_flight(self.method, self.max_in_flight, policy.supports_pending)
        last = self.last_generator_run(experiment)
        told = list(observed)
        if last is not None:
            index, gr = last
            policy.load_state_dict(policy_state(gr))
            told = [i for i in _told_before(gr, index, observed) if i in observed]
            known = set(told)
            for i in _completion_order(experiment, [i for i in observed if i not in known]):
                rows, rewards = observed[i]  # a result that arrived since: it enters the rule's record
                policy.observe(self._tensor(rows, device), self._tensor(rewards, device).unsqueeze(-1))
                told.append(i)
        # The data in the order the rule was told them (the ask/tell order of the same campaign).
        rows = [r for index in told for r in observed[index][0]]
        rewards = [v for index in told for v in observed[index][1]]
        self.space, self.policy, self.told = space, policy, told
        self.train_X = self._tensor(rows, device).reshape(len(rows), space.dim)
        self.train_Y = self._tensor(rewards, device).reshape(len(rewards), 1)
        self._proposed_state = None

    def get_next_candidate(self, pending_parameters: list[TParameterization]) -> TParameterization:
        r"""The rule's next point. Ax calls this once per arm of a generator run, with the arms
        already generated (and any other pending ones) in ``pending_parameters``: a rule that
        takes pending points (``supports_pending``) conditions its next slot on them, so a
        batch trial of ``n`` arms is the rule's batch of ``n`` slots; the others propose one arm
        per generator run."""
        if self.policy is None or self.space is None:
            raise UnsupportedError("update_generator_state must run before get_next_candidate.")
        if self._arms_in_run > 0 and not self.policy.supports_pending:
            raise UnsupportedError(
                f"{self.method} proposes one point per round: generate trials of one arm, one at a time."
            )
        pending = None
        if pending_parameters and self.policy.supports_pending:
            rows = [self.space.to_row(p) for p in pending_parameters]
            pending = self._tensor(rows, self.train_X.device).reshape(len(rows), self.space.dim)
        X = self.policy.suggest(self.train_X, self.train_Y, q=1, X_pending=pending)
        self._proposed_state = self.policy.state_dict()
        self._arms_in_run += 1
        return self.space.to_parameters(X[0])

    def gen(
        self,
        *,
        experiment: Experiment,
        pending_observations: dict[str, list[ObservationFeatures]] | None,
        skip_fit: bool = False,
        data: Data | None = None,
        n: int | None = None,
        **gs_gen_kwargs: Any,
    ) -> GeneratorRun | None:
        r"""Ax's ``GenerationNode.gen`` with the rule's state in ``gen_metadata``. The node is
        rebuilt from the experiment, except for the 2nd, 3rd, ... trial of one call (Ax's
        ``skip_fit=True``): the runs made earlier in it are not on the experiment yet, and the
        rule in memory holds their pending plays."""
        self._arms_in_run = 0
        generator_run = super().gen(
            experiment=experiment,
            pending_observations=pending_observations,
            skip_fit=skip_fit and self._proposed_state is not None,
            data=data,
            n=n,
            **gs_gen_kwargs,
        )
        if generator_run is None or self._proposed_state is None:
            return generator_run
        diagnostics = getattr(self.policy, "diagnostics", None)
        metadata = dict(generator_run.gen_metadata or {})
        metadata.update(
            {
                NODE_KEY: self.name,
                METHOD_KEY: self.method,
                STATE_KEY: json.dumps(self._proposed_state, separators=(",", ":")),
                OBSERVED_KEY: list(self.told),
                SELECTED_KEY: self.policy.selected[0] if self.policy.selected else "",
                N_CANDIDATES_KEY: int(self.policy.n_candidates),
            }
        )
        if diagnostics:
            metadata[DIAGNOSTICS_KEY] = json.dumps(diagnostics, separators=(",", ":"))
        # Ax's GenerationNode.gen attaches its own metadata (trial_type) the same way.
        generator_run._gen_metadata = metadata
        return generator_run

    def _tensor(self, values: list[Any], device: torch.device) -> Tensor:
        return torch.tensor(values, dtype=self.dtype, device=device)

    # ------------------------------------------------------------- storage
    def to_json_dict(self) -> dict[str, Any]:
        r"""JSON form for Ax's JSON store (see :data:`ENCODER_REGISTRY`, :func:`save_client`)."""
        return {
            "__type": type(self).__name__,
            "method": self.method,
            "options": self.options,
            "seed": self.seed,
            "name": self.name,
            "dtype": str(self.dtype).removeprefix("torch."),
            "device": None if self.device is None else str(self.device),
            "max_in_flight": self.max_in_flight,
        }

    @classmethod
    def from_json_dict(cls, state: dict[str, Any]) -> PolicyGenerationNode:
        r"""Inverse of :meth:`to_json_dict`."""
        return cls(
            method=state["method"],
            options=state.get("options") or {},
            seed=int(state.get("seed", 0)),
            name=state.get("name"),
            dtype=getattr(torch, state.get("dtype", "float64")),
            device=state.get("device"),
            max_in_flight=int(state.get("max_in_flight", 1)),
        )


def policy_generation_strategy(
    method: str,
    n_init: int = 5,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    name: str | None = None,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    *,
    max_in_flight: int = 1,
) -> GenerationStrategy:
    r"""Sobol initial design, then the rule ``method``.

    The Sobol node proposes ``n_init`` trials and hands over once all of them have
    completed with data (the rules fit their first model, e.g. LB-GP-UCB's
    :math:`\theta_0`, on the whole initial design); failed or abandoned Sobol trials
    are replaced. The rule's node then lets ``max_in_flight`` trials await their results
    at once, each conditioned on the others still pending.

    Args:
        method: A registered method name (``lb-gp-ucb``, ``he-gp-ucb``, ...).
        n_init: Size of the initial design (>= 1).
        seed: Seed of the Sobol sequence and of the rule.
        options: Keyword options of the method.
        name: Name of the rule's node (default ``method``).
        dtype, device: Of the rule's tensors.
        max_in_flight: How many of the rule's trials may await their results at once. More
            than 1 needs a rule that conditions on pending points (``Policy.supports_pending``,
            e.g. ``lb-gp-ucb``, ``he-gp-ucb``, the ``-auto`` presets); for a sequential rule it
            raises ``UserInputError`` rather than silently running one trial at a time.

    Returns:
        A ``GenerationStrategy`` to pass to ``Client.set_generation_strategy``.

    Raises:
        UserInputError: For ``n_init < 1``, an unknown method or a bad ``max_in_flight``.

    Example:
        >>> client.set_generation_strategy(policy_generation_strategy("lb-gp-ucb-auto", max_in_flight=4))
        >>> trials = client.get_next_trials(max_trials=4)  # fills the free workers (docs/integrations.md)
    """
    if isinstance(n_init, bool) or not isinstance(n_init, int) or n_init < 1:
        raise UserInputError(f"n_init must be an int >= 1, got {n_init!r}.")
    node = PolicyGenerationNode(
        method, options=options, seed=seed, name=name, dtype=dtype, device=device, max_in_flight=max_in_flight
    )
    done = [TrialStatus.FAILED, TrialStatus.ABANDONED]
    sobol = GenerationNode(
        name="Sobol",
        generator_specs=[GeneratorSpec(generator_enum=Generators.SOBOL, generator_kwargs={"seed": seed})],
        transition_criteria=[
            MinTrials(threshold=n_init, transition_to=node.name, not_in_statuses=done),
            MinTrials(
                threshold=n_init,
                transition_to=node.name,
                only_in_statuses=[TrialStatus.COMPLETED],
                count_only_trials_with_data=True,
            ),
        ],
        pausing_criteria=[MaxTrialsAwaitingData(threshold=n_init, not_in_statuses=done)],
        should_deduplicate=True,
        suggested_experiment_status=ExperimentStatus.INITIALIZATION,
    )
    return GenerationStrategy(nodes=[sobol, node], name=f"Sobol+{node.name}")


ENCODER_REGISTRY: dict[type[Any], Callable[[Any], dict[str, Any]]] = {
    **CORE_ENCODER_REGISTRY,
    PolicyGenerationNode: PolicyGenerationNode.to_json_dict,
}
r"""Ax's core JSON encoder registry plus :class:`PolicyGenerationNode` (a copy; Ax's is untouched)."""
CLASS_DECODER_REGISTRY: dict[str, Callable[[dict[str, Any]], Any]] = {
    **CORE_CLASS_DECODER_REGISTRY,
    PolicyGenerationNode.__name__: PolicyGenerationNode.from_json_dict,
}
r"""Ax's core JSON class decoder registry plus :class:`PolicyGenerationNode`."""


def save_client(client: Client, filepath: str | Path) -> None:
    r"""``Client.save_to_json_file`` for a client whose strategy holds a :class:`PolicyGenerationNode`.

    Ax's core JSON registries do not know external nodes (and custom registries
    need Ax's SQL extra), so this writes the same snapshot with
    :data:`ENCODER_REGISTRY`. The rule's state travels in the trials'
    ``gen_metadata``; the node itself is stored as its constructor arguments.
    """
    # The two attributes Client._to_json_snapshot serialises.
    experiment = client._experiment
    strategy = client._maybe_generation_strategy
    snapshot = {
        "_type": type(client).__name__,
        "experiment": object_to_json(experiment, encoder_registry=ENCODER_REGISTRY),
        "generation_strategy": None
        if strategy is None
        else object_to_json(strategy, encoder_registry=ENCODER_REGISTRY),
    }
    Path(filepath).write_text(json.dumps(snapshot))


def load_client(filepath: str | Path, generation_strategy: GenerationStrategy | None = None) -> Client:
    r"""Inverse of :func:`save_client`: a fresh ``Client`` with the saved experiment and strategy.

    Args:
        filepath: A file written by :func:`save_client` (or by ``Client.save_to_json_file``).
        generation_strategy: Use this strategy instead of the saved one (e.g. a new
            :func:`policy_generation_strategy`); the experiment alone determines the
            next candidate either way.
    """
    snapshot = json.loads(Path(filepath).read_text())
    experiment = object_from_json(snapshot["experiment"], class_decoder_registry=CLASS_DECODER_REGISTRY)
    if generation_strategy is None and snapshot.get("generation_strategy") is not None:
        generation_strategy = generation_strategy_from_json(
            snapshot["generation_strategy"], experiment=experiment, class_decoder_registry=CLASS_DECODER_REGISTRY
        )
    client = Client()
    client.set_experiment(experiment)
    if generation_strategy is not None:
        client.set_generation_strategy(generation_strategy)
    return client
