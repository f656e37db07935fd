r"""Cholesky factors of K candidates' training covariances, kept across rounds and extended.

For candidate :math:`u` with kernel :math:`k_u`, noise variance :math:`s_u` and jitter :math:`j_u`
on the inputs :math:`X \in \mathbb R^{n\times d}`, :math:`A_u = k_u(X, X) + (s_u + j_u) I = L_u L_u^\top`.
Appending :math:`q` points :math:`X'`:

.. math::

    L'_u = \begin{pmatrix} L_u & 0 \\ L_{21,u} & L_{22,u} \end{pmatrix}, \qquad
    L_{21,u}^\top = L_u^{-1} k_u(X, X'), \qquad
    L_{22,u} L_{22,u}^\top = k_u(X', X') + (s_u + j_u) I - L_{21,u} L_{21,u}^\top,

costs :math:`O(K n^2 q)` instead of the :math:`O(K (n+q)^3)` of a new factorisation.

**One canonical factor per (candidate, data):** rows are appended one at a time and the factor
recomputed (LAPACK) at every multiple of ``refactor_every`` rows, so it depends on the candidate
and the data alone and a resumed campaign rebuilds it bit for bit. Solves run on each
candidate's blocks in place (:mod:`~botorch_unknown_hypers.models.block_factor`), so the factors
are held once and never stacked for a round (:attr:`CandidateFactor.L` assembles them only when
asked), and fixed points
:math:`Z` (:meth:`FactorCache.set_points`) carry :math:`L_u^{-1} k_u(X, Z)` (:class:`PointSolve`).
Every rule, case and cost: ``docs/scaling.md`` ("The factor cache").

References:
    G. H. Golub, C. F. Van Loan. Matrix Computations, 4th ed., Sec. 4.2 (block Cholesky).
"""

from __future__ import annotations

import json
import time
import weakref
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

import torch
from gpytorch.kernels import Kernel
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from botorch_unknown_hypers.candidates import CandidateSpec, host_rounded
from botorch_unknown_hypers.host import host_tensor, read_together
from botorch_unknown_hypers.models.block_factor import Factor, PointSolve, kernel_matrix
from botorch_unknown_hypers.models.jitter import jittered_cholesky

DEFAULT_REFACTOR_EVERY = 64
r"""Row counts at whose multiples a cached factor is recomputed from scratch."""


class CandidateFactor:
    r"""The factors of one round: :math:`L_u L_u^\top = k_u(X, X) + (s_u + j_u) I` for K candidates.

    Attributes:
        X: ``n x d`` inputs in the model's input space (after its input transform).
        parts: The K factors (:class:`Factor`), assembled only when :attr:`L` is asked for.
        jitter: ``K`` jitters added on top of the noise.
        noise: ``K`` noise variances :math:`s_u`.
        points: The cache's fixed points :math:`Z` (``m x d``, model input space), or ``None``.
        solves: The K :class:`PointSolve` at ``points`` (``None`` without points).
        raw_points: The tensor whose input transform ``points`` are, when the cache was told
            (:meth:`FactorCache.set_points`), to be recognised by identity; else ``None``.
    """

    def __init__(
        self, X: Tensor, parts: list[Factor], jitter: Tensor, noise: Tensor,
        points: Tensor | None = None, solves: list[PointSolve] | None = None, raw_points: Tensor | None = None,
    ) -> None:
        self.X, self.parts, self.jitter, self.noise = X, parts, jitter, noise
        self.points, self.solves, self.raw_points = points, solves, raw_points
        self._stacked: Tensor | None = None
        self._last_solve: tuple[Tensor, Tensor] | None = None  # (rhs, A^{-1} rhs) of the last solve()

    @property
    def num_candidates(self) -> int:
        return len(self.parts)

    @property
    def L(self) -> Tensor:
        r"""``K x n x n``, the factors :math:`L_u` assembled and stacked into one allocation (once,
        when asked; :meth:`release` drops it). The solves do not use it: they run on each
        candidate's :class:`Factor` in place, so a round holds the factors once, not twice."""
        if self._stacked is None:
            self._stacked = self._assemble()
        return self._stacked

    def release(self) -> None:
        r"""Drop the stacked factors (``K n^2`` numbers) if :attr:`L` built them; it assembles them
        again if asked.

        A :class:`FactorCache` releases the factors it handed out at its previous call: a round's
        model is often left to the cyclic garbage collector (GPyTorch modules hold reference
        cycles), and a stack would otherwise stay allocated next to the new round's.
        """
        self._stacked = None

    def _assemble(self, extra: int = 0) -> Tensor:
        r"""``K x (n + extra) x (n + extra)``: each candidate's factor written into its slot's
        top-left block (:meth:`Factor.write_into`: the values of :meth:`Factor.dense`, bit for bit,
        in one allocation instead of a dense copy per candidate that is then stacked); the
        ``extra`` rows and columns are zeros."""
        n, base = self.parts[0].n + extra, self.parts[0].base
        out = base.new_zeros(len(self.parts), n, n) if extra else base.new_empty(len(self.parts), n, n)
        for slot, part in zip(out, self.parts):
            part.write_into(slot)
        return out

    def subset(self, indices: list[int]) -> CandidateFactor:
        r"""The factors of the candidates at ``indices``: the parts (and fixed-point solves) are
        shared, not copied, and so are the rows of the last :meth:`solve`."""
        indices = [int(i) for i in indices]
        idx = host_tensor(indices, torch.long, self.jitter.device)
        solves = None if self.solves is None else [self.solves[i] for i in indices]
        sub = CandidateFactor(self.X, [self.parts[i] for i in indices], self.jitter[idx], self.noise[idx], self.points, solves, self.raw_points)
        if self._last_solve is not None:
            sub._last_solve = (self._last_solve[0][idx], self._last_solve[1][idx])
        return sub

    def whiten(self, rhs: Tensor) -> Tensor:
        r""":math:`L_u^{-1} r_u` for ``K x n`` right-hand sides (:meth:`solve_lower` of one column each)."""
        return self.solve_lower(rhs.unsqueeze(-1)).squeeze(-1)

    def point_products(self, rhs: Tensor) -> tuple[Tensor, Tensor]:
        r"""``K x m`` each: :math:`V_u^\top L_u^{-1} r_u` and :math:`\mathbf 1^\top(V_u \circ V_u)` at the
        fixed points, for ``K x n`` right-hand sides ``rhs`` (see the module docstring)."""
        if self.solves is None:
            raise ValueError("point_products: this factor carries no fixed points (FactorCache.set_points).")
        w = self.whiten(rhs)
        products = [s.products(wk) for s, wk in zip(self.solves, w)]
        return torch.stack([p[0] for p in products]), torch.stack([p[1] for p in products])

    def solve(self, rhs: Tensor) -> Tensor:
        r""":math:`A_u^{-1} b = L_u^{-\top}(L_u^{-1} b)` for ``K x n x m`` right-hand sides (or one
        ``n x m`` block, broadcast over the candidates).

        Two triangular solves (BLAS ``trsm``) per candidate on its :class:`Factor`'s blocks in place
        (:meth:`Factor.cholesky_solve`), so no stacked copy of the factors is formed: a batched
        solve needs all K factors in one ``K n^2`` tensor, and LAPACK ``potrs``
        (``torch.cholesky_solve``) copies them again into a column-major buffer on every call.
        The results agree with ``potrs`` to rounding. (On CUDA ``torch.cholesky_solve`` also sends
        a batch with one right-hand side to cuSOLVER's ``potrsBatched``, which failed with
        "invalid argument" at K = 16, n = 10,000 with torch 2.11 on an H200.) The last right-hand
        sides and their solution are kept: the same ``rhs`` again (or its rows, on a
        :meth:`subset`) costs a comparison.
        """
        memo = self._last_solve
        if memo is not None and memo[0].shape == rhs.shape and torch.equal(memo[0], rhs):
            return memo[1]
        out = self._each(rhs, Factor.cholesky_solve)
        self._last_solve = (rhs.detach().clone(), out)
        return out

    def solve_lower(self, rhs: Tensor) -> Tensor:
        r""":math:`L_u^{-1} r_u` for ``K x n x c`` right-hand sides, on each factor's blocks in place."""
        return self._each(rhs, Factor.lower_solve)

    def _each(self, rhs: Tensor, solve: Callable[[Factor, Tensor], Tensor]) -> Tensor:
        r"""``solve(part, r_u)`` for each candidate's :class:`Factor` and its ``n x c`` right-hand
        sides, stacked to ``K x n x c``: one call per candidate, since a batched call would need the
        stacked factors, which would be the round's largest allocation."""
        rhs = rhs.expand(self.num_candidates, *rhs.shape[-2:])
        return torch.stack([solve(part, r) for part, r in zip(self.parts, rhs)])

    def logdet(self) -> Tensor:
        r""":math:`\log\det A_u` (``K``), without assembling the factors."""
        return torch.stack([f.logdet() for f in self.parts])

    def information_gain(self) -> Tensor:
        r""":math:`\tfrac12\log\det(I + s_u^{-1} k_u(X, X)) = \tfrac12(\log\det A_u - n\log s_u)` (``K``;
        with jitter, of the jittered matrix)."""
        n = self.X.shape[0]
        return 0.5 * (self.logdet() - n * (self.noise + self.jitter).log())

    def extended(self, covar: Kernel, pending: Tensor) -> Tensor:
        r"""``K x (n + p) x (n + p)``: the factors of the matrices grown by the points ``pending``
        (``p x d``, model input space) with the same noise and jitter, by one batched block update
        (:math:`L_{21}^\top = L^{-1}k(X, Q)`, :math:`L_{22}L_{22}^\top = k(Q, Q) + (s + j)I -
        L_{21}L_{21}^\top` for :math:`Q` = ``pending``, the Schur complement factorised by
        GPyTorch's ``psd_safe_cholesky``, which adds jitter if pending points repeat). For the
        variance conditioned on pending points; not cached and not canonical.

        Args:
            covar: The K-batched kernel of the candidates.
            pending: ``p x d`` points.
        """
        K, n, p = self.num_candidates, self.X.shape[0], pending.shape[0]
        cross = self.solve_lower(kernel_matrix(covar, self.X, pending).expand(K, n, p))  # L_21^T
        schur = kernel_matrix(covar, pending).expand(K, p, p) - cross.transpose(-2, -1) @ cross
        schur = schur + torch.diag_embed((self.noise + self.jitter)[:, None].expand(K, p))
        out = self._assemble(extra=p)  # the factors written once into the grown ones
        out[:, n:, :n], out[:, n:, n:] = cross.transpose(-2, -1), psd_safe_cholesky(schur)
        return out


@dataclass
class FactorStats:
    r"""What a :class:`FactorCache` did (for benchmarks and tests)."""

    full: int = 0  # candidate factorisations from scratch
    rows: int = 0  # rows appended to a candidate's factor (one triangular solve each)
    seconds: float = 0.0  # time spent factorising and updating
    refactor_reasons: dict[str, int] = field(default_factory=dict)


@dataclass
class _CachedCandidate:
    r"""One cached candidate: its kernel module, noise variance, factor (:class:`Factor`), the jitter
    the factor carries and, with fixed points, its :class:`PointSolve`."""

    kernel: Kernel
    noise: float
    factor: Factor
    jitter: float
    point_solve: PointSolve | None = None


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
        self._inputs: Tensor | None = None  # the inputs of the last call (n x d)
        self._cached: dict[str, _CachedCandidate] = {}  # by candidate key (:meth:`keys`)
        self._fixed_points: Tensor | None = None
        self._fixed_raw: Tensor | None = None  # the raw tensor of the fixed points, on the caller's word
        self._handed_out: weakref.ref[CandidateFactor] | None = None  # the factors of the last call

    def set_points(self, points: Tensor | None, raw: Tensor | None = None) -> None:
        r"""Fix the points :math:`Z` (``m x d``, model input space) at which every returned factor
        also carries :math:`V_u = L_u^{-1}k_u(X, Z)` (see the module docstring); ``None`` removes
        them. Setting other points drops every candidate's :math:`V_u`; the factors stay. ``raw``:
        the tensor (raw units) whose input transform ``points`` are, on the caller's word: the
        returned factors name it (``CandidateFactor.raw_points``) so that a model recognises it by
        identity, with no transform and no comparison."""
        if points is not None and points is not self._fixed_points:  # the tensor set already: no read
            if points.ndim != 2 or points.shape[0] == 0:
                raise ValueError(f"points must be m x d with m >= 1, got shape {tuple(points.shape)}.")
            if not bool(torch.isfinite(points).all()):
                raise ValueError("points must be finite.")
            if self._inputs is not None and points.shape[-1] != self._inputs.shape[-1]:
                raise ValueError(f"points must be m x {self._inputs.shape[-1]} like the cached inputs, got shape {tuple(points.shape)}.")
            points = points.detach() if points.requires_grad else points
        self._fixed_raw = None if points is None else raw  # after the checks: a refused call changes nothing
        if points is None or self._fixed_points is None:
            if points is self._fixed_points:
                return
        elif points is self._fixed_points or (points.shape == self._fixed_points.shape and torch.equal(points, self._fixed_points)):
            return
        self._fixed_points = points
        for cached in self._cached.values():
            cached.point_solve = None

    def drop(self, reason: str) -> None:
        r"""Forget every cached factor and the inputs they were made on, counted under ``reason``
        (:attr:`FactorStats.refactor_reasons`): the next call factorises anew. For inputs that
        turn out not to extend the cached ones after a call that took them as an extension."""
        self._count_refactor(reason, len(self._cached))
        self._cached = {}
        self._inputs = None

    @staticmethod
    def keys(spec: CandidateSpec) -> list[str]:
        r"""One exact identity per candidate (its JSON with float reprs)."""
        return [json.dumps(d, sort_keys=True) for d in spec.candidate_dicts()]

    @staticmethod
    def cacheable_keys(spec: CandidateSpec) -> list[str] | None:
        r""":meth:`keys` of ``spec`` (one host copy) when its candidates can be cached: ``None`` for
        families that do not state their noise variances or have no JSON (a model of them
        factorises itself)."""
        try:
            spec.noise_variances()
            return FactorCache.keys(spec)  # raises where there is no JSON
        except ValueError:
            return None

    def factor(
        self, spec: CandidateSpec, X: Tensor, keep: CandidateSpec | list[str] | None = None, keys: list[str] | None = None,
        build: Callable[[CandidateSpec, list[str]], tuple] | None = None, prefix: Tensor | None = None,
    ) -> CandidateFactor:
        r"""The factors of ``spec``'s candidates on ``X`` (``n x d``, model input space), in order
        (the arguments of :meth:`factor_steps`, run with its reads made as they come)."""
        return read_together([self.factor_steps(spec, X, keep, keys, build, prefix)])[0]

    def factor_steps(
        self, spec: CandidateSpec, X: Tensor, keep: CandidateSpec | list[str] | None = None, keys: list[str] | None = None,
        build: Callable[[CandidateSpec, list[str]], tuple] | None = None, prefix: Tensor | None = None,
    ) -> Generator[Tensor, list[float], CandidateFactor]:
        r""":meth:`factor` as a generator for :func:`~botorch_unknown_hypers.host.read_together`: it
        yields each tensor whose values it must read (the flags of the appended rows' pivots and of
        new bases) and takes them back as Python floats, so that several caches (a rule's GP noise
        and its information gain's) read their flags in one copy. Returns the factors.

        Args:
            spec: The candidates whose factors are needed now; each is brought up to ``X``.
            X: All inputs so far; must extend the inputs of earlier calls (else the cache restarts).
            keep: Further candidates (or their :meth:`keys`) whose factors, if cached, stay cached
                but are not brought up to ``X`` now (a rule that uses one of its candidates per
                round). One of them is factorised, or advanced over the rows it missed, only when it
                is next asked for, canonically, so its factor is bit for bit the one it would have
                had if factorised at entry and advanced every round. Others are dropped.
            keys: ``keys(spec)`` when the caller holds them already (one host copy fewer).
            build: ``(new candidate, its keys) -> its modules``, for a caller that keeps modules.
            prefix: Inputs the caller has checked that ``X`` extends: the comparison is skipped
                when they are (by identity) the inputs of this cache's last call.
        """
        start = time.perf_counter()  # the time spent here, not while suspended at a read
        X = X.detach() if X.requires_grad else X  # the same tensor otherwise: the identity of ``prefix``
        keys = self.keys(spec) if keys is None else keys
        build = build or (lambda one, _: one.build(dim=X.shape[-1]))
        previous = self._inputs
        if previous is not None and previous is not prefix and (previous.shape[0] > X.shape[0] or not torch.equal(previous, X[: previous.shape[0]])):
            self.drop("data not an extension")
        wanted = set(keys).union([] if keep is None else keep if isinstance(keep, list) else self.keys(keep))
        self._cached = {key: cached for key, cached in self._cached.items() if key in wanted}
        noises = self._noise(spec, X)
        new = [j for j, key in enumerate(keys) if key not in self._cached]
        override = self.noise_override  # the values as Python floats, with no read where the spec keeps them
        noise_values = host_rounded([float(override)] * len(spec) if override is not None else spec.noise_values(), X.dtype) if new else []
        noise_values = noises.tolist() if noise_values is None else noise_values
        empty = X.new_zeros(0, 0)
        fresh = [_CachedCandidate(build(spec.subset([j]), [keys[j]])[1], noise_values[j], Factor(empty, empty, empty), 0.0) for j in new]
        self.stats.seconds += time.perf_counter() - start
        yield from self._advance(fresh, X)  # new candidates canonically on X: the base at the last multiple of refactor_every, then the rows
        start = time.perf_counter()
        for j, cached in zip(new, fresh):
            self._cached[keys[j]] = cached
        if new:
            self._count_refactor("new candidates", len(new))
        self.stats.seconds += time.perf_counter() - start
        yield from self._advance([c for c in map(self._cached.get, keys) if c.factor.n < X.shape[0]], X)  # rows added since
        start = time.perf_counter()
        self._inputs = X
        chosen = [self._cached[key] for key in keys]
        jitter = host_tensor([c.jitter for c in chosen], X.dtype, X.device)
        solves = None
        points = self._fixed_points
        if points is not None:
            if points.shape[-1] != X.shape[-1] or points.dtype != X.dtype or points.device != X.device:
                raise ValueError(
                    f"the fixed points are {tuple(points.shape)} {points.dtype} on {points.device}; "
                    f"the inputs are {tuple(X.shape)} {X.dtype} on {X.device}."
                )
            solves = [self._advance_point_solve(c, X) for c in chosen]
        self.stats.seconds += time.perf_counter() - start
        previous = None if self._handed_out is None else self._handed_out()
        if previous is not None:  # the last call's stack: freed now, not when its model is collected
            previous.release()
        out = CandidateFactor(X, [c.factor for c in chosen], jitter, noises, points, solves, None if points is None else self._fixed_raw)
        self._handed_out = weakref.ref(out)
        return out

    # ----------------------------------------------------------------- helpers
    def _noise(self, spec: CandidateSpec, like: Tensor) -> Tensor:
        if self.noise_override is not None:
            return torch.full((len(spec),), float(self.noise_override), dtype=like.dtype, device=like.device)
        return spec.noise_variances().to(like).reshape(len(spec))

    def _count_refactor(self, reason: str, count: int) -> None:
        self.stats.refactor_reasons[reason] = self.stats.refactor_reasons.get(reason, 0) + count

    def _factorise(self, kernel: Kernel, noise: float, X: Tensor, jitter: float, checked: bool = True) -> tuple[Factor, float, Tensor | None]:
        r"""LAPACK factor of one candidate's matrix on ``X``: the new base, no appended rows, and
        ``info``. ``checked``: at the smallest jitter from ``jitter`` that works
        (:func:`jittered_cholesky`, a host read; ``info`` is ``None``); else at ``jitter``, with
        LAPACK's flag (0 on success) left on the device for :meth:`_advance`'s one read."""
        A = kernel_matrix(kernel, X).reshape(X.shape[0], X.shape[0]).clone()  # our own copy, changed in place
        A.diagonal().add_(noise)
        if checked:
            self.stats.full += 1
            (L, jitter), info = jittered_cholesky(A, jitter), None
        else:  # at ``jitter`` (adding 0.0 changes no bit), LAPACK's flag (0 on success) unread
            A.diagonal().add_(jitter)
            L, info = torch.linalg.cholesky_ex(A)
        return Factor(L, L.new_zeros(0, L.shape[0]), L.new_zeros(0, 0)), jitter, info

    def _advance_point_solve(self, cached: _CachedCandidate, X: Tensor) -> PointSolve:
        r""":math:`V = L^{-1}k(X, Z)` of one cached candidate brought up to its factor: the base part
        solved anew when the base changed, then one row per appended factor row not yet covered,
        :math:`v_j = (k(x_{b+j}, Z) - (L_{pb})_j V_b - (L_{pp})_{j,<j} V_{p,<j}) / (L_{pp})_{jj}`."""
        factor, points = cached.factor, self._fixed_points
        b, p = factor.base.shape[0], factor.lower_right.shape[0]
        m = points.shape[0]
        with torch.no_grad():
            if cached.point_solve is None or cached.point_solve.solved_against is not factor.base:
                base = points.new_zeros(0, m) if not b else torch.linalg.solve_triangular(
                    factor.base, kernel_matrix(cached.kernel, X[:b], points).reshape(b, m), upper=False
                )
                cached.point_solve = PointSolve(factor.base, base, points.new_zeros(0, m), (base * base).sum(0))
            solve = cached.point_solve
            rows = solve.rows
            for j in range(rows.shape[0], p):
                row = kernel_matrix(cached.kernel, X[b + j : b + j + 1], points).reshape(1, m)
                if b:
                    row = row - factor.lower_left[j : j + 1] @ solve.base
                if j:
                    row = row - factor.lower_right[j : j + 1, :j] @ rows
                rows = torch.cat([rows, row / factor.lower_right[j, j]])
            if rows is not solve.rows:  # a new object: factors handed out earlier keep their own rows
                cached.point_solve = solve = PointSolve(solve.solved_against, solve.base, rows, solve.base_sq_sums)
        return solve

    def _advance(self, chosen: list[_CachedCandidate], X: Tensor) -> Generator[Tensor, list[float], None]:
        r"""Each of ``chosen`` brought from its factor's rows up to all of ``X``, as an uninterrupted
        extension would have built it (a candidate with an empty factor: canonically factorised on
        ``X``). Rows that the last refactorisation due before ``n`` would
        discard are skipped by doing it at once (:meth:`_skip_to_last_base`); no multiple of
        ``refactor_every`` is left in ``(start, n]``, so every further row is appended
        (:meth:`_append_row`). All candidates' new bases and pivots are tested in one host read: a
        failed base is factorised again by :func:`jittered_cholesky`; from a first pivot that is not
        positive, the factor is refactorised at a larger jitter and the later rows appended again."""
        todo = [(cached, *self._skip_to_last_base(cached, X, cached.factor.n)) for cached in chosen]
        while todo:
            appended, request = self._append_rows(todo, X)
            flags = yield request  # the read, outside ``no_grad`` (a block suspended at a yield would leak it to the caller)
            todo = self._settle(appended, [int(v) for v in flags], X)

    @torch.no_grad()
    def _append_rows(self, todo: list[tuple], X: Tensor) -> tuple[list[tuple], Tensor]:
        r"""Each of ``todo``'s candidates with the rows of ``X`` from its ``start`` appended, and the
        flags that :meth:`_advance` reads: per candidate its first bad pivot (``-1``: none) and its
        new base's LAPACK flag (0 when the base was checked or not new)."""
        appended, flags = [], []
        for cached, factor, jitter, start, info in todo:
            pivots = []
            for i in range(start, X.shape[0]):
                factor, pivot = self._append_row(cached, factor, jitter, X, i)
                pivots.append(pivot)
            bad = ~(torch.stack(pivots) > 0) if pivots else X.new_zeros(1, dtype=torch.bool)  # NaN is bad
            flags += [torch.where(bad.any(), bad.to(torch.int8).argmax(), -1), bad.new_zeros((), dtype=torch.long) if info is None else info.long()]
            appended.append((cached, factor, jitter, start, len(pivots), info is not None))
        return appended, torch.stack(flags)

    @torch.no_grad()
    def _settle(self, appended: list[tuple], flags: list[int], X: Tensor) -> list[tuple]:
        r"""The appended factors kept where their flags are clean; the candidates to append again
        (a failed base factorised again, checked; a bad pivot: refactorised at a larger jitter)."""
        todo = []
        for (cached, factor, jitter, start, rows, unread), first, info in zip(appended, flags[::2], flags[1::2]):
            if info:  # the new base failed at its jitter: factorised again, checked, and its rows appended
                factor, jitter, _ = self._factorise(cached.kernel, cached.noise, X[:start], jitter)
                todo.append((cached, factor, jitter, start, None))
                continue
            self.stats.full += unread
            self.stats.rows += rows if first < 0 else first
            if first < 0:
                cached.factor, cached.jitter = factor, jitter
                continue
            start += first + 1  # the jitter would have to grow at this row: refactorise
            factor, jitter, _ = self._factorise(cached.kernel, cached.noise, X[:start], jitter)
            self._count_refactor("jitter would grow", 1)
            todo.append((cached, factor, jitter, start, None))
        return todo

    def _skip_to_last_base(self, cached: _CachedCandidate, X: Tensor, start: int) -> tuple[Factor, float, int, Tensor | None]:
        r"""``(factor, jitter, start, info)``: the cached factor, ``start`` and ``None``, or, when a
        multiple of ``refactor_every`` lies in ``(start, n]``, the (re)factorisation at the last one,
        that multiple and LAPACK's unread flag (the rows before it would be discarded by it)."""
        last_base = self.refactor_every * (X.shape[0] // self.refactor_every)
        if last_base <= start:
            return cached.factor, cached.jitter, start, None
        if start:
            self._count_refactor("refactor_every", 1)
        factor, jitter, info = self._factorise(cached.kernel, cached.noise, X[:last_base], 0.0, checked=False)
        return factor, jitter, last_base, info

    def _append_row(self, cached: _CachedCandidate, factor: Factor, jitter: float, X: Tensor, i: int) -> tuple[Factor, Tensor]:
        r"""``factor`` (rows ``< i``) with row ``i`` of ``X`` appended, and the row's pivot (its
        diagonal entry is the pivot's square root: NaN when the pivot is not positive at ``jitter``).

        With the kernel column :math:`k = k(X_{<i}, x_i)` split at the base size :math:`b`:
        :math:`w_b = L_b^{-1}k_{<b}`, :math:`w_p = L_{pp}^{-1}(k_{b:i} - L_{pb} w_b)`
        (:meth:`Factor.forward_solve`), pivot
        :math:`k(x_i, x_i) + s + j - \lVert w_b\rVert^2 - \lVert w_p\rVert^2`; the row
        :math:`(w_b, w_p, \sqrt{\text{pivot}})` is appended to :math:`[L_{pb}\; L_{pp}]`.
        """
        x, b, p = X[i : i + 1], factor.base.shape[0], factor.lower_right.shape[0]
        pivot = kernel_matrix(cached.kernel, x).reshape(()) + cached.noise + jitter
        w_base, w_appended = factor.base.new_zeros(b, 1), factor.base.new_zeros(p, 1)
        if i:
            w_base, w_appended = factor.forward_solve(kernel_matrix(cached.kernel, X[:i], x).reshape(i, 1))
            pivot = pivot - (w_base * w_base).sum() - (w_appended * w_appended).sum()  # an empty part gives 0
        lower_right = factor.lower_right.new_zeros(p + 1, p + 1)
        lower_right[:p, :p], lower_right[p, :p], lower_right[p, p] = factor.lower_right, w_appended.squeeze(-1), pivot.sqrt()
        return Factor(factor.base, torch.cat([factor.lower_left, w_base.reshape(1, b)]), lower_right), pivot


__all__ = ["CandidateFactor", "Factor", "FactorCache", "FactorStats", "PointSolve", "jittered_cholesky", "DEFAULT_REFACTOR_EVERY"]
