r"""Practitioners' peers as policies: other libraries' optimisers behind :class:`Policy`.

A benchmark compares the package's rules with what a practitioner would pick instead, each
run through its library's own public API with that library's defaults, so that the harness
(:func:`~botorch_unknown_hypers.loop.run`, the executors) runs it like any registered rule.

- ``optuna-gp`` (:class:`OptunaGPPolicy`): Optuna's ``GPSampler`` (``pip install
  "botorch-unknown-hypers[optuna]"``), driven by Optuna's ask/tell interface on a study that
  maximises ``y``; every box coordinate is a ``FloatDistribution(low, high)``. The sampler is
  built with Optuna's defaults and ``seed`` = the run's seed. Points the policy did not propose
  (the loop's initial design) enter the study as completed trials (``create_trial`` /
  ``add_trial``), so they count towards ``GPSampler``'s ``n_startup_trials = 10`` random
  trials, as they would for a user who enqueues an initial design. On a pool (a finite set of
  points, as the materials datasets), Optuna searches the pool's bounding box and each asked point
  is played as the nearest pool point not yet observed (Euclidean distance in units of the box's
  widths), as a practitioner who asks Optuna for features measures the closest sample at hand;
  the asked trial is failed and the measured point added as a completed trial.

- ``fb-qlognei`` (:class:`FullyBayesianQLogNEI`): BoTorch's qLogNEI on BoTorch's fully Bayesian
  ``FullyBayesianSingleTaskGP`` (dimension-scaled priors, NUTS in NumPyro every round with the
  budget :data:`~botorch_unknown_hypers.models.fitted.NUTS_BUDGET`; ``pip install
  "botorch-unknown-hypers[fullybayes]"``): averaging over the hyperparameter posterior done by
  the book, the anchor the ``auto`` method's averaging is judged against.

BoTorch's own default (``qlognei``) and random search (``random``) are registered rules
already. HEBO is not wrapped: its last release on PyPI (0.3.6) requires ``numpy < 1.25``,
which this package's dependencies exclude, and 0.3.2, the newest release that installs
beside them, fails on import (``No module named 'pymoo.factory'``); ``docs/bbob.md`` records it.

The peers keep their library's state (the study) in memory: :meth:`state_dict` is refused
instead of saving a state that could not give the same next suggestion.

This module imports no peer library on import; each policy imports its own on construction
and raises an ``ImportError`` that says how to install it. It registers nothing: the
benchmark harness (:mod:`botorch_unknown_hypers.benchmarks.bbob`) does.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from torch import Tensor

from botorch_unknown_hypers.domains import BoxDomain, Domain, FiniteDomain
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.batch_baselines import QLogNEI

OPTUNA_INSTALL_HINT = 'pip install "botorch-unknown-hypers[optuna]"'


def import_optuna() -> Any:
    r"""``import optuna``, or an ``ImportError`` that says how to install it."""
    try:
        import optuna
    except ImportError as e:
        raise ImportError(f"the optuna-gp peer needs Optuna, an optional extra: {OPTUNA_INSTALL_HINT} ({e}).") from None
    return optuna


class OptunaGPPolicy(Policy):
    r"""Optuna's ``GPSampler`` with its defaults, through Optuna's ask/tell API.

    On a pool, the point asked :math:`a` (in the pool's bounding box :math:`[l, u]`) is played as

    .. math::

        x = \arg\min_{p \in P \setminus O} \big\| (p - a) / (u - l) \big\|_2,

    :math:`P` the pool and :math:`O` the points observed or already played in the batch (all of
    :math:`P` once :math:`P \setminus O` is empty; ties: the first in the pool). When ``x`` is
    observed, the asked trial is told ``TrialState.FAIL`` (its point was not measured) and ``x``
    joins the study as a completed trial, so the GP fits only measured points.

    Args:
        domain: A :class:`~botorch_unknown_hypers.domains.BoxDomain` (Optuna's float
            parameters) or a :class:`~botorch_unknown_hypers.domains.FiniteDomain` (its
            bounding box, the asked points moved to the pool as above).
        seed: ``GPSampler(seed=seed)``.
        device, dtype: Of the returned points (Optuna itself works in float64 on the CPU).
        **sampler_options: Passed to ``GPSampler`` unchanged (none for the peer as benchmarked).

    Raises:
        ValueError: if ``domain`` is neither a box nor a pool.
        ImportError: if Optuna is not installed.
    """

    name: ClassVar[str] = "optuna-gp"
    min_observations: ClassVar[int] = 0

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        **sampler_options: Any,
    ) -> None:
        if not isinstance(domain, (BoxDomain, FiniteDomain)):
            raise ValueError(f"domain: optuna-gp searches a box (BoxDomain) or a pool (FiniteDomain), got {type(domain).__name__}.")
        super().__init__(domain, seed=seed, device=device, dtype=dtype)
        optuna = import_optuna()
        self._optuna = optuna
        self.sampler = optuna.samplers.GPSampler(seed=seed, **sampler_options)
        self.study = optuna.create_study(direction="maximize", sampler=self.sampler)
        bounds = self.domain.bounds.detach().cpu().double().tolist()
        self.param_names = [f"x{i}" for i in range(self.domain.dim)]
        self.distributions = {
            name: optuna.distributions.FloatDistribution(low, high)
            for name, low, high in zip(self.param_names, bounds[0], bounds[1])
        }
        self._known = 0  # rows of train_X already in the study (told or added)
        self._pending: list[tuple[Any, list[float]]] = []  # asked trials, not yet told, and the points played

    def _params(self, x: Tensor) -> dict[str, float]:
        return dict(zip(self.param_names, (float(v) for v in x.tolist())))

    def _point(self, params: dict[str, float]) -> list[float]:
        return [float(params[name]) for name in self.param_names]

    def _add_completed(self, X: Tensor, Y: Tensor) -> None:
        r"""Rows the study has not seen (e.g. the initial design) as completed trials."""
        for x, y in zip(X, Y.reshape(-1)):
            trial = self._optuna.trial.create_trial(params=self._params(x), distributions=self.distributions, value=float(y))
            self.study.add_trial(trial)

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        if train_X.shape[0] > self._known:
            self._add_completed(train_X[self._known :], train_Y[self._known :])
            self._known = train_X.shape[0]
        points = []
        taken = self._observed_pool(train_X)
        for _ in range(q):
            trial = self.study.ask(self.distributions)
            point = self._point(trial.params)
            if taken is not None:
                point = self._nearest_pool_point(point, taken)
            self._pending.append((trial, point))
            points.append(point)
        return torch.tensor(points, dtype=self.dtype, device=self.device)

    def _observed_pool(self, train_X: Tensor) -> Tensor | None:
        r"""On a pool, the ``N`` flags of its points observed in ``train_X`` (``None`` on a box)."""
        if not isinstance(self.domain, FiniteDomain):
            return None
        taken = torch.zeros(self.domain.points.shape[0], dtype=torch.bool, device=self.domain.device)
        index = self.domain.index_of(train_X)  # on the pool's device; -1 for a row not in the pool
        taken[index[index >= 0]] = True
        return taken

    def _nearest_pool_point(self, asked: list[float], taken: Tensor) -> list[float]:
        r"""The pool point nearest ``asked`` (in box widths) among those not ``taken`` (all when every
        one is), marked taken."""
        points = self.domain.points
        bounds = self.domain.bounds
        width = (bounds[1] - bounds[0]).clamp_min(torch.finfo(points.dtype).tiny)
        a = torch.tensor(asked, dtype=points.dtype, device=points.device)
        distance = (((points - a) / width) ** 2).sum(-1)
        if not bool(taken.all()):
            distance = distance.masked_fill(taken, float("inf"))
        j = int(distance.argmin())
        taken[j] = True
        return points[j].tolist()

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        r"""Tell each row to the pending trial played at that point (the first such; one moved to a
        pool point is failed and the row added instead), or add it as a completed trial when none
        was played there."""
        scale = float(self.domain.bounds.abs().max())
        tol = 10 * torch.finfo(self.dtype).eps * max(scale, 1.0)  # the point after a round trip in self.dtype
        for x, y in zip(X, Y.reshape(-1)):
            row = x.tolist()
            match = next((p for p in self._pending if max(abs(a - b) for a, b in zip(p[1], row)) <= tol), None)
            if match is None:
                self._add_completed(x.unsqueeze(0), y.reshape(1))
                continue
            self._pending.remove(match)
            trial, played = match
            if played == self._point(trial.params):
                self.study.tell(trial, float(y))
            else:  # moved to a pool point: the asked point was not measured, the played one was
                self.study.tell(trial, state=self._optuna.trial.TrialState.FAIL)
                self._add_completed(x.unsqueeze(0), y.reshape(1))
        self._known += X.shape[0]

    def state_dict(self) -> dict[str, Any]:
        r"""Refused: the Optuna study lives in memory only."""
        raise NotImplementedError(
            "optuna-gp keeps Optuna's study in memory; its state cannot be saved (rerun the campaign instead)."
        )

    def load_state_dict(self, state: dict[str, Any]) -> None:
        r"""Refused, as :meth:`state_dict`."""
        raise NotImplementedError("optuna-gp keeps Optuna's study in memory; no state can be loaded.")


class FullyBayesianQLogNEI(QLogNEI):
    r"""``qlognei`` on BoTorch's fully Bayesian GP: :class:`~botorch_unknown_hypers.policies.batch_baselines.QLogNEI`
    with ``surrogate="fully-bayesian"`` (the module docstring; every other option as ``qlognei``'s).
    BoTorch's acquisition averages qLogNEI's improvement over the NUTS samples' GPs."""

    name: ClassVar[str] = "fb-qlognei"

    def __init__(self, domain: Domain, seed: int = 0, device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float64, surrogate: str = "fully-bayesian", **options: Any) -> None:
        super().__init__(domain, seed=seed, device=device, dtype=dtype, surrogate=surrogate, **options)


PEERS: dict[str, type[Policy]] = {"optuna-gp": OptunaGPPolicy, "fb-qlognei": FullyBayesianQLogNEI}
r"""Peer name -> policy class (registered as methods by the benchmark harness)."""

__all__ = ["OPTUNA_INSTALL_HINT", "FullyBayesianQLogNEI", "OptunaGPPolicy", "PEERS", "import_optuna"]
