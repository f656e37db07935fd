r"""K independent maximisations on one box in one batched multi-start L-BFGS-B run.

Balancing and elimination rules need every candidate's own maximiser
:math:`x_k = \arg\max_x v_k(x)` of K objectives (K candidates' UCBs, K posterior sample
paths). A Python loop of K ``optimize_acqf`` calls pays K times the Python, GPyTorch and
kernel-launch overhead; optimising :math:`\max_k v_k` or one joint L-BFGS-B over all restarts
is worse: the max makes the landscape harder and the slowest restart holds the others back
(measured at K = 28, d = 5, n = 260: 4.5 s for the loop, 8.4 s for the max, 34 s joint).

:func:`maximize_per_candidate` instead runs the K problems through BoTorch's *parallel*
L-BFGS-B (``gen_candidates_scipy`` with ``use_parallel_mode``): every (candidate, restart)
pair is an independent problem in one batch and converged problems drop out. Because the
optimiser evaluates only the unconverged subset, each point carries its candidate index in
an extra input column held fixed (``fixed_features``); :class:`IndexedCandidateValues`
scatters the points into a ``K x r`` grid, evaluates all candidates in one batched call and
gathers the values back.

Initial conditions follow ``optimize_acqf``: scrambled Sobol raw samples per candidate, then
Boltzmann sampling on each candidate's standardised raw values with the best raw point
always kept (:func:`select_restarts`: the draws of BoTorch's ``boltzmann_sample`` under the rule
of ``initialize_q_batch``, ``eta = 2``, computed on the values' device without a host read).

``search="torch"`` refines the same restarts with the batched projected L-BFGS of
:mod:`~botorch_unknown_hypers.acquisition.device_search` instead, on the objectives' device.

BoTorch's optimisers (``botorch.generation``, ``botorch.optim``, which load ``scipy.optimize``)
are imported by the functions that run them, so that importing the package does not load them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import (
    DEFAULT_SEARCH,
    check_search,
    grid_slots,
    maximize_batched,
    refine_indexed_batched,
    search_options,
)
from botorch_unknown_hypers.domains import sobol_points
from botorch_unknown_hypers.host import at_argmax, to_device
from botorch_unknown_hypers.rng import forked_rng

CandidateValues = Callable[[Tensor], Tensor]
r"""K objectives on one box: ``K x m x d`` points (candidate ``k`` at ``X[k]``) -> ``K x m`` values."""

DEFAULT_ETA = 2.0
r"""Boltzmann temperature of the restart selection (as ``optimize_acqf``)."""


def check_multistart(num_restarts: int, raw_samples: int) -> None:
    r"""``num_restarts >= 1`` and ``raw_samples >= num_restarts`` (as ``optimize_acqf`` needs)."""
    if not (
        isinstance(num_restarts, int)
        and isinstance(raw_samples, int)
        and not isinstance(num_restarts, bool)
        and not isinstance(raw_samples, bool)
        and num_restarts >= 1
        and raw_samples >= num_restarts
    ):
        raise ValueError(
            f"num_restarts must be an int >= 1 and raw_samples an int >= num_restarts, got "
            f"{num_restarts!r} and {raw_samples!r}."
        )


def split_options(options: dict[str, Any] | None) -> tuple[dict[str, Any], float]:
    r"""``gen_candidates_scipy`` options (``maxiter`` 200 by default, as ``optimize_acqf``) and
    the Boltzmann temperature ``eta`` taken out of them."""
    options = dict(options or {})
    eta = float(options.pop("eta", DEFAULT_ETA))
    options.setdefault("maxiter", 200)
    return options, eta


class IndexedCandidateValues(AcquisitionFunction):
    r"""Candidate ``X[..., -1]``'s objective at ``X[..., :-1]``; ``b x 1 x (d+1)`` -> ``b``.

    The points are scattered into a ``K x r`` grid (candidate ``k``'s points in its own slots),
    every candidate's objective is evaluated in one batched call of ``values``
    (``K x r x d`` -> ``K x r``) and the values are gathered back. When some candidates hold
    no point (their restarts have converged and dropped out of the batch) and ``values`` has a
    ``subset(rows)`` method (:class:`~botorch_unknown_hypers.acquisition.ucb.CandidateUCBValues`),
    only the candidates that hold points are evaluated, on the objectives of ``subset``
    (built once per set of rows): a candidate without points would cost a full triangular
    solve against its factor for padding.
    """

    def __init__(self, values: CandidateValues, num_candidates: int) -> None:
        super().__init__(model=None)
        self.values = values
        self.num_candidates = num_candidates
        self.subsets: dict[tuple[int, ...], CandidateValues] = {}

    def forward(self, X: Tensor) -> Tensor:
        points = X[..., 0, :-1]  # b x d
        idx = X[..., 0, -1].detach().round().long()  # b
        values, rows = self.values, self.num_candidates
        if hasattr(values, "subset"):
            present = torch.unique(idx)  # sorted
            if present.numel() < rows:
                key = tuple(present.tolist())
                if key not in self.subsets:
                    self.subsets[key] = values.subset(list(key))
                values, rows, idx = self.subsets[key], present.numel(), torch.searchsorted(present, idx)
        slot, counts = grid_slots(idx, rows)
        grid = points.new_zeros(rows, int(counts.max()), points.shape[-1])
        grid = grid.index_put((idx, slot), points)  # differentiable scatter
        return values(grid)[idx, slot]


class GridCandidateValues(AcquisitionFunction):
    r"""Objectives on a fixed ``(K * r) x 1 x d`` layout (candidate-major); the serial fallback."""

    def __init__(self, values: CandidateValues, num_candidates: int, restarts: int) -> None:
        super().__init__(model=None)
        self.values = values
        self.num_candidates = num_candidates
        self.restarts = restarts

    def forward(self, X: Tensor) -> Tensor:
        grid = X[..., 0, :].reshape(self.num_candidates, self.restarts, X.shape[-1])
        return self.values(grid).reshape(-1)


def select_restarts(values: Tensor, num: int, eta: float, seed: int | None) -> Tensor:
    r"""Per row of ``values`` (``K x m``), ``num`` restart indices (``K x num``) by the rule of
    BoTorch's ``initialize_q_batch``.

    ``num`` draws without replacement with weights :math:`w_j = \exp(\eta z_j)` of the row's
    standardised values :math:`z` (BoTorch's ``boltzmann_sample``, :math:`\eta` halved while a
    weight overflows); when the row's argmax is not among them it replaces the last draw, so the
    best raw point is always refined. ``torch.multinomial`` draws without replacement as
    :math:`\operatorname{top}_{num}(w_j / e_j)`, :math:`e_j \sim \mathrm{Exp}(1)` (the
    exponential form of the Gumbel-top-k trick, which samples the sequential law exactly); this is
    that computation without its host reads (``boltzmann_sample``'s overflow loop and
    ``multinomial``'s checks of the weights read four values per row, each a wait where the
    values live on a GPU; ``Tensor.std`` of one row reads its mean, ``torch.std_mean`` does not).
    Each row has its own :math:`z` and :math:`\eta`, and its :math:`e` are drawn as ``multinomial``
    draws a row's, from the CPU's global RNG, forked and seeded by ``seed`` (unseeded when
    ``None``): the draws are ``boltzmann_sample``'s (200 seeded cases in the tests) unless two ratios
    agree to the last digits, which the two standard deviations' orders of summation can change.
    The :math:`e` are copied to the values' device (no wait), so a GPU picks the restarts a CPU
    picks from the same values, with the same proviso. A row whose weights are not all finite
    (values with NaN or infinities, where ``multinomial`` would raise) draws uniformly.
    """
    values = values.detach()
    best = values.argmax(dim=-1)
    if num == 1:
        return best.unsqueeze(-1)
    rows, m = values.shape
    std = torch.std_mean(values, dim=-1, keepdim=True)[0]  # BoTorch's standardize, each row on its own
    z = (values - values.mean(dim=-1, keepdim=True)) / std.where(std >= 1e-9, torch.ones_like(std))
    halved = eta * torch.full((64,), 0.5, dtype=values.dtype, device=values.device).pow(torch.arange(64, device=values.device))
    ends = (z.amax(dim=-1, keepdim=True), z.amin(dim=-1, keepdim=True))  # the weights' extremes, either sign of eta
    finite = torch.isfinite(torch.exp(halved * ends[0])) & torch.isfinite(torch.exp(halved * ends[1]))  # K x 64
    weights = torch.exp(halved[finite.int().argmax(dim=-1, keepdim=True)] * z)  # the first finite eta / 2^i, as the loop
    weights = torch.where(torch.isfinite(weights).all(dim=-1, keepdim=True), weights, torch.ones_like(weights))

    def draw() -> Tensor:  # one row at a time, as multinomial draws each row's
        return torch.stack([torch.empty(1, m, dtype=values.dtype).exponential_(1)[0] for _ in range(rows)])

    if seed is None:
        noise = draw()
    else:
        with forked_rng(seed):
            noise = draw()
    idx = (weights / to_device(noise, values)).topk(num, dim=-1).indices  # no wait for the device (host.to_device)
    missing = (idx != best.unsqueeze(-1)).all(dim=-1)
    idx[..., -1] = torch.where(missing, best, idx[..., -1])  # a mask index would wait for its size
    return idx


def reasons_against_parallel(options: dict[str, Any]) -> list[str]:
    r"""Why BoTorch's parallel L-BFGS-B cannot run with ``options`` (empty when it can)."""
    from botorch.generation.gen import get_reasons_against_fast_path

    return get_reasons_against_fast_path(method="L-BFGS-B", with_grad=True, minimize_options=options, timeout_sec=None)


def raw_values(values: CandidateValues, raw: Tensor, chunk: int) -> Tensor:
    r"""``K x m`` objectives of ``K x m x d`` raw points, ``chunk`` points per candidate and call."""
    with torch.no_grad():
        return torch.cat([values(part) for part in raw.split(chunk, dim=1)], dim=1)


def boltzmann_starts(values: CandidateValues, raw: Tensor, num: int, eta: float, seed: int | None, chunk: int) -> Tensor:
    r"""The ``K x num x d`` restarts among ``K x m x d`` raw points: each candidate's raw points
    scored (``chunk`` per call), then :func:`select_restarts` on each row."""
    idx = select_restarts(raw_values(values, raw, chunk), num, eta, seed)
    return torch.gather(raw, 1, idx.unsqueeze(-1).expand(-1, -1, raw.shape[-1]))


def refine_indexed(
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
    from botorch.generation.gen import gen_candidates_scipy

    dim = bounds.shape[-1]
    X_opt, opt_values = gen_candidates_scipy(
        initial_conditions=torch.cat([starts, cand.unsqueeze(-1)], dim=-1).unsqueeze(-2),
        acquisition_function=IndexedCandidateValues(values, num_candidates),
        lower_bounds=torch.cat([bounds[0], bounds.new_zeros(1)]),
        upper_bounds=torch.cat([bounds[1], bounds.new_full((1,), num_candidates - 1)]),
        options=options,
        fixed_features={dim: cand},
        use_parallel_mode=True,
    )
    return X_opt[..., 0, :dim], opt_values


def refine(
    values: CandidateValues,
    num_candidates: int,
    bounds: Tensor,
    starts: Tensor,
    cand: Tensor,
    options: dict[str, Any],
    search: str = DEFAULT_SEARCH,
    width: int | None = None,
) -> tuple[Tensor, Tensor]:
    r""":func:`refine_indexed` (``search="scipy"``) or the device search
    (:func:`~botorch_unknown_hypers.acquisition.device_search.refine_indexed_batched`,
    ``search="torch"``, with the most starts on one candidate, ``width``, when the caller holds it)
    from the same ``m x d`` starts; the ``m x d`` optima and ``m`` values."""
    if check_search(search) == "torch":
        return refine_indexed_batched(values, num_candidates, bounds, starts, cand, options, width)
    return refine_indexed(values, num_candidates, bounds, starts, cand, options)


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
    search: str = DEFAULT_SEARCH,
) -> tuple[Tensor, Tensor]:
    r"""Maximise K objectives over one box in one batched L-BFGS-B run.

    Candidate ``k`` gets its own scrambled Sobol raw samples, its own Boltzmann-selected
    restarts (the best raw point always kept) and its own L-BFGS-B problems; all
    ``K x num_restarts`` problems run as one batch of BoTorch's parallel L-BFGS-B, the
    candidate index travelling with each start as a fixed extra input column.

    Args:
        values: The K objectives, ``K x m x d`` points (candidate ``k`` at ``X[k]``)
            -> ``K x m`` values, differentiable in the points (a :data:`CandidateValues`).
        num_candidates: K.
        bounds: ``2 x d`` box, on the objectives' device and dtype.
        num_restarts: Restarts per candidate (as ``optimize_acqf``).
        raw_samples: Sobol raw samples per candidate (as ``optimize_acqf``).
        options: Options for ``gen_candidates_scipy`` (``maxiter`` defaults to 200);
            ``eta`` sets the Boltzmann temperature (default 2).
        seed: Seed of the Sobol raw samples and of the restart selection.
        chunk: Raw points per candidate and call of ``values`` (default: all at once).
        extra_starts: Optional ``e x d`` points added as L-BFGS-B starts of every candidate
            (e.g. the posterior-mean maximiser), on top of the ``num_restarts``.
        search: The refinement of the restarts: ``"scipy"`` (BoTorch's parallel L-BFGS-B on
            the host) or ``"torch"`` (the batched projected L-BFGS of
            :func:`~botorch_unknown_hypers.acquisition.device_search.maximize_batched` on the
            objectives' device; ``options`` then takes its keys, ``maxiter`` included). The raw
            samples and the restarts are the same for both.

    Returns:
        ``(X, values)``: the ``K x d`` maximisers and their ``K`` values.
    """
    check_multistart(num_restarts, raw_samples)
    check_search(search)
    options, eta = split_options(options)
    if search == "torch":
        search_options(options)  # refuse SciPy-only keys before any work
    num, dim = num_candidates, bounds.shape[-1]
    # Raw samples: candidate k gets its own scrambled Sobol set.
    raw = sobol_points(bounds, raw_samples, seed, batch=num).transpose(0, 1)  # raw x K x d -> K x raw x d
    starts = boltzmann_starts(values, raw, num_restarts, eta, seed, raw_samples if chunk is None else chunk)  # K x R x d
    if extra_starts is not None:
        if extra_starts.ndim != 2 or extra_starts.shape[-1] != dim:
            raise ValueError(f"extra_starts must be e x {dim}, got shape {tuple(extra_starts.shape)}.")
        extra = torch.maximum(torch.minimum(extra_starts.to(starts), bounds[1]), bounds[0])
        starts = torch.cat([starts, extra.unsqueeze(0).expand(num, -1, -1)], dim=1)  # K x (R + e) x d
        num_restarts = starts.shape[1]
    if search == "torch":
        X_opt, opt_values = maximize_batched(values, bounds, starts, options)
    elif not (reasons := reasons_against_parallel(options)):
        cand_index = torch.arange(num, device=bounds.device, dtype=bounds.dtype).repeat_interleave(num_restarts)
        X_opt, opt_values = refine_indexed(values, num, bounds, starts.reshape(-1, dim), cand_index, options)
    else:
        # BoTorch's batched L-BFGS-B is unavailable (e.g. an untested SciPy): one joint
        # L-BFGS-B over all K x r problems instead, correct but slower.
        warnings.warn(
            "maximize_per_candidate: parallel L-BFGS-B unavailable (" + "; ".join(reasons)
            + "); using one joint L-BFGS-B problem instead.",
            RuntimeWarning,
            stacklevel=2,
        )
        from botorch.generation.gen import gen_candidates_scipy

        X_opt, opt_values = gen_candidates_scipy(
            initial_conditions=starts.reshape(-1, 1, dim),
            acquisition_function=GridCandidateValues(values, num, num_restarts),
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


def maximize_acquisition(
    acqf: AcquisitionFunction,
    bounds: Tensor,
    q: int = 1,
    num_restarts: int = 10,
    raw_samples: int = 512,
    seed: int | None = None,
    starts: Tensor | None = None,
    best_only: bool = True,
    search: str = DEFAULT_SEARCH,
    search_options: dict | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Multi-start maximisation of one BoTorch acquisition function (``b x q x d -> b``) over the
    box ``bounds``: BoTorch's ``optimize_acqf`` (``search="scipy"``) or the device search.

    Both draw ``raw_samples`` scrambled Sobol points with ``seed``, keep ``num_restarts`` of
    them by Boltzmann sampling (the best always kept; none when ``num_restarts`` is 0, then
    ``starts`` must be given), add the ``e x q x d`` ``starts``, and refine every restart; a batch
    with ``q > 1`` is filled greedily, one point at a time, each conditioned on the earlier ones
    through ``acqf.set_X_pending`` (``optimize_acqf``'s ``sequential=True``). ``search="torch"``
    refines the ``q = 1`` restarts as one problem each of
    :func:`~botorch_unknown_hypers.acquisition.device_search.maximize_batched` (``K = 1``), on
    ``acqf``'s device, with no host round trip inside the refinement.

    Args:
        acqf: The acquisition function.
        bounds: ``2 x d`` box.
        q: Number of points.
        num_restarts, raw_samples: Raw-sample restarts (``num_restarts >= 0``).
        seed: Seed of the raw samples and of the restart selection.
        starts: Optional ``e x q x d`` extra starts.
        best_only: Return only the best restart (``q x d`` and its value) instead of every
            restart (``r x q x d`` and ``r`` values); ``q > 1`` needs ``True``.
        search: ``"scipy"`` or ``"torch"``.
        search_options: The device search's options
            (:func:`~botorch_unknown_hypers.acquisition.device_search.maximize_batched`);
            ``search="torch"`` only.

    Returns:
        ``(X, values)``, detached, as ``optimize_acqf`` returns them.
    """
    if check_search(search) == "scipy":
        from botorch.optim import optimize_acqf

        X, values = optimize_acqf(
            acqf,
            bounds=bounds,
            q=q,
            num_restarts=num_restarts + (0 if starts is None else starts.shape[0]),
            raw_samples=raw_samples,
            sequential=q > 1,
            options={"seed": seed},
            batch_initial_conditions=starts,
            return_best_only=best_only,
        )
        return X.detach(), values.detach()
    if q > 1:
        if starts is not None or not best_only:
            raise ValueError(f"q: a batch of q = {q} points is filled greedily, with best_only=True and no starts.")
        base, points, slot_values = acqf.X_pending, [], []
        try:
            for _ in range(q):  # the same seed for every slot, as optimize_acqf's sequential mode
                x, value = maximize_acquisition(acqf, bounds, 1, num_restarts, raw_samples, seed, None, True, search, search_options)
                points.append(x)
                slot_values.append(value)
                chosen = torch.cat(points, dim=-2)
                acqf.set_X_pending(chosen if base is None else torch.cat([base, chosen], dim=-2))
        finally:
            acqf.set_X_pending(base)
        return torch.cat(points, dim=-2), torch.stack(slot_values)
    dim = bounds.shape[-1]

    def values(X: Tensor) -> Tensor:  # 1 x m x d -> 1 x m, each point its own q = 1 batch
        return acqf(X.reshape(-1, 1, dim)).reshape(1, -1)

    parts = [] if starts is None else [starts.reshape(-1, dim).to(bounds)]
    if num_restarts > 0:
        raw = sobol_points(bounds, raw_samples, seed).reshape(1, raw_samples, dim)
        parts.insert(0, boltzmann_starts(values, raw, num_restarts, DEFAULT_ETA, seed, raw_samples)[0])
    if not parts:
        raise ValueError("num_restarts: 0 restarts and no starts leave nothing to refine.")
    X, opt_values = maximize_batched(values, bounds, torch.cat(parts).unsqueeze(0), search_options)
    X, opt_values = X[0].unsqueeze(-2), opt_values[0]  # r x 1 x d, r
    if not best_only:
        return X, opt_values
    _, value, x = at_argmax(opt_values, X)
    return x[0], value[0]
