r"""Pool-based materials-science black boxes of the LB-GP-UCB paper (Sec. 5).

Two experimental data sets from the benchmarking collection of Liang et al.
[Liang2021]_, used by Ziomek et al. [Ziomek2024lb]_:

=================  ================================  =========================================
name               file                              inputs -> objective
=================  ================================  =========================================
``crossed-barrel`` ``Crossed_barrel_dataset.csv``    n, theta, r, t -> toughness (maximised)
``agnp``           ``AgNP_dataset.csv``              QAgNO3(%), Qpva(%), Qtsc(%), Qseed(%),
                                                     Qtot(uL/min) -> loss (minimised)
=================  ================================  =========================================

How a table becomes a black box (following the authors' code):

1. Rows are grouped by their full input vector :math:`x`. The group's value
   :math:`y(x)` is the mean of the *distinct* objective values in the group (a
   group with values ``1, 1, 4`` gets ``(1 + 4) / 2 = 2.5``, not ``2``). A minimised
   objective is negated first, so :math:`y` is always maximised.
2. The objective is shifted, :math:`f(x) = y(x) - \max_{x'} y(x')`, so
   :math:`f^* = 0` and the regret of a query is :math:`-f(x)`.
3. The domain is the finite set of unique configurations, sorted lexicographically
   by their raw inputs and min-max scaled per input column to ``[0, 1]``; a query
   returns its configuration's value and points may be queried again.

Both tables ship inside the package (MIT licence and citation in
``botorch_unknown_hypers/data/materials``); ``data_dir`` or ``BUH_DATA_DIR`` may point at
another copy (:func:`resolve_data_dir`).

References:

.. [Liang2021]
    Q. Liang et al. Benchmarking the performance of Bayesian optimization across
    multiple experimental materials science domains. npj Computational Materials, 2021.

.. [Ziomek2024lb]
    J. Ziomek, M. Adachi, M. A. Osborne. Bayesian Optimisation with Unknown
    Hyperparameters: Regret Bounds Logarithmically Closer to Optimal. NeurIPS 2024.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pandas as pd
import torch
from torch import Tensor

from botorch_unknown_hypers.problems.problem import Problem
from botorch_unknown_hypers.domains import FiniteDomain

DATA_DIR_ENV = "BUH_DATA_DIR"
r"""Environment variable naming the folder that holds the materials CSV files."""


@dataclass(frozen=True)
class MaterialsDataset:
    r"""Description of one materials table.

    Attributes:
        file_name: CSV file name inside the data folder.
        feature_names: Input columns, in order.
        objective_name: Objective column.
        maximise: Whether the objective is maximised (otherwise it is negated).
    """

    file_name: str
    feature_names: tuple[str, ...]
    objective_name: str
    maximise: bool


MATERIALS_DATASETS: dict[str, MaterialsDataset] = {
    "crossed-barrel": MaterialsDataset(
        file_name="Crossed_barrel_dataset.csv",
        feature_names=("n", "theta", "r", "t"),
        objective_name="toughness",
        maximise=True,
    ),
    "agnp": MaterialsDataset(
        file_name="AgNP_dataset.csv",
        feature_names=("QAgNO3(%)", "Qpva(%)", "Qtsc(%)", "Qseed(%)", "Qtot(uL/min)"),
        objective_name="loss",
        maximise=False,
    ),
}


def default_data_dir() -> Path:
    r"""The tables shipped inside the package, ``botorch_unknown_hypers/data/materials``
    (found through ``importlib.resources``, so an installed wheel has them too)."""
    return Path(str(resources.files("botorch_unknown_hypers").joinpath("data", "materials")))


def resolve_data_dir(data_dir: str | Path | None = None) -> Path:
    r"""The folder holding the materials CSV files.

    Priority: the explicit ``data_dir``, then the environment variable
    ``BUH_DATA_DIR``, then :func:`default_data_dir`.

    Args:
        data_dir: An explicit folder, or ``None``.

    Returns:
        The resolved folder (it need not exist).
    """
    if data_dir is not None and str(data_dir) != "":
        return Path(data_dir).expanduser().resolve()
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env).expanduser().resolve()
    return default_data_dir()


class MaterialsProblem(Problem):
    r"""A black box defined by a finite pool of configurations and their values.

    Args:
        name: Registered name of the problem.
        points: An ``N x d``-dim tensor of (normalised) configurations.
        values: An ``N``-dim tensor, :math:`f` at each configuration.
        optimal_value: :math:`f^* = \max f` (``0.0`` for shifted tables).
        noise_std: Observation noise standard deviation.
        n_init: Initial design size.
        metadata: Extra information kept with the problem.
    """

    def __init__(
        self,
        name: str,
        points: Tensor,
        values: Tensor,
        optimal_value: float = 0.0,
        noise_std: float = 0.0,
        n_init: int = 10,
        metadata: dict | None = None,
    ) -> None:
        if values.shape != points.shape[:1]:
            raise ValueError(
                f"values must have shape ({points.shape[0]},), got {tuple(values.shape)}."
            )
        super().__init__(
            name=name,
            domain=FiniteDomain(points),
            optimal_value=float(optimal_value),
            noise_std=noise_std,
            n_init=n_init,
            metadata=dict(metadata or {}),
        )
        self.values = values.to(points)

    def evaluate_true(self, X: Tensor) -> Tensor:
        r"""The value of each queried pool point.

        Args:
            X: A ``batch_shape x d``-dim tensor of points of the pool.

        Returns:
            A ``batch_shape``-dim tensor of values :math:`f(x)`, on ``X``'s device and
            in ``X``'s dtype.

        Raises:
            ValueError: If a point is not in the pool.
        """
        if X.shape[-1] != self.dim:
            raise ValueError(f"X must have {self.dim} columns, got {X.shape[-1]}.")
        idx = self.domain.index_of(X.reshape(-1, X.shape[-1]))
        if (idx < 0).any():
            raise ValueError(
                f"X has {int((idx < 0).sum())} point(s) that are not in the pool of "
                f"problem {self.name!r}."
            )
        return self.values[idx].reshape(X.shape[:-1]).to(X)

    def to(
        self, device: torch.device | str | None = None, dtype: torch.dtype | None = None
    ) -> MaterialsProblem:
        super().to(device=device, dtype=dtype)
        self.values = self.values.to(device=device, dtype=dtype)
        return self


def _missing_file_error(path: Path, file_name: str) -> FileNotFoundError:
    return FileNotFoundError(
        f"Materials data file {file_name!r} not found at {str(path)!r}. "
        f"Pass --data-dir (data_dir=...) pointing to the folder that holds {file_name!r}, "
        f"or set the {DATA_DIR_ENV} environment variable to it."
    )


def load_materials_problem(
    name: str,
    data_dir: str | Path | None = None,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    noise_std: float = 0.0,
) -> MaterialsProblem:
    r"""Build the ``crossed-barrel`` or ``agnp`` black box from its CSV file.

    Args:
        name: ``"crossed-barrel"`` or ``"agnp"``.
        data_dir: Folder with the CSV files (see :func:`resolve_data_dir`).
        dtype: dtype of the pool and its values.
        device: Device of the pool and its values.
        noise_std: Observation noise standard deviation (the paper: noiseless).

    Returns:
        A :class:`MaterialsProblem` with ``optimal_value = 0.0`` and ``n_init = 10``.
        ``metadata`` holds ``feature_names``, ``objective_name``, ``maximise``,
        ``raw_points`` (``N x d`` float64, unnormalised configurations, in pool order),
        ``raw_values`` (``N`` float64, group values in maximisation sign),
        ``raw_best_value``, ``feature_min`` / ``feature_max`` (the scaling),
        ``optimizer_index``, ``n_rows``, ``n_unique`` and ``path``.

    Raises:
        ValueError: For an unknown name, or a table with missing columns.
        FileNotFoundError: If the CSV file is missing.
    """
    if name not in MATERIALS_DATASETS:
        raise ValueError(
            f"Unknown materials problem {name!r}; valid names: {sorted(MATERIALS_DATASETS)}."
        )
    spec = MATERIALS_DATASETS[name]
    folder = resolve_data_dir(data_dir)
    path = folder / spec.file_name
    if not path.is_file():
        raise _missing_file_error(path, spec.file_name)

    df = pd.read_csv(path)
    features = list(spec.feature_names)
    missing = [c for c in features + [spec.objective_name] if c not in df.columns]
    if missing:
        raise ValueError(f"{path} lacks the column(s) {missing}; found {list(df.columns)}.")
    df = df[features + [spec.objective_name]].astype("float64")
    if df.isna().any().any():
        raise ValueError(f"{path} has missing values.")
    y = df[spec.objective_name] if spec.maximise else -df[spec.objective_name]
    df = df.assign(**{spec.objective_name: y})

    # Mean of the *distinct* objective values of each configuration; groupby sorts
    # the keys, and the explicit sort makes the lexicographic pool order certain.
    grouped = (
        df.groupby(features, sort=True)[spec.objective_name]
        .agg(lambda s: float(s.drop_duplicates().mean()))
        .reset_index()
        .sort_values(features, kind="mergesort")
        .reset_index(drop=True)
    )
    raw_points = torch.tensor(grouped[features].to_numpy(), dtype=torch.float64)
    raw_values = torch.tensor(grouped[spec.objective_name].to_numpy(), dtype=torch.float64)

    lo = raw_points.min(dim=0).values
    hi = raw_points.max(dim=0).values
    span = hi - lo
    # A constant column maps to 0 rather than dividing by zero.
    scale = torch.where(span > 0, span, torch.ones_like(span))
    points = (raw_points - lo) / scale

    best = raw_values.max()
    values = raw_values - best
    metadata = {
        "feature_names": tuple(features),
        "objective_name": spec.objective_name,
        "maximise": spec.maximise,
        "raw_points": raw_points,
        "raw_values": raw_values,
        "raw_best_value": float(best),
        "feature_min": lo,
        "feature_max": hi,
        "optimizer_index": int(raw_values.argmax()),
        "n_rows": int(len(df)),
        "n_unique": int(raw_points.shape[0]),
        "path": str(path),
    }
    problem = MaterialsProblem(
        name=name,
        points=points,
        values=values,
        optimal_value=0.0,
        noise_std=noise_std,
        n_init=10,
        metadata=metadata,
    )
    return problem.to(device=device, dtype=dtype)
