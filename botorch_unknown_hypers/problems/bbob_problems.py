r"""The 24 noiseless BBOB functions (COCO's ``bbob`` suite) through IOHprofiler, maximised.

BBOB (Hansen et al. 2009) defines 24 functions :math:`g_k` on :math:`[-5, 5]^d`; an
*instance* :math:`i` shifts the optimum :math:`x^*_{k,i}` (inside :math:`[-4, 4]^d`), rotates
and offsets the function (:math:`g^*_{k,i} = g_{k,i}(x^*)`), so that every instance is a fresh
problem of the same type. :class:`BBOBProblem` evaluates COCO's instances through ``ioh``
(IOHprofiler, ``pip install "botorch-unknown-hypers[bbob]"``), whose BBOB implementation gives
COCO's values (checked against ``cocoex`` on all 24 functions, instances 1-15, d = 2, 5, 10:
relative difference below 1e-11) and exposes :math:`x^*` and :math:`g^*` directly.

Every problem of this package is maximised, so the objective is :math:`f = -g` with
:math:`f^* = -g^*`, and the simple regret :math:`f^* - \max_\tau f(x_\tau)` equals COCO's
:math:`\min_\tau g(x_\tau) - g^*`.

*Spread.* The scale of :math:`g` differs by orders of magnitude between functions, so noise
and targets are stated relative to the spread

.. math::

    s_{k,i,d} = Q_{0.95}\big(g(X)\big) - Q_{0.05}\big(g(X)\big),

the 5-95 % quantile range of :math:`g` over :data:`SPREAD_POINTS` scrambled Sobol points of
the box (seed :data:`SPREAD_SEED`, the same points for every function of a dimension).

*Noisy variants.* ``bbob-f{k}-i{i}-d{d}-noisy`` observes :math:`y = f(x) + \varepsilon`,
:math:`\varepsilon \sim \mathcal N(0, (\eta s)^2)` with :math:`\eta` =
:data:`NOISE_FRACTION`; regret stays on the noiseless :math:`f`.

*Instance split.* Instances :data:`DEV_INSTANCES` (1-5) are for development; instances
:data:`REPORT_INSTANCES` (6-15) are kept unseen for reports (``docs/bbob.md``).

Reference:
    N. Hansen, S. Finck, R. Ros, A. Auger. Real-parameter black-box optimization
    benchmarking 2009: noiseless functions definitions. INRIA RR-6829, 2009.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import torch
from torch import Tensor

from botorch_unknown_hypers.domains import BoxDomain
from botorch_unknown_hypers.problems.problem import Problem

BBOB_FUNCTIONS = tuple(range(1, 25))
r"""Function ids of the 24 noiseless BBOB functions."""
BBOB_BOUND = 5.0
r"""The search box is :math:`[-5, 5]^d`."""
DEV_INSTANCES = (1, 2, 3, 4, 5)
r"""Instances for development (choosing methods and constants)."""
REPORT_INSTANCES = tuple(range(6, 16))
r"""Instances kept for reports, never run during development."""
NOISE_FRACTION = 0.01
r""":math:`\eta`: the noisy variants' noise standard deviation as a fraction of the spread."""
SPREAD_POINTS = 4096
r"""Number of scrambled Sobol points of the spread's quantiles."""
SPREAD_SEED = 0
r"""Seed of the spread's Sobol points."""
BBOB_INSTALL_HINT = 'pip install "botorch-unknown-hypers[bbob]"'

_NAME = re.compile(r"^bbob-f(\d+)-i(\d+)-d(\d+)(-noisy)?$")


def import_ioh() -> Any:
    r"""``import ioh``, or an ``ImportError`` that says how to install it."""
    try:
        import ioh
    except ImportError as e:
        raise ImportError(f"BBOB problems need IOHprofiler, an optional extra: {BBOB_INSTALL_HINT} ({e}).") from None
    return ioh


def bbob_name(function: int, instance: int, dim: int, noisy: bool = False) -> str:
    r"""The registered name ``bbob-f{function}-i{instance}-d{dim}`` (``-noisy`` appended if noisy)."""
    return f"bbob-f{function}-i{instance}-d{dim}" + ("-noisy" if noisy else "")


def parse_bbob_name(name: str) -> tuple[int, int, int, bool]:
    r"""``(function, instance, dim, noisy)`` of a name made by :func:`bbob_name`.

    Raises:
        ValueError: if ``name`` is not of the form ``bbob-f{k}-i{i}-d{d}[-noisy]`` with
            :math:`1 \le k \le 24`, :math:`i \ge 1`, :math:`d \ge 2`.
    """
    match = _NAME.match(name) if isinstance(name, str) else None
    if match is None:
        raise ValueError(f"BBOB problem name must look like 'bbob-f3-i1-d5' or 'bbob-f3-i1-d5-noisy', got {name!r}.")
    function, instance, dim = (int(v) for v in match.groups()[:3])
    if function not in BBOB_FUNCTIONS:
        raise ValueError(f"BBOB function id must be in 1..24, got {function} (in {name!r}).")
    if instance < 1:
        raise ValueError(f"BBOB instance must be >= 1, got {instance} (in {name!r}).")
    if dim < 2:
        raise ValueError(f"BBOB dimension must be >= 2, got {dim} (in {name!r}).")
    return function, instance, dim, match.group(4) is not None


def sobol_box_points(dim: int, n: int = SPREAD_POINTS, seed: int = SPREAD_SEED) -> np.ndarray:
    r"""``n x dim`` scrambled Sobol points of :math:`[-5, 5]^d` (float64)."""
    unit = torch.quasirandom.SobolEngine(dim, scramble=True, seed=seed).draw(n, dtype=torch.float64)
    return (BBOB_BOUND * (2.0 * unit - 1.0)).numpy()


class BBOBProblem(Problem):
    r"""BBOB function ``function``, instance ``instance``, in ``dim`` dimensions, maximised.

    Args:
        function: Function id, 1..24.
        instance: COCO instance id (>= 1).
        dim: Dimension :math:`d \ge 2`.
        noisy: Observation noise :math:`\eta s` (:data:`NOISE_FRACTION` of the spread) if True.
        n_init: Initial design size (default :math:`2d`, the benchmark's budget, ``docs/bbob.md``).

    Attributes (in ``metadata``): ``function``, ``instance``, ``function_name`` (IOHprofiler's),
    ``spread`` (:math:`s`), ``optimizer`` (:math:`x^*`), ``minimum`` (:math:`g^*`).

    Raises:
        ImportError: if ``ioh`` is not installed.
    """

    def __init__(self, function: int, instance: int, dim: int, noisy: bool = False, n_init: int | None = None) -> None:
        name = bbob_name(function, instance, dim, noisy)
        parse_bbob_name(name)  # checks the ranges
        ioh = import_ioh()
        self._ioh_problem = ioh.get_problem(function, instance=instance, dimension=dim, problem_class=ioh.ProblemClass.BBOB)
        g_star = float(self._ioh_problem.optimum.y)
        values = self._minimised(sobol_box_points(dim))
        q05, q95 = np.quantile(values, [0.05, 0.95])
        spread = float(q95 - q05)
        bounds = torch.tensor([[-BBOB_BOUND] * dim, [BBOB_BOUND] * dim], dtype=torch.float64)
        super().__init__(
            name=name,
            domain=BoxDomain(bounds),
            optimal_value=-g_star,
            noise_std=NOISE_FRACTION * spread if noisy else 0.0,
            n_init=2 * dim if n_init is None else n_init,
            metadata={
                "function": function,
                "instance": instance,
                "function_name": self._ioh_problem.meta_data.name,
                "spread": spread,
                "optimizer": tuple(float(v) for v in self._ioh_problem.optimum.x),
                "minimum": g_star,
                "reference": "BBOB (COCO) through IOHprofiler; box [-5, 5]^d; maximised as f = -g",
            },
        )

    def _minimised(self, X: np.ndarray) -> np.ndarray:
        r"""COCO's :math:`g` at the rows of an ``n x d`` float64 array."""
        return np.asarray(self._ioh_problem(np.ascontiguousarray(X, dtype=np.float64)), dtype=np.float64).reshape(-1)

    @property
    def spread(self) -> float:
        r""":math:`s`: the 5-95 % quantile range of :math:`g` over the box's Sobol points."""
        return float(self.metadata["spread"])

    def evaluate_true(self, X: Tensor) -> Tensor:
        r""":math:`f(x) = -g(x)` at a ``batch_shape x d`` tensor (evaluated on the CPU in float64,
        returned on ``X``'s device and dtype), ``batch_shape``-dim."""
        flat = X.detach().reshape(-1, self.dim).to(device="cpu", dtype=torch.float64).numpy()
        values = -self._minimised(flat)
        return torch.as_tensor(values, dtype=X.dtype, device=X.device).reshape(X.shape[:-1])


def bbob_problem(name: str) -> BBOBProblem:
    r"""The problem of a name made by :func:`bbob_name` (see :func:`parse_bbob_name`)."""
    function, instance, dim, noisy = parse_bbob_name(name)
    return BBOBProblem(function, instance, dim, noisy=noisy)


__all__ = [
    "BBOBProblem",
    "BBOB_BOUND",
    "BBOB_FUNCTIONS",
    "DEV_INSTANCES",
    "NOISE_FRACTION",
    "REPORT_INSTANCES",
    "SPREAD_POINTS",
    "SPREAD_SEED",
    "bbob_name",
    "bbob_problem",
    "import_ioh",
    "parse_bbob_name",
    "sobol_box_points",
]
