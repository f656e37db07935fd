r"""Baselines: random search, GP-UCB with MLE hyperparameters, and GP Thompson sampling.

``mle-gp-ucb`` is the MLE baseline of the length-scale balancing paper
(Ziomek et al. 2024, Sec. 5 and the note's Sec. 2.2): at every round a fresh
BoTorch ``SingleTaskGP`` is fitted to all data with ``fit_gpytorch_mll``
(multi-start-free L-BFGS-B, BoTorch's default), then

.. math::

    x_t = \arg\max_x \mu_{t-1}(x) + \beta_t \sigma_{t-1}(x).

Defaults follow the authors' code (note Sec. 1.6 and 2.2): isotropic Matern-5/2,
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

import math
from typing import Any

import torch
from botorch.acquisition import UpperConfidenceBound, qUpperConfidenceBound
from botorch.acquisition.thompson_sampling import PathwiseThompsonSampling
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize, Standardize
from botorch.optim import optimize_acqf
from gpytorch.means import ZeroMean
from gpytorch.mlls import ExactMarginalLogLikelihood
from torch import Tensor

from botorch_unknown_hypers.kernels import KERNELS
from botorch_unknown_hypers.models.fixed_gp import scaled_kernel_and_likelihood
from botorch_unknown_hypers.confidence import frequentist_beta, information_gain_of_model
from botorch_unknown_hypers.policies.base import Policy, check_optimizer_options
from botorch_unknown_hypers.domains import BoxDomain, Domain, FiniteDomain


def check_gp_options(kernel: str, noise: float, num_restarts: int, raw_samples: int) -> None:
    r"""Validate the GP / acquisition-optimisation options shared by the UCB policies."""
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {kernel!r}.")
    if not noise > 0:
        raise ValueError(f"noise must be positive, got {noise}.")
    check_optimizer_options(num_restarts, raw_samples)


def fit_single_task_gp(
    train_X: Tensor,
    train_Y: Tensor,
    bounds: Tensor,
    kernel: str = "matern52",
    ard: bool = False,
    noise: float = 1e-4,
    fit_outputscale: bool = False,
    fit_noise: bool = False,
) -> SingleTaskGP:
    r"""A fresh ``SingleTaskGP`` fitted by maximum marginal likelihood with ``fit_gpytorch_mll``.

    As the length-scale paper's code: ``ScaleKernel(kernel)`` with output scale 1
    and noise variance ``noise`` (each trained only if asked), zero mean, inputs
    scaled to the unit cube by ``bounds`` (``Normalize``), outputs standardised
    (``Standardize``), GPyTorch's default initial length scale softplus(0) = 0.693.

    Args:
        train_X: ``n x d`` inputs; train_Y: ``n x 1`` targets; bounds: ``2 x d`` box.

    Returns:
        The fitted model in eval mode.
    """
    d = train_X.shape[-1]
    covar, likelihood = scaled_kernel_and_likelihood(KERNELS[kernel], d if ard else None)
    covar.outputscale = 1.0
    likelihood.noise = noise
    covar.raw_outputscale.requires_grad_(fit_outputscale)
    likelihood.noise_covar.raw_noise.requires_grad_(fit_noise)
    model = SingleTaskGP(
        train_X,
        train_Y,
        likelihood=likelihood,
        covar_module=covar,
        mean_module=ZeroMean(),
        input_transform=Normalize(d=d, bounds=bounds),
        outcome_transform=Standardize(m=1),
    ).to(train_X)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    return model.eval()


class RandomPolicy(Policy):
    r"""Uniform random search: uniform on a box, uniform with replacement on a pool."""

    name = "random"

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        return self.domain.sample_uniform(q, self.generator)


class FittedGPPolicy(Policy):
    r"""Shared machinery of the baselines that refit a ``SingleTaskGP`` every round."""

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
    ) -> None:
        super().__init__(domain, seed=seed, device=device, dtype=dtype)
        check_gp_options(kernel, noise, num_restarts, raw_samples)
        self.kernel = kernel
        self.ard = ard
        self.fit_outputscale = fit_outputscale
        self.fit_noise = fit_noise
        self.noise = noise
        self.num_restarts = num_restarts
        self.raw_samples = raw_samples
        self.lengthscale: list[float] = []

    def fit_model(self, train_X: Tensor, train_Y: Tensor) -> SingleTaskGP:
        r"""A ``SingleTaskGP`` fitted by maximum marginal likelihood on all data (see
        :func:`fit_single_task_gp`); records the fitted length scale."""
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
        self.lengthscale = model.covar_module.base_kernel.lengthscale.detach().flatten().tolist()
        return model

    def _label(self) -> str:
        return ";".join(f"{v:.6g}" for v in self.lengthscale)

    def _extra_state(self) -> dict[str, Any]:
        return {"lengthscale": list(self.lengthscale)}

    def _check_extra_state(self, extra: dict[str, Any]) -> None:
        if not isinstance(extra, dict):
            raise ValueError("state['extra'] must be a dict.")
        ls = extra.get("lengthscale", [])
        if not isinstance(ls, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0 for v in ls
        ):
            raise ValueError("state['extra']['lengthscale'] must be a list of positive finite numbers.")

    def _load_extra_state(self, extra: dict[str, Any]) -> None:
        self.lengthscale = [float(v) for v in extra.get("lengthscale", [])]


class MLEGPUCB(FittedGPPolicy):
    r"""GP-UCB with the GP refitted by maximum likelihood every round.

    Args (beyond :class:`FittedGPPolicy`'s):
        beta: A fixed multiplier of :math:`\sigma`, or ``None`` (default) for the
            frequentist width with ``B``, ``R`` and ``delta``.
        B, R, delta: Constants of the frequentist width (authors' code: 1, 1e-4, 0.01);
            ``delta`` enters as ``delta / 2`` (``ln(2/delta)``), as in the note.

    For ``q > 1`` the batch is built with BoTorch's ``qUpperConfidenceBound`` and
    sequential greedy optimisation (box) or ``optimize_acqf_discrete`` (pool).
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
        if beta is not None and not beta >= 0:
            raise ValueError(f"beta must be non-negative, got {beta}.")
        if not 0 < delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {delta}.")
        self.beta, self.B, self.R, self.delta = beta, B, R, delta
        self.last_beta = float("nan")

    def current_beta(self, model: SingleTaskGP) -> float:
        if self.beta is not None:
            return float(self.beta)
        info = information_gain_of_model(model)
        return float(frequentist_beta(info, B=self.B, R=self.R, delta=self.delta / 2))

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        model = self.fit_model(train_X, train_Y)
        beta = self.current_beta(model)
        self.last_beta = beta
        self.n_candidates = 1
        self.selected = [self._label()] * q
        if q == 1:
            acqf = UpperConfidenceBound(model, beta=beta**2)  # BoTorch squares: mu + sqrt(b) sigma
        else:
            with self.seeded():
                acqf = qUpperConfidenceBound(model, beta=beta**2)
        return self.maximize(acqf, q=q)


class GPThompsonSampling(FittedGPPolicy):
    r"""GP Thompson sampling with MLE hyperparameters; one sample path per batch slot."""

    name = "mle-gp-ts"

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        model = self.fit_model(train_X, train_Y)
        self.n_candidates = 1
        self.selected = [self._label()] * q
        with self.seeded():
            if isinstance(self.domain, FiniteDomain):
                points = self.domain.points
                posterior = model.posterior(points)
                samples = posterior.rsample(torch.Size([q])).squeeze(-1)  # q x N
                return points[samples.argmax(dim=-1)]
            acqf = PathwiseThompsonSampling(model)
            X, _ = optimize_acqf(
                acqf,
                bounds=self.domain.bounds,
                q=q,
                num_restarts=self.num_restarts,
                raw_samples=self.raw_samples,
                options={"seed": self.next_seed()},
            )
        return X.detach()


__all__ = ["RandomPolicy", "FittedGPPolicy", "MLEGPUCB", "GPThompsonSampling", "BoxDomain"]
