r"""Search domains: a box or a finite pool of points, their checks and their sampling.

Every rule in this package maximises over one of two domains:

- :class:`BoxDomain`, a box :math:`\prod_j [l_j, u_j] \subset \mathbb{R}^d`;
- :class:`FiniteDomain`, a pool :math:`\{x_1, \dots, x_N\}` whose points may be queried again
  (experimental tables, arm sets, grids).

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
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from botorch_unknown_hypers.checks import check_nonnegative
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
        if X.shape[0] == 0:
            return X, torch.zeros(0, dtype=torch.long, device=X.device)
        return torch.unique(X, dim=0, return_inverse=True)

    def neighbourhoods(self, epsilon: float, kind: str = "box") -> Tensor:
        r"""Not defined on a box: robust rules need a pool (discretise the box into a grid)."""
        raise ValueError(
            "domain: epsilon-neighbourhoods need a finite pool (FiniteDomain) so that the "
            "perturbation set is exact; discretise the box into a grid."
        )


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

    def neighbourhoods(self, epsilon: float, kind: str = "box") -> Tensor:
        r"""``N x N`` mask: ``mask[i, j]`` iff :math:`d(x_i, x_j) \le \epsilon`.

        Args:
            epsilon: The radius :math:`\epsilon \ge 0`, in domain units.
            kind: ``"box"`` (:math:`L_\infty`) or ``"ball"`` (:math:`L_2`).
        """
        if kind not in PERTURBATIONS:
            raise ValueError(f"perturbation must be one of {PERTURBATIONS}, got {kind!r}.")
        check_nonnegative("epsilon", epsilon)
        p = 2.0 if kind == "ball" else float("inf")
        return torch.cdist(self.points, self.points, p=p) <= epsilon * (1 + 1e-12)


Domain = BoxDomain | FiniteDomain
r"""A search domain: a box or a pool."""


def check_domain(domain: object, name: str = "domain") -> Domain:
    r"""``domain`` itself if it is a :class:`BoxDomain` or :class:`FiniteDomain`, else ``ValueError``."""
    if not isinstance(domain, (BoxDomain, FiniteDomain)):
        raise ValueError(f"{name} must be a BoxDomain or a FiniteDomain, got {type(domain).__name__}.")
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
