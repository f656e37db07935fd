r"""Each candidate's own UCB maximiser, in one batched optimisation.

Balancing and elimination rules need, for every candidate :math:`k`, the point

.. math::

    x_k = \arg\max_{x \in \mathcal{X}} \mu_k(x) + \beta_k \sigma_k(x).

A Python loop of K ``optimize_acqf`` calls pays K times the Python, GPyTorch and
kernel-launch overhead. Optimising :math:`\max_k \mathrm{UCB}_k` or one joint
L-BFGS-B over all restarts is worse still: the max makes the landscape harder
and the slowest restart holds back the others (measured in ``DESIGN.md``).

:func:`optimize_ucb_per_candidate` instead runs K independent problems, each with
its own raw samples and restarts, through BoTorch's *parallel* L-BFGS-B
(``gen_candidates_scipy`` with ``use_parallel_mode``): every (candidate,
restart) pair is an independent problem in one batch, and converged problems
drop out. Because the optimiser only evaluates the unconverged subset, each
point carries its candidate index in an extra input column held fixed through
``fixed_features``; :class:`_IndexedCandidateValues` scatters the points into a
``K x r`` grid (candidate ``k``'s points in its own ``q`` slots), evaluates
all candidates in one batched call and gathers the values back.

The engine, :func:`maximize_per_candidate`, takes any K objectives on one box
(:data:`CandidateValues`, ``K x m x d -> K x m``): the UCBs of a candidate model
here, K posterior sample paths in
:mod:`~botorch_unknown_hypers.acquisition.prior_sampling`.

Initial conditions follow ``optimize_acqf``: scrambled Sobol raw samples per
candidate, then Boltzmann sampling on the standardised acquisition values
(BoTorch's ``initialize_q_batch`` with ``eta = 2``, always keeping the best
raw point), vectorised over candidates.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.generation.gen import gen_candidates_scipy, get_reasons_against_fast_path
from botorch.utils.sampling import draw_sobol_samples
from torch import Tensor

from botorch_unknown_hypers.acquisition.ucb import as_beta
from botorch_unknown_hypers.models.candidate_gp import CandidateModel

CandidateValues = Callable[[Tensor], Tensor]
r"""K objectives on one box: ``K x m x d`` points (candidate ``k`` at ``X[k]``) -> ``K x m`` values."""

# Points per marginal posterior call when scoring raw samples (bounds memory to
# about K * chunk * n kernel entries).
_MAX_KERNEL_ENTRIES = 2**24


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
    return mean + beta.unsqueeze(-1) * variance.clamp_min(0).sqrt()


class _IndexedCandidateValues(AcquisitionFunction):
    r"""Candidate ``X[..., -1]``'s objective at ``X[..., :-1]``; ``b x 1 x (d+1)`` -> ``b``.

    The points are scattered into a ``K x r`` grid (candidate ``k``'s points in its
    own slots), every candidate's objective is evaluated in one batched call of
    ``values`` (``K x r x d`` -> ``K x r``) and the values are gathered back.
    """

    def __init__(
        self, values: CandidateValues | None, num_candidates: int, model: CandidateModel | None = None
    ) -> None:
        super().__init__(model=model)
        self.values = values
        self.num_candidates = num_candidates

    def candidate_values(self, X: Tensor) -> Tensor:
        r"""``K x r x d`` -> ``K x r`` objectives (subclasses may override instead of passing ``values``)."""
        return self.values(X)

    def forward(self, X: Tensor) -> Tensor:
        points = X[..., 0, :-1]  # b x d
        idx = X[..., 0, -1].detach().round().long()  # b
        num = self.num_candidates
        counts = torch.bincount(idx, minlength=num)
        order = torch.argsort(idx, stable=True)
        first = torch.cumsum(counts, 0) - counts
        slot = torch.empty_like(idx)
        slot[order] = torch.arange(idx.numel(), device=idx.device) - first[idx[order]]
        width = int(counts.max())
        grid = points.new_zeros(num, width, points.shape[-1])
        grid = grid.index_put((idx, slot), points)  # differentiable scatter
        values = self.candidate_values(grid)  # K x width
        return values[idx, slot]


class _IndexedCandidateUCB(_IndexedCandidateValues):
    r"""UCB of candidate ``X[..., -1]`` at ``X[..., :-1]``; ``b x 1 x (d+1)`` -> ``b``."""

    def __init__(self, model: CandidateModel, beta: Tensor) -> None:
        super().__init__(None, model.num_candidates, model=model)
        self.register_buffer("beta", beta)

    def candidate_values(self, X: Tensor) -> Tensor:
        return candidate_ucb_at(self.model, self.beta, X)


class _GridCandidateValues(AcquisitionFunction):
    r"""Objectives on a fixed ``(K * r) x 1 x d`` layout (candidate-major); the serial fallback."""

    def __init__(self, values: CandidateValues, num_candidates: int, restarts: int) -> None:
        super().__init__(model=None)
        self.values = values
        self.num_candidates = num_candidates
        self.restarts = restarts

    def forward(self, X: Tensor) -> Tensor:
        grid = X[..., 0, :].reshape(self.num_candidates, self.restarts, X.shape[-1])
        return self.values(grid).reshape(-1)


def _boltzmann_select(values: Tensor, num: int, eta: float, generator: torch.Generator | None) -> Tensor:
    r"""Per row, ``num`` indices drawn without replacement with weights
    :math:`\exp(\eta z)` of the row-standardised values, the row's argmax always first."""
    best = values.argmax(dim=-1, keepdim=True)
    if num == 1:
        return best
    std = values.std(dim=-1, keepdim=True)
    z = (values - values.mean(dim=-1, keepdim=True)) / torch.where(std > 0, std, torch.ones_like(std))
    logits = (eta * z).scatter(-1, best, float("-inf"))
    # Subtracting the largest remaining logit keeps exp from overflowing for any eta
    # and dtype (multinomial normalises, so the distribution is unchanged); the floor
    # keeps every non-best weight positive so num - 1 distinct draws always exist.
    weights = torch.exp(logits - logits.max(dim=-1, keepdim=True).values)
    weights = weights.clamp_min(torch.finfo(weights.dtype).tiny).scatter(-1, best, 0.0)
    rest = torch.multinomial(weights, num - 1, replacement=False, generator=generator)
    return torch.cat([best, rest], dim=-1)


def _prepare(
    model: CandidateModel,
    beta: float | Tensor,
    bounds: Tensor,
    num_restarts: int,
    raw_samples: int,
    options: dict[str, Any] | None,
) -> tuple[Tensor, Tensor, Tensor, dict[str, Any], float]:
    r"""Validate the inputs of the batched optimisers; returns ``(like, bounds, beta, options, eta)``."""
    if num_restarts < 1 or raw_samples < num_restarts:
        raise ValueError(
            f"num_restarts must be >= 1 and raw_samples >= num_restarts, got "
            f"{num_restarts} and {raw_samples}."
        )
    like = model.raw_train_X
    bounds = torch.as_tensor(bounds).to(like)
    if bounds.shape != (2, like.shape[-1]) or (bounds[1] <= bounds[0]).any():
        raise ValueError(f"bounds must be 2 x {like.shape[-1]} with upper > lower.")
    beta_t = as_beta(beta, model.num_candidates, like)
    options = dict(options or {})
    eta = float(options.pop("eta", 2.0))
    options.setdefault("maxiter", 200)
    return like, bounds, beta_t, options, eta


def _reasons_against_parallel(options: dict[str, Any]) -> list[str]:
    return get_reasons_against_fast_path(
        method="L-BFGS-B", with_grad=True, minimize_options=options, timeout_sec=None
    )


def _ucb_chunk(model: CandidateModel) -> int:
    r"""Points per candidate and marginal posterior call (about ``2**24`` kernel entries)."""
    return max(1, _MAX_KERNEL_ENTRIES // max(1, model.num_candidates * model.raw_train_X.shape[0]))


def _raw_values(values: CandidateValues, raw: Tensor, chunk: int) -> Tensor:
    r"""``K x m`` objectives of ``K x m x d`` raw points, ``chunk`` points per candidate and call."""
    with torch.no_grad():
        return torch.cat([values(part) for part in raw.split(chunk, dim=1)], dim=1)


def _refine_indexed(
    values: CandidateValues,
    num_candidates: int,
    bounds: Tensor,
    starts: Tensor,
    cand: Tensor,
    options: dict[str, Any],
) -> tuple[Tensor, Tensor]:
    r"""Batched L-BFGS-B from ``m x d`` ``starts``, start ``i`` on candidate ``cand[i]`` (held fixed).

    Returns the ``m x d`` optima and their ``m`` values.
    """
    dim = bounds.shape[-1]
    X_opt, opt_values = gen_candidates_scipy(
        initial_conditions=torch.cat([starts, cand.unsqueeze(-1)], dim=-1).unsqueeze(-2),
        acquisition_function=_IndexedCandidateValues(values, num_candidates),
        lower_bounds=torch.cat([bounds[0], bounds.new_zeros(1)]),
        upper_bounds=torch.cat([bounds[1], bounds.new_full((1,), num_candidates - 1)]),
        options=options,
        fixed_features={dim: cand},
        use_parallel_mode=True,
    )
    return X_opt[..., 0, :dim], opt_values


def maximize_per_candidate(
    values: CandidateValues,
    num_candidates: int,
    bounds: Tensor,
    num_restarts: int = 10,
    raw_samples: int = 512,
    options: dict[str, Any] | None = None,
    seed: int | None = None,
    chunk: int | None = None,
    extra_starts: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Maximise K objectives over one box in one batched L-BFGS-B run.

    Candidate ``k`` gets its own scrambled Sobol raw samples, its own Boltzmann-selected
    restarts (the best raw point always kept) and its own L-BFGS-B problems; all
    ``K x num_restarts`` problems run as one batch of BoTorch's parallel L-BFGS-B, the
    candidate index travelling with each start as a fixed extra input column.

    Args:
        values: The K objectives, ``K x m x d`` points (candidate ``k`` at ``X[k]``)
            -> ``K x m`` values, differentiable in the points (a
            :data:`CandidateValues`, e.g. the UCBs of a candidate model or K sample paths).
        num_candidates: K.
        bounds: ``2 x d`` box, on the objectives' device and dtype.
        num_restarts: Restarts per candidate (as ``optimize_acqf``).
        raw_samples: Sobol raw samples per candidate (as ``optimize_acqf``).
        options: Options for ``gen_candidates_scipy`` (``maxiter`` defaults to 200,
            as in ``optimize_acqf``); ``eta`` sets the Boltzmann temperature (default 2).
        seed: Seed of the Sobol raw samples and of the restart selection.
        chunk: Raw points per candidate and call of ``values`` (default: all at once).
        extra_starts: Optional ``e x d`` points added as L-BFGS-B starts of every
            candidate (e.g. the posterior-mean maximiser), on top of the ``num_restarts``.

    Returns:
        ``(X, values)``: the ``K x d`` maximisers and their ``K`` values.
    """
    if num_restarts < 1 or raw_samples < num_restarts:
        raise ValueError(
            f"num_restarts must be >= 1 and raw_samples >= num_restarts, got "
            f"{num_restarts} and {raw_samples}."
        )
    options = dict(options or {})
    eta = float(options.pop("eta", 2.0))
    options.setdefault("maxiter", 200)
    num, dim = num_candidates, bounds.shape[-1]
    generator = None
    if seed is not None:
        generator = torch.Generator(device=bounds.device).manual_seed(seed)

    # Raw samples: candidate k gets its own scrambled Sobol set.
    raw = draw_sobol_samples(bounds=bounds, n=raw_samples, q=1, batch_shape=torch.Size([num]), seed=seed)
    raw = raw.squeeze(-2).transpose(0, 1)  # raw x K x 1 x d -> K x raw x d
    raw_values = _raw_values(values, raw, raw_samples if chunk is None else chunk)
    start_idx = _boltzmann_select(raw_values, num_restarts, eta, generator)  # K x R
    starts = torch.gather(raw, 1, start_idx.unsqueeze(-1).expand(-1, -1, dim))  # K x R x d
    if extra_starts is not None:
        if extra_starts.ndim != 2 or extra_starts.shape[-1] != dim:
            raise ValueError(f"extra_starts must be e x {dim}, got shape {tuple(extra_starts.shape)}.")
        extra = torch.maximum(torch.minimum(extra_starts.to(starts), bounds[1]), bounds[0])
        starts = torch.cat([starts, extra.unsqueeze(0).expand(num, -1, -1)], dim=1)  # K x (R + e) x d
        num_restarts = starts.shape[1]

    reasons = _reasons_against_parallel(options)
    if not reasons:
        cand_index = torch.arange(num, device=bounds.device, dtype=bounds.dtype).repeat_interleave(num_restarts)
        X_opt, opt_values = _refine_indexed(values, num, bounds, starts.reshape(-1, dim), cand_index, options)
    else:
        # BoTorch's batched L-BFGS-B is unavailable (e.g. an untested SciPy): fall back
        # to one joint L-BFGS-B over all K x r problems, correct but slower.
        warnings.warn(
            "maximize_per_candidate: parallel L-BFGS-B unavailable ("
            + "; ".join(reasons)
            + "); using one joint L-BFGS-B problem instead.",
            RuntimeWarning,
            stacklevel=2,
        )
        X_opt, opt_values = gen_candidates_scipy(
            initial_conditions=starts.reshape(-1, 1, dim),
            acquisition_function=_GridCandidateValues(values, num, num_restarts),
            lower_bounds=bounds[0],
            upper_bounds=bounds[1],
            options=options,
            use_parallel_mode=False,
        )
        X_opt = X_opt[..., 0, :]
    X_opt = X_opt.reshape(num, num_restarts, dim)
    opt_values = opt_values.reshape(num, num_restarts)
    best = opt_values.argmax(dim=-1)
    ar = torch.arange(num, device=best.device)
    return X_opt[ar, best].detach(), opt_values[ar, best].detach()


def optimize_ucb_per_candidate(
    model: CandidateModel,
    beta: float | Tensor,
    bounds: Tensor,
    num_restarts: int = 10,
    raw_samples: int = 512,
    options: dict[str, Any] | None = None,
    seed: int | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Maximise every candidate's own UCB in one batched L-BFGS-B run.

    Args:
        model: A K-wide candidate model.
        beta: Scalar or ``K``-dim multipliers :math:`\beta_k`.
        bounds: ``2 x d`` box.
        num_restarts: Restarts per candidate (as ``optimize_acqf``).
        raw_samples: Sobol raw samples per candidate (as ``optimize_acqf``).
        options: Options for ``gen_candidates_scipy`` (``maxiter`` defaults to 200,
            as in ``optimize_acqf``); ``eta`` sets the Boltzmann temperature.
        seed: Seed of the Sobol raw samples and of the restart selection.

    Returns:
        ``(X, values)``: the ``K x d`` maximisers and their ``K`` UCB values.

    Example:
        >>> X_best, ucb_best = optimize_ucb_per_candidate(model, beta, bounds)
    """
    _, bounds, beta_t, options, eta = _prepare(model, beta, bounds, num_restarts, raw_samples, options)
    return maximize_per_candidate(
        partial(candidate_ucb_at, model, beta_t),
        model.num_candidates,
        bounds,
        num_restarts,
        raw_samples,
        {**options, "eta": eta},
        seed,
        chunk=_ucb_chunk(model),
    )


def maximize_over_pool(values: Tensor) -> tuple[Tensor, Tensor]:
    r"""Argmax per candidate of ``K x N`` values on a finite pool; returns (indices, values)."""
    best, idx = values.max(dim=-1)
    return idx, best


def optimize_ucb_joint(
    model: CandidateModel,
    beta: float | Tensor,
    bounds: Tensor,
    num_restarts: int = 10,
    raw_samples: int = 512,
    options: dict[str, Any] | None = None,
    seed: int | None = None,
) -> tuple[Tensor, int, Tensor]:
    r"""Joint maximiser :math:`(x, k) = \arg\max_{x, k} \mu_k(x) + \beta_k\sigma_k(x)`.

    The "doubly optimistic" argmax of hyperparameter elimination (Ziomek et al.,
    Alg. 1 line 7) as one multi-start problem on :math:`X \times \{1..K\}`: all K
    candidates are evaluated at ``raw_samples`` shared Sobol points (one batched
    call), ``num_restarts`` (point, candidate) pairs are drawn from the ``K x raw``
    values (Boltzmann, the best always kept) and refined by one batched L-BFGS-B
    with the candidate index held fixed. The cost is almost flat in K, unlike
    maximising every candidate separately (:func:`optimize_ucb_per_candidate`),
    which this falls back to when BoTorch's parallel L-BFGS-B is unavailable.

    Returns:
        ``(x, k, value)``: the ``d``-dim maximiser, its candidate index and the UCB value.
    """
    like, bounds, beta_t, options, eta = _prepare(model, beta, bounds, num_restarts, raw_samples, options)
    num = model.num_candidates
    if _reasons_against_parallel(options):
        X_k, values_k = optimize_ucb_per_candidate(
            model, beta_t, bounds, num_restarts, raw_samples, {**options, "eta": eta}, seed
        )
        k = int(values_k.argmax())
        return X_k[k], k, values_k[k]
    generator = None if seed is None else torch.Generator(device=like.device).manual_seed(seed)
    raw = draw_sobol_samples(bounds=bounds, n=raw_samples, q=1, seed=seed).squeeze(-2)  # raw x d
    ucb = partial(candidate_ucb_at, model, beta_t)  # K x m x d -> K x m
    raw_values = _raw_values(ucb, raw.expand(num, *raw.shape), _ucb_chunk(model))  # K x raw
    flat = _boltzmann_select(raw_values.reshape(1, -1), num_restarts, eta, generator)[0]
    cand = torch.div(flat, raw_samples, rounding_mode="floor")
    X_opt, values = _refine_indexed(ucb, num, bounds, raw[flat % raw_samples], cand.to(like), options)
    best = int(values.argmax())
    return X_opt[best].detach(), int(cand[best]), values[best].detach()
