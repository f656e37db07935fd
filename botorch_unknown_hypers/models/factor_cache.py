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

**When a factor is computed from scratch** (:class:`FactorCache`):

1. a candidate is new to the cache (hyperparameters changed: an MLE refit, a proposed candidate):
   it is factorised once and appended to the others, which are not touched;
2. the data are not an extension of the cached inputs (a different campaign, a reordered set);
3. the Schur complement :math:`C_u C_u^\top` is not positive definite at the candidate's jitter,
   i.e. the jitter would have to grow: the candidate is refactorised with an escalating jitter
   (:math:`10^{-8}, 10^{-7}, \dots` times the mean diagonal in float64, as GPyTorch's
   ``psd_safe_cholesky``; its jitter is kept, so later updates extend the same matrix);
4. ``refactor_every`` points have been appended since the last full factorisation (rounding
   errors of successive updates accumulate; default 512).

Candidates that leave the rule (eliminated, retired) are dropped by index without touching the
others. Jitter is tracked per candidate (``psd_safe_cholesky`` does not report the jitter it used,
and an update must add the same jitter to its new diagonal block).

References:
    G. H. Golub, C. F. Van Loan. Matrix Computations, 4th ed., Sec. 4.2 (block Cholesky).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import torch
from gpytorch.kernels import Kernel
from linear_operator import to_dense
from torch import Tensor

from botorch_unknown_hypers.candidates import CandidateSpec

JITTER_TRIES = 6
r"""How many times the jitter is multiplied by 10 before a factorisation is given up."""
DEFAULT_REFACTOR_EVERY = 512
r"""Appended points after which a cached factor is recomputed from scratch."""


def _base_jitter(dtype: torch.dtype) -> float:
    return 1e-8 if dtype == torch.float64 else 1e-6


def jittered_cholesky(A: Tensor, jitter: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""Batched Cholesky of ``K x m x m`` matrices, each with the smallest jitter that works.

    Args:
        A: ``K x m x m`` symmetric matrices.
        jitter: ``K`` jitters to start from (default zeros: no jitter unless needed).

    Returns:
        ``(L, jitter)``: ``L L^T = A + diag(jitter)`` per batch member, and the ``K`` jitters used.
        Escalates a failing member's jitter from ``1e-8`` (float64) of its mean diagonal by
        factors of 10, at most ``JITTER_TRIES`` times; ``ValueError`` if it still fails.
    """
    K, m = A.shape[0], A.shape[-1]
    jitter = A.new_zeros(K) if jitter is None else jitter.clone()
    eye = torch.eye(m, dtype=A.dtype, device=A.device)
    L, info = torch.linalg.cholesky_ex(A + jitter[:, None, None] * eye)
    scale = A.diagonal(dim1=-2, dim2=-1).mean(-1).abs().clamp_min(torch.finfo(A.dtype).tiny)
    for attempt in range(JITTER_TRIES):
        bad = info > 0
        if not bool(bad.any()):  # one sync per attempt, not per candidate
            return L, jitter
        step = _base_jitter(A.dtype) * 10.0**attempt * scale
        jitter = torch.where(bad, torch.maximum(jitter, step), jitter)
        L_try, info_try = torch.linalg.cholesky_ex(A[bad] + jitter[bad][:, None, None] * eye)
        L[bad], info[bad] = L_try, info_try
    if bool((info > 0).any()):
        raise ValueError(f"the kernel matrices of candidates {(info > 0).nonzero().flatten().tolist()} are not positive definite even with jitter {jitter.max().item():.3g}.")
    return L, jitter


@dataclass
class CandidateFactor:
    r"""The factors of one round: :math:`L_u L_u^\top = k_u(X, X) + (s_u + j_u) I` for K candidates.

    Attributes:
        X: ``n x d`` inputs in the model's input space (after its input transform).
        L: ``K x n x n`` lower Cholesky factors.
        jitter: ``K`` jitters added on top of the noise.
        noise: ``K`` noise variances :math:`s_u`.
    """

    X: Tensor
    L: Tensor
    jitter: Tensor
    noise: Tensor

    @property
    def num_candidates(self) -> int:
        return self.L.shape[0]

    def subset(self, indices: list[int]) -> CandidateFactor:
        r"""The factors of the candidates at ``indices`` (a copy of their ``n x n`` blocks)."""
        idx = torch.as_tensor(indices, dtype=torch.long, device=self.L.device)
        return CandidateFactor(self.X, self.L.index_select(0, idx), self.jitter[idx], self.noise[idx])

    def solve(self, rhs: Tensor) -> Tensor:
        r""":math:`A_u^{-1} b` for ``K x n x m`` right-hand sides."""
        return torch.cholesky_solve(rhs, self.L)

    def logdet(self) -> Tensor:
        r""":math:`\log\det A_u` (``K``)."""
        return 2.0 * self.L.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def information_gain(self) -> Tensor:
        r""":math:`\tfrac12\log\det(I + s_u^{-1} k_u(X, X)) = \tfrac12(\log\det A_u - n\log s_u)` (``K``;
        with jitter, of the jittered matrix)."""
        n = self.X.shape[0]
        return 0.5 * (self.logdet() - n * (self.noise + self.jitter).log())


@dataclass
class FactorStats:
    r"""What a :class:`FactorCache` did (for benchmarks and tests)."""

    full: int = 0  # candidates factorised from scratch
    updates: int = 0  # block updates (one per call that appended points)
    appended: int = 0  # points appended by updates
    seconds: float = 0.0  # time spent factorising and updating
    refactor_reasons: dict[str, int] = field(default_factory=dict)


class FactorCache:
    r"""The factors of a rule's candidates, carried across rounds (see the module docstring).

    A rule keeps one cache per matrix family (the GP's noise; the noise of an information gain)
    and calls :meth:`factor` every round with the candidates it needs and all its inputs; the
    cache appends new rows, factorises new candidates, drops absent ones and returns the factors
    in the order asked. It is derived data: never saved, rebuilt on demand after a state load.

    Args:
        refactor_every: Points appended after which a factor is recomputed from scratch.
        noise: Optional noise variance to use instead of each candidate's own (for
            :math:`I = \tfrac12\log\det(I + K/R^2)` at a noise :math:`R^2` of the rule).

    Example:
        >>> cache = FactorCache()
        >>> f = cache.factor(spec, X)            # factorised: K x n x n
        >>> f = cache.factor(spec, X_plus_one)   # one block update: O(K n^2)
    """

    def __init__(self, refactor_every: int = DEFAULT_REFACTOR_EVERY, noise: float | None = None) -> None:
        if not (isinstance(refactor_every, int) and refactor_every >= 1):
            raise ValueError(f"refactor_every must be an integer >= 1, got {refactor_every!r}.")
        if noise is not None and not noise > 0:
            raise ValueError(f"noise must be > 0, got {noise!r}.")
        self.refactor_every = refactor_every
        self.noise_override = noise
        self.stats = FactorStats()
        self._keys: list[str] = []
        self._covar: Kernel | None = None
        self._spec: CandidateSpec | None = None
        self._factor: CandidateFactor | None = None
        self._since_full: Tensor | None = None  # K: points appended since each candidate's full factorisation

    # ----------------------------------------------------------------- helpers
    @staticmethod
    def keys(spec: CandidateSpec) -> list[str]:
        r"""One exact identity per candidate (its JSON with float reprs)."""
        return [json.dumps(spec.subset([i]).to_dict(), sort_keys=True) for i in range(len(spec))]

    def _noise(self, spec: CandidateSpec, like: Tensor) -> Tensor:
        if self.noise_override is not None:
            return torch.full((len(spec),), float(self.noise_override), dtype=like.dtype, device=like.device)
        return spec.noise_variances().to(like).reshape(len(spec))

    def _count(self, reason: str, k: int = 1) -> None:
        self.stats.refactor_reasons[reason] = self.stats.refactor_reasons.get(reason, 0) + k

    def _full(self, spec: CandidateSpec, X: Tensor, reason: str) -> tuple[Tensor, Tensor, Kernel]:
        _, covar, _ = spec.build(dim=X.shape[-1])
        with torch.no_grad():
            A = to_dense(covar(X)).expand(len(spec), X.shape[0], X.shape[0])
            A = A + torch.diag_embed(self._noise(spec, X)[:, None].expand(len(spec), X.shape[0]))
            L, jitter = jittered_cholesky(A)
        self.stats.full += len(spec)
        self._count(reason, len(spec))
        return L, jitter, covar

    # -------------------------------------------------------------------- API
    def factor(self, spec: CandidateSpec, X: Tensor) -> CandidateFactor:
        r"""The factors of ``spec``'s candidates on ``X`` (``n x d``, model input space), in order."""
        start = time.perf_counter()
        X = X.detach()
        keys = self.keys(spec)
        old = self._factor
        if old is not None and (old.X.shape[0] > X.shape[0] or not torch.equal(old.X, X[: old.X.shape[0]])):
            self._reset()
            old = None
            self._count("data not an extension")
        if old is not None and keys != self._keys:
            old = self._regroup(spec, keys, X)
        if old is None:
            L, jitter, covar = self._full(spec, X, "new candidates")
            self._set(spec, keys, covar, CandidateFactor(X, L, jitter, self._noise(spec, X)), X.new_zeros(len(spec)))
        elif old.X.shape[0] < X.shape[0]:
            self._extend(X)
        self.stats.seconds += time.perf_counter() - start
        return self._factor

    def _reset(self) -> None:
        self._keys, self._covar, self._spec, self._factor, self._since_full = [], None, None, None, None

    def _set(self, spec: CandidateSpec, keys: list[str], covar: Kernel, factor: CandidateFactor, since: Tensor) -> None:
        self._spec, self._keys, self._covar, self._factor, self._since_full = spec, keys, covar, factor, since

    def _regroup(self, spec: CandidateSpec, keys: list[str], X: Tensor) -> CandidateFactor | None:
        r"""Keep the cached candidates still asked for, factorise the new ones on the cached
        inputs, and order them as asked."""
        old = self._factor
        position = {k: i for i, k in enumerate(self._keys)}
        kept = [position[k] for k in keys if k in position]
        new = [j for j, k in enumerate(keys) if k not in position]
        if not kept:
            self._reset()
            return None
        parts_L, parts_j, since = [old.L[kept]], [old.jitter[kept]], [self._since_full[kept]]
        if new:
            L_new, j_new, _ = self._full(spec.subset(new), old.X, "new candidates")
            parts_L.append(L_new)
            parts_j.append(j_new)
            since.append(self._since_full.new_zeros(len(new)))
        order = [*[j for j, k in enumerate(keys) if k in position], *new]
        inverse = torch.empty(len(keys), dtype=torch.long, device=old.L.device)
        inverse[torch.as_tensor(order, device=old.L.device)] = torch.arange(len(keys), device=old.L.device)
        L = torch.cat(parts_L)[inverse]
        jitter = torch.cat(parts_j)[inverse]
        since_full = torch.cat(since)[inverse]
        _, covar, _ = spec.build(dim=X.shape[-1])
        self._set(spec, keys, covar, CandidateFactor(old.X, L, jitter, self._noise(spec, X)), since_full)
        return self._factor

    def _extend(self, X: Tensor) -> None:
        old, covar = self._factor, self._covar
        n, m = old.X.shape[0], X.shape[0]
        q = m - n
        X_new = X[n:]
        with torch.no_grad():
            K_cross = to_dense(covar(old.X, X_new)).expand(old.L.shape[0], n, q)
            K_new = to_dense(covar(X_new)).expand(old.L.shape[0], q, q)
            B = torch.linalg.solve_triangular(old.L, K_cross, upper=False)  # K x n x q
            S = K_new - B.transpose(-2, -1) @ B
            S = S + torch.diag_embed((old.noise + old.jitter)[:, None].expand(-1, q))
            C, info = torch.linalg.cholesky_ex(S)
        since = self._since_full + q
        refactor = (info > 0) | (since > self.refactor_every)
        L = old.L.new_zeros(old.L.shape[0], m, m)
        L[:, :n, :n] = old.L
        L[:, n:, :n] = B.transpose(-2, -1)
        L[:, n:, n:] = C
        jitter = old.jitter
        if bool(refactor.any()):
            idx = refactor.nonzero().flatten().tolist()
            sub = self._spec.subset(idx)
            L_sub, j_sub, _ = self._full(sub, X, "jitter would grow" if bool((info > 0).any()) else "refactor_every")
            L[refactor], jitter = L_sub, jitter.clone()
            jitter[refactor] = j_sub
            since = torch.where(refactor, torch.zeros_like(since), since)
        self.stats.updates += 1
        self.stats.appended += q
        self._factor = CandidateFactor(X, L, jitter, old.noise)
        self._since_full = since


__all__ = ["CandidateFactor", "FactorCache", "FactorStats", "jittered_cholesky", "DEFAULT_REFACTOR_EVERY"]
