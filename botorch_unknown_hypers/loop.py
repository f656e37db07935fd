r"""The ask/tell optimiser and the benchmark loop.

A run follows the papers' protocol (Ziomek et al. 2024, Sec. 5, and the authors' code):

1. An initial design of ``n_init`` points: scrambled Sobol points on a box,
   sampling without replacement on a finite pool. These rows carry
   ``iteration = 0``. With ``n_init = 0`` there is none and round 1 starts from
   :math:`D_0 = \emptyset` (the prior-selection rules of Sandberg & Haghir
   Chehreghani start from no data).
2. For :math:`t = 1, \dots, T`: the policy proposes a batch of ``q`` points
   from all data :math:`D_{t-1}`, the problem returns
   :math:`y = f(x) + \varepsilon`, and the policy observes it.

Regret is always measured on the noiseless :math:`f`:

- simple (best) regret :math:`f^* - \max_{\tau \le t} f(x_\tau)`, over all
  points evaluated so far *including* the initial design (the authors' code
  logs ``best_y`` this way);
- cumulative regret :math:`\sum_{\tau=1}^{t} \sum_{j} (f^* - f(x_{\tau,j}))`
  over the BO rounds only, the initial design excluded (the authors' code logs
  ``cumulative_y`` this way); initial rows carry 0.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Callable, Protocol, runtime_checkable

import torch
from torch import Tensor

from botorch_unknown_hypers.checks import check_int
from botorch_unknown_hypers.domains import Domain, FiniteDomain, check_domain, check_observations, check_points
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.round.pending_plays import match_pending
from botorch_unknown_hypers.policies.tasks import TaskInfo

if TYPE_CHECKING:
    import pandas as pd

RESULT_COLUMNS = [
    "problem",
    "method",
    "seed",
    "iteration",
    "batch_index",
    "y",
    "f",
    "simple_regret",
    "cumulative_regret",
    "selected",
    "n_candidates",
    "wall_time_s",
    "x",
    "diagnostics",
]
r"""Columns of a history table / ``results.csv``: the contract's columns, then ``x`` and
``diagnostics`` (JSON of the policy's ``diagnostics`` dict after the round: candidate set,
counts, suspected bounds, L_t, eliminations, xi_t, beta_t, ...; empty where a rule has none)."""


@runtime_checkable
class BlackBox(Protocol):
    r"""What :func:`run` needs of a problem (every :class:`~botorch_unknown_hypers.problems.problem.Problem`).

    Attributes:
        name: Written in the ``problem`` column.
        domain: The search space (the policy's).
        optimal_value: :math:`f^*`, for the regret columns.
        n_init: Size of the default initial design.
    """

    name: str
    domain: Domain
    optimal_value: float
    n_init: int

    def evaluate(self, X: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        r"""``(y, f)``: noisy observations and noiseless values at ``q x d`` points."""

    def instance(self, seed: int) -> BlackBox:
        r"""The black box of run ``seed``."""

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> BlackBox:
        r"""The black box on ``device`` / ``dtype``."""

    def task_info(self) -> TaskInfo:
        r"""What the problem tells a rule about itself (:meth:`Policy.bind_task`)."""


@runtime_checkable
class RobustBlackBox(BlackBox, Protocol):
    r"""A black box with worst-case values: :func:`run` then records the :math:`\epsilon`-regret
    :math:`\max_x \min_\delta f(x + \delta) - \min_\delta f(x_t + \delta)` at the rule's
    ``robust_point`` (the point whose worst case it optimised) in the diagnostics."""

    robust_optimal_value: float

    def robust_value(self, X: Tensor) -> Tensor:
        r""":math:`\min_{\delta} f(x + \delta)` at each row of ``X``."""


def initial_design(domain: Domain, n: int, seed: int) -> Tensor:
    r"""``n x d`` initial points: scrambled Sobol on a box, without replacement on a pool.

    Raises:
        ValueError: if ``domain`` is not a domain, ``n`` is not an integer ``>= 1``, ``seed`` is not
            an integer ``>= 0``, or a pool has fewer than ``n`` points.
    """
    check_domain(domain)
    check_int("n", n, 1)
    check_int("seed", seed, 0)
    return domain.sample(n, seed)


def check_policy(policy: Any, name: str = "policy") -> Policy:
    r"""``policy`` itself if it is a :class:`~botorch_unknown_hypers.policies.base.Policy`, else a
    ``ValueError`` that says how to build one (a method name is not a policy)."""
    if not isinstance(policy, Policy):
        hint = f" (build one: make_policy({policy!r}, domain))" if isinstance(policy, str) else " (e.g. make_policy(name, domain))"
        raise ValueError(f"{name} must be a Policy{hint}, got {type(policy).__name__}.")
    return policy


def check_black_box(problem: Any, name: str = "problem") -> BlackBox:
    r"""``problem`` itself if it has what :func:`run` needs of a black box (:class:`BlackBox`),
    else a ``ValueError`` that names what is missing."""
    needed = ["name", "domain", "optimal_value", "n_init", "evaluate", "instance", "to", "task_info"]
    missing = [a for a in needed if not hasattr(problem, a)]
    if missing:
        raise ValueError(
            f"{name} must be a black box (e.g. get_problem('branin')) with {', '.join(needed)}; "
            f"got {type(problem).__name__}, which lacks {', '.join(missing)}."
        )
    check_domain(problem.domain, f"{name}.domain")
    return problem


class AskTellOptimizer:
    r"""Holds the data of a campaign and delegates proposals to a policy.

    Example:
        >>> opt = AskTellOptimizer(make_policy("mle-gp-ucb", domain))
        >>> opt.tell(X0, Y0)                 # initial design
        >>> for _ in range(20):
        ...     X = opt.ask()                # 1 x d
        ...     opt.tell(X, objective(X))
    """

    def __init__(self, policy: Policy) -> None:
        self.policy = check_policy(policy)
        self.domain = policy.domain
        d = self.domain.dim
        self.train_X = torch.empty(0, d, dtype=policy.dtype, device=policy.device)
        self.pending = torch.empty(0, d, dtype=policy.dtype, device=policy.device)
        self.train_Y = torch.empty(0, 1, dtype=policy.dtype, device=policy.device)
        self._pending_initial = True

    def ask(self, q: int = 1) -> Tensor:
        r"""The policy's next ``q x d`` batch; needs the initial design told first
        (or :meth:`skip_initial_design`).

        The points asked and not yet told are pending: a rule that conditions on pending points
        (``policy.supports_pending``) gets them as ``X_pending`` and proposes none of them again;
        the new points join them until they are told.
        """
        if self._pending_initial:
            raise ValueError(
                "tell() the initial design before ask(), or call skip_initial_design() to start from no data."
            )
        pending = self.pending if self.policy.supports_pending and self.pending.shape[0] else None
        X = self.policy.suggest(self.train_X, self.train_Y, q=q, X_pending=pending)
        self.pending = torch.cat([self.pending, X.to(self.pending)])
        return X

    def skip_initial_design(self) -> None:
        r"""Start without an initial design: the first :meth:`ask` proposes from no data and
        the first :meth:`tell` is already a round the policy observes."""
        if self.train_X.shape[0] > 0:
            raise ValueError("skip_initial_design(): data were already told.")
        self._pending_initial = False

    def tell(self, X: Tensor, Y: Tensor, initial: bool | None = None) -> None:
        r"""Record observations ``X`` (``q x d``) and ``Y`` (``q`` or ``q x 1``).

        The first call (the initial design) is not passed to the policy's
        ``observe``: initial points belong to no candidate's play record. Results may come in
        any order and grouping: the rows told leave the pending points, the others stay
        pending. Nothing changes if the input is rejected.
        """
        if initial is not None and not isinstance(initial, bool):
            raise ValueError(f"initial must be a bool or None (the first tell() is the initial design), got {initial!r}.")
        X, Y = check_observations(self.domain, X, Y)
        X = X.to(self.train_X)
        Y = Y.to(self.train_Y)
        is_initial = self._pending_initial if initial is None else initial
        if not is_initial:
            self.policy.observe(X, Y)
        told = {i for i in match_pending(self.pending.tolist(), X, self.domain) if i is not None}
        self.pending = self.pending[[i for i in range(self.pending.shape[0]) if i not in told]]
        self.train_X = torch.cat([self.train_X, X])
        self.train_Y = torch.cat([self.train_Y, Y])
        self._pending_initial = False

    def state_dict(self) -> dict[str, Any]:
        r"""JSON-safe state: the data and the policy's state."""
        return {
            "train_X": self.train_X.tolist(),
            "train_Y": self.train_Y.tolist(),
            "pending": self.pending.tolist(),
            "pending_initial": self._pending_initial,
            "policy": self.policy.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        r"""Restore :meth:`state_dict`; raises ``ValueError`` (state unchanged) on a bad dict."""
        if not isinstance(state, dict) or not {"train_X", "train_Y", "policy"} <= set(state):
            raise ValueError("state must contain train_X, train_Y and policy.")
        if state["train_X"] == [] and state["train_Y"] == []:
            X, Y = self.train_X[:0], self.train_Y[:0]
        else:
            try:
                X, Y = check_observations(self.domain, state["train_X"], state["train_Y"], "state['train_X']", "state['train_Y']")
            except TypeError as e:
                raise ValueError(str(e)) from None
            X, Y = X.to(self.train_X), Y.to(self.train_Y)
        pending = state.get("pending", [])
        if pending == []:
            P = self.pending[:0]
        else:
            try:
                P = check_points(self.domain, pending, "state['pending']").to(self.train_X)
            except TypeError as e:
                raise ValueError(str(e)) from None
        self.policy.load_state_dict(state["policy"])
        self.train_X, self.train_Y, self.pending = X, Y, P
        self._pending_initial = bool(state.get("pending_initial", X.shape[0] == 0))


def _check_inside(problem_domain: Domain, policy_domain: Domain) -> None:
    r"""The policy's domain must lie in the problem's: its extreme points (``Domain.extreme_points``:
    a box's corners, a pool's points, a mixed domain's lowest and highest points) are points of the
    problem's domain (a box policy on a pool problem never is)."""
    if isinstance(problem_domain, FiniteDomain) and not isinstance(policy_domain, FiniteDomain):
        raise ValueError("policy.domain must lie in the problem's domain: the policy's box is not a pool (build the policy on problem.domain).")
    points, what = policy_domain.extreme_points()
    try:
        check_points(problem_domain, points.to(dtype=problem_domain.bounds.dtype), "policy.domain")
    except (ValueError, TypeError) as e:
        raise ValueError(f"policy.domain must lie in the problem's domain: the policy's {what} do not ({e})") from None


def _format_x(x: Tensor) -> str:
    return ";".join(f"{v:.10g}" for v in x.tolist())


def run(
    problem: BlackBox,
    policy: Policy,
    iterations: int,
    seed: int = 0,
    batch_size: int = 1,
    n_init: int | None = None,
    method: str | None = None,
    callback: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    r"""Run one BO campaign and return its history.

    Args:
        problem: The black box (its domain must match the policy's).
        policy: A fresh policy.
        iterations: Number of BO rounds ``T``.
        seed: Seed of the initial design and of the observation noise.
        batch_size: Points per round ``q``.
        n_init: Initial design size (default: the problem's); 0 starts from no data.
        method: Name written in the ``method`` column (default: ``policy.name``).
        callback: Called with the round number after each round (progress bars).

    Returns:
        A ``DataFrame`` with one row per evaluated point and the columns of
        :data:`RESULT_COLUMNS`.

    Raises:
        ValueError: naming the argument, before anything is evaluated or the policy is touched:
            a ``problem`` that is not a black box, a ``policy`` that is not a
            :class:`~botorch_unknown_hypers.policies.base.Policy`, domains of different
            dimensions, counts that are not integers (``iterations``, ``n_init``, ``seed`` ``>= 0``;
            ``batch_size >= 1``), a ``method`` that is not a string or a ``callback`` that is
            not callable.
    """
    check_black_box(problem)
    check_policy(policy)
    check_int("iterations", iterations, 0)
    check_int("seed", seed, 0)
    check_int("batch_size", batch_size, 1)
    if problem.domain.dim != policy.domain.dim:
        raise ValueError(f"problem has d = {problem.domain.dim} but the policy's domain has d = {policy.domain.dim}.")
    _check_inside(problem.domain, policy.domain)
    n_init = check_int("n_init", problem.n_init if n_init is None else n_init, 0)
    if method is not None and not isinstance(method, str):
        raise ValueError(f"method must be a string (the name written in the results) or None, got {method!r}.")
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable (it is called with the round number) or None, got {callback!r}.")
    problem = problem.instance(seed).to(device=policy.device, dtype=policy.dtype)
    policy.bind_task(problem.task_info())  # e.g. an oracle learns the true prior of this seed
    robust = isinstance(problem, RobustBlackBox)
    method = method or policy.name
    noise_gen = torch.Generator(device=policy.device).manual_seed(10_000 + seed)
    opt = AskTellOptimizer(policy)
    f_star = float(problem.optimal_value)
    rows: list[dict[str, Any]] = []
    best_f = -float("inf")
    cumulative = 0.0

    def record(X: Tensor, y: Tensor, f: Tensor, iteration: int, wall: float) -> None:
        nonlocal best_f, cumulative
        diag = policy.diagnostics
        if robust and iteration > 0:
            # epsilon-regret at the point the rule chose (StableOpt queries a perturbation of it)
            point = X if policy.robust_point is None else policy.robust_point
            eps_regret = problem.robust_optimal_value - float(problem.robust_value(point).min())
            diag = {**diag, "eps_regret": eps_regret}
        diagnostics = json.dumps(diag, separators=(",", ":")) if diag else ""
        for j in range(X.shape[0]):
            fj = float(f[j])
            best_f = max(best_f, fj)
            if iteration > 0:
                cumulative += f_star - fj
            sel = policy.selected[j] if iteration > 0 and j < len(policy.selected) else ""
            rows.append(
                {
                    "problem": problem.name,
                    "method": method,
                    "seed": seed,
                    "iteration": iteration,
                    "batch_index": j,
                    "y": float(y[j]),
                    "f": fj,
                    "simple_regret": f_star - best_f,
                    "cumulative_regret": cumulative,
                    "selected": sel,
                    "n_candidates": policy.n_candidates if iteration > 0 else 0,
                    "wall_time_s": wall,
                    "x": _format_x(X[j]),
                    "diagnostics": diagnostics if iteration > 0 else "",
                }
            )

    if n_init > 0:
        X0 = initial_design(policy.domain, n_init, seed).to(device=policy.device, dtype=policy.dtype)
        y0, f0 = problem.evaluate(X0, generator=noise_gen)
        opt.tell(X0, y0)
        record(X0, y0, f0, 0, 0.0)
    else:
        opt.skip_initial_design()
    for t in range(1, iterations + 1):
        start = time.perf_counter()
        X = opt.ask(batch_size)
        wall = time.perf_counter() - start
        y, f = problem.evaluate(X, generator=noise_gen)
        opt.tell(X, y)
        record(X, y, f, t, wall)
        if callback is not None:
            callback(t)
    import pandas as pd  # the history table's only use of pandas: not loaded by importing the package

    return pd.DataFrame(rows, columns=RESULT_COLUMNS)
