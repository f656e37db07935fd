r"""Optuna integration: any registered rule as an Optuna sampler.

Optuna (https://optuna.org) asks its study's sampler for each trial's parameters.
:class:`PolicySampler` is an ``optuna.samplers.BaseSampler`` that runs any method of
:mod:`botorch_unknown_hypers.policies.registry` (``lb-gp-ucb-auto``, ``he-gp-ucb``, ...) on the
study's parameters, the way Optuna's own ``GPSampler`` runs its GP:

- **Search space.** Optuna's ``IntersectionSearchSpace`` (the parameters of every completed
  trial) becomes a :class:`~botorch_unknown_hypers.domains.MixedDomain`, one parameter each, as
  Optuna's own ``GPSampler`` models them: a float (``FloatDistribution``, log-scale ones as
  :math:`\log x`, stepped ones on their grid), an integer (``IntDistribution``, log-scale and
  stepped ones included) and a categorical (``CategoricalDistribution``, one-hot columns). When
  every parameter is a continuous float the rule runs on the domain's box
  (:meth:`~botorch_unknown_hypers.domains.MixedDomain.as_box`), as before mixed spaces were
  modelled; otherwise its acquisitions are maximised over the mixed space
  (:mod:`~botorch_unknown_hypers.acquisition.mixed_search`), and a rule that needs a box or a pool
  says so at its first proposal.
- **Other parameters.** What Optuna itself cannot intersect (a parameter not in every completed
  trial) and a distribution of a single value are *delegated* to Optuna's ``RandomSampler``, as
  Optuna's ``GPSampler`` does, with one ``UserWarning`` per parameter.
- **Start.** The first ``n_startup_trials`` trials (counted as completed trials) come from
  ``RandomSampler(seed=seed)``; the rule's first call takes them as its initial design.
- **Direction.** Every rule maximises; a minimised study's values are negated.
- **Record.** The sampler keeps the rule in memory. Before each proposal it tells the rule the
  trials completed since the last one, in the order they completed (``datetime_complete``, then
  trial number); the rule matches each value to its own play by its point. Failed and pruned
  trials are skipped: they enter no data (their play stays pending in the rule's bookkeeping, as
  with :func:`~botorch_unknown_hypers.loop.AskTellOptimizer` when a point is never told).
- **Parallel trials.** Running trials (``study.ask()`` several times before ``tell``, or
  ``n_jobs > 1``) are passed as ``X_pending`` to a rule that conditions on pending points
  (``Policy.supports_pending``), so each running trial gets a different point; a sequential rule
  is not given them (one ``UserWarning``). Optuna samples a trial's relative parameters at its
  first ``suggest_*`` call, so that is when a trial's point is drawn and becomes pending.

Determinism: given ``seed`` (an int), the same sequence of asks and tells gives the same
parameters (with ``n_jobs > 1`` the order of the threads' asks and tells is not fixed). The rule's memory is not saved in the study: a study resumed in a new process with a
new sampler gives the rule its completed trials as the initial design.

Example:
    >>> import math
    >>> import optuna
    >>> from botorch_unknown_hypers.integrations.optuna import PolicySampler
    >>> def objective(trial):
    ...     lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    ...     x = trial.suggest_float("x", -2.0, 2.0)
    ...     return (math.log10(lr) + 2.5) ** 2 + (x - 0.5) ** 2
    >>> sampler = PolicySampler("lb-gp-ucb-auto", n_startup_trials=5, seed=0, num_restarts=2, raw_samples=32)
    >>> study = optuna.create_study(direction="minimize", sampler=sampler)
    >>> study.optimize(objective, n_trials=20)

References:
    - Optuna's ``BaseSampler`` (``infer_relative_search_space``, ``sample_relative``,
      ``sample_independent``) and ``GPSampler``, the model this sampler follows.
"""

from __future__ import annotations

import math
import secrets
import threading
import warnings
from collections.abc import Sequence
from typing import Any

import torch
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState
from torch import Tensor

from botorch_unknown_hypers.domains import BoxDomain, CategoricalParameter, FloatParameter, IntParameter, MixedDomain, Parameter
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.registry import METHODS, make_policy

__all__ = ["PolicySampler", "is_modelled", "search_domain"]


def is_modelled(distribution: BaseDistribution) -> bool:
    r"""Whether the rule models a parameter of ``distribution``: a float, integer or categorical
    distribution of more than one value."""
    return isinstance(distribution, (FloatDistribution, IntDistribution, CategoricalDistribution)) and not distribution.single()


def search_domain(search_space: dict[str, BaseDistribution], dtype: torch.dtype = torch.float64, device: Any = None) -> MixedDomain:
    r"""The :class:`~botorch_unknown_hypers.domains.MixedDomain` of Optuna distributions, one
    parameter per name in sorted order (the columns of the rule's domain)."""
    params: list[Parameter] = []
    for name in sorted(search_space):
        dist = search_space[name]
        if isinstance(dist, CategoricalDistribution):
            params.append(CategoricalParameter(name, tuple(dist.choices)))
        elif isinstance(dist, IntDistribution):
            params.append(IntParameter(name, int(dist.low), int(dist.high), step=int(dist.step), log=bool(dist.log)))
        elif isinstance(dist, FloatDistribution):
            step = None if dist.step is None else float(dist.step)
            params.append(FloatParameter(name, float(dist.low), float(dist.high), log=bool(dist.log), step=step))
        else:
            raise ValueError(f"search_space: parameter {name!r} has a distribution PolicySampler does not model ({type(dist).__name__}).")
    return MixedDomain(tuple(params), dtype=dtype, device=device)


def _check_options(method: str, options: dict[str, Any]) -> None:
    r"""``ValueError`` now for an option the method does not take.

    The rule is built on a 1-d unit box as a probe: an unknown keyword (a ``TypeError``)
    does not depend on the dimension and is reported here; a bad value may (a candidate set
    of the wrong dimension), so any other error comes with the rule's first proposal.
    """
    probe = BoxDomain(torch.tensor([[0.0], [1.0]], dtype=torch.float64))
    try:
        make_policy(method, probe, **options)
    except TypeError as e:
        raise ValueError(f"options of {method!r}: {e}") from None
    except ValueError:
        pass


class PolicySampler(BaseSampler):
    r"""An Optuna sampler that runs a registered rule on the study's parameters.

    See the module docstring for the search space, the delegated parameters, the record and
    pending points.

    Args:
        method: A registered method name (``buh list``), e.g. ``"lb-gp-ucb-auto"``, ``"he-gp-ucb"``.
        n_startup_trials: Completed trials drawn by ``RandomSampler(seed=seed)`` before the rule
            proposes (an int >= 1; the rule's initial design).
        seed: Seed of the random start and of the rule (``None``: a fresh random seed).
        **options: Keyword options of the method (``make_policy(method, domain, **options)``),
            e.g. ``num_restarts=2, raw_samples=32``; ``device`` and ``dtype`` go to the rule too.

    Raises:
        ValueError: For an unknown method, a bad ``n_startup_trials`` or ``seed``, or an option
            the method does not take (a bad option value: at the rule's first proposal).

    Attributes:
        policy: The rule (``None`` before its first proposal); ``policy.state`` is its record.
        told: The numbers of the trials the rule was told, in that order (the initial design
            first).
        space: The parameters the rule models, as a
            :class:`~botorch_unknown_hypers.domains.MixedDomain` whose columns are the rule's
            (``None`` before its first proposal).

    Example:
        Two workers: the second trial is asked while the first still runs, and the rule
        conditions on it.

        >>> sampler = PolicySampler("he-gp-ucb", n_startup_trials=5, seed=1, num_restarts=2, raw_samples=32)
        >>> study = optuna.create_study(sampler=sampler)          # minimise
        >>> study.optimize(objective, n_trials=5)                 # the random start
        >>> a, b = study.ask(), study.ask()
        >>> xa, xb = a.suggest_float("x", -2.0, 2.0), b.suggest_float("x", -2.0, 2.0)
    """

    def __init__(self, method: str, *, n_startup_trials: int = 10, seed: int | None = None, **options: Any) -> None:
        if method not in METHODS:
            raise ValueError(f"unknown method {method!r}; valid methods: {', '.join(sorted(METHODS))}.")
        if isinstance(n_startup_trials, bool) or not isinstance(n_startup_trials, int) or n_startup_trials < 1:
            raise ValueError(f"n_startup_trials must be an int >= 1, got {n_startup_trials!r}.")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seed must be an int or None, got {seed!r}.")
        _check_options(method, options)
        self.method = method
        self.n_startup_trials = n_startup_trials
        self.seed = seed
        self.options = dict(options)
        self._policy_seed = seed if seed is not None else secrets.randbelow(2**31)
        self._random = RandomSampler(seed=seed)
        self._search_space = IntersectionSearchSpace()
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        self.policy: Policy | None = None
        self.told: list[int] = []
        self.space: MixedDomain | None = None
        self._study: str | None = None
        self._proposed: dict[int, list[float]] = {}  # running trial number -> its point

    # ------------------------------------------------------------ BaseSampler API
    def infer_relative_search_space(self, study: Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        r"""The parameters of every completed trial with more than one value (the others are delegated)."""
        return {n: d for n, d in self._search_space.calculate(study).items() if is_modelled(d)}

    def sample_relative(self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        r"""The rule's next point as ``name -> value`` (``{}`` during the random start)."""
        if not search_space:
            return {}
        if len(study.directions) != 1:
            raise ValueError(f"PolicySampler optimises one objective; the study has {len(study.directions)}.")
        completed = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if len(completed) < self.n_startup_trials:
            return {}
        running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        with self._lock:
            space = search_domain(search_space, self.options.get("dtype", torch.float64), self.options.get("device"))
            if self.policy is None or space != self.space or study.study_name != self._study:
                self._start(space, study)
            x = self._suggest(study, completed, [t for t in running if t.number != trial.number])
            self._proposed[trial.number] = x.tolist()
        return space.to_values(x)

    def sample_independent(self, study: Study, trial: FrozenTrial, param_name: str, param_distribution: BaseDistribution) -> Any:
        r"""A parameter the rule does not model, from ``RandomSampler`` (warned once per name
        after the random start)."""
        if param_name not in self._warned and len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))) >= self.n_startup_trials:
            self._warned.add(param_name)
            reason = "has a single value" if not is_modelled(param_distribution) else "is not in every completed trial"
            warnings.warn(
                f"parameter {param_name!r} ({type(param_distribution).__name__}) {reason}: PolicySampler "
                f"({self.method}) models the parameters of every completed trial, so it is sampled by RandomSampler.",
                UserWarning,
                stacklevel=2,
            )
        return self._random.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        self._random.before_trial(study, trial)

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState, values: Sequence[float] | None) -> None:
        self._proposed.pop(trial.number, None)  # no longer running
        self._random.after_trial(study, trial, state, values)

    def reseed_rng(self) -> None:
        r"""Reseed the random start (Optuna calls this for ``n_jobs > 1``); the rule keeps its seed."""
        self._random.reseed_rng()

    # ------------------------------------------------------------------ helpers
    def _start(self, space: MixedDomain, study: Study) -> None:
        r"""A fresh rule on ``space`` (the first proposal, a new study or a changed search space):
        on its box when every parameter is a continuous float."""
        if self.policy is not None:
            warnings.warn(
                f"PolicySampler ({self.method}): the search space or the study changed; the rule restarts "
                "with the completed trials as its initial design.",
                UserWarning,
                stacklevel=3,
            )
        domain = space.as_box() if space.is_box else space
        self.policy = make_policy(self.method, domain, seed=self._policy_seed, **self.options)
        self.space, self._study, self.told = space, study.study_name, []

    def _suggest(self, study: Study, completed: list[FrozenTrial], running: list[FrozenTrial]) -> Tensor:
        r"""Tell the rule the trials completed since its last proposal, then ask it for one point."""
        policy, space = self.policy, self.space
        sign = -1.0 if study.direction == StudyDirection.MINIMIZE else 1.0
        names = {p.name for p in space.parameters}
        data = {
            t.number: (space.to_row(t.params), sign * float(t.value))
            for t in completed
            if names <= t.params.keys() and math.isfinite(float(t.value))
        }
        if not self.told:  # the rule's first call: every completed trial is the initial design
            self.told = sorted(data)
        else:
            known = set(self.told)
            arrived = sorted(
                (t for t in completed if t.number in data and t.number not in known),
                key=lambda t: (t.datetime_complete is None, t.datetime_complete or 0, t.number),
            )
            for t in arrived:  # each value meets its own play, in the order the values came
                row, value = data[t.number]
                policy.observe(self._tensor([row]), self._tensor([[value]]))
                self.told.append(t.number)
        rows = [data[n][0] for n in self.told if n in data]
        values = [data[n][1] for n in self.told if n in data]
        pending = [self._pending_row(t) for t in running]
        pending = [row for row in pending if row is not None]
        if pending and not policy.supports_pending:
            if "__pending__" not in self._warned:
                self._warned.add("__pending__")
                warnings.warn(
                    f"{self.method} does not condition on pending points: trials asked while others run may "
                    "repeat their points; use a rule with Policy.supports_pending (e.g. lb-gp-ucb, he-gp-ucb).",
                    UserWarning,
                    stacklevel=3,
                )
            pending = []
        X_pending = self._tensor(pending) if pending else None
        train_X = self._tensor(rows).reshape(len(rows), space.dim)
        X = policy.suggest(train_X, self._tensor(values).reshape(-1, 1), q=1, X_pending=X_pending)
        return X[0]

    def _pending_row(self, trial: FrozenTrial) -> list[float] | None:
        r"""The point of a running trial: the rule's proposal, else its parameters once all are set."""
        if trial.number in self._proposed:
            return self._proposed[trial.number]
        if {p.name for p in self.space.parameters} <= trial.params.keys():
            return self.space.to_row(trial.params)
        return None

    def _tensor(self, values: list[Any]) -> Tensor:
        return torch.tensor(values, dtype=self.policy.dtype, device=self.policy.device)
