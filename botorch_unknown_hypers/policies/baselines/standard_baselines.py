r"""Baselines: random search, GP-UCB with MLE hyperparameters, and GP Thompson sampling.

``mle-gp-ucb`` is the MLE baseline of the length-scale balancing paper
(Ziomek et al. 2024, Sec. 5, as in the authors' code): at every round a fresh
BoTorch ``SingleTaskGP`` is fitted to all data with ``fit_gpytorch_mll``
(multi-start-free L-BFGS-B, BoTorch's default), then

.. math::

    x_t = \arg\max_x \mu_{t-1}(x) + \beta_t \sigma_{t-1}(x).

Defaults follow the authors' code: isotropic Matern-5/2,
output scale fixed to 1, noise variance fixed to 1e-4, only the length scale
trained, inputs scaled to the unit cube by the domain bounds, outputs
standardised on all data every round, and the frequentist width

.. math::

    \beta_t = B + R \sqrt{2 (I_{t-1} + 1 + \ln(2/\delta))},
    \qquad I_{t-1} = \tfrac12 \log\det(I + R^{-2} K_{t-1}),

with :math:`B = 1`, :math:`R = 10^{-4}`, :math:`\delta = 0.01`, which is
:math:`\approx 1` (Chowdhury & Gopalan 2017). Any of these is an option.

``mle-gp-ts`` draws one posterior sample path per batch slot from the same fitted
GP: BoTorch's pathwise (Matheron) samples maximised with ``optimize_acqf`` on a
box, and exact joint samples over all pool points on a finite domain
(Russo & Van Roy 2014; Kandasamy et al. 2018 for batches).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from botorch.acquisition import AcquisitionFunction, UpperConfidenceBound, qUpperConfidenceBound
from botorch.models import SingleTaskGP
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import AUTO_SEARCH
from botorch_unknown_hypers.checks import check_bool, check_nonnegative, check_positive, check_probability
from botorch_unknown_hypers.acquisition.thompson import thompson_maximizers
from botorch_unknown_hypers.confidence import theorem_beta
from botorch_unknown_hypers.regret_bounds import information_gain_of_model
from botorch_unknown_hypers.domains import Domain
from botorch_unknown_hypers.kernels import check_kernel
from botorch_unknown_hypers.models.fitted import fit_single_task_gp
from botorch_unknown_hypers.policies.base import Policy


class RandomPolicy(Policy):
    r"""Uniform random search: uniform on a box, uniform with replacement on a pool."""

    min_observations = 0
    r"""Needs no observation."""

    name = "random"

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        return self.domain.sample_uniform(q, self.generator)


@dataclass
class FittedState:
    r"""The length scale(s) fitted in the last round (the ``selected`` label)."""

    lengthscale: list[float] = field(default_factory=list)

    def check(self) -> None:
        if not all(v > 0 for v in self.lengthscale):
            raise ValueError("lengthscale must hold positive numbers.")


class FittedGPPolicy(Policy):
    r"""Shared machinery of the baselines that refit a ``SingleTaskGP`` every round.

    Args:
        domain, seed, device, dtype, num_restarts, raw_samples, search: As :class:`Policy`.
        kernel: ``matern52`` (default), ``matern32``, ``matern12`` or ``rbf``.
        ard: One length scale per input dimension.
        fit_outputscale, fit_noise: Also fit the output scale / the noise variance.
        noise: The (initial) noise variance, standardised units.
    """

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        kernel: str = "matern52",
        ard: bool = False,
        fit_outputscale: bool = False,
        fit_noise: bool = False,
        noise: float = 1e-4,
        num_restarts: int = 10,
        raw_samples: int = 512,
        search: str = AUTO_SEARCH,
    ) -> None:
        super().__init__(domain, seed, device, dtype, num_restarts, raw_samples, search)
        check_kernel(kernel)
        check_positive("noise", noise)
        self.kernel = kernel
        self.ard = check_bool("ard", ard)
        self.fit_outputscale = check_bool("fit_outputscale", fit_outputscale)
        self.fit_noise = check_bool("fit_noise", fit_noise)
        self.noise = noise
        self.state = FittedState()

    def fit_model(self, train_X: Tensor, train_Y: Tensor) -> SingleTaskGP:
        r"""A ``SingleTaskGP`` fitted by maximum marginal likelihood on all data (see
        :func:`~botorch_unknown_hypers.models.fitted.fit_single_task_gp`); records the length scale."""
        model = fit_single_task_gp(
            train_X,
            train_Y,
            bounds=self.domain.bounds,
            kernel=self.kernel,
            ard=self.ard,
            noise=self.noise,
            fit_outputscale=self.fit_outputscale,
            fit_noise=self.fit_noise,
        )
        self.state.lengthscale = model.covar_module.base_kernel.lengthscale.detach().flatten().tolist()
        return model

    def _label(self) -> str:
        return ";".join(f"{v:.6g}" for v in self.state.lengthscale)


class MLEGPUCB(FittedGPPolicy):
    r"""GP-UCB with the GP refitted by maximum likelihood every round.

    Args (beyond :class:`FittedGPPolicy`'s):
        beta: A fixed multiplier of :math:`\sigma`, or ``None`` (default) for the frequentist
            width with ``B``, ``R`` and ``delta``.
        B, R, delta: Constants of the frequentist width (authors' code: 1, 1e-4, 0.01);
            ``delta`` enters as ``delta / 2`` (``ln(2/delta)``).

    For ``q > 1`` the batch is built with BoTorch's ``qUpperConfidenceBound`` and sequential
    greedy optimisation (box) or ``optimize_acqf_discrete`` (pool).
    """

    name = "mle-gp-ucb"

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        beta: float | None = None,
        B: float = 1.0,
        R: float = 1e-4,
        delta: float = 0.01,
        **kwargs: Any,
    ) -> None:
        super().__init__(domain, seed=seed, device=device, dtype=dtype, **kwargs)
        beta = None if beta is None else check_nonnegative("beta", beta)
        B, R = check_nonnegative("B", B), check_nonnegative("R", R)
        check_probability("delta", delta)
        self.beta, self.B, self.R, self.delta = beta, B, R, delta

    def current_beta(self, model: SingleTaskGP) -> float:
        if self.beta is not None:
            return float(self.beta)
        info = information_gain_of_model(model)
        return float(theorem_beta(info, B=self.B, R=self.R, delta=self.delta))

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        model = self.fit_model(train_X, train_Y)
        beta = self.current_beta(model)
        self.n_candidates = 1
        self.selected = [self._label()] * q
        self.diagnostics = {"beta": beta}
        acqf: AcquisitionFunction
        if q == 1:
            acqf = UpperConfidenceBound(model, beta=beta**2)  # BoTorch squares: mu + sqrt(b) sigma
        else:
            with self.seeded():
                acqf = qUpperConfidenceBound(model, beta=beta**2)
        return self.maximize(acqf, q=q)


class GPThompsonSampling(FittedGPPolicy):
    r"""GP Thompson sampling with MLE hyperparameters; one sample path per batch slot.

    :math:`x_i = \arg\max_x \tilde f_i(x)`, :math:`\tilde f_i \sim f \mid \mathcal F_t`
    i.i.d., by :func:`~botorch_unknown_hypers.acquisition.thompson.thompson_maximizers`:
    exact joint draws on a pool, pathwise samples maximised in one batched L-BFGS-B on a box.
    """

    name = "mle-gp-ts"

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        model = self.fit_model(train_X, train_Y)
        self.n_candidates = 1
        self.selected = [self._label()] * q
        X, _ = thompson_maximizers(
            model, self.domain, q, self.generator, self.num_restarts, self.raw_samples, search=self.search
        )
        return X.detach()


__all__ = ["RandomPolicy", "FittedGPPolicy", "MLEGPUCB", "GPThompsonSampling"]
