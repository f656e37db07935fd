r"""Maximising acquisitions over a domain: the one pool-versus-box dispatch of the package.

- :func:`maximize`: the ``q x d`` maximiser of a BoTorch acquisition function over a
  :class:`~botorch_unknown_hypers.domains.BoxDomain` (``optimize_acqf``: multi-start L-BFGS-B,
  sequential greedy for ``q > 1``) or a :class:`~botorch_unknown_hypers.domains.FiniteDomain`
  (``optimize_acqf_discrete``: exhaustive). Rules call it and never branch on the domain.
- :func:`joint_ucb_argmax`: the "doubly optimistic" joint maximiser over points and candidates,

  .. math::

      (x_t, k_t) = \arg\max_{(x, k) \in \mathcal{X} \times \{1..K\}} \mu_k(x) + \beta_k\sigma_k(x),

  of hyperparameter elimination (Ziomek et al., "Beyond Lengthscales", Alg. 1) and prior
  elimination with UCB: exhaustive over every (point, candidate) pair on a pool, one
  multi-start problem on a box (:func:`optimize_ucb_joint`: all K candidates scored at shared
  Sobol points in one batched call, ``num_restarts`` (point, candidate) pairs refined by one
  batched L-BFGS-B with the candidate held fixed, on a view of the candidates that hold a
  restart, so the refinement's cost does not grow with K). A rule may keep one raw set for a
  whole campaign (:func:`fixed_raw_points`); a model that carries their solves with its factors
  then scores them in :math:`O(Knm)` per round instead of :math:`O(Kn^2m)`.
- :func:`optimize_ucb_per_candidate`: every candidate's own UCB maximiser on a box.
- Batches filled one point at a time: :func:`maximize_slot` and ``joint_ucb_argmax(...,
  warm=...)`` return each slot's refined restarts (:class:`Restarts`); a later slot restarts
  L-BFGS-B from the previous slot's distinct optima, plus the best raw point only when it beats
  them all (:func:`new_basin`), instead of a cold multi-start.

Randomness comes from the caller's ``torch.Generator`` only: integer seeds for BoTorch's Sobol
raw samples and a forked global RNG for its restart selection (:mod:`botorch_unknown_hypers.rng`).
Exact ties of an exhaustive joint argmax are broken uniformly at random (:func:`random_argmax`).
Every box maximisation takes ``search``: ``"scipy"`` (BoTorch's L-BFGS-B on the host, the
default) or ``"torch"`` (the batched projected L-BFGS of
:mod:`~botorch_unknown_hypers.acquisition.device_search`, on the objectives' device, from the
same raw samples and restarts). A pool is scored exhaustively either way.
BoTorch's optimisers (which load ``scipy.optimize``) are imported when first run, so that
importing the package does not load them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from torch import Tensor

from botorch_unknown_hypers.checks import check_bool
from botorch_unknown_hypers.acquisition.multistart import (
    check_multistart,
    maximize_acquisition,
    maximize_per_candidate,
    raw_values,
    reasons_against_parallel,
    refine,
    select_restarts,
    split_options,
)
from botorch_unknown_hypers.acquisition.device_search import DEFAULT_SEARCH, check_search, search_options
from botorch_unknown_hypers.acquisition.ucb import CandidateUCB, CandidateUCBValues, as_beta, beta_checks
from botorch_unknown_hypers.acquisition.mixed_search import maximize_mixed
from botorch_unknown_hypers.confidence import upper_confidence_bound
from botorch_unknown_hypers.domains import BoxDomain, Domain, FiniteDomain, check_points, is_mixed, point_checks, sobol_points
from botorch_unknown_hypers.host import at_argmax, host_values
from botorch_unknown_hypers.models.candidate_gp import CandidateModel
from botorch_unknown_hypers.rng import draw_seed, draw_seeds, forked_rng

EXCLUDE_TOL = 1e-6
r"""A proposal never lies within this Euclidean distance (input units) of an excluded point."""

_MAX_KERNEL_ENTRIES = 2**24
r"""Points per candidate and marginal posterior call when scoring raw samples are chosen to keep
about ``K * chunk * n`` kernel entries below this."""


def random_argmax(values: Tensor | Sequence[float], generator: torch.Generator) -> int:
    r"""Flat index of the maximum of ``values``, exact ties broken uniformly at random.

    ``values``: a tensor (one read of the device), or its values already on the host as Python
    floats (no read; NaN refused). Draws from ``generator`` (a CPU generator) only when there is a
    tie, the same draw in both cases.
    """
    ties: Tensor | list[int]
    if isinstance(values, Tensor):
        flat = values.reshape(-1)
        ties = (flat == flat.max()).nonzero().flatten()  # on the device: only the winner is read
    else:
        if not values or any(v != v for v in values):
            raise ValueError(f"values must be a non-empty sequence of numbers without NaN, got {list(values)!r}.")
        best = max(values)
        ties = [i for i, v in enumerate(values) if v == best]
    count = len(ties)
    pick = 0 if count == 1 else int(torch.randint(count, (1,), generator=generator))
    return int(ties[pick])


def stack_points(*parts: Tensor | None) -> Tensor | None:
    r"""The non-empty parts stacked (``p x d``: pending points, earlier slots), or ``None``."""
    parts = tuple(p for p in parts if p is not None and p.shape[0] > 0)
    return torch.cat(parts) if parts else None


def near(X: Tensor, exclude: Tensor | None) -> Tensor:
    r"""Which rows of ``X`` (``m x d``) lie within :data:`EXCLUDE_TOL` of a row of ``exclude``."""
    if exclude is None or exclude.shape[0] == 0:
        return torch.zeros(X.shape[0], dtype=torch.bool, device=X.device)
    return (torch.cdist(X, exclude.to(X)) < EXCLUDE_TOL).any(-1)


def best_outside(X: Tensor, values: Tensor, exclude: Tensor | None, fallback: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    r"""The best of ``m`` optima (``m x d``, ``m`` values) outside ``exclude``, chosen on the device
    without a host read: ``(x, top, found)``, the ``1 x d`` point, its value (``1``) and whether
    it is one of the optima (0-dim); where every optimum is excluded, ``x`` is ``fallback``
    (``1 x d``), ``top`` is ``-inf`` and ``found`` false."""
    values = values.masked_fill(near(X, exclude), -torch.inf)
    _, top, x = at_argmax(values, X)
    found = top.reshape(()) > -math.inf
    return torch.where(found, x, fallback.to(x)), top, found


def maximize(
    acqf: AcquisitionFunction,
    domain: Domain,
    generator: torch.Generator,
    q: int = 1,
    num_restarts: int = 10,
    raw_samples: int = 512,
    initial_points: Tensor | None = None,
    unique: bool = False,
    fork_rng: bool = True,
    exclude: Tensor | None = None,
    search: str = DEFAULT_SEARCH,
) -> tuple[Tensor, Tensor]:
    r"""``q x d`` maximiser of a BoTorch acquisition function over ``domain``, and its values.

    On a pool: ``optimize_acqf_discrete`` (every pool point scored; sequential greedy for
    ``q > 1``, with repeats unless ``unique``); no randomness. On a box: ``optimize_acqf``
    (multi-start L-BFGS-B; sequential greedy for ``q > 1``) with its Sobol raw samples seeded
    from ``generator`` and the global RNG forked and seeded from it (BoTorch's restart
    selection draws from it), so the result does not depend on the caller's RNG.

    Args:
        acqf: The acquisition function (``batch_shape x q x d -> batch_shape``).
        domain: Box or pool.
        generator: CPU generator of the seeds.
        q: Number of points.
        num_restarts, raw_samples: Multi-start settings on a box.
        initial_points: Optional ``e x d`` extra L-BFGS-B starts on a box, on top of the
            ``num_restarts`` raw-sample ones (``q = 1`` only).
        unique: On a pool, whether the ``q`` points must differ.
        fork_rng: ``False`` when the caller already runs inside its own forked RNG (e.g. it
            built ``acqf`` there); then only the raw-sample seed is drawn.
        exclude: Optional ``e x d`` points (pending evaluations, earlier slots of a batch) the
            result must not come within :data:`EXCLUDE_TOL` of: removed from a pool's choices
            (``ValueError`` if none is left); on a box (``q = 1``) the best optimised restart
            outside them is taken.

    Returns:
        ``(X, values)``: the ``q x d`` points and their acquisition values (per slot for a
        sequential batch), as BoTorch's optimisers return them.
    """
    check_search(search)
    if exclude is not None and exclude.shape[0] == 0:
        exclude = None
    if isinstance(domain, FiniteDomain):
        choices = domain.points[~near(domain.points, exclude)]
        if choices.shape[0] == 0:
            raise ValueError("exclude: every pool point is pending or already in the batch.")
        from botorch.optim import optimize_acqf_discrete

        X, values = optimize_acqf_discrete(acqf, q=q, choices=choices, unique=unique)
        return X.detach(), values.detach()
    check_multistart(num_restarts, raw_samples)
    starts = None if initial_points is None or q != 1 else initial_points.unsqueeze(-2)
    if exclude is not None and q != 1:
        raise ValueError(f"exclude: a box batch is filled one point at a time (q = 1), got q = {q}.")

    fork, seed = draw_seeds(generator, 2) if fork_rng else (None, draw_seed(generator))  # one host copy

    def run() -> tuple[Tensor, Tensor]:
        if is_mixed(domain):
            fallback = domain.sample_uniform(1, torch.Generator().manual_seed(seed))
            avoid = None if exclude is None else lambda X: near(X, exclude)
            return maximize_mixed(acqf, domain, q, num_restarts, raw_samples, fallback, avoid)
        X, values = _box_restarts(acqf, domain, seed, q, num_restarts, raw_samples, starts, exclude is None, search)
        if exclude is None:
            return X, values
        return _pick(acqf, Restarts(X[:, 0], values.reshape(-1)), exclude, domain, seed, True)

    if not fork_rng:
        return run()
    with forked_rng(fork, domain.device):
        return run()


@dataclass
class Restarts:
    r"""The refined restarts of one multi-start maximisation on a box: the warm start of the next
    slot of a batch filled one point at a time.

    Attributes:
        X: ``m x d`` local optima found by L-BFGS-B.
        values: ``m`` acquisition values at them.
        candidates: ``m`` candidate indices held fixed with each point (joint (x, k)
            maximisation), else ``None``.
    """

    X: Tensor
    values: Tensor
    candidates: Tensor | None = None


def distinct_restarts(restarts: Restarts) -> Tensor:
    r"""Indices of the distinct refined restarts: the first of every group within
    :data:`EXCLUDE_TOL` of each other (and on the same candidate for a joint maximisation)."""
    close = torch.cdist(restarts.X, restarts.X) < EXCLUDE_TOL
    if restarts.candidates is not None:
        close &= restarts.candidates.unsqueeze(-1) == restarts.candidates.unsqueeze(0)
    return (~torch.tril(close, diagonal=-1).any(-1)).nonzero().flatten()


def new_basin(warm_values: Tensor, raw_values_: Tensor) -> int | None:
    r"""Index of the best raw point when its value under a later slot's acquisition exceeds every
    warm start's (``warm_values``): it then lies in a basin that no earlier restart reached and
    becomes one more start; ``None`` otherwise."""
    best = int(raw_values_.argmax())
    return best if bool(raw_values_[best] > warm_values.max()) else None


def _box_restarts(
    acqf: AcquisitionFunction,
    domain: Domain,
    seed: int,
    q: int,
    num_restarts: int,
    raw_samples: int,
    starts: Tensor | None,
    best_only: bool,
    search: str,
) -> tuple[Tensor, Tensor]:
    r""":func:`~botorch_unknown_hypers.acquisition.multistart.maximize_acquisition` on the box of
    ``domain`` with ``num_restarts`` raw-sample restarts plus the ``e x q x d`` ``starts`` (no raw
    samples are scored when ``num_restarts`` is 0), seeded by ``seed`` (drawn from the rule's
    generator with the fork's, :func:`~botorch_unknown_hypers.rng.draw_seeds`); detached points
    and values (of every restart unless ``best_only``)."""
    return maximize_acquisition(acqf, domain.bounds, q, num_restarts, raw_samples, seed, starts, best_only, search)


def _pick(acqf: AcquisitionFunction, restarts: Restarts, exclude: Tensor | None, domain: Domain, seed: int, with_value: bool) -> tuple[Tensor, Tensor | None]:
    r"""The ``1 x d`` best refined restart outside ``exclude`` (:func:`best_outside`), and with
    ``with_value`` its value (``1``). The fallback, used where every restart is excluded, is a
    uniform point of the box drawn with a generator of its own seeded by ``seed`` (the search's
    seed, already drawn): drawn every time, so that the choice needs no host read, without a
    draw from the rule's generator or the forked global RNG. The value is the restart's, or
    ``acqf``'s at the fallback (``acqf`` is evaluated at ``x`` either way: skipping it would
    need the choice on the host)."""
    fallback = domain.sample_uniform(1, torch.Generator().manual_seed(seed))
    x, top, found = best_outside(restarts.X, restarts.values, exclude, fallback)
    if not with_value:
        return x, None
    with torch.no_grad():
        return x, torch.where(found, top, acqf(x.unsqueeze(-2)).detach().reshape(1))


def maximize_slot(
    acqf: AcquisitionFunction,
    domain: Domain,
    generator: torch.Generator,
    num_restarts: int = 10,
    raw_samples: int = 512,
    initial_points: Tensor | None = None,
    exclude: Tensor | None = None,
    warm: Restarts | None = None,
    search: str = DEFAULT_SEARCH,
) -> tuple[Tensor, Restarts | None]:
    r"""One slot of a batch filled one point at a time: the ``1 x d`` maximiser of ``acqf`` outside
    ``exclude``, and the refined restarts that warm-start the next slot.

    The first slot is :func:`maximize` with ``q = 1`` (the same draws from ``generator``, the
    same point). A later slot's acquisition differs from the previous one only where the
    earlier slots reduce the variance, so with ``warm`` (the previous slot's :class:`Restarts`)
    L-BFGS-B starts from the previous slot's distinct local optima (:func:`distinct_restarts`)
    instead of ``num_restarts`` Boltzmann-drawn raw points: the optima away from the earlier
    slots stay (nearly) stationary and converge in a few iterations, and those near them move to
    the best point around them. The best of ``raw_samples`` fresh Sobol points is added as a
    start only when its value under the new acquisition exceeds every warm start's: then it lies
    in a basin that no earlier restart reached (:func:`new_basin`).

    Args:
        acqf, domain, generator, num_restarts, raw_samples, initial_points, exclude: As
            :func:`maximize` (``initial_points`` are used by the cold start only).
        warm: The previous slot's restarts, or ``None`` for a cold start.
        search: ``"scipy"`` or ``"torch"``, as :func:`maximize`.

    Returns:
        ``(x, restarts)``: the point and this slot's restarts (``None`` on a pool, which is
        scored exhaustively).
    """
    check_search(search)
    if exclude is not None and exclude.shape[0] == 0:
        exclude = None
    if isinstance(domain, FiniteDomain):
        return maximize(acqf, domain, generator, num_restarts=num_restarts, raw_samples=raw_samples, exclude=exclude)[0], None
    check_multistart(num_restarts, raw_samples)
    if is_mixed(domain):  # searched afresh each slot: the mixed search keeps no restarts
        return maximize(acqf, domain, generator, num_restarts=num_restarts, raw_samples=raw_samples, exclude=exclude)[0], None
    if warm is None:
        (fork, seed), count = draw_seeds(generator, 2), num_restarts  # one host copy for both
        starts = None if initial_points is None else initial_points.unsqueeze(-2)
    else:
        sobol, fork, seed = draw_seeds(generator, 3)
        raw = sobol_points(domain.bounds, raw_samples, sobol)  # raw x d
        keep = warm.X[distinct_restarts(warm)]
        with torch.no_grad():
            values = acqf(torch.cat([keep, raw]).unsqueeze(-2))
        extra = new_basin(values[: keep.shape[0]], values[keep.shape[0] :])
        count, starts = 0, (keep if extra is None else torch.cat([keep, raw[extra : extra + 1]])).unsqueeze(-2)
    with forked_rng(fork, domain.device):
        X, values = _box_restarts(acqf, domain, seed, 1, count, raw_samples, starts, False, search)
        restarts = Restarts(X[:, 0], values.reshape(-1))
        x, _ = _pick(acqf, restarts, exclude, domain, seed, False)
    return x, restarts


def _ucb_chunk(model: CandidateModel) -> int:
    r"""Points per candidate and marginal posterior call (about ``2**24`` kernel entries)."""
    return max(1, _MAX_KERNEL_ENTRIES // max(1, model.num_candidates * model.raw_train_X.shape[0]))


def draw_raw_seed(domain: Domain, generator: torch.Generator) -> int | None:
    r"""A seed for :func:`fixed_raw_points` drawn from ``generator`` on a box; ``None`` on a pool,
    with ``generator`` untouched."""
    return None if isinstance(domain, FiniteDomain) or is_mixed(domain) else draw_seed(generator)


def fixed_raw_points(domain: Domain, raw_samples: int, seed: int) -> Tensor | None:
    r"""``raw_samples x d`` scrambled Sobol points of the box of ``domain`` drawn with ``seed``, to
    be kept as the raw samples of every round of a campaign (``joint_ucb_argmax(...,
    raw_points=...)``); ``None`` on a pool, which is scored exhaustively."""
    if isinstance(domain, FiniteDomain) or is_mixed(domain):
        return None
    check_multistart(1, raw_samples)
    return sobol_points(domain.bounds, raw_samples, seed)


def _box_and_beta(model: CandidateModel, bounds: Tensor, beta: float | Tensor, also: Tensor | None = None) -> tuple[Tensor, Tensor, bool]:
    r"""``bounds`` (``2 x d``, upper > lower) on the model's inputs, ``beta`` as ``K`` multipliers
    (:func:`~botorch_unknown_hypers.acquisition.ucb.beta_checks`) and the value of the caller's
    0-dim flag ``also`` (true when ``None``), checked in one host read: a bad box or ``beta``
    raises here, a false ``also`` is the caller's to explain."""
    like = model.raw_train_X
    bounds = torch.as_tensor(bounds).to(like)
    message = f"bounds must be 2 x {like.shape[-1]} with upper > lower."
    if bounds.shape != (2, like.shape[-1]):
        raise ValueError(message)
    beta_t, beta_ok = beta_checks(beta, model.num_candidates, bounds)
    box_ok = (bounds[1] > bounds[0]).all()
    flags = [box_ok] + [flag for flag in (beta_ok, also) if flag is not None]
    if bool(torch.stack(flags).all()):
        return bounds, beta_t, True
    if not bool(box_ok):
        raise ValueError(message)
    if beta_ok is not None and not bool(beta_ok):
        raise ValueError("beta must be finite and non-negative.")
    return bounds, beta_t, False


def optimize_ucb_per_candidate(
    model: CandidateModel,
    beta: float | Tensor,
    bounds: Tensor,
    num_restarts: int = 10,
    raw_samples: int = 512,
    options: dict[str, Any] | None = None,
    seed: int | None = None,
    search: str = DEFAULT_SEARCH,
) -> tuple[Tensor, Tensor]:
    r"""Maximise every candidate's own UCB in one batched L-BFGS-B run.

    Args:
        model: A K-wide candidate model.
        beta: Scalar or ``K``-dim multipliers :math:`\beta_k`.
        bounds: ``2 x d`` box.
        num_restarts: Restarts per candidate (as ``optimize_acqf``).
        raw_samples: Sobol raw samples per candidate (as ``optimize_acqf``).
        options: Options for ``gen_candidates_scipy`` and ``eta`` (see
            :func:`~botorch_unknown_hypers.acquisition.multistart.maximize_per_candidate`).
        seed: Seed of the Sobol raw samples and of the restart selection.
        search: ``"scipy"`` or ``"torch"``, the refinement of the restarts (see
            :func:`~botorch_unknown_hypers.acquisition.multistart.maximize_per_candidate`).

    Returns:
        ``(X, values)``: the ``K x d`` maximisers and their ``K`` UCB values.

    Example:
        >>> X_best, ucb_best = optimize_ucb_per_candidate(model, beta, bounds)
    """
    bounds, beta_t, _ = _box_and_beta(model, bounds, beta)
    return maximize_per_candidate(
        CandidateUCBValues(model, beta_t),
        model.num_candidates,
        bounds,
        num_restarts,
        raw_samples,
        options,
        seed,
        chunk=_ucb_chunk(model),
        search=search,
    )


def joint_ucb_restarts(
    model: CandidateModel,
    beta: float | Tensor,
    bounds: Tensor,
    num_restarts: int = 10,
    raw_samples: int = 512,
    options: dict[str, Any] | None = None,
    seed: int | None = None,
    warm: Restarts | None = None,
    raw_points: Tensor | None = None,
    search: str = DEFAULT_SEARCH,
    box: BoxDomain | None = None,
    check_values: bool = True,
) -> Restarts:
    r"""The refined (point, candidate) restarts of the joint UCB maximisation on a box.

    Cold: all K candidates are scored at ``raw_samples`` shared Sobol points (one batched call),
    ``num_restarts`` (point, candidate) pairs are drawn from the ``K x raw`` values (Boltzmann,
    the best always kept) and refined by one batched L-BFGS-B with the candidate index held
    fixed. With ``warm`` (the previous slot's restarts of a batch filled one point at a time),
    its distinct pairs are refined instead, with the best raw pair when it beats them all (see
    :func:`maximize_slot`).
    ``raw_points`` (``m x d``, in the box) replaces the fresh Sobol points; a model that keeps
    their posterior across rounds (:meth:`~botorch_unknown_hypers.models.candidate_gp.CandidateModel.fixed_point_moments`)
    scores them in :math:`O(Knm)` instead of :math:`O(Kn^2m)`.
    Falls back to :func:`optimize_ucb_per_candidate` (one restart per candidate) when BoTorch's
    parallel L-BFGS-B is unavailable. ``search="torch"`` refines the same restarts on the device
    (:func:`~botorch_unknown_hypers.acquisition.multistart.refine`). ``box``: the
    :class:`~botorch_unknown_hypers.domains.BoxDomain` whose ``bounds`` are ``bounds`` (the same
    tensor), when the caller holds it: ``raw_points`` are checked against it with ``bounds`` and
    ``beta`` in one host read, instead of a new domain's check and their own.
    ``check_values=False`` (with ``box``): no read at all, for a caller that checks ``beta``'s
    values with its own later copy (a round's deferred checks) and draws ``raw_points`` in the
    box; their types and shapes are checked either way, and the box's bounds hold by its own check.
    """
    check_multistart(num_restarts, raw_samples)
    check_search(search)
    check_bool("check_values", check_values)
    if not check_values:
        if box is None or box.bounds is not bounds:
            raise ValueError("check_values: False needs box, the BoxDomain whose bounds are bounds (the same tensor), got "
                             f"{'no box' if box is None else 'a box with other bounds'}.")
        like = model.raw_train_X
        if bounds.shape != (2, like.shape[-1]):
            raise ValueError(f"bounds must be 2 x {like.shape[-1]} with upper > lower.")
        bounds, (beta_t, _) = bounds.to(like), beta_checks(beta, model.num_candidates, like)  # the values' flag left unread
        raw = None if raw_points is None else point_checks(box, raw_points, name="raw_points")[0]
    elif raw_points is not None and box is not None and box.bounds is bounds:  # the box, beta and raw points in one read
        raw, raw_ok = point_checks(box, raw_points, name="raw_points")
        bounds, beta_t, valid = _box_and_beta(model, bounds, beta, raw_ok)
        raw = raw if valid else check_points(box, raw_points, name="raw_points")  # raises raw_points' error
    else:
        bounds, beta_t, _ = _box_and_beta(model, bounds, beta)
        raw = None if raw_points is None else check_points(BoxDomain(bounds), raw_points, name="raw_points")
    options, eta = split_options(options)
    if search == "torch":
        search_options(options)  # refuse SciPy-only keys before any work
    num = model.num_candidates
    if search == "scipy" and reasons_against_parallel(options):
        X_k, values_k = optimize_ucb_per_candidate(
            model, beta_t, bounds, num_restarts, raw_samples, {**options, "eta": eta}, seed
        )
        return Restarts(X_k, values_k, torch.arange(num, device=X_k.device))
    ucb = CandidateUCBValues(model, beta_t)  # K x m x d -> K x m
    if raw_points is None:
        raw = sobol_points(bounds, raw_samples, seed)  # raw x d
    else:
        raw_samples = raw.shape[0]
    kept = None if raw_points is None else model.fixed_point_moments(raw)
    if kept is not None:
        scores = upper_confidence_bound(kept[0], kept[1], beta_t.unsqueeze(-1))  # K x raw
    else:
        scores = raw_values(ucb, raw.expand(num, *raw.shape), _ucb_chunk(model))  # K x raw
    if warm is None:
        flat = select_restarts(scores.reshape(1, -1), num_restarts, eta, seed)[0]
        cand, starts = torch.div(flat, raw_samples, rounding_mode="floor"), raw[flat % raw_samples]
    else:
        keep = distinct_restarts(warm)
        cand, starts = warm.candidates[keep], warm.X[keep]
        with torch.no_grad():  # each kept pair under its own candidate
            warm_values = ucb(starts.expand(num, -1, -1))[cand, torch.arange(cand.numel(), device=cand.device)]
        extra = new_basin(warm_values, scores.reshape(-1))
        if extra is not None:
            cand = torch.cat([cand, cand.new_tensor([extra // raw_samples])])
            starts = torch.cat([starts, raw[extra % raw_samples].unsqueeze(0)])
    # refine on the candidates that hold a restart only: each L-BFGS-B evaluation scores those
    present, local, counts = torch.unique(cand, return_inverse=True, return_counts=True)
    used, counts = host_values(present, counts)  # one copy: the candidates and the device grid's width
    used = [int(u) for u in used]
    sub = CandidateUCBValues(model.subset(used), beta_t[present]) if len(used) < num else ucb
    X_opt, values = refine(sub, len(used), bounds, starts, local.to(bounds), options, search, width=int(max(counts)))
    return Restarts(X_opt.detach(), values.detach(), cand)


def optimize_ucb_joint(
    model: CandidateModel,
    beta: float | Tensor,
    bounds: Tensor,
    num_restarts: int = 10,
    raw_samples: int = 512,
    options: dict[str, Any] | None = None,
    seed: int | None = None,
    exclude: Tensor | None = None,
    warm: Restarts | None = None,
    search: str = DEFAULT_SEARCH,
) -> tuple[Tensor, int, Tensor]:
    r"""Joint maximiser :math:`(x, k) = \arg\max_{x, k} \mu_k(x) + \beta_k\sigma_k(x)` on a box:
    the best of :func:`joint_ucb_restarts` outside ``exclude`` (``e x d``; ``-inf`` when every
    refined pair is excluded).

    Args:
        model, beta, bounds, num_restarts, raw_samples, options, seed, warm: As
            :func:`joint_ucb_restarts`.
        exclude: Optional ``e x d`` points no pair may take.
        search: ``"scipy"`` or ``"torch"``, the refinement of the restarts
            (:func:`joint_ucb_restarts`).

    Returns:
        ``(x, k, value)``: the ``d``-dim maximiser, its candidate index and the UCB value.
    """
    restarts = joint_ucb_restarts(model, beta, bounds, num_restarts, raw_samples, options, seed, warm, search=search)
    return _best_pair(restarts, exclude)[:3]


def _best_pair(restarts: Restarts, exclude: Tensor | None) -> tuple[Tensor, int, Tensor, bool]:
    r"""``(x, k, value, finite)`` of the best refined (point, candidate) pair outside ``exclude``;
    ``finite``: whether ``value`` is (no pair is left when it is not). One host read."""
    values = restarts.values.masked_fill(near(restarts.X, exclude), -torch.inf)
    best, top, k = at_argmax(values, restarts.candidates)
    index, k, finite = torch.cat([best, k.to(best), torch.isfinite(top).to(best)]).tolist()
    return restarts.X[index], k, values[index], bool(finite)


def joint_ucb_argmax(
    model: CandidateModel,
    beta: float | Tensor,
    domain: Domain,
    generator: torch.Generator,
    num_restarts: int = 10,
    raw_samples: int = 512,
    exclude: Tensor | None = None,
    warm: Restarts | None = None,
    raw_points: Tensor | None = None,
    search: str = DEFAULT_SEARCH,
    check_values: bool = True,
) -> tuple[Tensor, int, Tensor, Tensor, Restarts | None]:
    r"""The doubly optimistic :math:`(x, k)` over ``domain`` and the K candidates of ``model``.

    Exhaustive on a pool (one posterior call scores every (point, candidate) pair; exact ties
    broken at random with ``generator``), :func:`optimize_ucb_joint` on a box (seeded from
    ``generator``). No point within :data:`EXCLUDE_TOL` of a row of ``exclude`` (pending
    points, earlier slots) is proposed; on a box, if every refined restart is excluded, a uniform
    point of the box is taken with its best candidate. ``warm``: the previous slot's restarts of
    a batch filled one point at a time (:func:`joint_ucb_restarts`; box only). ``raw_points``:
    fixed raw samples instead of fresh Sobol points (box only; see :func:`joint_ucb_restarts`).
    ``search``: the refinement of the restarts on a box (:func:`joint_ucb_restarts`).
    ``check_values=False``: ``beta``'s values (and ``raw_points``, drawn in the box) are the
    caller's to check with its own later copy; their shapes are checked here either way.

    Returns:
        ``(x, k, mean, sigma, restarts)``: the ``1 x d`` point, the candidate index, that
        candidate's posterior mean and standard deviation at the point under ``model`` (``0-d``
        tensors, unread: a caller copies them to the host with its own values), and the refined
        restarts on a box (``None`` on a pool), the next slot's ``warm``.
    """
    check_search(search)
    check_bool("check_values", check_values)
    if isinstance(domain, FiniteDomain):
        beta_t = as_beta(beta, model.num_candidates, model.raw_train_X) if check_values else beta_checks(beta, model.num_candidates, model.raw_train_X)[0]
        with torch.no_grad():
            mean, variance = model.marginal_mean_variance(domain.points.unsqueeze(0).unsqueeze(0))
        mean, variance = mean[0], variance[0]  # K x N
        values = upper_confidence_bound(mean, variance, beta_t.unsqueeze(-1))
        values = values.masked_fill(near(domain.points, exclude).unsqueeze(0), -torch.inf)
        if bool(torch.isneginf(values).all()):
            raise ValueError("exclude: every pool point is pending or already in the batch.")
        k, i = divmod(random_argmax(values, generator), values.shape[-1])
        X, restarts = domain.points[i : i + 1], None
    elif is_mixed(domain):  # max_k UCB_k(x) over the mixed domain, then the best candidate at x
        beta_t = as_beta(beta, model.num_candidates, model.raw_train_X) if check_values else beta_checks(beta, model.num_candidates, model.raw_train_X)[0]
        acqf = CandidateUCB(model, beta_t, reduction="max", check_beta=False)
        X = maximize(acqf, domain, generator, num_restarts=num_restarts, raw_samples=raw_samples, exclude=exclude)[0]
        with torch.no_grad():
            mean, variance = model.marginal_mean_variance(X.unsqueeze(0))  # K x 1
        k = int(upper_confidence_bound(mean, variance, beta_t.unsqueeze(-1))[:, 0].argmax())
        i, restarts = 0, None
    else:
        restarts = joint_ucb_restarts(  # checks beta's values unless check_values is False
            model, beta, domain.bounds, num_restarts, raw_samples, seed=draw_seed(generator), warm=warm, raw_points=raw_points,
            search=search, box=domain, check_values=check_values,
        )
        x, k, _, finite = _best_pair(restarts, exclude)
        X = x.unsqueeze(0) if finite else domain.sample_uniform(1, generator)
        with torch.no_grad():
            mean, variance = model.marginal_mean_variance(X.unsqueeze(0))  # K x 1 at the shared point
        if not finite:
            beta_t = as_beta(beta, model.num_candidates, model.raw_train_X)
            k = int(upper_confidence_bound(mean, variance, beta_t.unsqueeze(-1))[:, 0].argmax())
        i = 0
    return X, k, mean[k, i], variance[k, i].clamp_min(0).sqrt(), restarts
