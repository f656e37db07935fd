r"""``auto`` from every entry point a user has: ``buh run``, Optuna's sampler and Ax's strategy."""

import math
import warnings

import pandas as pd
import pytest

from botorch_unknown_hypers.cli import main


def test_buh_run_takes_auto(tmp_path):
    out = tmp_path / "runs"
    assert main(["run", "--problem", "berkenkamp", "--method", "auto", "--seeds", "1", "--iterations", "3",
                 "--out", str(out), "--no-progress"]) == 0
    df = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert (df["method"] == "auto").all() and (df["iteration"] > 0).sum() == 3
    assert df["simple_regret"].is_monotonic_decreasing


def test_optuna_policy_sampler_runs_auto():
    optuna = pytest.importorskip("optuna")
    from botorch_unknown_hypers.integrations.optuna import PolicySampler

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = PolicySampler("auto", seed=0, n_startup_trials=4)
    study = optuna.create_study(sampler=sampler, direction="minimize")
    study.optimize(lambda t: (t.suggest_float("x", -2, 2) - 0.5) ** 2 + t.suggest_float("y", -2, 2) ** 2, n_trials=6)
    values = [t.value for t in study.trials]
    assert len(values) == 6 and all(math.isfinite(v) for v in values)
    assert sampler.policy.name == "auto" and sampler.policy.num_observed >= 1  # the rule proposed the last trials


def test_ax_generation_strategy_runs_auto():
    pytest.importorskip("ax")
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig

    from botorch_unknown_hypers.integrations.ax import policy_generation_strategy

    warnings.filterwarnings("ignore")
    client = Client()
    client.configure_experiment(parameters=[RangeParameterConfig(name=n, parameter_type="float", bounds=(-2.0, 2.0))
                                            for n in ("x", "y")])
    client.configure_optimization(objective="-f")
    client.set_generation_strategy(policy_generation_strategy("auto", n_init=3, seed=0))
    for _ in range(5):
        for index, p in client.get_next_trials(max_trials=1).items():
            assert -2.0 <= p["x"] <= 2.0 and -2.0 <= p["y"] <= 2.0
            client.complete_trial(index, raw_data={"f": (p["x"] - 0.5) ** 2 + p["y"] ** 2})
    summary = client.summarize()
    assert len(summary) == 5 and summary["f"].notna().all()
