r"""Selection over (point, prior) pairs for prior selection, on arms or on a box.

The prior-selection rules (Sandberg & Haghir Chehreghani) keep K candidate GP priors, all
conditioned on all data, in one model: a
:class:`~botorch_unknown_hypers.models.tabular.TabularPriorGP` over a pool of arms or a
:class:`~botorch_unknown_hypers.models.box_priors.BoxPriors` on a box. Their selections:

- :func:`thompson_prior_argmax` (PE-GP-TS Alg. 1 lines 3-4 over the active priors; HP-GP-TS
  Alg. 2 lines 3-4 over the one sampled prior): one **independent** posterior sample
  :math:`\tilde f_p` per prior and :math:`(x_t, p_t) = \arg\max_{(x, p)} \tilde f_p(x)`. On arms a
  sample is a joint draw over all arms (one batched pathwise call; the consecutive block of
  priors from the first to the last requested one is drawn, as a view, and the others
  discarded); on a box it is a pathwise sample *path* per prior, all maximised by one batched
  multi-start L-BFGS-B (before any data: the priors' own paths);
- :func:`ucb_prior_argmax` (PE-GP-UCB): the doubly optimistic
  :math:`\arg\max_{(x, p)} \mu_{t,p}(x) + \sqrt{\beta_t}\,\sigma_{t,p}(x)` with the package's one
  UCB formula; exhaustive on arms, :func:`~botorch_unknown_hypers.acquisition.optimize.optimize_ucb_joint`
  on a box (before any data: every prior's prior UCB maximised on its own).

On a box every maximisation refines its restarts with ``search``: SciPy's L-BFGS-B
(``"scipy"``, the default) or the device search (``"torch"``).
Exact ties of a joint argmax are broken uniformly at random with the rule's generator (the UCB
at :math:`t = 1`, where every stationary prior has :math:`\sigma = 1` at every arm, is all ties).
All randomness comes from the caller's generator.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import DEFAULT_SEARCH, LATE_CHECKS, check_search
from botorch_unknown_hypers.acquisition.multistart import maximize_per_candidate
from botorch_unknown_hypers.acquisition.optimize import near, optimize_ucb_joint, random_argmax, stack_points
from botorch_unknown_hypers.acquisition.prior_sampling import (
    draw_candidate_prior_paths,
    path_chunk,
    sample_candidate_maxima,
)
from botorch_unknown_hypers.confidence import upper_confidence_bound
from botorch_unknown_hypers.host import host_values
from botorch_unknown_hypers.models.box_priors import BoxPriors
from botorch_unknown_hypers.models.prior_model import PriorModel
from botorch_unknown_hypers.rng import draw_seed, forked_rng


def sample_generator(generator: torch.Generator, device: torch.device) -> torch.Generator:
    r"""``generator`` itself on the CPU; on another device a device generator seeded from it."""
    if device.type == "cpu":
        return generator
    return torch.Generator(device=device).manual_seed(draw_seed(generator))


def _box_path_maxima(
    model: BoxPriors,
    priors: Sequence[int],
    generator: torch.Generator,
    num_restarts: int,
    raw_samples: int,
    num_features: int,
    search: str,
) -> tuple[Tensor, Tensor]:
    r"""One independent posterior path per prior in ``priors``, each maximised on the box
    (restarts refined by ``search``)."""
    bounds = model.bounds
    gp = model.candidate_gp(priors)
    if gp is not None:
        options = LATE_CHECKS if search == "torch" else None
        return sample_candidate_maxima(
            gp, model.domain, num_restarts, raw_samples, num_features, options, seed=draw_seed(generator), search=search
        )
    with forked_rng(draw_seed(generator), bounds.device):  # no data yet: the priors' own paths
        candidates = model.candidates.subset(list(priors))
        paths = draw_candidate_prior_paths(candidates, model.dim, bounds, model.input_transform(), num_features)
    chunk = path_chunk(len(priors), num_features, 0)
    return maximize_per_candidate(
        paths, len(priors), bounds, num_restarts, raw_samples, seed=draw_seed(generator), chunk=chunk, search=search
    )


def thompson_prior_argmax(
    model: PriorModel,
    priors: Sequence[int],
    generator: torch.Generator,
    num_restarts: int = 10,
    raw_samples: int = 512,
    num_features: int = 1024,
    search: str = DEFAULT_SEARCH,
) -> tuple[Tensor, int]:
    r"""The best (point, prior) pair of one independent posterior sample per prior in ``priors``.

    Args:
        model: The priors and data.
        priors: The priors to sample (ascending model indices).
        generator: The rule's CPU generator.
        num_restarts, raw_samples, num_features: Box only: multi-start settings of the path
            maximisations and random Fourier features per path.
        search: Box only: the refinement of the path maximisations' restarts, ``"scipy"``
            (L-BFGS-B on the host) or ``"torch"`` (the device search); checked on arms too.

    Returns:
        ``(x, local)``: the ``1 x d`` point and the position of its prior in ``priors``.
    """
    X, (local,), _ = thompson_prior_batch(model, [priors], generator, num_restarts, raw_samples, num_features, search=search)
    return X, local


def thompson_prior_batch(
    model: PriorModel,
    slots: Sequence[Sequence[int]],
    generator: torch.Generator,
    num_restarts: int = 10,
    raw_samples: int = 512,
    num_features: int = 1024,
    exclude: Tensor | None = None,
    search: str = DEFAULT_SEARCH,
) -> tuple[Tensor, list[int], list[list[float]] | None]:
    r"""One point per slot: slot :math:`j`'s best (point, prior) pair over independent posterior
    samples of the priors in ``slots[j]``.

    Every (slot, prior) pair gets its own sample, all drawn in one batched call (on a pool
    ``q`` joint samples over the arms per prior; on a box one pathwise sample per pair, maximised
    in one batched L-BFGS-B). Slot :math:`j` takes no point within
    :data:`~botorch_unknown_hypers.acquisition.optimize.EXCLUDE_TOL` of ``exclude`` (pending
    points) or of an earlier slot: on a pool those arms are masked (``ValueError`` if none is
    left); on a box the best remaining path maximum is taken, or a uniform point if every one is
    excluded. Exact ties are broken at random with ``generator``. One slot with nothing excluded
    is :func:`thompson_prior_argmax`.

    Args:
        model: The priors and data.
        slots: Per slot, the priors to sample (ascending model indices).
        generator: The rule's CPU generator.
        num_restarts, raw_samples, num_features: Box only: multi-start settings of the path
            maximisations and random Fourier features per path.
        exclude: Optional ``e x d`` pending points.
        search: Box only: ``"scipy"`` or ``"torch"``, the refinement of the path maximisations'
            restarts (:func:`~botorch_unknown_hypers.acquisition.multistart.maximize_per_candidate`);
            checked on arms too.

    Returns:
        ``(X, locals, rows)``: the ``q x d`` points, per slot the position of its prior in
        ``slots[j]``, and on a box the points as Python floats, copied with the path maxima's
        values (``None`` on a pool, or when a slot took a uniform point).
    """
    check_search(search)
    chosen: list[Tensor] = []
    locals_: list[int] = []
    if isinstance(model, BoxPriors):
        flat = [p for slot in slots for p in slot]
        X_best, values = _box_path_maxima(model, flat, generator, num_restarts, raw_samples, num_features, search)
        rows: list[list[float]] | None = []
        d = X_best.shape[-1]
        for X_s, v_s in zip(X_best.split([len(s) for s in slots]), values.split([len(s) for s in slots])):
            # one read: the values with the pending and chosen points masked, and the points
            host, points = host_values(v_s.masked_fill(near(X_s, stack_points(exclude, *chosen)), -math.inf), X_s)
            if all(v == -math.inf for v in host):  # every path maximum is taken: a uniform point
                chosen.append(model.domain.sample_uniform(1, generator))
                locals_.append(int(torch.randint(len(host), (1,), generator=generator)))
                rows = None
                continue
            local = random_argmax(host, generator)
            chosen.append(X_s[local : local + 1])
            locals_.append(local)
            if rows is not None:
                rows.append(points[local * d : (local + 1) * d])
        return torch.cat(chosen), locals_, rows
    flat = [p for slot in slots for p in slot]
    span = range(min(flat), max(flat) + 1)  # a view of the model's factors
    gen = sample_generator(generator, model.priors.means.device)
    samples = model.sample(len(slots), generator=gen, prior_indices=span)  # q x |span| x N
    skipped = torch.tensor([[p not in set(slot) for p in span] for slot in slots], device=samples.device)
    samples = samples.masked_fill(skipped.unsqueeze(-1), -math.inf)  # each slot sees its own priors only
    arms = model.priors.arms
    taken = near(arms, exclude)  # N: arms pending, then also those of earlier slots
    for j, slot in enumerate(slots):
        values = samples[j].masked_fill(taken.unsqueeze(0), -math.inf)
        if bool(torch.isneginf(values).all()):
            raise ValueError("exclude: every pool point is pending or already in the batch.")
        row, arm = divmod(random_argmax(values, generator), model.num_arms)
        chosen.append(arms[arm : arm + 1])
        locals_.append(list(slot).index(span.start + row))
        taken = taken | near(arms, chosen[-1])
    return torch.cat(chosen), locals_, None


def ucb_prior_argmax(
    model: PriorModel,
    priors: Sequence[int],
    sqrt_beta: float,
    generator: torch.Generator,
    num_restarts: int = 10,
    raw_samples: int = 512,
    search: str = DEFAULT_SEARCH,
) -> tuple[Tensor, int]:
    r"""The doubly optimistic (point, prior) pair over the priors in ``priors``.

    Args:
        model: The priors and data.
        priors: The priors to compare (ascending model indices).
        sqrt_beta: The UCB multiplier :math:`\sqrt{\beta_t}`.
        generator: The rule's CPU generator (seeds and tie breaks).
        num_restarts, raw_samples: Box only: multi-start settings of the UCB maximisation.
        search: Box only: ``"scipy"`` or ``"torch"``, the refinement of its restarts (the joint
            UCB of :func:`~botorch_unknown_hypers.acquisition.optimize.optimize_ucb_joint`, or
            each prior's own UCB before any data); checked on arms too.

    Returns:
        ``(x, local)``: the ``1 x d`` point and the position of its prior in ``priors``.
    """
    check_search(search)
    if isinstance(model, BoxPriors):
        gp = model.candidate_gp(priors)
        if gp is not None:
            x, local, _ = optimize_ucb_joint(
                gp, sqrt_beta, model.bounds, num_restarts, raw_samples, seed=draw_seed(generator), search=search
            )
            return x.unsqueeze(0), local
        # no data yet: each prior's UCB m_p(x) + sqrt(beta) sqrt(k_p(x, x)), maximised on its own
        mean_module, covar_module = model.prior_modules(priors)
        transform = model.input_transform()

        def prior_ucb(X: Tensor) -> Tensor:
            Z = transform(X)
            values = upper_confidence_bound(mean_module(Z), covar_module(Z, diag=True), sqrt_beta)
            # A zero mean and a stationary kernel give a constant without a graph: keep the
            # (zero) gradient that L-BFGS-B asks for.
            return values + 0.0 * Z.sum(-1)

        X_best, values = maximize_per_candidate(
            prior_ucb, len(priors), model.bounds, num_restarts, raw_samples, seed=draw_seed(generator), search=search
        )
        local = random_argmax(values, generator)
        return X_best[local : local + 1], local
    mean, variance = model.mean_variance()  # K x N
    rows = torch.tensor(list(priors), device=mean.device)
    values = upper_confidence_bound(mean[rows], variance[rows], sqrt_beta)
    local, arm = divmod(random_argmax(values, generator), model.num_arms)
    return model.priors.arms[arm : arm + 1], local
