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

References:
    D. R. Jones, M. Schonlau, W. J. Welch. Efficient Global Optimization of Expensive
    Black-Box Functions. 1998.
    S. Ament, S. Daulton, D. Eriksson, M. Balandat, E. Bakshy. Unexpected Improvements to
    Expected Improvement for Bayesian Optimization. NeurIPS 2023.
"""

from __future__ import annotations

import torch
from botorch.acquisition import LogExpectedImprovement
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.utils.transforms import t_batch_mode_transform
from torch import Tensor

from botorch_unknown_hypers.models.candidate_gp import CandidateModel
from botorch_unknown_hypers.models.marginal import MarginalModel

LOGEI_REDUCTIONS = ("max", "select")


class CandidateLogEI(AcquisitionFunction):
    r"""LogEI of each candidate of a K-wide model, reduced over candidates.

    Args:
        model: A K-wide candidate model (outputs in the units of ``best_f``).
        best_f: The incumbent :math:`f^+`.
        reduction: ``"max"`` (over candidates) or ``"select"`` (candidate ``index``).
        index: The candidate for ``"select"``.
    """

    def __init__(self, model: CandidateModel, best_f: float, reduction: str = "max", index: int | None = None) -> None:
        super().__init__(model=model)
        if reduction not in LOGEI_REDUCTIONS:
            raise ValueError(f"reduction must be one of {LOGEI_REDUCTIONS}, got {reduction!r}.")
        num = model.num_candidates
        if reduction == "select" and (index is None or not 0 <= int(index) < num):
            raise ValueError(f"index must be given and lie in [0, {num - 1}] for reduction='select', got {index!r}.")
        self.reduction = reduction
        self._eval_model = model.subset([int(index)]) if reduction == "select" and num > 1 else model
        self.best_f = float(best_f)
        best = torch.tensor(self.best_f, dtype=torch.float64)
        self._log_ei = LogExpectedImprovement(MarginalModel(self._moments), best_f=best)

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


__all__ = ["CandidateLogEI", "LOGEI_REDUCTIONS"]
