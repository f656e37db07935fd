r"""Log expected improvement of every candidate of a K-wide model.

For candidate :math:`u` with posterior :math:`\mathcal N(\mu_u(x), \sigma_u^2(x))` and incumbent
:math:`f^+`, expected improvement (Jones et al. 1998) in the numerically stable log form of
Ament et al. (2023) is

.. math::

    \log \mathrm{EI}_u(x) = \log \sigma_u(x) + \log h\Big(\frac{\mu_u(x) - f^+}{\sigma_u(x)}\Big),
    \qquad h(z) = \varphi(z) + z\Phi(z),

computed by BoTorch's ``LogExpectedImprovement`` on a
:class:`~botorch_unknown_hypers.models.marginal.MarginalModel` whose batch holds the K candidates,
so the K values come from one posterior call. Reductions, as for
:class:`~botorch_unknown_hypers.acquisition.ucb.CandidateUCB`: ``"max"`` gives
:math:`\max_u \log \mathrm{EI}_u(x)`, whose maximiser over :math:`x` and then :math:`u` is the
doubly optimistic pair of hyperparameter elimination with EI in place of UCB (the LogEI variant of
the ``he-gp-ucb-auto`` preset); ``"select"`` gives one candidate's value.

**In a batch** (:func:`believer_best_f`), candidate :math:`u`'s variance is conditioned on the
pending points and earlier slots :math:`x_1, \dots, x_p` with its mean frozen: the posterior of a
GP that observed :math:`y_j = \mu_u(x_j)` there (the Kriging Believer of Ginsbourger et al. 2010).
That GP's best observed value is :math:`f^+_u = \max(\max_i y_i, \max_j \mu_u(x_j))`, so each
candidate gets its own incumbent. With the observed :math:`f^+` alone, a slot whose mean beats
:math:`f^+` keeps :math:`\mathrm{EI} \approx \mu_u(x_1) - f^+ > 0` next to it after its
fantasy, and the batch crowds around it.

**The plug-in incumbent** (:func:`plugin_best_f`; Picheny et al. 2013) takes :math:`f^+` from
the model instead of the data: :math:`f^+_u = \max_i \mu_u(x_i)` over the observed points. A
noisy observation that came out high is not the incumbent, and the value stays analytic (no
Monte Carlo estimate, as qLogNEI's); without noise, an interpolating model gives back the best
observation.

References:
    D. R. Jones, M. Schonlau, W. J. Welch. Efficient Global Optimization of Expensive
    Black-Box Functions. 1998.
    S. Ament, S. Daulton, D. Eriksson, M. Balandat, E. Bakshy. Unexpected Improvements to
    Expected Improvement for Bayesian Optimization. NeurIPS 2023.
    D. Ginsbourger, R. Le Riche, L. Carraro. Kriging Is Well-Suited to Parallelize
    Optimization. 2010.
    V. Picheny, T. Wagner, D. Ginsbourger. A Benchmark of Kriging-Based Infill Criteria for
    Noisy Optimization. Structural and Multidisciplinary Optimization, 2013.
"""

from __future__ import annotations

import torch
from botorch.acquisition import LogExpectedImprovement
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.utils.transforms import t_batch_mode_transform
from torch import Tensor

from botorch_unknown_hypers.checks import check_bool, check_choice
from botorch_unknown_hypers.host import as_device_tensor
from botorch_unknown_hypers.models.candidate_gp import CandidateModel
from botorch_unknown_hypers.models.marginal import MarginalModel

LOGEI_REDUCTIONS = ("max", "select")


def check_reduction(reduction: str, index: int | None, num_candidates: int) -> None:
    r"""``reduction`` is one of :data:`LOGEI_REDUCTIONS` and, for ``"select"``, ``index`` one of the
    ``num_candidates`` candidates (``ValueError`` naming the argument otherwise)."""
    check_choice("reduction", reduction, LOGEI_REDUCTIONS)
    if reduction == "select" and (index is None or not 0 <= int(index) < num_candidates):
        raise ValueError(
            f"index must be given and lie in [0, {num_candidates - 1}] for reduction='select', got {index!r}."
        )


class CandidateLogEI(AcquisitionFunction):
    r"""LogEI of each candidate of a K-wide model, reduced over candidates.

    Args:
        model: A K-wide candidate model (outputs in the units of ``best_f``).
        best_f: The incumbent :math:`f^+`: a scalar, or one per candidate (``K``, as
            :func:`believer_best_f` gives).
        reduction: ``"max"`` (over candidates) or ``"select"`` (candidate ``index``).
        index: The candidate for ``"select"``.
        check_best_f: Check that ``best_f`` is finite (one read of the device for a tensor);
            ``False`` for a caller whose ``best_f`` is the best of observations it checked.
    """

    def __init__(
        self, model: CandidateModel, best_f: float | Tensor, reduction: str = "max", index: int | None = None,
        check_best_f: bool = True,
    ) -> None:
        super().__init__(model=model)
        num = model.num_candidates
        check_reduction(reduction, index, num)
        check_bool("check_best_f", check_best_f)
        self.reduction = reduction
        self._eval_model = model.subset([int(index)]) if reduction == "select" and num > 1 else model
        like = model.raw_train_X
        best = as_device_tensor(best_f, like.dtype, like.device).detach()
        if best.ndim > 1 or (best.ndim == 1 and best.numel() != num) or (check_best_f and not bool(torch.isfinite(best).all())):
            raise ValueError(f"best_f must be a finite scalar or {num} values (one per candidate), got {best_f!r}.")
        if best.ndim == 1 and reduction == "select":
            best = best[int(index)]
        self.best_f = best
        # BoTorch's moments are batch_shape x K x 1 (one output): a per-candidate f+ is K x 1
        self._log_ei = LogExpectedImprovement(MarginalModel(self._moments), best_f=best.unsqueeze(-1) if best.ndim else best)

    def _moments(self, X: Tensor) -> tuple[Tensor, Tensor]:
        # X: batch_shape x K x 1 x d, candidate k at X[..., k, :, :] -> batch_shape x K each
        mean, variance = self._eval_model.marginal_mean_variance(X)
        return mean.squeeze(-1), variance.squeeze(-1)

    def candidate_values(self, X: Tensor) -> Tensor:
        r"""``batch_shape x d`` points -> ``batch_shape x K'`` values (``K' = 1`` for ``"select"``)."""
        K = self._eval_model.num_candidates
        Xk = X.unsqueeze(-2).unsqueeze(-3).expand(*X.shape[:-1], K, 1, X.shape[-1])
        return self._log_ei(Xk)

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: Tensor) -> Tensor:
        r"""Reduced LogEI at ``X`` (``batch_shape x 1 x d``); returns ``batch_shape``."""
        values = self.candidate_values(X.squeeze(-2))
        return values.max(dim=-1).values if self.reduction == "max" else values[..., 0]


def believer_best_f(model: CandidateModel, best_observed: float | Tensor, X_fixed: Tensor | None) -> Tensor:
    r"""The Kriging Believer's incumbents :math:`f^+_u = \max(f^+_u, \max_j \mu_u(x_j))` (``K``).

    Args:
        model: A K-wide candidate model (its mean is the same with or without pending points).
        best_observed: :math:`f^+`, in the model's output units: a scalar (the best observed
            value, every candidate's) or ``K`` values (one per candidate, as
            :func:`plugin_best_f` gives).
        X_fixed: ``p x d`` pending points and earlier slots of the batch, or ``None``.

    Returns:
        ``K`` incumbents, :math:`f^+_u` for every candidate when ``X_fixed`` is ``None``.
    """
    like = model.raw_train_X
    best = as_device_tensor(best_observed, like.dtype, like.device)
    if best.numel() not in (1, model.num_candidates):
        raise ValueError(f"best_observed must be a scalar or {model.num_candidates} values, got shape {tuple(best.shape)}.")
    best = best.reshape(-1).expand(model.num_candidates)
    if X_fixed is None or X_fixed.shape[0] == 0:
        return best.clone()
    with torch.no_grad():
        mean, _ = model.marginal_mean_variance(X_fixed.to(like).unsqueeze(0))  # K x p
    return torch.maximum(best, mean.max(dim=-1).values)


def plugin_best_f(model: CandidateModel) -> Tensor:
    r"""The plug-in incumbents :math:`f^+_u = \max_i \mu_u(x_i)` over the observed points
    :math:`x_1, \dots, x_n` (``K``, the model's output units; no gradient).

    Args:
        model: A K-wide candidate model (its mean is the same with or without pending points).

    Returns:
        ``K`` incumbents, each candidate's best posterior mean at the observed points.
    """
    X = model.raw_train_X
    with torch.no_grad():
        mean, _ = model.marginal_mean_variance(X.unsqueeze(0))  # K x n
    return mean.max(dim=-1).values


__all__ = ["CandidateLogEI", "LOGEI_REDUCTIONS", "believer_best_f", "check_reduction", "plugin_best_f"]
