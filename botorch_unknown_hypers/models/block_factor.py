r"""One candidate's block Cholesky factor and its solves: the unit that the factor cache appends to.

The factor :math:`L` of :math:`A = k(X, X) + (s + j) I = LL^\top` is held in two parts, the base
:math:`L_b` of the last LAPACK factorisation (``b x b``) and the ``p`` rows appended since:

.. math::

    L = \begin{pmatrix} L_b & 0 \\ L_{pb} & L_{pp} \end{pmatrix},

so that appending a row never copies :math:`L_b`. A triangular solve :math:`L^{-1}r` runs on the
parts in turn, :math:`w_b = L_b^{-1}r_{<b}` and :math:`w_p = L_{pp}^{-1}(r_{\ge b} - L_{pb}w_b)`
(:class:`Factor`), and the solve at points fixed for a campaign, :math:`V = L^{-1}k(X, Z)`, is
kept in the same two parts and extended a row at a time (:class:`PointSolve`).
:mod:`~botorch_unknown_hypers.models.factor_cache` keeps these per candidate across rounds.

References:
    G. H. Golub, C. F. Van Loan. Matrix Computations, 4th ed., Sec. 4.2 (block Cholesky).
"""

from __future__ import annotations

from dataclasses import dataclass

import gpytorch
import torch
from gpytorch.kernels import Kernel
from linear_operator import to_dense
from torch import Tensor


def kernel_matrix(kernel: Kernel, left: Tensor, right: Tensor | None = None) -> Tensor:
    r"""The dense kernel matrix :math:`k(\text{left}, \text{right})` (``right = left`` when ``None``),
    evaluated eagerly: GPyTorch's lazy kernel tensor costs more than the kernel itself for the
    one-row columns of a factor update (about half of a row append's time at n < 100)."""
    with gpytorch.settings.lazily_evaluate_kernels(False):
        return to_dense(kernel(left, left if right is None else right))


@dataclass
class Factor:
    r"""One candidate's Cholesky factor :math:`L` (``n x n``) in two parts: the base :math:`L_b` of
    the last LAPACK factorisation (``b x b``) and the ``p`` rows appended since
    (:math:`p <` ``refactor_every``), so that appending a row never copies :math:`L_b`:

    .. math::

        L = \begin{pmatrix} L_b & 0 \\ L_{pb} & L_{pp} \end{pmatrix}.

    Attributes:
        base: :math:`L_b`, ``b x b`` lower-triangular.
        lower_left: :math:`L_{pb}`, ``p x b``: the appended rows in the base's columns.
        lower_right: :math:`L_{pp}`, ``p x p`` lower-triangular: the appended rows in their own
            columns.
    """

    base: Tensor
    lower_left: Tensor
    lower_right: Tensor

    @property
    def n(self) -> int:
        return self.base.shape[0] + self.lower_right.shape[0]

    @property
    def B(self) -> Tensor:
        r"""Alias of :attr:`lower_left` (its earlier name)."""
        return self.lower_left

    @property
    def C(self) -> Tensor:
        r"""Alias of :attr:`lower_right` (its earlier name)."""
        return self.lower_right

    def dense(self) -> Tensor:
        r"""The ``n x n`` factor, assembled (one copy)."""
        b, n = self.base.shape[0], self.n
        if b == n:
            return self.base
        L = self.base.new_zeros(n, n)
        L[:b, :b], L[b:, :b], L[b:, b:] = self.base, self.lower_left, self.lower_right
        return L

    def write_into(self, slot: Tensor) -> None:
        r"""Write :math:`L` into the top-left ``n x n`` block of ``slot`` (zeros above the diagonal
        blocks), with no intermediate dense copy."""
        b, n = self.base.shape[0], self.n
        slot[:b, :b] = self.base
        if b < n:
            slot[:b, b:n] = 0.0
            slot[b:n, :b], slot[b:n, b:n] = self.lower_left, self.lower_right

    def logdet(self) -> Tensor:
        return 2.0 * (self.base.diagonal().log().sum() + self.lower_right.diagonal().log().sum())

    def forward_solve(self, rhs: Tensor) -> tuple[Tensor, Tensor]:
        r""":math:`L^{-1}r` for ``n x c`` right-hand sides, in the factor's two parts (no assembly):
        :math:`w_b = L_b^{-1}r_{<b}` (``b x c``) and :math:`w_p = L_{pp}^{-1}(r_{\geq b} - L_{pb} w_b)`
        (``p x c``)."""
        b = self.base.shape[0]
        w_base = torch.linalg.solve_triangular(self.base, rhs[:b], upper=False) if b else rhs[:0]
        rest = rhs[b:] - self.lower_left @ w_base if b else rhs[b:]
        w_appended = torch.linalg.solve_triangular(self.lower_right, rest, upper=False) if self.lower_right.shape[0] else rest
        return w_base, w_appended

    def backward_solve(self, w_base: Tensor, w_appended: Tensor) -> Tensor:
        r""":math:`L^{-\top}w` for ``w`` in the two parts of :meth:`forward_solve` (no assembly):
        :math:`z_p = L_{pp}^{-\top}w_p` and :math:`z_b = L_b^{-\top}(w_b - L_{pb}^\top z_p)`;
        returns the ``n x c`` solution."""
        p = self.lower_right.shape[0]
        z_appended = torch.linalg.solve_triangular(self.lower_right.mT, w_appended, upper=True) if p else w_appended
        rest = w_base - self.lower_left.mT @ z_appended if p else w_base
        z_base = torch.linalg.solve_triangular(self.base.mT, rest, upper=True) if self.base.shape[0] else rest
        return torch.cat([z_base, z_appended]) if p else z_base

    def lower_solve(self, rhs: Tensor) -> Tensor:
        r""":math:`L^{-1}r` for ``n x c`` right-hand sides, as one ``n x c`` tensor."""
        w_base, w_appended = self.forward_solve(rhs)
        return torch.cat([w_base, w_appended]) if w_appended.shape[0] else w_base

    def cholesky_solve(self, rhs: Tensor) -> Tensor:
        r""":math:`(LL^\top)^{-1}r` for ``n x c`` right-hand sides."""
        return self.backward_solve(*self.forward_solve(rhs))


@dataclass
class PointSolve:
    r""":math:`V = L^{-1} k(X, Z)` of one candidate at the cache's fixed points :math:`Z` (``m``), in
    the two parts of its :class:`Factor`.

    Attributes:
        solved_against: The :attr:`Factor.base` tensor the base part was solved against (compared
            by identity: a new base needs a new base part).
        base: :math:`L_b^{-1} k(X_{<b}, Z)`, ``b x m``.
        rows: One row per appended factor row, ``p x m``.
        base_sq_sums: The column sums of ``base**2`` (``m``).
    """

    solved_against: Tensor
    base: Tensor
    rows: Tensor
    base_sq_sums: Tensor

    def products(self, w: Tensor) -> tuple[Tensor, Tensor]:
        r"""``(V^T w, 1^T (V * V))``, each ``m``, for an ``n``-dim ``w``."""
        b = self.base.shape[0]
        vw = self.base.mT @ w[:b] + self.rows.mT @ w[b:]
        return vw, self.base_sq_sums + (self.rows * self.rows).sum(0)


__all__ = ["Factor", "PointSolve", "kernel_matrix"]
