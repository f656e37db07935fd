r"""Batched projected L-BFGS on the objectives' device: many box maximisations, no host round trips.

:func:`maximize_batched` maximises the ``K x r`` independent problems of a
:data:`~botorch_unknown_hypers.acquisition.multistart.CandidateValues` (``K x r x d`` -> ``K x r``)
from ``K x r x d`` starts at once. In unit coordinates :math:`z = (x - l) / (u - l) \in [0, 1]^d`
each problem minimises :math:`f(z) = -v(l + (u - l) z)` by a projected quasi-Newton method
(Bertsekas' two-metric projection with an L-BFGS metric). At :math:`z` with gradient :math:`g`:

- the active set :math:`A = \{i: z_i = 0, g_i > 0\} \cup \{i: z_i = 1, g_i < 0\}` (the bounds the
  steepest descent would cross) is held; :math:`P_F` zeroes its coordinates;
- direction :math:`p = -P_F H P_F g`, :math:`H` the L-BFGS inverse Hessian of the last ``history``
  pairs (two-loop recursion batched over problems, :math:`H_0 = \gamma I`, :math:`\gamma =
  s^\top y / y^\top y` of the newest pair; before any pair a step of 0.1 in the largest
  coordinate); :math:`p = -\gamma P_F g` when :math:`p` is not a descent direction;
- one trial :math:`z^+ = \Pi_{[0,1]^d}(z + t p)` per problem and iteration, accepted under Armijo's
  condition along the projection arc, :math:`f(z^+) \le f(z) + c_1 g^\top (z^+ - z)`; a rejected
  step halves :math:`t` and is retried at the next iteration, an accepted one stores
  :math:`(s, y) = (z^+ - z, g^+ - g)` when :math:`s^\top y > \epsilon\, y^\top y` and resets
  :math:`t = 1`.

Each iteration is one value-and-gradient call of the ``K x a`` points held. A problem stops (is
frozen by a mask) when :math:`\|\Pi(z - g) - z\|_\infty \le` ``gtol``, an accepted step
decreases :math:`f` by at most ``ftol`` relative (SciPy's tests, in unit coordinates), :math:`t <
10^{-10}` or its value is not finite. At most ``maxiter`` iterations; at each check the ``K``
counts of running problems per row are read on the host (one copy): all 0 ends the loop; else,
when ``values`` has a cheap ``subset(rows)`` (the UCBs on cached factors), the rows with none running are set
aside and later calls score only the others (their factors, the cost, are not read again), and
each row's running problems move to its first ``a`` columns (``a`` the largest count) and the
rest are set aside. Checks follow
iteration :math:`c` (``check_every``) and then :math:`\max(c, \lceil (r-1) i\rceil)` iterations after
the last, at :math:`i` (``check_growth`` :math:`r`; 10, 20, 30, 45, 68, 102, 153 by default): :math:`O(\log
T)` reads for :math:`T` iterations. A stopped problem is frozen, so when the checks fall changes
a result only by rounding (the batch it is evaluated in). Points and values stay on the device.

Projection rather than a smooth transform (e.g. :math:`x = l + (u - l)\,\mathrm{sigmoid}(w)`): an
acquisition's maximiser often lies on the boundary, which a transform reaches only as
:math:`w \to \pm\infty` with vanishing gradients; projection lands on it exactly in one step and
keeps the objective's curvature for the free coordinates. This search and BoTorch's
``gen_candidates_torch`` (Adam) against SciPy's L-BFGS-B: ``docs/scaling.md``.

References:
    D. P. Bertsekas. Projected Newton methods for optimization problems with simple constraints.
    SIAM J. Control Optim. 20(2), 1982.
    J. Nocedal, S. J. Wright. Numerical Optimization, 2nd ed., Alg. 7.4 (two-loop recursion), 2006.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from botorch_unknown_hypers.checks import check_choice, check_int
from botorch_unknown_hypers.host import host_tensor

SEARCHES = ("scipy", "torch")
r"""Refinements of the multi-start maximisers: SciPy's L-BFGS-B on the host or :func:`maximize_batched`."""

DEFAULT_SEARCH = "scipy"
r"""The refinement every maximiser of this package uses unless told otherwise (``docs/scaling.md``
gives the rule that decided it for the CPU)."""

AUTO_SEARCH = "auto"
r"""A rule's default refinement: the device search on CUDA, SciPy elsewhere (:func:`resolve_search`)."""

DEFAULTS = {"maxiter": 200, "history": 10, "check_every": 10, "check_growth": 1.5, "gtol": 1e-5, "ftol": 2.220446049250313e-09}
r"""Options of :func:`maximize_batched` (``gtol``, ``ftol`` as SciPy's L-BFGS-B defaults)."""
LATE_CHECKS = {"check_every": 20}
r"""Convergence checks from iteration 20 (then 40, 60, 90, 135; the default's are 10, 20, 30, 45,
68, ...), for the searches of smooth functions that are cheap to evaluate: a posterior mean's
maximiser (the ``auto`` presets' extra start, TS-RSR's :math:`\max_x \mu(x)`) and the prior
rules' sample-path maxima. A stopped restart is frozen, so later checks change the maximisers
and their values only by rounding, and they save the reads of the early checks (each a host read;
a wait on a GPU) for at most 10 more iterations. Measured by ``benchmarks/device_search.py
--mean-start``: 30 reads instead of 51 over 16 candidates' means at n = 500, the same maximisers,
1.04x the time on one CPU thread (the first check at 30: 21 reads, 1.16x); on sample paths at
n = 500, 1.14x at one path and 1.0x at four (``docs/benchmarks.md``)."""

ARMIJO = 1e-4
FIRST_STEP = 0.1
MIN_STEP = 1e-10


def resolve_search(search: str, device: torch.device | str) -> str:
    r"""``search`` of a rule on ``device``: ``"auto"`` is ``"torch"`` (the batched device search,
    no host round trip per L-BFGS iteration) on a CUDA device and ``"scipy"`` (:data:`DEFAULT_SEARCH`)
    elsewhere; ``"scipy"`` and ``"torch"`` stay as given. A ValueError names the argument otherwise."""
    if search == AUTO_SEARCH:
        return "torch" if torch.device(device).type == "cuda" else DEFAULT_SEARCH
    check_choice("search", search, (*SEARCHES, AUTO_SEARCH))
    return search


def check_search(search: str) -> str:
    r"""``search`` if it is one of :data:`SEARCHES`; a ValueError naming the argument otherwise."""
    return check_choice("search", search, SEARCHES)


def search_options(options: dict | None) -> dict:
    r""":data:`DEFAULTS` updated by ``options`` (SciPy's ``maxiter`` is honoured; other SciPy-only
    keys are refused with a ValueError that names them)."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"options for search='torch' must be among {sorted(DEFAULTS)}, got {unknown}.")
    opts = {**DEFAULTS, **options}
    check_int("check_every", opts["check_every"], 1)
    growth = opts["check_growth"]  # on the host without a tensor: check_number would read one per call
    if isinstance(growth, bool) or not isinstance(growth, (int, float)) or not 1.0 <= growth < math.inf:
        raise ValueError(f"check_growth must be a finite number >= 1 (the checks' spacing factor), got {growth!r}.")
    return opts


def value_and_grad(values: Callable[[Tensor], Tensor], lower: Tensor, width: Tensor, z: Tensor) -> tuple[Tensor, Tensor]:
    r"""``f = -values`` (``K x r``) at unit points ``z`` (``K x r x d``) and its gradient in ``z``;
    non-finite values become ``+inf`` with a zero gradient."""
    with torch.enable_grad():
        z = z.detach().requires_grad_(True)
        v = values(lower + width * z)
        (grad,) = torch.autograd.grad(v.sum(), z)
    f = -v.detach()
    finite = torch.isfinite(f)
    grad = torch.where(finite.unsqueeze(-1) & torch.isfinite(grad), -grad, torch.zeros_like(grad))
    return f.masked_fill(~finite, torch.inf), grad


def two_loop(q: Tensor, S: Tensor, Y: Tensor, rho: Tensor, gamma: Tensor) -> Tensor:
    r""":math:`H q` by the L-BFGS two-loop recursion, batched: ``q`` is ``batch x d``, ``S``, ``Y``
    are ``m x batch x d`` (oldest first), ``rho`` is ``m x batch`` (0 for empty slots, which then
    leave ``q`` unchanged), ``gamma`` is ``batch``."""
    alphas = []
    for i in reversed(range(S.shape[0])):
        alpha = rho[i] * (S[i] * q).sum(-1)
        q = q - alpha.unsqueeze(-1) * Y[i]
        alphas.append(alpha)
    r = gamma.unsqueeze(-1) * q
    for i, alpha in zip(range(S.shape[0]), reversed(alphas)):
        beta = rho[i] * (Y[i] * r).sum(-1)
        r = r + (alpha - beta).unsqueeze(-1) * S[i]
    return r


def projected_gradient(z: Tensor, g: Tensor) -> Tensor:
    r""":math:`\|\Pi_{[0,1]^d}(z - g) - z\|_\infty` per problem (``batch``)."""
    return ((z - g).clamp(0.0, 1.0) - z).abs().amax(-1)


def row_subset(values: Callable[[Tensor], Tensor]) -> Callable[[list[int]], Callable[[Tensor], Tensor]] | None:
    r"""``values.subset`` when it restricts the objectives to some rows without work of its own
    (``values.subset_is_view``, as the candidate UCBs on cached factors), else ``None``: a
    subset that factorised its candidates again would cost more than the rows it sets aside."""
    return getattr(values, "subset", None) if getattr(values, "subset_is_view", False) else None


def maximize_batched(
    values: Callable[[Tensor], Tensor],
    bounds: Tensor,
    starts: Tensor,
    options: dict | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Maximise ``K x r`` independent problems over one box from ``K x r x d`` starts.

    Args:
        values: ``K x r x d`` points -> ``K x r`` values, point ``[k, j]`` affecting value
            ``[k, j]`` only, differentiable in the points; with a ``subset(rows)`` method (a
            host list of row indices -> the same objectives of those rows, in that order) and
            a true ``subset_is_view`` (:func:`row_subset`), rows whose problems have all
            stopped are no longer scored.
        bounds: ``2 x d`` box, on the device and dtype of ``starts``.
        starts: ``K x r x d`` initial points (clamped into the box).
        options: ``maxiter``, ``history``, ``check_every``, ``check_growth``, ``gtol``, ``ftol``
            (:data:`DEFAULTS`).

    Returns:
        ``(X, values)``: the ``K x r x d`` final points (in the box) and their ``K x r`` values
        (``-inf`` where the value is not finite), detached, on the device of ``starts``.

    Example:
        >>> X, v = maximize_batched(lambda X: -(X - 0.3).pow(2).sum(-1), bounds, starts)
    """
    opts = search_options(options)
    lower, width = bounds[0], bounds[1] - bounds[0]
    z = ((starts.detach() - lower) / width).clamp(0.0, 1.0)
    f, g = value_and_grad(values, lower, width, z)
    running = torch.isfinite(f)
    m = int(opts["history"])
    S = z.new_zeros(m, *z.shape)
    Y = z.new_zeros(m, *z.shape)
    rho = f.new_zeros(m, *f.shape)
    step = torch.ones_like(f)
    z_out, f_out = z.clone(), f.clone()  # every problem's last state, written back at compaction
    cols = torch.arange(z.shape[-2], device=z.device).expand(f.shape).clone()  # K' x a: slot of each column
    rows = torch.arange(z.shape[0], device=z.device).unsqueeze(-1)  # K' x 1: problem row of each row
    subset = row_subset(values)
    every, growth = int(opts["check_every"]), float(opts["check_growth"])
    check = every  # the iteration count at the next check
    for iteration in range(int(opts["maxiter"])):
        free = ~(((z <= 0.0) & (g > 0.0)) | ((z >= 1.0) & (g < 0.0)))
        g_free = g * free
        has_pair = rho[-1] > 0
        yy = (Y[-1] * Y[-1]).sum(-1)
        first = FIRST_STEP / g_free.abs().amax(-1).clamp_min(torch.finfo(g.dtype).tiny)
        gamma = torch.where(has_pair, (S[-1] * Y[-1]).sum(-1) / torch.where(has_pair, yy, 1.0), first)
        direction = -two_loop(g_free, S, Y, rho, gamma) * free
        descent = (direction * g).sum(-1) < 0
        direction = torch.where(descent.unsqueeze(-1), direction, -gamma.unsqueeze(-1) * g_free)
        trial = torch.where(running.unsqueeze(-1), (z + step.unsqueeze(-1) * direction).clamp(0.0, 1.0), z)
        f_trial, g_trial = value_and_grad(values, lower, width, trial)
        s = trial - z
        accept = running & (f_trial <= f + ARMIJO * (g * s).sum(-1))
        y = g_trial - g
        sy = (s * y).sum(-1)
        store = accept & (sy > torch.finfo(sy.dtype).eps * (y * y).sum(-1))
        shifted = store.view(1, *store.shape)
        S = torch.where(shifted.unsqueeze(-1), torch.cat([S[1:], s.unsqueeze(0)]), S)
        Y = torch.where(shifted.unsqueeze(-1), torch.cat([Y[1:], y.unsqueeze(0)]), Y)
        rho = torch.where(shifted, torch.cat([rho[1:], (1.0 / torch.where(store, sy, 1.0)).unsqueeze(0)]), rho)
        small = (f - f_trial) <= opts["ftol"] * torch.maximum(torch.maximum(f.abs(), f_trial.abs()), torch.ones_like(f))
        z = torch.where(accept.unsqueeze(-1), trial, z)
        f = torch.where(accept, f_trial, f)
        g = torch.where(accept.unsqueeze(-1), g_trial, g)
        step = torch.where(accept, torch.ones_like(step), torch.where(running, step / 2, step))
        done = (accept & small) | (projected_gradient(z, g) <= opts["gtol"]) | (step < MIN_STEP)
        running = running & ~done
        if iteration + 1 < check:
            continue
        check += max(every, math.ceil((growth - 1.0) * check))
        per_row = running.sum(-1).tolist()  # the check's one host read
        active = max(per_row)
        if active == 0:
            break
        live = [i for i, c in enumerate(per_row) if c > 0]
        drop_rows = subset is not None and len(live) < len(per_row)
        if drop_rows or active < z.shape[-2]:  # problems are set aside: keep their last state
            z_out[rows, cols], f_out[rows, cols] = z, f
        if drop_rows:  # rows with no running problem
            values = subset(live)
            subset = row_subset(values)
            at = host_tensor(live, torch.long, z.device)  # copied to the device without a wait
            rows, cols, z, g, f, step, running = (t.index_select(0, at) for t in (rows, cols, z, g, f, step, running))
            S, Y, rho = (t.index_select(1, at) for t in (S, Y, rho))
        if active < z.shape[-2]:  # drop columns of stopped problems: the running ones first per row
            keep = torch.argsort((~running).int(), dim=-1, stable=True)[..., :active]  # K' x a
            cols = cols.gather(-1, keep)
            z, g = (t.gather(-2, keep.unsqueeze(-1).expand(*keep.shape, t.shape[-1])) for t in (z, g))
            f, step, running = (t.gather(-1, keep) for t in (f, step, running))
            pairs = keep.expand(m, *keep.shape)
            S, Y = (t.gather(-2, pairs.unsqueeze(-1).expand(*pairs.shape, t.shape[-1])) for t in (S, Y))
            rho = rho.gather(-1, pairs)
    z_out[rows, cols], f_out[rows, cols] = z, f
    return (lower + width * z_out).detach(), -f_out


def grid_slots(cand: Tensor, num_candidates: int) -> tuple[Tensor, Tensor]:
    r"""Slots of ``m`` points with candidate indices ``cand`` in a ``K x w`` grid: ``slot`` (``m``;
    point ``i`` goes to ``[cand[i], slot[i]]``, in order within each candidate) and the ``K``
    counts (``w = counts.max()``)."""
    # bincount reads the largest index on the host to size its output; index_add_ does not
    counts = torch.zeros(num_candidates, dtype=cand.dtype, device=cand.device).index_add_(0, cand, torch.ones_like(cand))
    order = torch.argsort(cand, stable=True)
    first = torch.cumsum(counts, 0) - counts
    slot = torch.empty_like(cand)
    slot[order] = torch.arange(cand.numel(), device=cand.device) - first[cand[order]]
    return slot, counts


def refine_indexed_batched(
    values: Callable[[Tensor], Tensor],
    num_candidates: int,
    bounds: Tensor,
    starts: Tensor,
    cand: Tensor,
    options: dict | None = None,
    width: int | None = None,
) -> tuple[Tensor, Tensor]:
    r""":func:`maximize_batched` from ``m x d`` ``starts``, start ``i`` on candidate ``cand[i]``
    (``m``, integer-valued): the starts are placed in a ``K x w`` grid (:func:`grid_slots`; the
    empty slots hold the box's centre and are refined too, as SciPy's path evaluates them) and
    gathered back. ``width``: :math:`w`, the most starts on one candidate, when the caller holds
    it on the host (else read from the device, once); a smaller one is not caught here (that
    would read the device) and fails as an index out of range, a larger one only adds empty
    slots. Returns the ``m x d`` optima and their ``m`` values."""
    idx = cand.round().long()
    slot, counts = grid_slots(idx, num_candidates)
    if width is None:
        width = int(counts.max())  # one host read
    elif isinstance(width, bool) or not isinstance(width, int) or not 1 <= width <= idx.numel():
        raise ValueError(f"width must be an integer in [1, {idx.numel()}] (the most starts on one candidate), got {width!r}.")
    centre = (bounds[0] + bounds[1]) / 2
    grid = centre.expand(num_candidates, width, -1).clone()
    grid[idx, slot] = starts.detach()
    X, v = maximize_batched(values, bounds, grid, options)
    return X[idx, slot], v[idx, slot]
