r"""Per-candidate upper confidence bounds and their reductions.

For K candidate hyperparameter settings :math:`u_1, \dots, u_K` sharing the
data, each candidate has its own GP-UCB (Srinivas et al. 2010):

.. math::

    \mathrm{UCB}_k(x) = \mu_k(x) + \beta_k \, \sigma_k(x),

with one confidence multiplier :math:`\beta_k` per candidate. **Convention:**
:math:`\beta_k` multiplies :math:`\sigma_k` directly, as in all five papers;
BoTorch's ``UpperConfidenceBound(beta=b)`` computes :math:`\mu + \sqrt{b}\,\sigma`,
so ``b = beta**2`` gives the same value.

Reductions over candidates turn the K values into one acquisition value:

- ``"select"``: one chosen candidate :math:`\mathrm{UCB}_{k^*}(x)` (balancing
  rules, Ziomek et al. 2024, Alg. 1 line 4);
- ``"max"``: :math:`\max_k \mathrm{UCB}_k(x)`; maximising it over :math:`x` is
  the "doubly optimistic" joint argmax over :math:`(x, k)` of
  hyperparameter elimination (Ziomek et al. 2025, Alg. 1 line 6);
- ``"weighted"``: :math:`\sum_k w_k \mathrm{UCB}_k(x)` with weights on the
  simplex (expected UCB under a hyperposterior, De Ath et al. 2021);

:meth:`CandidateUCB.candidate_values` returns the ``batch_shape x K`` values
themselves, before any reduction.

References:
    N. Srinivas, A. Krause, S. Kakade, M. Seeger. Gaussian Process
    Optimization in the Bandit Setting: No Regret and Experimental Design.
    ICML 2010.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.utils.transforms import t_batch_mode_transform
from torch import Tensor

from botorch_unknown_hypers.checks import check_bool, check_choice
from botorch_unknown_hypers.confidence import upper_confidence_bound
from botorch_unknown_hypers.host import as_device_tensor
from botorch_unknown_hypers.models.candidate_gp import CandidateModel

if TYPE_CHECKING:  # the ridge's module (BoTorch's SingleTaskGP) is imported by the rules that use it
    from botorch_unknown_hypers.models.kernel_ridge import KernelRidge

REDUCTIONS = ("select", "max", "weighted")


def candidate_ucb_at(model: CandidateModel, beta: Tensor, X: Tensor) -> Tensor:
    r"""UCB of candidate ``k`` at its own points ``X[k]``.

    Args:
        model: A K-wide candidate model.
        beta: ``K``-dim multipliers.
        X: ``K x m x d`` points.

    Returns:
        ``K x m`` values :math:`\mu_k(X_{k,j}) + \beta_k \sigma_k(X_{k,j})`.
    """
    mean, variance = model.marginal_mean_variance(X)
    return upper_confidence_bound(mean, variance, beta.unsqueeze(-1))


class CandidateUCBValues:
    r"""The K candidates' UCBs at their own points (:func:`candidate_ucb_at`, ``K x m x d`` ->
    ``K x m``) as the objectives of a per-candidate maximisation, with :meth:`subset` for the
    candidates that still hold unconverged restarts (the optimiser then scores only those).

    Args:
        model: A K-wide candidate model.
        beta: ``K``-dim multipliers.
    """

    def __init__(self, model: CandidateModel, beta: Tensor) -> None:
        self.model, self.beta = model, beta

    def __call__(self, X: Tensor) -> Tensor:
        return candidate_ucb_at(self.model, self.beta, X)

    def subset(self, rows: list[int]) -> CandidateUCBValues:
        r"""The objectives of the candidates at ``rows`` only, in that order."""
        return CandidateUCBValues(self.model.subset(rows), self.beta[rows])

    @property
    def subset_is_view(self) -> bool:
        r"""Whether :meth:`subset` takes the model's factors as they are (a model on the factor
        path), rather than giving a model that factorises its candidates again at its first call."""
        return getattr(getattr(self.model, "predictive", None), "factor", None) is not None


def beta_checks(beta: float | Tensor, num_candidates: int, like: Tensor) -> tuple[Tensor, Tensor | None]:
    r"""``(beta_t, ok)``: :func:`as_beta`'s ``K``-dim tensor without its host read, and the 0-dim
    flag of its value check (``None`` when a Python number was checked on the host), for a
    caller that reads it with flags of its own. The shape is checked here.

    Raises:
        ValueError: if ``beta`` has the wrong size, or is a negative / non-finite Python number.
    """
    number = isinstance(beta, (int, float)) and not isinstance(beta, bool) and like.dtype == torch.float64
    if number and not (math.isfinite(beta) and beta >= 0):  # a Python number kept exactly: checked on the host
        raise ValueError("beta must be finite and non-negative.")
    beta_t = as_device_tensor(beta, like.dtype, like.device)  # a Python number: no wait for the device
    if beta_t.ndim == 0:
        beta_t = beta_t.expand(num_candidates)
    if beta_t.shape != (num_candidates,):
        raise ValueError(
            f"beta must be a scalar or have shape ({num_candidates},), got {tuple(beta_t.shape)}."
        )
    return beta_t, None if number else (torch.isfinite(beta_t) & (beta_t >= 0)).all()


def as_beta(beta: float | Tensor, num_candidates: int, like: Tensor) -> Tensor:
    r"""Broadcast a scalar or ``K``-dim ``beta`` to a ``K``-dim tensor like ``like``.

    Raises:
        ValueError: if ``beta`` has the wrong size or is negative / non-finite.
    """
    beta_t, ok = beta_checks(beta, num_candidates, like)
    if ok is not None and not bool(ok):  # one host read
        raise ValueError("beta must be finite and non-negative.")
    return beta_t


class CandidateUCB(AcquisitionFunction):
    r"""UCB of every candidate of a K-wide model, with a reduction over candidates.

    Example:
        >>> model = CandidateGP(train_X, train_Y, candidates)  # K candidates
        >>> acqf = CandidateUCB(model, beta=torch.full((K,), 2.0), reduction="max")
        >>> x, value = optimize_acqf(acqf, bounds, q=1, num_restarts=10, raw_samples=512)
    """

    def __init__(
        self,
        model: CandidateModel,
        beta: float | Tensor,
        reduction: str = "max",
        index: int | None = None,
        weights: Tensor | None = None,
        check_beta: bool = True,
    ) -> None:
        r"""
        Args:
            model: A K-wide candidate model (``CandidateGP`` or a grouped model).
            beta: Scalar or ``K``-dim confidence multipliers :math:`\beta_k \ge 0`.
            reduction: One of ``"select"``, ``"max"``, ``"weighted"``.
            index: The candidate for ``reduction="select"``.
            weights: ``K``-dim non-negative weights summing to one, for ``"weighted"``.
            check_beta: Check a tensor ``beta``'s values (one host read). ``False`` for a caller
                that checks them itself with a read of its own (a round's deferred checks); its
                shape, and a Python number, are checked either way.
        """
        super().__init__(model=model)
        check_choice("reduction", reduction, REDUCTIONS)
        num = model.num_candidates
        like = model.raw_train_X if hasattr(model, "raw_train_X") else torch.zeros(1, dtype=torch.float64)
        check_bool("check_beta", check_beta)
        beta_t = as_beta(beta, num, like) if check_beta else beta_checks(beta, num, like)[0]
        self.reduction = reduction
        self.index = None
        if reduction == "select":
            if index is None or not (0 <= int(index) < num):
                raise ValueError(f"index must be given and lie in [0, {num - 1}] for reduction='select'.")
            self.index = int(index)
            # Only the selected candidate is evaluated: one candidate's cost, not K.
            self._eval_model = model if num == 1 else model.subset([self.index])
            beta_t = beta_t[self.index : self.index + 1]
        else:
            self._eval_model = model
        self.register_buffer("beta", beta_t)
        if reduction == "weighted":
            if weights is None:
                raise ValueError("weights must be given for reduction='weighted'.")
            w = as_device_tensor(weights, beta_t.dtype, beta_t.device)
            if w.shape != (num,) or (w < 0).any() or not torch.isclose(w.sum(), w.new_tensor(1.0)):
                raise ValueError(f"weights must be {num} non-negative numbers summing to one.")
            self.register_buffer("weights", w)
        else:
            self.weights = None

    @property
    def evaluated_model(self) -> CandidateModel:
        r"""The model the values come from: the one-candidate view for ``"select"``."""
        return self._eval_model

    def candidate_values(self, X: Tensor) -> Tensor:
        r"""Per-candidate UCB values.

        Args:
            X: ``batch_shape x d`` points (every candidate sees the same points).

        Returns:
            ``batch_shape x K'`` values, with ``K' = 1`` for ``reduction="select"``.
        """
        batch_shape, d = X.shape[:-1], X.shape[-1]
        flat = X.reshape(1, -1, d)  # 1 x m x d: all points in one q-dimension per candidate
        mean, variance = self._eval_model.marginal_mean_variance(flat)  # K x m
        ucb = upper_confidence_bound(mean, variance, self.beta.unsqueeze(-1))
        return ucb.transpose(0, 1).reshape(*batch_shape, -1)

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: Tensor) -> Tensor:
        r"""Reduced UCB at ``X`` (``batch_shape x 1 x d``); returns ``batch_shape``."""
        values = self.candidate_values(X.squeeze(-2))
        if self.reduction == "max":
            return values.max(dim=-1).values
        if self.reduction == "weighted":
            return values @ self.weights
        return values.squeeze(-1)  # "select": one column


class KernelRidgeUCB(AcquisitionFunction):
    r"""UCB :math:`\mu^*(x) + w\,\sigma(x)` of a known-kernel ridge posterior (misspecified bandits).

    Args:
        ridge: The :class:`~botorch_unknown_hypers.models.kernel_ridge.KernelRidge` posterior.
        width: The multiplier :math:`w` (e.g. the enlarged :math:`\beta_t + \epsilon\sqrt t/\sqrt\lambda`).
        transform: Maps ``n x d`` domain points to the kernel's input space (the unit cube).
    """

    def __init__(self, ridge: KernelRidge, width: float, transform: Callable[[Tensor], Tensor]) -> None:
        super().__init__(model=None)
        self.ridge = ridge
        self.width = float(width)
        self.transform = transform

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: Tensor) -> Tensor:
        r"""UCB at ``X`` (``batch_shape x 1 x d``); returns ``batch_shape``."""
        flat = X.reshape(-1, X.shape[-1])
        mean, variance = self.ridge.mean_variance(self.transform(flat))
        return upper_confidence_bound(mean, variance, self.width).reshape(X.shape[:-2])
