"""Tests of the Optuna integration: a rule as an Optuna sampler, end to end with a study."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

optuna = pytest.importorskip("optuna")

from optuna.trial import TrialState  # noqa: E402

from botorch_unknown_hypers.domains import MixedDomain  # noqa: E402
from botorch_unknown_hypers.integrations.optuna import PolicySampler, is_modelled  # noqa: E402

FAST = {"num_restarts": 2, "raw_samples": 32}
LR = (1e-4, 1e-1)
X = (-2.0, 2.0)


@pytest.fixture(autouse=True)
def quiet_optuna():
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    yield
    optuna.logging.set_verbosity(verbosity)


def loss(lr: float, x: float) -> float:
    r"""A 2-d loss to minimise over a log-scale learning rate and a linear ``x`` (minimum 0 at
    ``lr = 10^-2.5, x = 0.5``). Seeds 0-3 of the 20-trial study end 10 to 6000 times below the
    best of their random start (2-core CPU box)."""
    return (math.log10(lr) + 2.5) ** 2 + (x - 0.5) ** 2


def suggest(trial: optuna.Trial) -> tuple[float, float]:
    return trial.suggest_float("lr", *LR, log=True), trial.suggest_float("x", *X)


def objective(trial: optuna.Trial) -> float:
    return loss(*suggest(trial))


def started(method: str, seed: int, n_startup_trials: int = 3) -> tuple[PolicySampler, optuna.Study]:
    r"""A minimising study whose random start is done."""
    sampler = PolicySampler(method, n_startup_trials=n_startup_trials, seed=seed, **FAST)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    study.optimize(objective, n_trials=n_startup_trials)
    return sampler, study


def points(study: optuna.Study) -> list[tuple[float, float]]:
    return [(t.params["lr"], t.params["x"]) for t in study.trials]


def test_twenty_trial_study_improves_on_its_random_start():
    sampler = PolicySampler("lb-gp-ucb-auto", n_startup_trials=5, seed=0, **FAST)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    study.optimize(objective, n_trials=20)
    values = [t.value for t in study.trials]
    assert len(values) == 20 and all(t.state == TrialState.COMPLETE for t in study.trials)
    assert study.best_value < min(values[:5])  # better than the best of the random start
    assert all(LR[0] <= lr <= LR[1] and X[0] <= x <= X[1] for lr, x in points(study))
    # the rule proposed trials 5..19 and was told 0..18 (the start as its initial design)
    assert sampler.told == list(range(19))
    state = sampler.policy.state
    assert len(state.play_candidate) == 14 and len(state.pending) == 1
    # the rule maximises the negated loss: its play record holds -loss of trials 5..18
    expected = [-v for v in values[5:19]]
    assert state.play_y == pytest.approx(expected, rel=1e-12)


def test_log_scale_parameter_is_a_log_column():
    sampler = PolicySampler("he-gp-ucb", n_startup_trials=3, seed=2, **FAST)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=4)
    bounds = sampler.policy.domain.bounds
    assert [p.name for p in sampler.space.parameters] == ["lr", "x"]
    assert [p.log for p in sampler.space.parameters] == [True, False]
    assert torch.allclose(bounds[:, 0], torch.tensor([math.log(LR[0]), math.log(LR[1])], dtype=torch.float64))


def test_two_running_trials_get_distinct_points_and_out_of_order_results_meet_their_plays():
    sampler, study = started("lb-gp-ucb-auto", 1, n_startup_trials=5)
    a, b = study.ask(), study.ask()  # two workers: b is asked while a still runs
    pa, pb = suggest(a), suggest(b)
    assert pa != pb
    assert len(sampler.policy.state.pending) == 2  # both are the rule's plays, awaiting values
    study.tell(b, loss(*pb))  # the results in reverse order
    study.tell(a, loss(*pa))
    c = study.ask()
    pc = suggest(c)
    assert pc not in (pa, pb)
    state = sampler.policy.state
    assert sampler.told == [0, 1, 2, 3, 4, b.number, a.number]
    assert state.play_y == pytest.approx([-loss(*pb), -loss(*pa)], rel=1e-12)  # each value met its own play
    assert len(state.pending) == 1


def test_same_seed_same_study_and_maximise():
    def run(seed: int) -> list[tuple[float, float]]:
        study = optuna.create_study(direction="maximize", sampler=PolicySampler("he-gp-ucb", n_startup_trials=3, seed=seed, **FAST))
        study.optimize(lambda t: -objective(t), n_trials=6)
        return points(study)

    first = run(7)
    assert run(7) == first
    assert run(8) != first


def test_maximised_values_are_not_negated():
    sampler = PolicySampler("lb-gp-ucb", n_startup_trials=3, seed=3, **FAST)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(lambda t: -objective(t), n_trials=5)
    values = [t.value for t in study.trials]
    assert sampler.told == [0, 1, 2, 3]
    assert sampler.policy.state.play_y == [values[3]]  # trial 3, told before trial 4's proposal


def test_integer_and_categorical_parameters_are_modelled():
    sampler = PolicySampler("he-gp-ucb", n_startup_trials=3, seed=4, **FAST)
    study = optuna.create_study(sampler=sampler)

    def mixed(trial: optuna.Trial) -> float:
        n = trial.suggest_int("n", 1, 4)
        kind = trial.suggest_categorical("kind", ["a", "b"])
        step = trial.suggest_float("step", 0.0, 1.0, step=0.25)
        return objective(trial) + 0.1 * n + (0.2 if kind == "b" else 0.0) + step

    study.optimize(mixed, n_trials=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is delegated: no warning
        study.optimize(mixed, n_trials=2)
    names = [p.name for p in sampler.space.parameters]
    assert names == ["kind", "lr", "n", "step", "x"]
    assert isinstance(sampler.policy.domain, MixedDomain) and sampler.policy.domain.dim == 6  # kind: two one-hot columns
    assert sampler.told == [0, 1, 2, 3]
    for t in study.trials:
        assert isinstance(t.params["n"], int) and 1 <= t.params["n"] <= 4 and t.params["kind"] in ("a", "b")
        assert t.params["step"] in (0.0, 0.25, 0.5, 0.75, 1.0)
    # The rule's own rows are the trials' parameters, exactly (the round trip through the dictionaries).
    rows = [sampler.space.to_row(t.params) for t in study.trials]
    assert all(sampler.space.to_values(torch.tensor(r, dtype=torch.float64)) == t.params for r, t in zip(rows, study.trials))
    assert is_modelled(optuna.distributions.FloatDistribution(0.0, 1.0, step=0.5))
    assert is_modelled(optuna.distributions.CategoricalDistribution(["a", "b"]))
    assert not is_modelled(optuna.distributions.CategoricalDistribution(["a"]))


def test_a_parameter_missing_from_a_trial_or_of_one_value_goes_to_the_random_sampler():
    sampler = PolicySampler("he-gp-ucb", n_startup_trials=3, seed=4, **FAST)
    study = optuna.create_study(sampler=sampler)

    def grows(trial: optuna.Trial) -> float:
        value = objective(trial)
        if trial.number >= 3:
            value += trial.suggest_float("late", 0.0, 1.0)
        return value + 0.0 * trial.suggest_int("one", 2, 2)

    study.optimize(grows, n_trials=3)
    with pytest.warns(UserWarning) as record:
        study.optimize(grows, n_trials=2)
    messages = [str(w.message) for w in record]
    assert any("'late' (FloatDistribution) is not in every completed trial" in m and "RandomSampler" in m for m in messages)
    assert sum("'late'" in m for m in messages) == 1  # once per parameter
    assert [p.name for p in sampler.space.parameters] == ["lr", "x"]


def test_failed_and_pruned_trials_are_skipped():
    sampler, study = started("he-gp-ucb", 5)
    failed = study.ask()
    suggest(failed)
    study.tell(failed, state=TrialState.FAIL)
    pruned = study.ask()
    suggest(pruned)
    pruned.report(1.0, step=0)
    study.tell(pruned, state=TrialState.PRUNED)
    study.optimize(objective, n_trials=2)
    assert [t.state for t in study.trials][3:5] == [TrialState.FAIL, TrialState.PRUNED]
    assert sampler.told == [0, 1, 2, 5]  # neither the failed nor the pruned trial enters the data
    assert len(sampler.policy.state.play_candidate) == 1


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown method 'no-such-rule'; valid methods: .*lb-gp-ucb"):
        PolicySampler("no-such-rule")
    for bad in (0, -1, 1.5, True, "10"):
        with pytest.raises(ValueError, match=r"n_startup_trials must be an int >= 1, got"):
            PolicySampler("lb-gp-ucb", n_startup_trials=bad)
    for bad in (1.0, "0", True):
        with pytest.raises(ValueError, match="seed must be an int or None"):
            PolicySampler("lb-gp-ucb", seed=bad)
    with pytest.raises(ValueError, match="options of 'lb-gp-ucb': .*'no_such_option'"):
        PolicySampler("lb-gp-ucb", no_such_option=1)
    sampler = PolicySampler("he-gp-ucb", n_startup_trials=1, seed=0, **FAST)
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    study.tell(study.ask({"x": optuna.distributions.FloatDistribution(0.0, 1.0)}), [1.0, 2.0])
    with pytest.raises(ValueError, match="one objective; the study has 2"):
        study.ask({"x": optuna.distributions.FloatDistribution(0.0, 1.0)})


def test_a_sequential_rule_is_not_given_running_trials():
    sampler, study = started("mle-gp-ucb", 6)
    a = study.ask()
    suggest(a)
    b = study.ask()
    with pytest.warns(UserWarning, match="mle-gp-ucb does not condition on pending points"):
        b.suggest_float("lr", *LR, log=True)  # a still runs; the rule cannot take it as a pending point
    b.suggest_float("x", *X)
    assert len(b.params) == 2 and sampler.told == [0, 1, 2]
