r"""Registry of named benchmark problems (``buh list``).

A *factory* is a callable ``factory(data_dir: Path | str | None = None) -> Problem``
that returns a fresh problem in ``float64`` on the CPU, with the noise level the
paper uses; factories that need no data simply ignore ``data_dir``.
:func:`get_problem` then overrides the noise level if asked and moves the problem
to the requested device and dtype. :func:`resolve_task_options` turns task names
given as text (``--option candidates=period``) into the objects the rules take.

Registered problems:

- ``berkenkamp``: the 1-d toy problem of Berkenkamp et al., noiseless;
  ``berkenkamp-noisy``: the same with observation noise ``noise_std = 0.01``;
  ``berkenkamp2``, ``berkenkamp3``: its trend and bump on ``[0, 1]^2`` and ``[0, 1]^3``, noiseless
  (a needle: the bump's basin shrinks with the dimension).
- ``michalewicz5``: negated 5-d Michalewicz on ``[0, 3.14]^5``, noiseless.
- ``crossed-barrel``, ``agnp``: the materials pools (need the CSV files), noiseless.
- ``period``, ``additive3d``, ``hills``: the hyperparameter-elimination tasks (b)-(d);
  ``robust-peak``: this package's robust task for HE-StableOpt.
- ``gp-kernel``, ``gp-lengthscale``, ``gp-hill``: the prior-selection tasks (a function
  drawn per seed from one of K GP priors on 500 arms, noise 0.25, no initial design).
- ``ackley2``, ``rosenbrock2``, ``bird2``, ``ackley3``, ``hartmann6``, ``griewank8``,
  ``michalewicz10``: the TS-RSR paper's closed-form benchmarks on its boxes, negated,
  noiseless, 15 initial points (:mod:`.batch_benchmarks`).
- ``gp-rbf2``, ``gp-rbf3``: the TS-RSR paper's GP-prior functions, an exact RBF-prior
  draw per seed on a grid (queries snap to the nearest node), noiseless.
- ``branin``, ``rosenbrock4``, ``ackley5``: BoTorch's test functions on their canonical
  boxes, negated, noiseless, 10 initial points (:mod:`.practical`, the practical suite).
- ``robot-push3``, ``robot-push4``: the TS-RSR paper's Box2D robot pushing, a goal drawn
  per seed, noisy push velocity (needs ``pip install "botorch-unknown-hypers[robot]"``).

Every TS-RSR problem carries the paper's batch size, iterations and fixed surrogate in
``metadata``. More problems are added with the decorator or a plain dict entry
(``docs/harness.md``)::

    @register_problem("holder")
    def _holder(data_dir=None) -> Problem:
        ...

    PROBLEMS["my-problem"] = make_my_problem
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import torch

from botorch_unknown_hypers.checks import check_choice
from botorch_unknown_hypers.problems.problem import Problem
from botorch_unknown_hypers.problems.batch_benchmarks import SYNTHETIC_BENCHMARKS, gp_rbf2, gp_rbf3, synthetic_benchmark
from botorch_unknown_hypers.problems.elimination_tasks import (
    Additive3dProblem,
    HillsProblem,
    PeriodProblem,
    task_candidates,
)
from botorch_unknown_hypers.problems.robust_problems import RobustPeakProblem
from botorch_unknown_hypers.problems.materials import load_materials_problem
from botorch_unknown_hypers.problems.practical import PRACTICAL_FUNCTIONS, practical_benchmark
from botorch_unknown_hypers.problems.prior_selection_problems import PRIOR_SELECTION_TASKS, PriorSelectionProblem, task_priors
from botorch_unknown_hypers.problems.robot_push import robot_push3, robot_push4
from botorch_unknown_hypers.problems.mixed_problems import ackley_mixed, hpo_four, labs
from botorch_unknown_hypers.problems.tabular_problems import FCNET_DATASETS, fcnet
from botorch_unknown_hypers.problems.synthetic import Berkenkamp, michalewicz5

ProblemFactory = Callable[..., Problem]

PROBLEMS: dict[str, ProblemFactory] = {}
r"""Problem name -> factory ``(data_dir=None) -> Problem``."""


def register_problem(
    name: str, factory: ProblemFactory | None = None, *, overwrite: bool = False
) -> ProblemFactory | Callable[[ProblemFactory], ProblemFactory]:
    r"""Register ``factory`` under ``name``; usable as ``@register_problem(name)``.

    Args:
        name: The problem's name.
        factory: ``(data_dir=None) -> Problem``; omit to get a decorator.
        overwrite: Allow replacing an existing entry.

    Returns:
        ``factory`` (or a decorator that registers and returns its argument).

    Raises:
        ValueError: If ``name`` is taken and ``overwrite`` is False.
    """

    def _register(f: ProblemFactory) -> ProblemFactory:
        if name in PROBLEMS and not overwrite:
            raise ValueError(f"A problem named {name!r} is already registered.")
        PROBLEMS[name] = f
        return f

    return _register if factory is None else _register(factory)


def list_problems() -> list[str]:
    r"""Sorted names of the registered problems."""
    return sorted(PROBLEMS)


def get_problem(
    name: str,
    *,
    data_dir: str | Path | None = None,
    noise_std: float | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float64,
) -> Problem:
    r"""Build a registered problem.

    Args:
        name: A name from :func:`list_problems`.
        data_dir: Folder of the materials CSV files (see
            :func:`~botorch_unknown_hypers.problems.materials.resolve_data_dir`);
            ignored by synthetic problems.
        noise_std: Override of the observation noise standard deviation; ``None``
            keeps the problem's default.
        device: Device of the problem's tensors.
        dtype: dtype of the problem's tensors.

    Returns:
        A fresh :class:`Problem`.

    Raises:
        ValueError: If ``name`` is not registered (the message lists the valid
            names) or ``noise_std`` is negative or not finite.
    """
    if not isinstance(name, str) or name not in PROBLEMS:
        raise ValueError(
            f"Unknown problem {name!r}. Valid names: {', '.join(list_problems())}."
        )
    if noise_std is not None and not (math.isfinite(noise_std) and noise_std >= 0):
        raise ValueError(f"noise_std must be finite and >= 0, got {noise_std}.")
    problem = PROBLEMS[name](data_dir=data_dir)
    if noise_std is not None:
        problem.noise_std = float(noise_std)
    return problem.to(device=device, dtype=dtype)


def resolve_task_options(options: dict[str, Any], problem: Problem) -> dict[str, Any]:
    r"""Method options with named task sets replaced by the objects the rules take.

    The ``buh`` command passes options as text (``--option candidates=period``); the rules take
    candidate sets and priors as objects, never names. A string ``candidates`` becomes that
    elimination task's set (:func:`~botorch_unknown_hypers.problems.elimination_tasks.task_candidates`,
    with the option ``noise_std`` or the rules' default 0.01); a string ``priors`` that prior-selection
    task's priors over the problem's pool
    (:func:`~botorch_unknown_hypers.problems.prior_selection_problems.task_priors`).

    Raises:
        ValueError: for an unknown task name.
    """
    options = dict(options)
    if isinstance(options.get("candidates"), str):
        noise_std = options.get("noise_std", 0.01)
        options["candidates"] = task_candidates(options["candidates"], noise_std=noise_std)
    if isinstance(options.get("priors"), str):
        name = options["priors"]
        check_choice("priors", name, list(PRIOR_SELECTION_TASKS))
        num_arms = int(problem.domain.discretization_size(0))
        options["priors"] = task_priors(name, num_arms=num_arms)
    return options


def _ignoring_data_dir(build: Callable[[], Problem]) -> ProblemFactory:
    r"""A factory ``(data_dir=None) -> Problem`` for a problem that needs no data."""

    def factory(data_dir: str | Path | None = None) -> Problem:
        return build()

    return factory


_BUILT_IN: dict[str, ProblemFactory] = {
    "berkenkamp": _ignoring_data_dir(partial(Berkenkamp, noise_std=0.0, name="berkenkamp")),
    "berkenkamp-noisy": _ignoring_data_dir(partial(Berkenkamp, noise_std=0.01, name="berkenkamp-noisy")),
    "berkenkamp2": _ignoring_data_dir(partial(Berkenkamp, noise_std=0.0, dim=2)),
    "berkenkamp3": _ignoring_data_dir(partial(Berkenkamp, noise_std=0.0, dim=3)),
    "michalewicz5": _ignoring_data_dir(partial(michalewicz5, noise_std=0.0, name="michalewicz5")),
    "crossed-barrel": partial(load_materials_problem, "crossed-barrel"),
    "agnp": partial(load_materials_problem, "agnp"),
    "period": _ignoring_data_dir(PeriodProblem),
    "additive3d": _ignoring_data_dir(Additive3dProblem),
    "hills": _ignoring_data_dir(HillsProblem),
    "robust-peak": _ignoring_data_dir(RobustPeakProblem),
    **{name: _ignoring_data_dir(partial(PriorSelectionProblem, name)) for name in PRIOR_SELECTION_TASKS},
    **{name: _ignoring_data_dir(partial(synthetic_benchmark, name)) for name in SYNTHETIC_BENCHMARKS},
    "gp-rbf2": _ignoring_data_dir(gp_rbf2),
    "gp-rbf3": _ignoring_data_dir(gp_rbf3),
    "robot-push3": _ignoring_data_dir(robot_push3),
    "robot-push4": _ignoring_data_dir(robot_push4),
    "ackley-mixed": _ignoring_data_dir(ackley_mixed),
    "labs": _ignoring_data_dir(labs),
    "hpo-four": _ignoring_data_dir(hpo_four),
    **{name: _ignoring_data_dir(partial(fcnet, name)) for name in FCNET_DATASETS},
    **{name: _ignoring_data_dir(partial(practical_benchmark, name)) for name in PRACTICAL_FUNCTIONS},
}
for _name, _factory in _BUILT_IN.items():
    register_problem(_name, _factory)


__all__ = ["PROBLEMS", "ProblemFactory", "get_problem", "list_problems", "register_problem", "resolve_task_options"]
