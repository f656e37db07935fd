r"""Cholesky factors of K candidates' training covariances, kept across rounds and extended.

A rule over fixed hyperparameter candidates sees the same kernel matrices grow by a few rows per
round. For candidate :math:`u` with kernel :math:`k_u`, noise variance :math:`s_u` and jitter
:math:`j_u` on the (transformed) inputs :math:`X \in \mathbb R^{n\times d}`,
:math:`A_u = k_u(X, X) + (s_u + j_u) I = L_u L_u^\top`. Appending :math:`q` points :math:`X'`:

.. math::

    L'_u = \begin{pmatrix} L_u & 0 \\ B_u^\top & C_u \end{pmatrix}, \qquad
    B_u = L_u^{-1} k_u(X, X'), \qquad
    C_u C_u^\top = k_u(X', X') + (s_u + j_u) I - B_u^\top B_u,

which costs :math:`O(K n^2 q)` instead of the :math:`O(K (n+q)^3)` of a new factorisation; the
updated factor is the factor of the grown matrix, exactly in exact arithmetic.

**One canonical factor per (candidate, data).** Rows are appended one at a time (:math:`q = 1`
above, each with its own kernel column and triangular solve), and the factor is recomputed from
scratch (LAPACK) whenever the number of rows reaches a multiple of ``refactor_every`` (default 64:
rounding errors of successive updates do not accumulate, and the :math:`O(n^3)` cost is amortised
over 64 rows). A factor is therefore a function of the candidate and the data alone, not of the
history of calls: a rule resumed in a fresh process rebuilds it (one factorisation at the last
multiple of ``refactor_every``, then at most 63 row updates) bit for bit, so a resumed campaign
makes the identical next suggestion. Otherwise a factor is computed from scratch only when

1. a candidate is new to the cache (hyperparameters changed: an MLE refit, a proposed candidate):
   it is factorised once, canonically, and placed among the others, which are not touched;
2. the data are not an extension of the cached inputs (a different campaign, a reordered set);
3. a new row's pivot :math:`k_u(x, x) + s_u + j_u - \lVert b\rVert^2` is not positive at the
   candidate's jitter, i.e. the jitter would have to grow: the candidate is refactorised with an
   escalating jitter (:math:`10^{-8}, 10^{-7}, \dots` times the mean diagonal in float64, as
   GPyTorch's ``psd_safe_cholesky``, which does not report the jitter it used; the jitter is
   kept per candidate so later rows extend the same matrix).

Candidates that leave the rule (eliminated, retired) are dropped without touching the others.
A rule that uses one candidate per round (balancing) keeps the others cached without advancing
them, and factorises a new one only when it is first used: a kept factor catches up on the rows
it missed when it is next used (by one factorisation at the last multiple of ``refactor_every``
if it passed one), bit for bit the factor it would have had if advanced every round.
Every candidate's factor is its own contiguous tensor, updated and solved one candidate at a time:
batched LAPACK calls and views into a shared block round differently with the batch size and the
memory alignment, and a candidate's factor must not depend on which others share the cache. The
acquisitions, which need no such guarantee across different candidate sets, stay batched.

**Fixed points.** With :meth:`FactorCache.set_points` (``m`` points :math:`R`, e.g. the raw
samples of a multi-start maximisation kept for a whole campaign), each returned candidate also
carries :math:`V_u = L_u^{-1} k_u(X, R)` (``n x m``) in the factor's two parts: the base part
:math:`L_b^{-1} k_u(X_{<b}, R)`, recomputed with each new base, and one row per appended row,
:math:`v_i = (k_u(x_i, R) - \ell_{i,<i}^\top V_{<i}) / \ell_{ii}` (:math:`O(nm)`). The posterior at
:math:`R` is then :math:`\mu_u(R) = m_u(R) + V_u^\top L_u^{-1}(y - m_u(X))` and
:math:`\sigma_u^2(R) = k_u(R, R)_{\text{diag}} - \mathbf 1^\top (V_u \circ V_u)`, in :math:`O(nm)` per
round instead of the :math:`O(n^2 m)` of a triangular solve (:class:`PointSolve`). Like the
factor, :math:`V_u` is a function of the candidate, the data and :math:`R` alone.

References:
    G. H. Golub, C. F. Van Loan. Matrix Computations, 4th ed., Sec. 4.2 (block Cholesky).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import gpytorch
import torch
from gpytorch.kernels import Kernel
from linear_operator import to_dense
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from botorch_unknown_hypers.candidates import CandidateSpec

JITTER_TRIES = 6
r"""How many times the jitter is multiplied by 10 before a factorisation is given up."""
DEFAULT_REFACTOR_EVERY = 64
r"""Row counts at whose multiples a cached factor is recomputed from scratch."""


def kernel_matrix(covar: Kernel, A: Tensor, B: Tensor | None = None) -> Tensor:
    r"""The dense kernel matrix :math:`k(A, B)` (``B = A`` when ``None``), evaluated eagerly.

    The same values as ``to_dense(covar(A, B))``, without GPyTorch's lazily evaluated kernel
    tensor, whose bookkeeping costs more than the kernel itself for the one-row columns of a
    factor update (about half of a row append's time with a Matern kernel at n < 100).
    """
    with gpytorch.settings.lazily_evaluate_kernels(False):
        return to_dense(covar(A, A if B is None else B))


def _base_jitter(dtype: torch.dtype) -> float:
    return 1e-8 if dtype == torch.float64 else 1e-6


def jittered_cholesky(A: Tensor, jitter: float = 0.0) -> tuple[Tensor, float]:
    r"""Cholesky factor of one ``m x m`` matrix with the smallest jitter that works.

    Args:
        A: ``m x m`` symmetric matrix.
        jitter: Jitter to start from (0: none unless needed).

    Returns:
        ``(L, jitter)`` with ``L L^T = A + jitter I``. A failing factorisation raises the jitter to
        ``1e-8`` (float64; ``1e-6`` otherwise) of the mean diagonal, then by factors of 10, at most
        ``JITTER_TRIES`` times; ``ValueError`` if it still fails.
    """
    scale = float(A.diagonal().mean().abs()) or 1.0
    for attempt in range(JITTER_TRIES + 1):
        if jitter > 0:  # a copy with the jitter on its diagonal (no m x m identity is formed)
            shifted = A.clone()
            shifted.diagonal().add_(jitter)
        else:
            shifted = A
        L, info = torch.linalg.cholesky_ex(shifted)
        if int(info) == 0:
            return L, jitter
        jitter = max(jitter, _base_jitter(A.dtype) * 10.0**attempt * scale)
    raise ValueError(f"the kernel matrix is not positive definite even with jitter {jitter:.3g}.")


@dataclass
class Factor:
    r"""One candidate's factor in two parts: the base :math:`L_b` of the last LAPACK factorisation
    (``b x b``) and the rows appended since, :math:`[B\; C]` (``p x b`` and lower-triangular
    ``p x p``, :math:`p < ` ``refactor_every``), so that appending a row never copies :math:`L_b`:

    .. math::

        L = \begin{pmatrix} L_b & 0 \\ B & C \end{pmatrix}.
    """

    base: Tensor
    B: Tensor
    C: Tensor

    @property
    def n(self) -> int:
        return self.base.shape[0] + self.C.shape[0]

    def dense(self) -> Tensor:
        r"""The ``n x n`` factor, assembled (one copy)."""
        b, n = self.base.shape[0], self.n
        if b == n:
            return self.base
        L = self.base.new_zeros(n, n)
        L[:b, :b], L[b:, :b], L[b:, b:] = self.base, self.B, self.C
        return L

    def logdet(self) -> Tensor:
        return 2.0 * (self.base.diagonal().log().sum() + self.C.diagonal().log().sum())

    def forward_solve(self, r: Tensor) -> tuple[Tensor, Tensor]:
        r""":math:`L^{-1}r` for ``n x c`` right-hand sides, in the factor's two parts (no assembly):
        :math:`w_b = L_b^{-1}r_{<b}` (``b x c``) and :math:`w_p = C^{-1}(r_{\geq b} - B w_b)`
        (``p x c``)."""
        b = self.base.shape[0]
        wb = torch.linalg.solve_triangular(self.base, r[:b], upper=False) if b else r[:0]
        t = r[b:] - self.B @ wb if b else r[b:]
        wp = torch.linalg.solve_triangular(self.C, t, upper=False) if self.C.shape[0] else t
        return wb, wp


@dataclass
class PointSolve:
    r""":math:`V = L^{-1} k(X, R)` of one candidate at the cache's fixed points :math:`R` (``m``), in
    the two parts of its :class:`Factor`: ``base`` (``b x m``, against :math:`L_b`) and ``rows``
    (``p x m``, one per appended row), with the column sums of ``base**2`` kept (``m``).

    Attributes:
        of: The :attr:`Factor.base` tensor the base part was solved against (identity).
    """

    of: Tensor
    base: Tensor
    rows: Tensor
    base_sq: Tensor

    def products(self, w: Tensor) -> tuple[Tensor, Tensor]:
        r"""``(V^T w, 1^T (V * V))``, each ``m``, for an ``n``-dim ``w``."""
        b = self.base.shape[0]
        vw = self.base.mT @ w[:b] + self.rows.mT @ w[b:]
        return vw, self.base_sq + (self.rows * self.rows).sum(0)


class CandidateFactor:
    r"""The factors of one round: :math:`L_u L_u^\top = k_u(X, X) + (s_u + j_u) I` for K candidates.

    Attributes:
        X: ``n x d`` inputs in the model's input space (after its input transform).
        parts: The K factors (:class:`Factor`), assembled only when :attr:`L` is asked for.
        jitter: ``K`` jitters added on top of the noise.
        noise: ``K`` noise variances :math:`s_u`.
        points: The cache's fixed points :math:`R` (``m x d``, model input space), or ``None``.
        solves: The K :class:`PointSolve` at ``points`` (``None`` without points).
    """

    def __init__(
        self,
        X: Tensor,
        parts: list[Factor],
        jitter: Tensor,
        noise: Tensor,
        points: Tensor | None = None,
        solves: list[PointSolve] | None = None,
    ) -> None:
        self.X, self.parts, self.jitter, self.noise = X, parts, jitter, noise
        self.points, self.solves = points, solves
        self._stacked: Tensor | None = None
        self._solved: tuple[Tensor, Tensor] | None = None  # the last (rhs, A^{-1} rhs) of solve()

    @property
    def num_candidates(self) -> int:
        return len(self.parts)

    @property
    def L(self) -> Tensor:
        r"""``K x n x n``, the factors assembled and stacked (once)."""
        if self._stacked is None:
            dense = [f.dense() for f in self.parts]
            self._stacked = dense[0].unsqueeze(0) if len(dense) == 1 else torch.stack(dense)
        return self._stacked

    def subset(self, indices: list[int]) -> CandidateFactor:
        r"""The factors of the candidates at ``indices`` (the parts are shared, not copied). What this
        round's factors already computed comes along: the rows of the stacked :attr:`L` (the same
        values as an assembly) and of the last :meth:`solve` (on CPU, LAPACK's batched
        ``potrs`` solves each matrix on its own, so these are the bits a solve of the subset
        gives)."""
        idx = torch.as_tensor(indices, dtype=torch.long, device=self.jitter.device)
        solves = None if self.solves is None else [self.solves[i] for i in indices]
        sub = CandidateFactor(self.X, [self.parts[i] for i in indices], self.jitter[idx], self.noise[idx], self.points, solves)
        if self._stacked is not None:
            sub._stacked = self._stacked[idx]
        if self._solved is not None:
            sub._solved = (self._solved[0][idx], self._solved[1][idx])
        return sub

    def whiten(self, rhs: Tensor) -> Tensor:
        r""":math:`L_u^{-1} r_u` for ``K x n`` right-hand sides, on each factor's two parts (no
        assembly; :meth:`Factor.forward_solve`)."""
        return torch.stack([torch.cat(f.forward_solve(r.unsqueeze(-1))).squeeze(-1) for f, r in zip(self.parts, rhs)])

    def point_products(self, rhs: Tensor) -> tuple[Tensor, Tensor]:
        r"""``K x m`` each: :math:`V_u^\top L_u^{-1} r_u` and :math:`\mathbf 1^\top(V_u \circ V_u)` at the
        fixed points, for ``K x n`` right-hand sides ``rhs`` (see the module docstring)."""
        if self.solves is None:
            raise ValueError("point_products: this factor carries no fixed points (FactorCache.set_points).")
        w = self.whiten(rhs)
        parts = [s.products(wk) for s, wk in zip(self.solves, w)]
        return torch.stack([p[0] for p in parts]), torch.stack([p[1] for p in parts])

    def solve(self, rhs: Tensor) -> Tensor:
        r""":math:`A_u^{-1} b = L_u^{-\top}(L_u^{-1} b)` for ``K x n x m`` right-hand sides.

        On CUDA as two triangular solves (cuBLAS ``trsm``): ``torch.cholesky_solve`` sends a batch
        with one right-hand side to cuSOLVER's ``potrsBatched``, which failed with "invalid
        argument" at K = 16, n = 10,000 (torch 2.11, H200). On CPU ``torch.cholesky_solve``
        (LAPACK ``potrs``), whose rounding the recorded traces hold. The last right-hand sides and
        their solution are kept: the same ``rhs`` again (or its rows, on a :meth:`subset`) costs a
        comparison.
        """
        memo = self._solved
        if memo is not None and memo[0].shape == rhs.shape and torch.equal(memo[0], rhs):
            return memo[1]
        L = self.L
        if L.device.type == "cpu":
            out = torch.cholesky_solve(rhs, L)
        else:
            out = torch.linalg.solve_triangular(L.mT, torch.linalg.solve_triangular(L, rhs, upper=False), upper=True)
        self._solved = (rhs.detach().clone(), out)
        return out

    def logdet(self) -> Tensor:
        r""":math:`\log\det A_u` (``K``), without assembling the factors."""
        return torch.stack([f.logdet() for f in self.parts])

    def information_gain(self) -> Tensor:
        r""":math:`\tfrac12\log\det(I + s_u^{-1} k_u(X, X)) = \tfrac12(\log\det A_u - n\log s_u)` (``K``;
        with jitter, of the jittered matrix)."""
        n = self.X.shape[0]
        return 0.5 * (self.logdet() - n * (self.noise + self.jitter).log())

    def extended(self, covar: Kernel, P: Tensor) -> Tensor:
        r"""``K x (n + p) x (n + p)``: the factors of the matrices grown by the points ``P``
        (``p x d``, model input space) with the same noise and jitter, by one batched block update
        (:math:`B = L^{-1}k(X, P)`, :math:`CC^\top = k(P, P) + (s + j)I - B^\top B`, factorised by
        GPyTorch's ``psd_safe_cholesky``, which adds jitter if pending points repeat). For the
        variance conditioned on pending points; not cached and not canonical.

        Args:
            covar: The K-batched kernel of the candidates.
        """
        L, n, p = self.L, self.X.shape[0], P.shape[0]
        K = L.shape[0]
        B = torch.linalg.solve_triangular(L, kernel_matrix(covar, self.X, P).expand(K, n, p), upper=False)
        S = kernel_matrix(covar, P).expand(K, p, p) - B.transpose(-2, -1) @ B
        S = S + torch.diag_embed((self.noise + self.jitter)[:, None].expand(K, p))
        out = L.new_zeros(K, n + p, n + p)
        out[:, :n, :n], out[:, n:, :n], out[:, n:, n:] = L, B.transpose(-2, -1), psd_safe_cholesky(S)
        return out


@dataclass
class FactorStats:
    r"""What a :class:`FactorCache` did (for benchmarks and tests)."""

    full: int = 0  # candidate factorisations from scratch
    rows: int = 0  # rows appended to a candidate's factor (one triangular solve each)
    seconds: float = 0.0  # time spent factorising and updating
    refactor_reasons: dict[str, int] = field(default_factory=dict)


@dataclass
class _Entry:
    r"""One cached candidate: its kernel module, noise, factor and jitter."""

    covar: Kernel
    noise: float
    L: Factor
    jitter: float
    solve: PointSolve | None = None


class FactorCache:
    r"""The factors of a rule's candidates, carried across rounds (see the module docstring).

    A rule keeps one cache per matrix family (the GP's noise; the noise of an information gain)
    and calls :meth:`factor` every round with the candidates it needs and all its inputs; the
    cache appends new rows, factorises new candidates, drops absent ones (unless asked to keep
    them, lazily: brought up to date when next needed) and returns the factors in the order
    asked. It is derived data: never saved, rebuilt on demand after a state load.

    Args:
        refactor_every: Row counts at whose multiples a factor is recomputed from scratch.
        noise: Optional noise variance to use instead of each candidate's own (for
            :math:`I = \tfrac12\log\det(I + K/R^2)` at a noise :math:`R^2` of the rule).

    Example:
        >>> cache = FactorCache()
        >>> f = cache.factor(spec, X)            # factorised: K x n x n
        >>> f = cache.factor(spec, X_plus_one)   # one row appended: O(K n^2)
    """

    def __init__(self, refactor_every: int = DEFAULT_REFACTOR_EVERY, noise: float | None = None) -> None:
        if isinstance(refactor_every, bool) or not (isinstance(refactor_every, int) and refactor_every >= 1):
            raise ValueError(f"refactor_every must be an integer >= 1, got {refactor_every!r}.")
        if noise is not None and not noise > 0:
            raise ValueError(f"noise must be > 0, got {noise!r}.")
        self.refactor_every = refactor_every
        self.noise_override = noise
        self.stats = FactorStats()
        self._X: Tensor | None = None
        self._entries: dict[str, _Entry] = {}
        self._points: Tensor | None = None

    def set_points(self, points: Tensor | None) -> None:
        r"""Fix the points :math:`R` (``m x d``, model input space) at which every returned factor
        also carries :math:`V_u = L_u^{-1}k_u(X, R)` (see the module docstring); ``None`` removes
        them. Setting other points drops every candidate's :math:`V_u`; the factors stay."""
        if points is not None:
            if points.ndim != 2 or points.shape[0] == 0:
                raise ValueError(f"points must be m x d with m >= 1, got shape {tuple(points.shape)}.")
            if not bool(torch.isfinite(points).all()):
                raise ValueError("points must be finite.")
            if self._X is not None and points.shape[-1] != self._X.shape[-1]:
                raise ValueError(f"points must be m x {self._X.shape[-1]} like the cached inputs, got shape {tuple(points.shape)}.")
            points = points.detach()
        if points is None or self._points is None:
            if points is self._points:
                return
        elif points.shape == self._points.shape and torch.equal(points, self._points):
            return
        self._points = points
        for e in self._entries.values():
            e.solve = None

    @staticmethod
    def keys(spec: CandidateSpec) -> list[str]:
        r"""One exact identity per candidate (its JSON with float reprs)."""
        return [json.dumps(spec.subset([i]).to_dict(), sort_keys=True) for i in range(len(spec))]

    def factor(self, spec: CandidateSpec, X: Tensor, keep: CandidateSpec | None = None) -> CandidateFactor:
        r"""The factors of ``spec``'s candidates on ``X`` (``n x d``, model input space), in order.

        Args:
            spec: The candidates whose factors are needed now; each is brought up to ``X``.
            X: All inputs so far; must extend the inputs of earlier calls (else the cache restarts).
            keep: Further candidates whose factors, if cached, stay cached but are not brought up
                to ``X`` now (a rule that uses one of its candidates per round). One of them is
                factorised, or advanced over the rows it missed, only when it is next asked for,
                canonically, so its factor is bit for bit the one it would have had if it had been
                factorised at entry and advanced every round. Candidates in neither set are
                dropped.
        """
        start = time.perf_counter()
        X = X.detach()
        keys = self.keys(spec)
        old = self._X
        if old is not None and (old.shape[0] > X.shape[0] or not torch.equal(old, X[: old.shape[0]])):
            self._count("data not an extension", len(self._entries))
            self._entries = {}
        wanted = set(keys) if keep is None else set(keys).union(self.keys(keep))
        self._entries = {k: e for k, e in self._entries.items() if k in wanted}
        noises = self._noise(spec, X)
        for j, k in enumerate(keys):  # new candidates are factorised canonically on X
            if k not in self._entries:
                covar = spec.subset([j]).build(dim=X.shape[-1])[1]
                L, jitter = self._canonical(covar, float(noises[j]), X)
                self._entries[k] = _Entry(covar, float(noises[j]), L, jitter)
                self._count("new candidates", 1)
        for k in keys:  # the rows appended since each was last brought up to date
            e = self._entries[k]
            if e.L.n < X.shape[0]:
                e.L, e.jitter = self._advance(e, X, e.L.n)
        self._X = X
        entries = [self._entries[k] for k in keys]
        jitter = torch.tensor([e.jitter for e in entries], dtype=X.dtype, device=X.device)
        solves = None
        if self._points is not None:
            if self._points.shape[-1] != X.shape[-1] or self._points.dtype != X.dtype or self._points.device != X.device:
                raise ValueError(
                    f"the fixed points are {tuple(self._points.shape)} {self._points.dtype} on {self._points.device}; "
                    f"the inputs are {tuple(X.shape)} {X.dtype} on {X.device}."
                )
            solves = [self._point_solve(e, X) for e in entries]
        self.stats.seconds += time.perf_counter() - start
        return CandidateFactor(X, [e.L for e in entries], jitter, noises, self._points, solves)

    # ----------------------------------------------------------------- helpers
    def _noise(self, spec: CandidateSpec, like: Tensor) -> Tensor:
        if self.noise_override is not None:
            return torch.full((len(spec),), float(self.noise_override), dtype=like.dtype, device=like.device)
        return spec.noise_variances().to(like).reshape(len(spec))

    def _count(self, reason: str, k: int) -> None:
        self.stats.refactor_reasons[reason] = self.stats.refactor_reasons.get(reason, 0) + k

    def _full(self, covar: Kernel, noise: float, X: Tensor, jitter: float) -> tuple[Factor, float]:
        r"""LAPACK factor of one candidate's matrix on ``X``: the new base, no appended rows."""
        A = kernel_matrix(covar, X).reshape(X.shape[0], X.shape[0]).clone()  # our own copy, changed in place
        A.diagonal().add_(noise)
        self.stats.full += 1
        L, jitter = jittered_cholesky(A, jitter)
        return Factor(L, L.new_zeros(0, L.shape[0]), L.new_zeros(0, 0)), jitter

    def _canonical(self, covar: Kernel, noise: float, X: Tensor) -> tuple[Factor, float]:
        r"""The factor of ``X`` as an uninterrupted extension would have built it."""
        b = self.refactor_every * (X.shape[0] // self.refactor_every)
        empty = X.new_zeros(0, 0)
        entry = _Entry(covar, noise, Factor(empty, empty, empty), 0.0)
        if b:
            entry.L, entry.jitter = self._full(covar, noise, X[:b], 0.0)
        return self._advance(entry, X, b)

    def _point_solve(self, e: _Entry, X: Tensor) -> PointSolve:
        r""":math:`V = L^{-1}k(X, R)` of one entry brought up to its factor: the base part solved anew
        when the base changed, then one row per appended factor row not yet covered,
        :math:`v_j = (k(x_{b+j}, R) - B_j V_b - C_{j,<j} V_{p,<j}) / C_{jj}`."""
        F, R = e.L, self._points
        b, p = F.base.shape[0], F.C.shape[0]
        with torch.no_grad():
            if e.solve is None or e.solve.of is not F.base:
                m = R.shape[0]
                Vb = torch.linalg.solve_triangular(F.base, kernel_matrix(e.covar, X[:b], R).reshape(b, m), upper=False) if b else R.new_zeros(0, m)
                e.solve = PointSolve(F.base, Vb, R.new_zeros(0, R.shape[0]), (Vb * Vb).sum(0))
            S = e.solve
            rows = S.rows
            for j in range(rows.shape[0], p):
                t = kernel_matrix(e.covar, X[b + j : b + j + 1], R).reshape(1, R.shape[0])
                if b:
                    t = t - F.B[j : j + 1] @ S.base
                if j:
                    t = t - F.C[j : j + 1, :j] @ rows
                rows = torch.cat([rows, t / F.C[j, j]])
            if rows is not S.rows:  # a new object: factors handed out earlier keep their own rows
                e.solve = S = PointSolve(S.of, S.base, rows, S.base_sq)
        return S

    def _advance(self, e: _Entry, X: Tensor, start: int) -> tuple[Factor, float]:
        r"""Append rows ``start, ..., n - 1`` of one candidate (with the canonical refactorisations).

        Row :math:`i` (kernel column :math:`k = k(X_{<i}, x_i)`, split at the base size
        :math:`b`): :math:`y_1 = L_b^{-1}k_{<b}`, :math:`y_2 = C^{-1}(k_{b:i} - B y_1)`, pivot
        :math:`k(x_i, x_i) + s + j - \lVert y_1\rVert^2 - \lVert y_2\rVert^2`; the row
        :math:`(y_1, y_2, \sqrt{\text{pivot}})` is appended to :math:`[B\; C]`.
        """
        F, jitter = e.L, e.jitter
        last = self.refactor_every * (X.shape[0] // self.refactor_every)
        if last > start:  # the rows before the last multiple would be discarded by its refactorisation
            F, jitter = self._full(e.covar, e.noise, X[:last], 0.0)
            self._count("refactor_every", 1)
            start = last
        with torch.no_grad():
            for i in range(start, X.shape[0]):
                r = i + 1
                if r % self.refactor_every == 0:
                    F, jitter = self._full(e.covar, e.noise, X[:r], 0.0)
                    self._count("refactor_every", 1)
                    continue
                x = X[i : i + 1]
                b, p = F.base.shape[0], F.C.shape[0]
                pivot = kernel_matrix(e.covar, x).reshape(()) + e.noise + jitter
                y1 = F.base.new_zeros(b, 1)
                y2 = F.base.new_zeros(p, 1)
                if i:
                    y1, y2 = F.forward_solve(kernel_matrix(e.covar, X[:i], x).reshape(i, 1))
                    if b:
                        pivot = pivot - (y1 * y1).sum()
                    if p:
                        pivot = pivot - (y2 * y2).sum()
                if not bool(pivot > 0):  # the jitter would have to grow: refactorise
                    F, jitter = self._full(e.covar, e.noise, X[:r], jitter)
                    self._count("jitter would grow", 1)
                    continue
                C = F.C.new_zeros(p + 1, p + 1)
                C[:p, :p], C[p, :p], C[p, p] = F.C, y2.squeeze(-1), pivot.sqrt()
                F = Factor(F.base, torch.cat([F.B, y1.reshape(1, b)]), C)
                self.stats.rows += 1
        return F, jitter


__all__ = ["CandidateFactor", "Factor", "FactorCache", "FactorStats", "PointSolve", "jittered_cholesky", "DEFAULT_REFACTOR_EVERY"]
