r"""A Cholesky factor with the smallest jitter that works, and the jitter it took.

For a symmetric :math:`A \in \mathbb R^{m\times m}`, :func:`jittered_cholesky` returns
:math:`L` and :math:`j` with :math:`L L^\top = A + j I`: :math:`j` is the jitter asked for if
LAPACK factorises :math:`A + jI`, else the first of
:math:`\max(j, \epsilon\,10^{a}\,|\bar a|)`, :math:`a = 0, 1, \dots,` ``JITTER_TRIES - 1``,
that works (:math:`\bar a` the mean of :math:`A`'s diagonal, :math:`\epsilon = 10^{-8}` in float64,
:math:`10^{-6}` otherwise), as GPyTorch's ``psd_safe_cholesky`` escalates. Unlike that function it
returns :math:`j`, which the factor cache keeps so that rows appended later carry the same
jitter (``docs/scaling.md``, "The factor cache").
"""

from __future__ import annotations

import torch
from torch import Tensor

JITTER_TRIES = 6
r"""How many times the jitter is multiplied by 10 before a factorisation is given up."""


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
    scale = None  # read from the device only if a factorisation fails
    for attempt in range(JITTER_TRIES + 1):
        if jitter > 0:  # a copy with the jitter on its diagonal (no m x m identity is formed)
            shifted = A.clone()
            shifted.diagonal().add_(jitter)
        else:
            shifted = A
        L, info = torch.linalg.cholesky_ex(shifted)
        if int(info) == 0:
            return L, jitter
        scale = (float(A.diagonal().mean().abs()) or 1.0) if scale is None else scale
        jitter = max(jitter, _base_jitter(A.dtype) * 10.0**attempt * scale)
    raise ValueError(f"the kernel matrix is not positive definite even with jitter {jitter:.3g}.")


__all__ = ["JITTER_TRIES", "jittered_cholesky"]
