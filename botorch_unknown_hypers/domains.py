r"""Search domains: a box, a finite pool of points or a mixed space, their checks and their sampling.

Every rule in this package maximises over one of three domains:

- :class:`BoxDomain`, a box :math:`\prod_j [l_j, u_j] \subset \mathbb{R}^d`;
- :class:`FiniteDomain`, a pool :math:`\{x_1, \dots, x_N\}` whose points may be queried again
  (experimental tables, arm sets, grids);
- :class:`MixedDomain`, named float, integer, stepped and categorical parameters (a categorical
  as one-hot columns), whose points are a finite union of boxes' (``docs/mixed.md``).

A domain owns what depends on its type and nothing else: membership (:meth:`BoxDomain.contains`,
:meth:`FiniteDomain.index_of`), the checks of points and observations at the package's
boundaries (:func:`check_points`, :func:`check_observations`, :func:`check_training_data`), the
initial design (:meth:`BoxDomain.sample`: scrambled Sobol; :meth:`FiniteDomain.sample`: without
replacement), uniform draws (:meth:`BoxDomain.sample_uniform`), a finite stand-in for the domain
(:meth:`BoxDomain.discretize`: Sobol points; a pool is its own), and the
:math:`\epsilon`-neighbourhoods of robust rules,

.. math::

    \Delta_\epsilon(x) = \{x' - x : x' \in \mathcal{X},\ d(x, x') \le \epsilon\},

with :math:`d` the :math:`L_\infty` (``"box"``) or :math:`L_2` (``"ball"``) distance (Bogunovic
et al. 2018, StableOpt). Pool-versus-box decisions of the *optimisers* live in
:mod:`botorch_unknown_hypers.acquisition.optimize`; rules never branch on the domain type.

Shapes follow BoTorch: points are ``n x d``, bounds ``2 x d``.

References:
    I. Bogunovic, J. Scarlett, S. Jegelka, V. Cevher. Adversarially Robust Optimization with
    Gaussian Processes. NeurIPS 2018.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import Tensor

from botorch_unknown_hypers.checks import check_choice, check_nonnegative
from botorch_unknown_hypers.host import as_device_tensor, to_device

PERTURBATIONS = ("box", "ball")
r"""Neighbourhood shapes of robust rules: :math:`L_\infty` (``"box"``) or :math:`L_2` (``"ball"``)."""


def sobol_points(bounds: Tensor, n: int, seed: int | None, batch: int | None = None) -> Tensor:
    r"""``n x d`` scrambled Sobol points of the box ``bounds`` (``2 x d``), or ``n x batch x d``
    (``batch`` sequences' worth of the one sequence, point ``i`` of sequence ``b`` its
    ``b n + i``-th): BoTorch's ``draw_sobol_samples(bounds, n, q=1, batch_shape, seed)`` without
    its ``q`` dimension, the same points bit for bit, without the host read by which it sizes its
    batch (a tensor of the batch shape). Drawn on the CPU (``SobolEngine``), copied to the box's
    device without a wait, :math:`x = l + (u - l) s` as ``unnormalize``."""
    from torch.quasirandom import SobolEngine

    d = bounds.shape[-1]
    raw = SobolEngine(d, scramble=True, seed=seed).draw((1 if batch is None else batch) * n, dtype=bounds.dtype)
    raw = to_device(raw, bounds)  # from the host: no wait
    if batch is not None:
        raw = raw.view(batch, n, d).permute(1, 0, 2)
    return raw * (bounds[1] - bounds[0]) + bounds[0]


def distinct_rows(X: Tensor) -> tuple[Tensor, Tensor]:
    r"""The distinct rows of ``X`` (``n x d``, lexicographic order) and each row's group index (``n``)."""
    if X.shape[0] == 0:
        return X, torch.zeros(0, dtype=torch.long, device=X.device)
    return torch.unique(X, dim=0, return_inverse=True)


def no_neighbourhoods(advice: str) -> ValueError:
    r"""The error of a domain without exact :math:`\epsilon`-neighbourhoods, with ``advice``."""
    return ValueError(f"domain: epsilon-neighbourhoods need a finite pool (FiniteDomain) so that the perturbation set is exact; {advice}.")


def _check_dtype(dtype: torch.dtype | None) -> None:
    if dtype is not None and not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating-point dtype, got {dtype}.")


@dataclass(frozen=True)
class BoxDomain:
    r"""A box :math:`\prod_j [l_j, u_j]`.

    Args:
        bounds: A ``2 x d``-dim tensor of lower and upper bounds, finite, upper > lower.

    Example:
        >>> domain = BoxDomain(torch.tensor([[0.0, -1.0], [1.0, 1.0]], dtype=torch.float64))
        >>> domain.sample(4, seed=0).shape
        torch.Size([4, 2])
    """

    bounds: Tensor

    def __post_init__(self) -> None:
        if not isinstance(self.bounds, Tensor):
            raise ValueError(f"bounds must be a 2 x d tensor, got {type(self.bounds).__name__}.")
        if self.bounds.ndim != 2 or self.bounds.shape[0] != 2 or self.bounds.shape[1] == 0:
            raise ValueError(f"bounds must have shape 2 x d, got {tuple(self.bounds.shape)}.")
        if not self.bounds.is_floating_point():
            raise ValueError(f"bounds must be a floating-point tensor, got {self.bounds.dtype}.")
        finite = torch.isfinite(self.bounds).all()
        if bool(finite & (self.bounds[1] > self.bounds[0]).all()):  # one host read when valid
            return
        if not finite:
            raise ValueError("bounds must be finite.")
        raise ValueError("bounds: every upper bound must exceed its lower bound.")

    @property
    def dim(self) -> int:
        return self.bounds.shape[-1]

    @property
    def size(self) -> float:
        r"""The number of points: :math:`\infty` for a box."""
        return math.inf

    @property
    def device(self) -> torch.device:
        return self.bounds.device

    def contains(self, X: Tensor, atol: float = 1e-9) -> Tensor:
        r"""Whether each row of ``X`` (``... x d``) lies in the box; ``...``-dim bool."""
        lower, upper = self.bounds.to(X)
        return ((X >= lower - atol) & (X <= upper + atol)).all(dim=-1)

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> BoxDomain:
        _check_dtype(dtype)
        return BoxDomain(self.bounds.to(device=device, dtype=dtype))

    def sample(self, n: int, seed: int) -> Tensor:
        r"""``n x d`` scrambled Sobol points (the initial design), deterministic given ``seed``."""
        return sobol_points(self.bounds, n, seed)

    def sample_uniform(self, n: int, generator: torch.Generator) -> Tensor:
        r"""``n x d`` independent uniform points, drawn with ``generator`` (a CPU generator) and
        moved to the box's device without a wait."""
        lower, upper = self.bounds
        u = to_device(torch.rand(n, self.dim, generator=generator, dtype=self.bounds.dtype), self.bounds)
        return lower + (upper - lower) * u

    def discretize(self, n: int, seed: int) -> Tensor:
        r"""A finite stand-in for the box: ``n x d`` scrambled Sobol points."""
        return self.sample(n, seed)

    def discretization_size(self, n: int) -> int:
        r"""The number of points of :meth:`discretize` with ``n``: ``n``."""
        return n

    def neutral_point(self) -> Tensor:
        r"""The ``1 x d`` point to play when every point scores the same: the box's centre."""
        return (0.5 * (self.bounds[0] + self.bounds[1])).unsqueeze(0)

    def unique_points(self, X: Tensor) -> tuple[Tensor, Tensor]:
        r"""The distinct rows of ``X`` (``n x d``, lexicographic order) and each row's group index (``n``)."""
        return distinct_rows(X)

    def extreme_points(self) -> tuple[Tensor, str]:
        r"""The points that lie in another domain only if the whole box does: its lower and upper
        corners (``2 x d``), and what they are called in an error."""
        return self.bounds, "box corners"

    def neighbourhoods(self, epsilon: float, kind: str = "box") -> Tensor:
        r"""Not defined on a box: robust rules need a pool (discretise the box into a grid)."""
        raise no_neighbourhoods("discretise the box into a grid")


@dataclass(frozen=True)
class FiniteDomain:
    r"""A finite pool of points :math:`\{x_1, \dots, x_N\}`; points may be queried again.

    Args:
        points: An ``N x d``-dim floating-point tensor of the pool's points, finite.
    """

    points: Tensor

    def __post_init__(self) -> None:
        if not isinstance(self.points, Tensor):
            raise ValueError(f"points must be an N x d tensor, got {type(self.points).__name__}.")
        if self.points.ndim != 2 or self.points.shape[0] == 0 or self.points.shape[1] == 0:
            raise ValueError(f"points must be a non-empty N x d tensor, got {tuple(self.points.shape)}.")
        if not self.points.is_floating_point():
            raise ValueError(f"points must be a floating-point tensor, got {self.points.dtype}.")
        if not torch.isfinite(self.points).all():
            raise ValueError("points must be finite.")

    @property
    def dim(self) -> int:
        return self.points.shape[-1]

    @property
    def size(self) -> float:
        r"""The number of points :math:`N`."""
        return float(self.points.shape[0])

    @property
    def device(self) -> torch.device:
        return self.points.device

    @property
    def bounds(self) -> Tensor:
        r"""The ``2 x d`` bounding box of the pool."""
        return torch.stack([self.points.min(dim=0).values, self.points.max(dim=0).values])

    def index_of(self, X: Tensor, atol: float = 1e-9) -> Tensor:
        r"""Pool index of each row of ``X`` (``n x d``); ``-1`` where a row is not in the pool."""
        # Exact distances: the matrix-product mode loses ~1e-8 and would miss pool points.
        dist = torch.cdist(X.to(self.points), self.points, compute_mode="donot_use_mm_for_euclid_dist")
        best, idx = dist.min(dim=-1)
        return torch.where(best <= atol, idx, torch.full_like(idx, -1))

    def contains(self, X: Tensor, atol: float = 1e-9) -> Tensor:
        r"""Whether each row of ``X`` (``... x d``) is a pool point; ``...``-dim bool."""
        flat = X.reshape(-1, X.shape[-1])
        return (self.index_of(flat, atol=atol) >= 0).reshape(X.shape[:-1])

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> FiniteDomain:
        _check_dtype(dtype)
        return FiniteDomain(self.points.to(device=device, dtype=dtype))

    def sample(self, n: int, seed: int) -> Tensor:
        r"""``n x d`` distinct pool points (the initial design), deterministic given ``seed``."""
        num = self.points.shape[0]
        if n > num:
            raise ValueError(f"n = {n} exceeds the pool size {num}.")
        idx = torch.randperm(num, generator=torch.Generator().manual_seed(seed))[:n]
        return self.points[as_device_tensor(idx, device=self.device)]

    def sample_uniform(self, n: int, generator: torch.Generator) -> Tensor:
        r"""``n x d`` pool points drawn uniformly with replacement with ``generator``."""
        idx = torch.randint(0, self.points.shape[0], (n,), generator=generator)
        return self.points[as_device_tensor(idx, device=self.device)]

    def discretize(self, n: int, seed: int) -> Tensor:
        r"""The pool itself (``N x d``; ``n`` and ``seed`` are for boxes)."""
        return self.points

    def discretization_size(self, n: int) -> int:
        r"""The number of points of :meth:`discretize`: the pool size ``N``."""
        return self.points.shape[0]

    def neutral_point(self) -> Tensor:
        r"""The ``1 x d`` point to play when every point scores the same: the first pool point
        (ties broken by the lowest index)."""
        return self.points[:1]

    def unique_points(self, X: Tensor) -> tuple[Tensor, Tensor]:
        r"""The distinct pool points among the rows of ``X`` (``n x d``, in pool order) and each
        row's group index (``n``); rows are matched to pool points exactly (:meth:`index_of`)."""
        if X.shape[0] == 0:
            return X, torch.zeros(0, dtype=torch.long, device=X.device)
        unique, inverse = torch.unique(self.index_of(X), return_inverse=True)
        return self.points[unique], inverse

    def extreme_points(self) -> tuple[Tensor, str]:
        r"""The points that lie in another domain only if the whole pool does: every pool point
        (``N x d``), and what they are called in an error."""
        return self.points, "pool points"

    def neighbourhoods(self, epsilon: float, kind: str = "box") -> Tensor:
        r"""``N x N`` mask: ``mask[i, j]`` iff :math:`d(x_i, x_j) \le \epsilon`.

        Args:
            epsilon: The radius :math:`\epsilon \ge 0`, in domain units.
            kind: ``"box"`` (:math:`L_\infty`) or ``"ball"`` (:math:`L_2`).
        """
        check_choice("perturbation", kind, PERTURBATIONS)
        check_nonnegative("epsilon", epsilon)
        p = 2.0 if kind == "ball" else float("inf")
        return torch.cdist(self.points, self.points, p=p) <= epsilon * (1 + 1e-12)


# --------------------------------------------------------------------------- mixed spaces
def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"a parameter's name must be a non-empty str, got {name!r}.")
    return name


def _check_number(owner: str, what: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not math.isfinite(value):
        raise ValueError(f"parameter {owner!r}: {what} must be a finite number, got {value!r}.")
    return float(value)


@dataclass(frozen=True)
class FloatParameter:
    r"""A float parameter in :math:`[l, u]`, continuous or on the grid :math:`l + k s`.

    Its column holds :math:`x` (or :math:`\log x` with ``log``, so that a length scale is a
    relative change); with ``step`` the column takes the grid's values only.

    Args:
        name: The parameter's name.
        lower, upper: Its bounds, ``lower < upper`` (both > 0 with ``log``).
        log: Whether the column holds :math:`\log x`.
        step: The grid step :math:`s > 0` (``None``: continuous); not with ``log``.
    """

    name: str
    lower: float
    upper: float
    log: bool = False
    step: float | None = None

    def __post_init__(self) -> None:
        _check_name(self.name)
        lower = _check_number(self.name, "lower", self.lower)
        upper = _check_number(self.name, "upper", self.upper)
        if not upper > lower:
            raise ValueError(f"parameter {self.name!r}: upper must exceed lower, got [{lower}, {upper}].")
        if not isinstance(self.log, bool):
            raise ValueError(f"parameter {self.name!r}: log must be a bool, got {self.log!r}.")
        if self.log and lower <= 0:
            raise ValueError(f"parameter {self.name!r}: a log-scale parameter needs lower > 0, got {lower}.")
        if self.step is not None:
            step = _check_number(self.name, "step", self.step)
            if step <= 0 or self.log:
                raise ValueError(f"parameter {self.name!r}: step must be > 0 and without log, got step={self.step!r}, log={self.log}.")
            if math.floor((upper - lower) / step + 1e-9) < 1:
                raise ValueError(f"parameter {self.name!r}: step {step} leaves one value in [{lower}, {upper}].")

    @property
    def discrete(self) -> bool:
        return self.step is not None

    def grid_size(self) -> int:
        r"""The number of grid values (``step`` given)."""
        return int(math.floor((self.upper - self.lower) / float(self.step) + 1e-9)) + 1  # type: ignore[arg-type]


@dataclass(frozen=True)
class IntParameter:
    r"""An integer parameter in :math:`\{l, l + s, \dots\} \cap [l, u]`; its column holds the
    value (or :math:`\log x` with ``log``, ``step`` 1 then).

    Args:
        name: The parameter's name.
        lower, upper: Integer bounds, ``lower < upper`` (``lower >= 1`` with ``log``).
        step: The integer step (default 1).
        log: Whether the column holds :math:`\log x`.
    """

    name: str
    lower: int
    upper: int
    step: int = 1
    log: bool = False

    def __post_init__(self) -> None:
        _check_name(self.name)
        for what in ("lower", "upper", "step"):
            value = getattr(self, what)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ValueError(f"parameter {self.name!r}: {what} must be an int, got {value!r}.")
        if self.step < 1 or self.upper - self.lower < self.step:
            raise ValueError(
                f"parameter {self.name!r}: needs step >= 1 and at least two values, got [{self.lower}, {self.upper}] step {self.step}."
            )
        if not isinstance(self.log, bool):
            raise ValueError(f"parameter {self.name!r}: log must be a bool, got {self.log!r}.")
        if self.log and (self.lower < 1 or self.step != 1):
            raise ValueError(f"parameter {self.name!r}: a log-scale integer needs lower >= 1 and step 1, got lower {self.lower}, step {self.step}.")

    discrete = True

    def grid_size(self) -> int:
        return (self.upper - self.lower) // self.step + 1


@dataclass(frozen=True)
class CategoricalParameter:
    r"""A categorical parameter: one of ``choices`` (at least two, distinct, JSON scalars),
    one-hot encoded in ``len(choices)`` columns of :math:`\{0, 1\}`."""

    name: str
    choices: tuple[Any, ...]

    def __post_init__(self) -> None:
        _check_name(self.name)
        if not isinstance(self.choices, (tuple, list)) or len(self.choices) < 2:
            raise ValueError(f"parameter {self.name!r}: choices must be a tuple of at least two values, got {self.choices!r}.")
        object.__setattr__(self, "choices", tuple(self.choices))
        for c in self.choices:
            if c is not None and not isinstance(c, (str, bool, int, float)):
                raise ValueError(f"parameter {self.name!r}: choices must be str, int, float, bool or None, got {c!r}.")
        keys = [(type(c), c) for c in self.choices]
        if len(set(keys)) != len(keys):
            raise ValueError(f"parameter {self.name!r}: choices must be distinct, got {self.choices!r}.")

    def index(self, value: Any) -> int:
        r"""The index of ``value`` among the choices (same type and value), else ``ValueError``."""
        for i, c in enumerate(self.choices):
            if type(c) is type(value) and c == value:
                return i
        raise ValueError(f"parameter {self.name!r} must be one of {list(self.choices)!r}, got {value!r}.")


Parameter = FloatParameter | IntParameter | CategoricalParameter
r"""One named parameter of a :class:`MixedDomain`."""


@dataclass(frozen=True, init=False)
class MixedDomain:
    r"""A product of float, integer, stepped and categorical parameters, one encoding for every rule.

    Each parameter owns columns of the ``d``-dim points the rules see:

    - a continuous float: one column, :math:`x` or :math:`\log x`;
    - an integer or a stepped float: one column on its grid (or on :math:`\log` of the integers),
      optimised as a discrete dimension and matched exactly;
    - a categorical of :math:`C` choices: :math:`C` one-hot columns.

    One-hot columns make every rule's GP a model of the mixed space without a new kernel: under
    the unit-cube coordinates (the columns' bounds are :math:`[0, 1]`) two choices :math:`a \ne b`
    are at squared distance :math:`1/\ell_a^2 + 1/\ell_b^2` and choices do not order, so an ARD
    kernel on them is a categorical (exchangeable) kernel whose length scales are the columns'.
    The candidates of a rule whose unknown is the length scales carry them beside the float ones.

    Points are checked like a box's, and a point must sit on its grid and hold exactly one 1 per
    categorical; a float32 or integer copy of a valid point is snapped to it exactly.

    Args:
        parameters: The parameters, in column order; names distinct.
        dtype, device: Of :attr:`bounds` and the points.
    """

    parameters: tuple[Parameter, ...]
    dtype: torch.dtype
    bounds: Tensor = field(repr=False, compare=False)  # ``2 x d``, from the parameters

    def __init__(
        self, parameters: tuple[Parameter, ...], dtype: torch.dtype = torch.float64, device: torch.device | str | None = None
    ) -> None:
        params = parameters
        if not isinstance(params, (tuple, list)) or not params:
            raise ValueError(f"parameters must be a non-empty tuple of parameters, got {params!r}.")
        for p in params:
            if not isinstance(p, (FloatParameter, IntParameter, CategoricalParameter)):
                raise ValueError(f"parameters must be FloatParameter, IntParameter or CategoricalParameter, got {type(p).__name__}.")
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            raise ValueError(f"parameters: names must be distinct, got {names}.")
        _check_dtype(dtype)
        object.__setattr__(self, "parameters", tuple(params))
        object.__setattr__(self, "dtype", dtype)
        lows: list[float] = []
        highs: list[float] = []
        for p in params:
            if isinstance(p, CategoricalParameter):
                lows += [0.0] * len(p.choices)
                highs += [1.0] * len(p.choices)
            else:
                grid = self._grid_values(p)
                lows.append(self._column(p, p.lower) if grid is None else grid[0])
                highs.append(self._column(p, p.upper) if grid is None else grid[-1])
        object.__setattr__(self, "bounds", torch.tensor([lows, highs], dtype=dtype, device=device))

    @property
    def device(self) -> torch.device:
        return self.bounds.device

    # ------------------------------------------------------------------ layout
    @staticmethod
    def _column(p: Parameter, value: float) -> float:
        return math.log(value) if getattr(p, "log", False) else float(value)

    @staticmethod
    def _grid_values(p: Parameter) -> list[float] | None:
        r"""The column values of a discrete parameter (``None`` for a continuous float)."""
        if isinstance(p, CategoricalParameter) or not p.discrete:
            return None
        n = p.grid_size()
        if isinstance(p, IntParameter):
            values = [p.lower + i * p.step for i in range(n)]
            return [math.log(v) for v in values] if p.log else [float(v) for v in values]
        return [p.lower + i * float(p.step) for i in range(n)]  # type: ignore[arg-type]

    def slices(self) -> list[tuple[Parameter, int, int]]:
        r"""``(parameter, first column, width)`` of each parameter."""
        out, start = [], 0
        for p in self.parameters:
            width = len(p.choices) if isinstance(p, CategoricalParameter) else 1
            out.append((p, start, width))
            start += width
        return out

    @property
    def dim(self) -> int:
        return self.bounds.shape[-1]

    @property
    def is_box(self) -> bool:
        r"""Whether every parameter is a continuous float (then :meth:`as_box` is the same space)."""
        return all(isinstance(p, FloatParameter) and not p.discrete for p in self.parameters)

    def as_box(self) -> BoxDomain:
        r"""The :class:`BoxDomain` of the columns' bounds (the continuous relaxation)."""
        return BoxDomain(self.bounds)

    @property
    def size(self) -> float:
        r"""The number of points: :math:`\infty` with a continuous float, else the product of the sizes."""
        total = 1.0
        for p in self.parameters:
            if isinstance(p, CategoricalParameter):
                total *= len(p.choices)
            elif p.discrete:
                total *= p.grid_size()
            else:
                return math.inf
        return total

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> MixedDomain:
        _check_dtype(dtype)
        return MixedDomain(self.parameters, dtype=dtype or self.dtype, device=device if device is not None else self.device)

    # ------------------------------------------------------- codes (one column per parameter)
    def code_layout(self) -> tuple[Tensor, dict[int, list[float]], dict[int, list[float]]]:
        r"""The space of *codes*, one column per parameter (a categorical as its choice index),
        as BoTorch's ``optimize_acqf_mixed_alternating`` takes it: ``(bounds, discrete_dims,
        cat_dims)`` (``2 x P`` bounds, the grid values of discrete columns, the codes of
        categorical ones)."""
        lows, highs = [], []
        discrete: dict[int, list[float]] = {}
        categorical: dict[int, list[float]] = {}
        for j, (p, start, width) in enumerate(self.slices()):
            if isinstance(p, CategoricalParameter):
                categorical[j] = [float(i) for i in range(width)]
                lows.append(0.0)
                highs.append(float(width - 1))
                continue
            grid = self._grid_values(p)
            lows.append(float(self.bounds[0, start]))
            highs.append(float(self.bounds[1, start]))
            if grid is not None:
                discrete[j] = grid
        bounds = torch.tensor([lows, highs], dtype=self.dtype, device=self.device)
        return bounds, discrete, categorical

    def extreme_points(self) -> tuple[Tensor, str]:
        r"""The points that lie in another mixed domain of the same parameters only if the whole
        domain does: the lowest and highest points (``2 x d``; every parameter at its lower, resp.
        upper end, a categorical at its first, resp. last choice: a one-hot block's corners are no
        points, the corners of the codes are), and what they are called in an error."""
        return self.from_codes(self.code_layout()[0]), "lowest and highest points"

    def from_codes(self, C: Tensor) -> Tensor:
        r"""``... x d`` points of ``... x P`` codes (categorical codes rounded to the nearest
        choice; the other columns copied, so gradients reach the float ones)."""
        parts = []
        for j, (p, _, width) in enumerate(self.slices()):
            column = C[..., j : j + 1]
            if isinstance(p, CategoricalParameter):
                index = column.detach().round().clamp(0, width - 1).long().squeeze(-1)
                parts.append(torch.nn.functional.one_hot(index, width).to(C))
            else:
                parts.append(column)
        return torch.cat(parts, dim=-1)

    def to_codes(self, X: Tensor) -> Tensor:
        r"""``... x P`` codes of ``... x d`` points (a categorical's code is its one-hot argmax)."""
        parts = []
        for p, start, width in self.slices():
            block = X[..., start : start + width]
            parts.append(block.argmax(dim=-1, keepdim=True).to(X) if isinstance(p, CategoricalParameter) else block)
        return torch.cat(parts, dim=-1)

    def _from_unit_codes(self, S: Tensor) -> Tensor:
        r"""``n x d`` points of ``n x P`` uniform numbers in :math:`[0, 1)`: a float spans its
        column's range, a discrete parameter or a categorical takes each value with equal chance."""
        parts = []
        bounds = self.bounds.to(S)
        for p, start, width in self.slices():
            s = S[:, len(parts) : len(parts) + 1]
            if isinstance(p, CategoricalParameter):
                index = (s * width).floor().clamp(0, width - 1).long().squeeze(-1)
                parts.append(torch.nn.functional.one_hot(index, width).to(S))
                continue
            lower, upper = bounds[0, start], bounds[1, start]
            grid = self._grid_values(p)
            if grid is None:
                parts.append(lower + (upper - lower) * s)
            else:
                values = torch.tensor(grid, dtype=S.dtype, device=S.device)
                parts.append(values[(s * len(grid)).floor().clamp(0, len(grid) - 1).long()])
        return torch.cat(parts, dim=-1)

    # --------------------------------------------------------------- membership
    def round(self, X: Tensor) -> Tensor:
        r"""The nearest point of the domain to each row of ``X`` (``... x d``): columns clamped to
        their bounds, a discrete column to its nearest grid value (nearest in the column, i.e. in
        :math:`\log x` for a log-scale integer), a categorical to the choice of its largest column."""
        parts = []
        bounds = self.bounds.to(X)
        for p, start, width in self.slices():
            block = X[..., start : start + width]
            if isinstance(p, CategoricalParameter):
                parts.append(torch.nn.functional.one_hot(block.argmax(dim=-1), width).to(X))
                continue
            block = block.clamp(bounds[0, start], bounds[1, start])
            if isinstance(p, IntParameter) and p.log:
                value = block.exp()
                low, high = value.floor().clamp(p.lower, p.upper), value.ceil().clamp(p.lower, p.upper)
                near_low = (block - low.log()).abs() <= (high.log() - block).abs()
                block = torch.where(near_low, low, high).log()
            elif p.discrete:
                step = float(p.step)  # type: ignore[arg-type]
                k = ((block - p.lower) / step).round().clamp(0, p.grid_size() - 1)
                block = p.lower + k * step
            parts.append(block)
        return torch.cat(parts, dim=-1)

    def contains(self, X: Tensor, atol: float | Tensor = 1e-9) -> Tensor:
        r"""Whether each row of ``X`` (``... x d``) is a point of the domain (to ``atol``); ``...``-dim bool."""
        return self._column_flags(X, atol).all(dim=-1)

    def _column_flags(self, X: Tensor, atol: float | Tensor) -> Tensor:
        r"""``... x P``: whether each parameter's columns of each row are valid."""
        flags = []
        lower, upper = self.bounds.to(X)
        rounded = self.round(X)
        for p, start, width in self.slices():
            block = X[..., start : start + width]
            if isinstance(p, CategoricalParameter):
                binary = ((block - rounded[..., start : start + width]).abs() <= atol).all(dim=-1)
                flags.append(binary & ((block - 1).abs() <= atol).sum(dim=-1).eq(1))
                continue
            inside = (block >= lower[start] - atol) & (block <= upper[start] + atol)
            if p.discrete:
                inside = inside & ((block - rounded[..., start : start + 1]).abs() <= atol)
            flags.append(inside.squeeze(-1))
        return torch.stack(flags, dim=-1)

    def explain(self, x: Tensor) -> str:
        r"""Why the ``d``-dim row ``x`` is not a point of the domain: its first bad parameter."""
        flags = self._column_flags(x.unsqueeze(0), 1e-9)[0]
        for (p, start, width), ok in zip(self.slices(), flags.tolist()):
            if ok:
                continue
            got = x[start : start + width].tolist()
            if isinstance(p, CategoricalParameter):
                return f"parameter {p.name!r} (columns {start}..{start + width - 1}) must be one-hot over {list(p.choices)!r}, got {got}"
            if isinstance(p, IntParameter):
                scale = " (log-scale column: log of the integer)" if p.log else ""
                return f"parameter {p.name!r} (column {start}) must be an integer in [{p.lower}, {p.upper}] step {p.step}{scale}, got {got[0]}"
            if p.discrete:
                return f"parameter {p.name!r} (column {start}) must be on the grid {p.lower} + k * {p.step} in [{p.lower}, {p.upper}], got {got[0]}"
            return f"parameter {p.name!r} (column {start}) must lie in [{float(self.bounds[0, start])}, {float(self.bounds[1, start])}], got {got[0]}"
        return "it is a point of the domain"

    # ------------------------------------------------------- named values, both ways
    def to_row(self, values: Mapping[str, Any]) -> list[float]:
        r"""The ``d`` columns of one assignment ``name -> value`` (every parameter named; a
        value off its range, grid or choices is refused, naming the parameter)."""
        missing = [p.name for p in self.parameters if p.name not in values]
        if missing:
            raise ValueError(f"values: parameters {missing} are missing.")
        row: list[float] = []
        for p, _, width in self.slices():
            v = values[p.name]
            if isinstance(p, CategoricalParameter):
                one_hot = [0.0] * width
                one_hot[p.index(v)] = 1.0
                row += one_hot
                continue
            number = _check_number(p.name, "its value", v)
            if isinstance(p, IntParameter) and number != round(number):
                raise ValueError(f"parameter {p.name!r} must be an integer, got {v!r}.")
            if not p.lower - 1e-12 * abs(p.lower) <= number <= p.upper + 1e-12 * abs(p.upper):
                raise ValueError(f"parameter {p.name!r} must lie in [{p.lower}, {p.upper}], got {v!r}.")
            row.append(self._column(p, number))
        x = self.round(torch.tensor(row, dtype=self.dtype))
        for p, start, width in self.slices():  # a stepped value must sit on its grid
            if not isinstance(p, CategoricalParameter) and p.discrete and abs(float(x[start]) - row[start]) > 1e-9 * max(1.0, abs(row[start])):
                raise ValueError(f"parameter {p.name!r} must be on its grid {p.lower} + k * {p.step}, got {values[p.name]!r}.")
        return x.tolist()

    def to_values(self, x: Tensor) -> dict[str, Any]:
        r"""``name -> value`` of a ``d``-dim point: an int for an integer, a choice for a
        categorical, the grid value of a stepped float, a float in its bounds otherwise."""
        x = self.round(x.detach().to(device="cpu", dtype=torch.float64).reshape(-1))
        out: dict[str, Any] = {}
        for p, start, width in self.slices():
            block = x[start : start + width]
            if isinstance(p, CategoricalParameter):
                out[p.name] = p.choices[int(block.argmax())]
            elif isinstance(p, IntParameter):
                out[p.name] = int(round(math.exp(float(block[0])))) if p.log else int(round(float(block[0])))
            elif p.discrete:
                k = round((float(block[0]) - p.lower) / float(p.step))  # type: ignore[arg-type]
                out[p.name] = min(p.lower + k * float(p.step), p.upper)  # type: ignore[arg-type]
            else:
                value = math.exp(float(block[0])) if p.log else float(block[0])
                out[p.name] = min(max(value, p.lower), p.upper)  # exp(log(u)) may exceed u by an ulp
        return out

    # ------------------------------------------------------------------ draws
    def sample(self, n: int, seed: int) -> Tensor:
        r"""``n x d`` points from a scrambled Sobol sequence over the codes (the initial design)."""
        unit = torch.tensor([[0.0] * len(self.parameters), [1.0] * len(self.parameters)], dtype=self.dtype, device=self.device)
        return self._from_unit_codes(sobol_points(unit, n, seed))

    def sample_uniform(self, n: int, generator: torch.Generator) -> Tensor:
        r"""``n x d`` independent uniform points (each parameter uniform on its values), drawn with ``generator``."""
        unit = torch.rand(n, len(self.parameters), generator=generator, dtype=self.dtype)
        return self._from_unit_codes(to_device(unit, self.bounds))

    def discretize(self, n: int, seed: int) -> Tensor:
        r"""A finite stand-in: the distinct points of :meth:`sample` (``<= n x d``)."""
        return torch.unique(self.sample(n, seed), dim=0)

    def discretization_size(self, n: int) -> int:
        r"""An upper bound on the number of points of :meth:`discretize` with ``n``."""
        return int(min(n, self.size))

    def neutral_point(self) -> Tensor:
        r"""The ``1 x d`` point to play when every point scores the same: the box's centre, rounded
        (ties of a categorical to its first choice)."""
        return self.round((0.5 * (self.bounds[0] + self.bounds[1])).unsqueeze(0))

    def unique_points(self, X: Tensor) -> tuple[Tensor, Tensor]:
        r"""The distinct rows of ``X`` (``n x d``, lexicographic order) and each row's group index (``n``)."""
        return distinct_rows(X)

    def neighbourhoods(self, epsilon: float, kind: str = "box") -> Tensor:
        r"""Not defined on a mixed space: robust rules need a pool (their neighbourhoods are exact sets)."""
        raise no_neighbourhoods("a MixedDomain is not one: enumerate its points into a FiniteDomain")

    def describe(self) -> list[dict[str, Any]]:
        r"""The parameters as JSON-able dictionaries (:meth:`from_description` reads them back)."""
        out = []
        for p in self.parameters:
            if isinstance(p, CategoricalParameter):
                out.append({"type": "categorical", "name": p.name, "choices": list(p.choices)})
            elif isinstance(p, IntParameter):
                out.append({"type": "int", "name": p.name, "lower": p.lower, "upper": p.upper, "step": p.step, "log": p.log})
            else:
                out.append({"type": "float", "name": p.name, "lower": p.lower, "upper": p.upper, "log": p.log, "step": p.step})
        return out

    @classmethod
    def from_description(cls, description: list[dict[str, Any]], dtype: torch.dtype = torch.float64) -> MixedDomain:
        r"""The domain of :meth:`describe`'s dictionaries."""
        kinds = {"float": FloatParameter, "int": IntParameter, "categorical": CategoricalParameter}
        params = []
        for entry in description:
            fields = dict(entry)
            kind = fields.pop("type", None)
            check_choice("description: type", kind, sorted(kinds))
            if kind == "categorical":
                fields["choices"] = tuple(fields.get("choices", ()))
            params.append(kinds[kind](**fields))
        return cls(tuple(params), dtype=dtype)


Domain = BoxDomain | FiniteDomain | MixedDomain
r"""A search domain: a box, a pool or a mixed space."""


def is_mixed(domain: Domain) -> bool:
    r"""Whether ``domain`` is searched as a mixed space (``acquisition.mixed_search``): a
    :class:`MixedDomain` with an integer, stepped or categorical parameter (one of continuous floats
    only is searched as its box)."""
    return isinstance(domain, MixedDomain) and not domain.is_box


def check_domain(domain: object, name: str = "domain") -> Domain:
    r"""``domain`` itself if it is a :class:`BoxDomain`, :class:`FiniteDomain` or
    :class:`MixedDomain`, else ``ValueError``."""
    if not isinstance(domain, (BoxDomain, FiniteDomain, MixedDomain)):
        raise ValueError(f"{name} must be a BoxDomain, a FiniteDomain or a MixedDomain, got {type(domain).__name__}.")
    return domain


def as_tensor(value: Any, name: str, dtype: torch.dtype, device: torch.device) -> tuple[Tensor, float]:
    r"""``value`` as a tensor of ``dtype`` on ``device``, and the rounding of its given precision.

    Accepted: a torch tensor, a NumPy array, or a (nested) list or tuple of numbers, of a
    floating-point or integer type. Integers are converted exactly; a floating-point value of
    lower precision than ``dtype`` is converted, and the returned tolerance
    (:math:`4\epsilon` of its dtype, 0 for integers) lets the membership checks accept its
    rounding. ``bool`` and complex values are refused.

    Raises:
        TypeError: naming ``name``, for any other type.
    """
    if isinstance(value, Tensor):
        t = value
    elif isinstance(value, (np.ndarray, list, tuple)):
        try:
            array = np.asarray(value)
        except ValueError:  # ragged nesting
            raise TypeError(f"{name} must be a rectangular array of numbers, got a ragged {type(value).__name__}.") from None
        if array.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got a {type(value).__name__} of dtype {array.dtype}.")
        t = torch.as_tensor(array)
    else:
        raise TypeError(f"{name} must be a torch tensor, a numpy array or a list of floats, got {type(value).__name__}.")
    if t.dtype == torch.bool:
        raise TypeError(f"{name} must hold real numbers, got dtype torch.bool.")
    if t.is_complex():
        raise TypeError(f"{name} must hold real numbers, got dtype {t.dtype}.")
    tol = 4.0 * torch.finfo(t.dtype).eps if t.is_floating_point() else 0.0
    return t.to(device=device, dtype=dtype), tol


def check_points(domain: Domain, X: Any, name: str = "X", allow_empty: bool = False) -> Tensor:
    r"""``q x d`` points of ``domain``, converted to the domain's dtype and device.

    Conversion follows :func:`as_tensor`; then the points must be finite, of width ``d``, and
    inside the bounds (a box) or pool points (a pool), to the rounding of the given precision;
    on a pool, each row is returned as the pool point it matches (a float32 copy of a float64
    pool point is that point, bit for bit).

    Args:
        domain: The domain.
        X: The points.
        name: The argument's name, for the messages.
        allow_empty: Accept ``0 x d`` (``q >= 1`` otherwise).

    Raises:
        TypeError: naming ``name``, for a type that is not an array of real numbers.
        ValueError: naming ``name``: wrong shape, no rows, NaN / inf, or rows outside the bounds
            or not in the pool (with the nearest pool point).
    """
    X, valid = point_checks(domain, X, name, allow_empty)
    if bool(valid):  # the one host read of a valid batch
        return X
    _, finite, inside = _point_flags(domain, X, name, allow_empty)
    _refuse_points(domain, X, finite, inside, name)
    return X


def point_checks(domain: Domain, X: Any, name: str = "X", allow_empty: bool = False) -> tuple[Tensor, Tensor]:
    r"""``(X, valid)``: the points converted as :func:`check_points` converts them (type and shape
    checked on the host) and the 0-dim flag of its value checks, unread, for a caller that reads
    it with flags of its own and calls :func:`check_points` for the error when it is false."""
    X, finite, inside = _point_flags(domain, X, name, allow_empty)
    return X, (finite & inside).all()


def _point_flags(domain: Domain, X: Any, name: str, allow_empty: bool) -> tuple[Tensor, Tensor, Tensor]:
    r"""``X`` converted and its shape checked (host-side), with its rows' finite and inside flags
    as tensors: nothing read from the device."""
    X, tol = as_tensor(X, name, domain.bounds.dtype, domain.device)
    if X.ndim != 2 or X.shape[-1] != domain.dim:
        raise ValueError(f"{name} must be q x d with d = {domain.dim}, got shape {tuple(X.shape)}.")
    if X.shape[0] == 0 and not allow_empty:
        raise ValueError(f"{name} must hold at least one point, got shape {tuple(X.shape)}.")
    finite = torch.isfinite(X).all(dim=-1)
    atol = (tol * domain.bounds.abs().max().clamp_min(1.0)).clamp_min(1e-9)  # a tensor: no host read
    clean = torch.where(finite.unsqueeze(-1), X, domain.bounds[0])
    if isinstance(domain, FiniteDomain):  # a row within the tolerance of a pool point is that point
        index = domain.index_of(clean, atol=atol)
        inside = index >= 0
        X = torch.where((inside & finite).unsqueeze(-1), domain.points[index.clamp_min(0)], X)  # a NaN row stays NaN
        return X, finite, inside
    inside = domain.contains(clean, atol=atol)
    if isinstance(domain, MixedDomain):  # a row within the tolerance of its grid is on it, exactly
        X = torch.where((inside & finite).unsqueeze(-1), domain.round(clean), X)
    return X, finite, inside


def _refuse_points(domain: Domain, X: Tensor, finite: Tensor, inside: Tensor, name: str) -> None:
    r"""The ``ValueError`` of the first bad row of ``X``, if any (the path after a failed check)."""
    if not finite.all():
        bad = (~finite).nonzero().flatten().tolist()
        raise ValueError(f"{name} must be finite, got NaN or inf in rows {bad}.")
    if not inside.all():
        bad = (~inside).nonzero().flatten().tolist()
        if isinstance(domain, FiniteDomain):
            first = X[bad[0]]
            nearest = domain.points[(domain.points - first).norm(dim=-1).argmin()]
            raise ValueError(
                f"{name} must be points of the pool; rows {bad} are not (row {bad[0]} = {first.tolist()}, "
                f"the nearest pool point is {nearest.tolist()})."
            )
        if isinstance(domain, MixedDomain):
            raise ValueError(f"{name} must be points of the mixed domain; rows {bad} are not (row {bad[0]}: {domain.explain(X[bad[0]])}).")
        lower, upper = domain.bounds
        raise ValueError(
            f"{name} must lie in the box [{lower.tolist()}, {upper.tolist()}]; rows {bad} do not "
            f"(row {bad[0]} = {X[bad[0]].tolist()})."
        )


def observation_checks(
    domain: Domain, X: Any, Y: Any, name_X: str = "X", name_Y: str = "Y", allow_empty: bool = False
) -> tuple[Tensor, Tensor, Tensor | None]:
    r"""``(X, Y, valid)``: the observations converted as :func:`check_observations` converts them
    (types and shapes of ``X`` checked on the host), with ``valid`` the 0-dim flag of every value
    check (``None`` when ``Y``'s shape does not match): nothing is read from the device, so a caller
    can read the flag together with flags of its own, and call :func:`check_observations` for the
    error when it is false."""
    X, finite, inside = _point_flags(domain, X, name_X, allow_empty)
    try:
        Y, _ = as_tensor(Y, name_Y, X.dtype, X.device)
    except (TypeError, ValueError):
        _refuse_points(domain, X, finite, inside, name_X)  # X's errors first
        raise
    if Y.ndim == 1:
        Y = Y.unsqueeze(-1)
    shaped = Y.ndim == 2 and Y.shape[-1] == 1 and Y.shape[0] == X.shape[0]
    return X, Y, ((finite & inside).all() & torch.isfinite(Y).all()) if shaped else None


def check_observations(
    domain: Domain, X: Any, Y: Any, name_X: str = "X", name_Y: str = "Y", allow_empty: bool = False
) -> tuple[Tensor, Tensor]:
    r"""A batch of observations ``(X, Y)`` of ``domain``, as ``q x d`` and ``q x 1`` tensors in the
    domain's dtype and on its device (:func:`check_points`; ``Y`` converted likewise), checked in
    one host read (:func:`observation_checks`).

    Raises:
        TypeError: naming the argument, for a type that is not an array of real numbers.
        ValueError: naming the argument, for a shape mismatch, no rows (unless ``allow_empty``),
            NaN / inf, or a point outside the domain.
    """
    X, Y, valid = observation_checks(domain, X, Y, name_X, name_Y, allow_empty)
    if valid is not None and bool(valid):  # one host read for both
        return X, Y
    _, finite, inside = _point_flags(domain, X, name_X, allow_empty)
    _refuse_points(domain, X, finite, inside, name_X)  # X's errors first, as check_points gives them
    if valid is None:
        raise ValueError(
            f"{name_Y} must have shape ({X.shape[0]},) or ({X.shape[0]}, 1) to match {name_X}, "
            f"got {tuple(Y.shape)}."
        )
    raise ValueError(f"{name_Y} must be finite, got NaN or inf.")


def check_training_data(train_X: Tensor, train_Y: Tensor) -> Tensor:
    r"""Check ``n x d`` inputs and ``n`` / ``n x 1`` targets of a model; returns ``train_Y`` as ``n x 1``.

    Raises:
        ValueError: naming the argument, on a shape mismatch, no data, a non-finite value,
            or inputs and targets on different devices or dtypes.
    """
    if not isinstance(train_X, Tensor) or not isinstance(train_Y, Tensor):
        raise ValueError("train_X and train_Y must be torch tensors.")
    if train_X.ndim != 2:
        raise ValueError(f"train_X must be n x d, got shape {tuple(train_X.shape)}.")
    if train_Y.ndim == 1:
        train_Y = train_Y.unsqueeze(-1)
    if train_Y.ndim != 2 or train_Y.shape[-1] != 1:
        raise ValueError(f"train_Y must be n or n x 1, got shape {tuple(train_Y.shape)}.")
    if train_X.shape[0] != train_Y.shape[0]:
        raise ValueError(f"train_X has {train_X.shape[0]} rows but train_Y has {train_Y.shape[0]}.")
    if train_X.shape[0] == 0:
        raise ValueError("train_X is empty: at least one observation is needed.")
    if not torch.isfinite(train_X).all():
        raise ValueError("train_X contains NaN or inf.")
    if not torch.isfinite(train_Y).all():
        raise ValueError("train_Y contains NaN or inf.")
    if train_X.dtype != train_Y.dtype or train_X.device != train_Y.device:
        raise ValueError("train_X and train_Y must share dtype and device.")
    return train_Y
