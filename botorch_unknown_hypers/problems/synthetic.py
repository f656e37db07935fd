r"""Synthetic benchmark problems of the LB-GP-UCB paper (Ziomek et al. 2024, Sec. 5).

All problems are *maximisation* problems (see :mod:`.base`).

**Berkenkamp toy problem** (``d = 1``; the function of Berkenkamp et al. 2019 shown
in Fig. 1 of the paper):

.. math::

    f(x) = 0.6\,x + \tfrac{1}{8}\,\mathcal{N}(x;\, \mu = 0.2,\, \sigma = 0.08),
    \qquad x \in [0, 1],

where :math:`\mathcal{N}(x; \mu, \sigma) = \exp(-(x-\mu)^2 / (2\sigma^2)) /
(\sigma\sqrt{2\pi})` is the Gaussian density. The sharp bump gives the global
maximum :math:`f^* \approx 0.74520` at :math:`x^* \approx 0.2062`; the linear
trend gives a smooth local maximum :math:`f(1) \approx 0.6` on the right boundary.
The optimum is computed once, deterministically, at import time (dense grid and
Newton's method on :math:`f'` in double precision). The paper uses 3 initial
points and no observation noise. ``Berkenkamp(dim=d)`` puts the same trend (of the coordinates'
mean) and the same bump (height and width per coordinate) on :math:`[0, 1]^d`, a needle whose
basin shrinks as :math:`0.08^d` (``berkenkamp2``, ``berkenkamp3``).

**BoTorch test functions** (:class:`BoTorchTestProblem`): any
:class:`botorch.test_functions.SyntheticTestFunction` built with ``negate=True``
(i.e. in maximisation form), on a possibly custom box and with an explicitly given
optimum. The paper's ``michalewicz5`` is

.. math::

    f(x) = \sum_{i=1}^{5} \sin(x_i)\, \sin\!\left(\frac{i\,x_i^2}{\pi}\right)^{20},
    \qquad x \in [0, 3.14]^5,

i.e. ``Michalewicz(dim=5, negate=True)`` on the authors' box ``[0, 3.14]^5`` (not the
canonical ``[0, \pi]^5``), with :math:`f^* = 4.687658`, 10 initial points, noiseless
(``docs/length-scale-balancing.md``).

References:
    J. Ziomek, M. Adachi, M. A. Osborne. Bayesian Optimisation with Unknown Hyperparameters:
    Regret Bounds Logarithmically Closer to Optimal. NeurIPS 2024.

    F. Berkenkamp, A. P. Schoellig, A. Krause. No-Regret Bayesian Optimization with Unknown
    Hyperparameters. JMLR 2019.
"""

from __future__ import annotations

import math

import torch
from botorch.test_functions import Michalewicz
from botorch.test_functions.synthetic import SyntheticTestFunction
from torch import Tensor

from botorch_unknown_hypers.checks import check_int
from botorch_unknown_hypers.problems.problem import Problem
from botorch_unknown_hypers.domains import BoxDomain

# --------------------------------------------------------------------------- #
# Berkenkamp                                                                   #
# --------------------------------------------------------------------------- #

_BK_SLOPE = 0.6
_BK_MU = 0.2
_BK_SD = 0.08
_BK_SCALE = 1.0 / 8.0


def _bk_pdf(t: float, dim: int = 1) -> float:
    r"""The bump at the diagonal point :math:`t\mathbf 1`: the 1-d density's height, the radius
    :math:`\sqrt{d}\,|t - \mu|`."""
    z = (t - _BK_MU) / _BK_SD
    return math.exp(-0.5 * dim * z * z) / (_BK_SD * math.sqrt(2.0 * math.pi))


def _bk_f(t: float, dim: int = 1) -> float:
    return _BK_SLOPE * t + _BK_SCALE * _bk_pdf(t, dim)


def _bk_df(t: float, dim: int = 1) -> float:
    return _BK_SLOPE - _BK_SCALE * dim * (t - _BK_MU) / _BK_SD**2 * _bk_pdf(t, dim)


def _bk_d2f(t: float, dim: int = 1) -> float:
    return _BK_SCALE * dim * (dim * (t - _BK_MU) ** 2 / _BK_SD**4 - 1.0 / _BK_SD**2) * _bk_pdf(t, dim)


def _berkenkamp_optimum(dim: int = 1, n_grid: int = 20001, n_newton: int = 50) -> tuple[float, float]:
    r"""The global maximiser's coordinate and the maximum of the Berkenkamp function on ``[0, 1]^dim``.

    Every interior stationary point has equal coordinates (:math:`\partial_i f = 0.6/d -
    \tfrac18 (x_i - \mu)\,\phi / \sigma^2` vanishes for all :math:`i` only where the
    :math:`x_i - \mu` are equal), so the maximiser is :math:`t^*\mathbf 1`, the maximiser of
    :math:`g(t) = f(t\mathbf 1)` on ``[0, 1]``. A dense grid locates the basin of :math:`g`'s
    global maximum; Newton's method on :math:`g'(t) = 0` (with :math:`g'' < 0` there) then
    polishes it to machine precision. Pure Python floats (double precision), hence deterministic.

    Returns:
        ``(t_star, f_star)``.
    """
    grid = [i / (n_grid - 1) for i in range(n_grid)]
    t = max(grid, key=lambda v: _bk_f(v, dim))
    if 0.0 < t < 1.0:
        for _ in range(n_newton):
            step = _bk_df(t, dim) / _bk_d2f(t, dim)
            t_new = min(max(t - step, 0.0), 1.0)
            if t_new == t:
                break
            t = t_new
    return t, _bk_f(t, dim)


BERKENKAMP_OPTIMIZER, BERKENKAMP_OPTIMAL_VALUE = _berkenkamp_optimum()


class Berkenkamp(Problem):
    r"""The toy problem of Berkenkamp et al. (2019), on :math:`[0, 1]^d` (the paper's :math:`d = 1`).

    .. math::

        f(x) = 0.6\,\bar x + \tfrac{1}{8}\,\frac{\exp(-\lVert x - 0.2\,\mathbf 1\rVert^2 / (2\sigma^2))}
        {\sigma\sqrt{2\pi}}, \qquad \sigma = 0.08,\ x \in [0, 1]^d,

    with :math:`\bar x` the mean of the coordinates. At :math:`d = 1` this is
    :math:`0.6\,x + \mathcal{N}(x;\, 0.2,\, 0.08) / 8`: global maximum :math:`f^* \approx 0.74520`
    at :math:`x^* \approx 0.2062`, local maximum :math:`f(1) \approx 0.6` on the boundary. For
    :math:`d > 1` the trend, the bump's height and its width per coordinate are the paper's, so
    the bump's basin shrinks as :math:`\sigma^d` (a needle that a design of a few points misses);
    the maximiser is :math:`t^*\mathbf 1` (``metadata["optimizer"]``, a length-``d`` tuple of
    floats; :func:`_berkenkamp_optimum`) and the local maximum :math:`f(\mathbf 1) \approx 0.6`.

    Args:
        noise_std: Observation noise standard deviation (default: noiseless, as in
            the paper).
        name: Registered name of the problem (default ``"berkenkamp"``, with the dimension
            appended for ``dim > 1``: ``"berkenkamp2"``).
        n_init: Initial design size (3 in the paper).
        dtype: dtype of the domain's bounds.
        device: Device of the domain's bounds.
        dim: The dimension :math:`d \ge 1` (1 in the paper).
    """

    def __init__(
        self,
        noise_std: float = 0.0,
        name: str | None = None,
        n_init: int = 3,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str | None = None,
        dim: int = 1,
    ) -> None:
        dim = check_int("dim", dim, 1)
        t_star, f_star = (BERKENKAMP_OPTIMIZER, BERKENKAMP_OPTIMAL_VALUE) if dim == 1 else _berkenkamp_optimum(dim)
        bounds = torch.tensor([[0.0] * dim, [1.0] * dim], dtype=dtype, device=device)
        super().__init__(
            name=name if name is not None else ("berkenkamp" if dim == 1 else f"berkenkamp{dim}"),
            domain=BoxDomain(bounds),
            optimal_value=f_star,
            noise_std=noise_std,
            n_init=n_init,
            metadata={
                "optimizer": (t_star,) * dim,
                "local_optimizer": (1.0,) * dim,
                "local_optimal_value": _bk_f(1.0, dim),
                "reference": "Berkenkamp et al. 2019; LB-GP-UCB paper Sec. 5, Fig. 1",
            },
        )

    def evaluate_true(self, X: Tensor) -> Tensor:
        r"""The noiseless objective.

        Args:
            X: A ``batch_shape x d``-dim tensor.

        Returns:
            A ``batch_shape``-dim tensor of values :math:`f(x)`.
        """
        z = (X - _BK_MU) / _BK_SD
        pdf = torch.exp(-0.5 * (z * z).sum(-1)) / (_BK_SD * math.sqrt(2.0 * math.pi))
        return _BK_SLOPE * X.mean(-1) + _BK_SCALE * pdf


# --------------------------------------------------------------------------- #
# BoTorch test functions                                                       #
# --------------------------------------------------------------------------- #


class BoTorchTestProblem(Problem):
    r"""A BoTorch synthetic test function as a maximisation :class:`Problem`.

    The wrapped function must be in maximisation form, i.e. constructed with
    ``negate=True`` for BoTorch's (minimisation) test functions; its forward pass
    (without BoTorch's own noise) is the objective. Observation noise is added by
    :meth:`Problem.evaluate` with :attr:`noise_std`, never by the test function.

    The wrapped function is moved to the input's device and dtype lazily in
    :meth:`evaluate_true` (and eagerly by :meth:`to`).

    Args:
        test_function: A ``SyntheticTestFunction`` with ``negate=True``.
        name: Registered name of the problem.
        optimal_value: :math:`f^*` on the box, in maximisation form.
        bounds: A ``2 x d``-dim tensor, the search box. Must lie inside the wrapped
            function's own ``bounds`` (build the function with ``bounds=...`` to use a
            custom box). Defaults to the wrapped function's bounds.
        noise_std: Observation noise standard deviation.
        n_init: Initial design size.
        metadata: Extra information to keep with the problem.
    """

    def __init__(
        self,
        test_function: SyntheticTestFunction,
        name: str,
        optimal_value: float,
        bounds: Tensor | None = None,
        noise_std: float = 0.0,
        n_init: int = 10,
        metadata: dict | None = None,
    ) -> None:
        if test_function.is_minimization_problem:
            raise ValueError(
                f"{type(test_function).__name__} is a minimisation problem; construct it "
                "with negate=True so that it is maximised."
            )
        tf_bounds = test_function.bounds.detach().to(torch.float64)
        if bounds is None:
            bounds = tf_bounds.clone()
        else:
            bounds = torch.as_tensor(bounds)
            if bounds.shape != tf_bounds.shape:
                raise ValueError(
                    f"bounds must have shape {tuple(tf_bounds.shape)}, got {tuple(bounds.shape)}."
                )
            b64 = bounds.to(torch.float64)
            if (b64[0] < tf_bounds[0]).any() or (b64[1] > tf_bounds[1]).any():
                raise ValueError(
                    "bounds must lie inside the test function's bounds "
                    f"{tf_bounds.tolist()}; build the function with bounds=... instead."
                )
        meta = {"test_function": type(test_function).__name__}
        meta.update(metadata or {})
        super().__init__(
            name=name,
            domain=BoxDomain(bounds),
            optimal_value=float(optimal_value),
            noise_std=noise_std,
            n_init=n_init,
            metadata=meta,
        )
        self.test_function = test_function

    def evaluate_true(self, X: Tensor) -> Tensor:
        r"""The noiseless objective (maximisation form).

        Points within the domain's tolerance outside the box are clamped onto it.

        Args:
            X: A ``batch_shape x d``-dim tensor.

        Returns:
            A ``batch_shape``-dim tensor of values :math:`f(x)`.
        """
        tf = self.test_function
        if tf.bounds.dtype != X.dtype or tf.bounds.device != X.device:
            tf.to(device=X.device, dtype=X.dtype)
        box = self.domain.bounds.to(X)
        lower = torch.maximum(box[0], tf.bounds[0])
        upper = torch.minimum(box[1], tf.bounds[1])
        return tf(X.clamp(lower, upper), noise=False)

    def to(
        self, device: torch.device | str | None = None, dtype: torch.dtype | None = None
    ) -> BoTorchTestProblem:
        super().to(device=device, dtype=dtype)
        self.test_function.to(device=device, dtype=dtype)
        return self


MICHALEWICZ5_OPTIMAL_VALUE = 4.687658
r"""Maximum of the negated 5-d Michalewicz function (BoTorch's ``-4.687658`` negated)."""

MICHALEWICZ5_UPPER = 3.14
r"""The authors' upper bound of every coordinate (not :math:`\pi`)."""


def michalewicz5(noise_std: float = 0.0, name: str = "michalewicz5") -> BoTorchTestProblem:
    r"""The paper's ``michalewicz5``: ``Michalewicz(dim=5, negate=True)`` on ``[0, 3.14]^5``.

    :math:`f^* = 4.687658`, 10 initial points, noiseless by default.
    """
    dim = 5
    box = [(0.0, MICHALEWICZ5_UPPER)] * dim
    tf = Michalewicz(dim=dim, negate=True, bounds=box)
    return BoTorchTestProblem(
        tf,
        name=name,
        optimal_value=MICHALEWICZ5_OPTIMAL_VALUE,
        bounds=torch.tensor(box, dtype=torch.float64).T.contiguous(),
        noise_std=noise_std,
        n_init=10,
        metadata={"reference": "LB-GP-UCB paper Sec. 5; authors' box [0, 3.14]^5"},
    )
