r"""Log noisy expected improvement of every candidate of a K-wide model.

For candidate :math:`u`, observed points :math:`X_b` and pending points :math:`Q` (points still
being evaluated, or the earlier slots of a batch), noisy expected improvement (Letham et al.
2019) at a batch :math:`X` integrates over the joint posterior of :math:`f` at all of them,

.. math::

    \mathrm{NEI}_u(X) = \mathbb E_{f \sim \mathcal{GP}_u \mid D}\Big[\big(\max_{x \in X} f(x)
        - \max_{z \in X_b \cup Q} f(z)\big)^+\Big],

so no noisy observation serves as the incumbent :math:`f^+` (LogEI's best observed value is
fooled by a lucky draw). BoTorch's ``qLogNoisyExpectedImprovement`` estimates
:math:`\log\mathrm{NEI}_u` from quasi-Monte Carlo samples with the smoothed max and ReLU of Ament
et al. (2023). Its defaults are kept: pending points join the baseline (the incremental
improvement of sequential greedy batches), the baseline is pruned to the points with a sampled
chance of being the best, and the root of the baseline's covariance is cached (the one-candidate
view of :meth:`~botorch_unknown_hypers.models.candidate_gp.CandidateGP.select` is a
``GPyTorchModel`` with a linear outcome transform, so BoTorch supports it). The view is on
GPyTorch's exact predictive (``select(u, factors=False)``): the joint covariance at a baseline
point and a point equal to it is singular, which BoTorch's jittered Cholesky handles.

**On the standardised scale.** With BoTorch's one-output ``Standardize`` (targets
:math:`y = a + s\,z`), each candidate's qLogNEI runs on the model of :math:`z` (the view
:func:`standardized_view`, no outcome transform), its smoothing temperatures divided by
:math:`s`, and :math:`\log s` is added back: the smoothed max and ReLU are positively homogeneous,
:math:`\mathrm{fatmax}(s x; s\tau) = s\,\mathrm{fatmax}(x; \tau)`, so this is BoTorch's
raw-scale value. The joint covariances BoTorch factorises are then of order one, where its
absolute jitter works: on the raw scale of an objective spread over :math:`10^9` they are of order
:math:`10^{18}`, the jitter added to a singular one (a point at an observed one) is lost, and the
gradient is NaN.

One ``qLogNoisyExpectedImprovement`` per candidate, all from the same Sobol seed (common random
numbers across candidates), a Python loop over the K candidates (a handful): on the K-wide model
BoTorch's baseline pruning refuses the batch, its forward refuses a ``batch_shape x K`` output,
and unpruned every evaluation would sample jointly at all observed points.
Reductions as :class:`~botorch_unknown_hypers.acquisition.logei.CandidateLogEI`: ``"max"``
over candidates (the doubly optimistic pair) or ``"select"`` (one candidate); and
``"average"``, for candidates that are draws :math:`u_1, \dots, u_K` from a hyperposterior,
their Bayesian model average

.. math::

    \log \frac1K \sum_{k=1}^K \mathrm{NEI}_{u_k}(X),

one ``qLogNoisyExpectedImprovement`` on the K-wide model declared an ensemble
(:class:`CandidateEnsemble`), which BoTorch averages over (by ``logmeanexp``, as for its fully
Bayesian GPs), each draw with its own noisy incumbent.

References:
    B. Letham, B. Karrer, G. Ottoni, E. Bakshy. Constrained Bayesian Optimization with Noisy
    Experiments. Bayesian Analysis 2019.
    S. Ament, S. Daulton, D. Eriksson, M. Balandat, E. Bakshy. Unexpected Improvements to
    Expected Improvement for Bayesian Optimization. NeurIPS 2023.
"""

from __future__ import annotations

import copy
import math
from typing import cast

import torch
from botorch.acquisition import qLogNoisyExpectedImprovement
from botorch.acquisition.logei import TAU_MAX, TAU_RELU
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.sampling import SobolQMCNormalSampler
from botorch.utils.transforms import t_batch_mode_transform
from torch import Tensor

from botorch_unknown_hypers.acquisition.logei import check_reduction
from botorch_unknown_hypers.checks import check_choice
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.quiet_normal import is_plain_standardize
from botorch_unknown_hypers.rng import forked_rng

LOGNEI_SAMPLES = 128
r"""Quasi-Monte Carlo samples per evaluation (BoTorch's default for its MC acquisitions)."""


LOGNEI_REDUCTIONS = ("max", "select", "average")
r"""The reductions of :class:`CandidateLogNEI` over candidates."""


class CandidateEnsemble(CandidateGP):
    r"""A K-wide candidate model that BoTorch's acquisitions treat as an ensemble, as its fully
    Bayesian GPs: their values are averaged over the candidate dimension (``-3`` of every
    posterior, BoTorch's ``MCMC_DIM``). For candidates drawn from a hyperposterior."""

    _is_ensemble = True


def standardized_view(model: CandidateGP, index: int | None) -> CandidateGP:
    r"""Candidate ``index`` of ``model`` (outcome transform ``Standardize``) as a single-output model
    of the standardised targets :math:`z = (y - a) / s`: ``model.select(index, factors=False)``
    without its outcome transform, so its posteriors are in the units of :math:`z`.
    ``index=None``: all K candidates, as a :class:`CandidateEnsemble`."""
    if model.X_pending is not None:
        raise ValueError("factors=False needs a model without pending points (they condition through the factors).")
    with torch.no_grad():
        Z, _ = model.outcome_transform(model.raw_train_Y)  # eval mode: the model's own a and s
    one = index is not None
    return (CandidateGP if one else CandidateEnsemble)(
        model.raw_train_X,
        Z,
        model.candidates.subset([int(index) % model.num_candidates]) if one else model.candidates,
        input_transform=copy.deepcopy(getattr(model, "input_transform", None)),
        squeeze_candidate_dim=one,
        check_data=False,
    )


class CandidateLogNEI(AcquisitionFunction):
    r"""qLogNEI of each candidate of a K-wide model, reduced over candidates.

    Args:
        model: A K-wide candidate model on the data observed (not conditioned on ``X_pending``).
        X_baseline: ``n x d`` observed points, in the model's input units.
        seed: Seeds the Sobol samples and the global RNG while each candidate's baseline is
            pruned (forked: the caller's RNG is untouched), so the values are deterministic.
        reduction: ``"max"`` (over candidates), ``"select"`` (candidate ``index``) or
            ``"average"`` (the candidates' model average; a model with outcome transform
            ``Standardize``).
        index: The candidate for ``"select"``.
        X_pending: ``p x d`` pending points and earlier slots, or ``None``.
        num_samples: Quasi-Monte Carlo samples.
    """

    def __init__(
        self,
        model: CandidateGP,
        X_baseline: Tensor,
        seed: int,
        reduction: str = "max",
        index: int | None = None,
        X_pending: Tensor | None = None,
        num_samples: int = LOGNEI_SAMPLES,
    ) -> None:
        super().__init__(model=model)
        check_choice("reduction", reduction, LOGNEI_REDUCTIONS)
        if reduction != "average":
            check_reduction(reduction, index, model.num_candidates)
        d = model.raw_train_X.shape[-1]
        if X_baseline.ndim != 2 or X_baseline.shape[0] == 0 or X_baseline.shape[-1] != d:
            raise ValueError(f"X_baseline must be n x {d} with n >= 1, got shape {tuple(X_baseline.shape)}.")
        if X_pending is not None and (X_pending.ndim != 2 or X_pending.shape[-1] != d):
            raise ValueError(f"X_pending must be p x {d}, got shape {tuple(X_pending.shape)}.")
        if X_pending is not None and X_pending.shape[0] == 0:
            X_pending = None
        self.reduction = reduction
        self.seed = int(seed)
        self.acqfs = torch.nn.ModuleList()
        transform = getattr(model, "outcome_transform", None)
        # log s, added back to the standardised values (one read of s: the temperatures are floats)
        self.log_scale: float | None = float(transform.stdvs.log()) if is_plain_standardize(transform) else None
        if reduction == "average" and self.log_scale is None:
            raise ValueError(
                f"reduction='average' needs a model whose outcome transform is Standardize, got {type(transform).__name__}."
            )
        scale = 1.0 if self.log_scale is None else math.exp(self.log_scale)
        if reduction == "average":  # one acquisition on the ensemble
            views = [standardized_view(model, None)]
        else:
            indices = [int(cast(int, index))] if reduction == "select" else range(model.num_candidates)
            views = [model.select(u, factors=False) if self.log_scale is None else standardized_view(model, u) for u in indices]
        for view in views:
            with forked_rng(self.seed, X_baseline.device):  # baseline pruning draws from the global RNG
                sampler = SobolQMCNormalSampler(sample_shape=torch.Size([num_samples]), seed=self.seed)
                self.acqfs.append(
                    qLogNoisyExpectedImprovement(
                        view, X_baseline, sampler=sampler, X_pending=X_pending, tau_max=TAU_MAX / scale, tau_relu=TAU_RELU / scale
                    )
                )

    def q_values(self, X: Tensor) -> Tensor:
        r"""``batch_shape x q x d`` batches -> ``batch_shape x K'`` values (``K' = 1`` for ``"select"``
        and ``"average"``)."""
        values = torch.stack([acqf(X) for acqf in self.acqfs], dim=-1)
        return values if self.log_scale is None else values + self.log_scale

    def candidate_values(self, X: Tensor) -> Tensor:
        r"""``batch_shape x d`` points -> ``batch_shape x K'`` values (``K' = 1`` for ``"select"``)."""
        return self.q_values(X.unsqueeze(-2))

    @t_batch_mode_transform()
    def forward(self, X: Tensor) -> Tensor:
        r"""Reduced qLogNEI at ``X`` (``batch_shape x q x d``); returns ``batch_shape``."""
        values = self.q_values(X)
        return values.max(dim=-1).values if self.reduction == "max" else values[..., 0]


__all__ = ["CandidateEnsemble", "CandidateLogNEI", "LOGNEI_REDUCTIONS", "LOGNEI_SAMPLES", "standardized_view"]
