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

  On a :class:`~botorch_unknown_hypers.domains.MixedDomain`, each parameter is its Optuna
  distribution (``FloatDistribution`` with its ``log`` and ``step``, ``IntDistribution``,
  ``CategoricalDistribution``), so ``GPSampler`` models and optimises them as a user's study does.

- ``optuna-tpe`` (:class:`OptunaTPEPolicy`): Optuna's ``TPESampler`` with its defaults, driven in
  the same way.

- ``mixed-qlognei`` (:class:`MixedQLogNEI`): BoTorch's recipe for a mixed space, as Ax runs it:
  ``MixedSingleTaskGP`` (a categorical kernel on the categorical codes; ``SingleTaskGP`` when
  there is none) fitted on one column per parameter, qLogNEI, and
  ``optimize_acqf_mixed_alternating`` with BoTorch's defaults.

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

from botorch_unknown_hypers.domains import BoxDomain, CategoricalParameter, Domain, FiniteDomain, FloatParameter, MixedDomain
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.batch.batch_baselines import QLogNEI

OPTUNA_INSTALL_HINT = 'pip install "botorch-unknown-hypers[optuna]"'


def import_optuna() -> Any:
    r"""``import optuna``, or an ``ImportError`` that says how to install it."""
    try:
        import optuna
    except ImportError as e:
        raise ImportError(f"the Optuna peers need Optuna, an optional extra: {OPTUNA_INSTALL_HINT} ({e}).") from None
    return optuna


def optuna_distributions(domain: Domain) -> dict[str, Any]:
    r"""``name -> Optuna distribution`` of a domain: each parameter of a
    :class:`~botorch_unknown_hypers.domains.MixedDomain` as its own distribution (``log`` and
    ``step`` kept, a categorical's choices), each column of a box or a pool's bounding box as
    ``FloatDistribution(low, high)`` named ``x0, x1, ...``."""
    distributions = import_optuna().distributions
    if isinstance(domain, MixedDomain):
        out: dict[str, Any] = {}
        for p in domain.parameters:
            if isinstance(p, CategoricalParameter):
                out[p.name] = distributions.CategoricalDistribution(list(p.choices))
            elif isinstance(p, FloatParameter):
                out[p.name] = distributions.FloatDistribution(p.lower, p.upper, log=p.log, step=p.step)
            else:
                out[p.name] = distributions.IntDistribution(int(p.lower), int(p.upper), log=p.log, step=int(p.step))
        return out
    bounds = domain.bounds.detach().cpu().double().tolist()
    return {f"x{i}": distributions.FloatDistribution(low, high) for i, (low, high) in enumerate(zip(bounds[0], bounds[1]))}


class OptunaGPPolicy(Policy):
    r"""Optuna's ``GPSampler`` with its defaults, through Optuna's ask/tell API.

    On a pool, the point asked :math:`a` (in the pool's bounding box :math:`[l, u]`) is played as

    .. math::

        x = \arg\min_{p \in P \setminus O} \big\| (p - a) / (u - l) \big\|_2,

    :math:`P` the pool and :math:`O` the points observed or already played in the batch (all of
    :math:`P` once :math:`P \setminus O` is empty; ties: the first in the pool). When ``x`` is
    observed, the asked trial is told ``TrialState.FAIL`` (its point was not measured) and ``x``
    joins the study as a completed trial, so the GP fits only measured points. On a mixed domain
    each parameter is its own distribution (:func:`optuna_distributions`) and a trial's values map
    to the domain's point by :meth:`~botorch_unknown_hypers.domains.MixedDomain.to_row`.

    Args:
        domain: A :class:`~botorch_unknown_hypers.domains.BoxDomain` (Optuna's float
            parameters), a :class:`~botorch_unknown_hypers.domains.FiniteDomain` (its
            bounding box, the asked points moved to the pool as above) or a
            :class:`~botorch_unknown_hypers.domains.MixedDomain` (its parameters).
        seed: The sampler's ``seed``.
        device, dtype: Of the returned points (Optuna itself works in float64 on the CPU).
        **sampler_options: Passed to the sampler unchanged (none for the peer as benchmarked).

    Raises:
        ValueError: if ``domain`` is not a box, a pool or a mixed domain.
        ImportError: if Optuna is not installed.
    """

    name: ClassVar[str] = "optuna-gp"
    sampler_name: ClassVar[str] = "GPSampler"
    r"""The class in ``optuna.samplers`` this peer runs."""
    min_observations: ClassVar[int] = 0

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        **sampler_options: Any,
    ) -> None:
        if not isinstance(domain, (BoxDomain, FiniteDomain, MixedDomain)):
            raise ValueError(
                f"domain: {self.name} searches a box (BoxDomain), a pool (FiniteDomain) or a MixedDomain, got {type(domain).__name__}."
            )
        super().__init__(domain, seed=seed, device=device, dtype=dtype)
        optuna = import_optuna()
        self._optuna = optuna
        self.sampler = getattr(optuna.samplers, self.sampler_name)(seed=seed, **sampler_options)
        self.study = optuna.create_study(direction="maximize", sampler=self.sampler)
        self.distributions = optuna_distributions(self.domain)
        self.param_names = list(self.distributions)
        self._known = 0  # rows of train_X already in the study (told or added)
        self._pending: list[tuple[Any, list[float]]] = []  # asked trials, not yet told, and the points played

    def _params(self, x: Tensor) -> dict[str, Any]:
        if isinstance(self.domain, MixedDomain):
            return self.domain.to_values(x)
        return dict(zip(self.param_names, (float(v) for v in x.tolist())))

    def _point(self, params: dict[str, Any]) -> list[float]:
        if isinstance(self.domain, MixedDomain):
            return self.domain.to_row(params)
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
        pool = self.domain
        assert isinstance(pool, FiniteDomain)  # called only on a pool (``_observed_pool`` gave ``taken``)
        points = pool.points
        bounds = pool.bounds
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
            f"{self.name} keeps Optuna's study in memory; its state cannot be saved (rerun the campaign instead)."
        )

    def load_state_dict(self, state: dict[str, Any]) -> None:
        r"""Refused, as :meth:`state_dict`."""
        raise NotImplementedError(f"{self.name} keeps Optuna's study in memory; no state can be loaded.")


class OptunaTPEPolicy(OptunaGPPolicy):
    r"""Optuna's ``TPESampler`` with its defaults, driven as :class:`OptunaGPPolicy`."""

    name: ClassVar[str] = "optuna-tpe"
    sampler_name: ClassVar[str] = "TPESampler"


class MixedQLogNEI(Policy):
    r"""BoTorch's qLogNEI on a mixed space as Ax runs it: the peer of the package's mixed rules.

    The model sees one column per parameter, the codes :math:`c = e^{-1}(x)` of
    :meth:`~botorch_unknown_hypers.domains.MixedDomain.to_codes` (a categorical as its choice
    index, a log-scale parameter as :math:`\log x`): BoTorch's ``MixedSingleTaskGP``,

    .. math::

        k(c, c') = s_1 (k_o(c_o, c_o') + s_2 k_c(c_c, c_c')) + s_3 k_o(c_o, c_o') k_c(c_c, c_c'),

    with :math:`k_o` BoTorch's dimension-scaled-prior Matérn-5/2 (RBF in older releases) on the
    ordinal codes (normalised to the unit cube) and :math:`k_c` the ``CategoricalKernel``
    :math:`\exp(-\sum_j [c_j \neq c_j'] / \ell_j)`; BoTorch's default ``SingleTaskGP`` when the
    space has no categorical. Outcomes standardised, hyperparameters fitted by
    ``fit_gpytorch_mll`` every round. ``qLogNoisyExpectedImprovement(model, X_baseline=codes)``
    (pending points as ``X_pending``) is maximised by ``optimize_acqf_mixed_alternating`` with
    BoTorch's defaults (``num_restarts = 20``, ``raw_samples = 1024``; ``q > 1`` sequentially)
    inside the policy's seeded RNG, and the codes found are played as points
    (:meth:`~botorch_unknown_hypers.domains.MixedDomain.from_codes`).

    Args:
        domain: A :class:`~botorch_unknown_hypers.domains.MixedDomain`.
        seed, device, dtype: As :class:`Policy`.
        num_restarts, raw_samples: ``optimize_acqf_mixed_alternating``'s.

    Raises:
        ValueError: if ``domain`` is not a :class:`~botorch_unknown_hypers.domains.MixedDomain`.
    """

    name: ClassVar[str] = "mixed-qlognei"
    supports_pending: ClassVar[bool] = True

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        num_restarts: int = 20,
        raw_samples: int = 1024,
    ) -> None:
        if not isinstance(domain, MixedDomain):
            raise ValueError(f"domain: mixed-qlognei searches a MixedDomain, got {type(domain).__name__} (use qlognei on a box or a pool).")
        super().__init__(domain, seed=seed, device=device, dtype=dtype, num_restarts=num_restarts, raw_samples=raw_samples)

    def build_model(self, codes: Tensor, train_Y: Tensor) -> Any:
        r"""The fitted model of ``n x P`` codes and ``n x 1`` observations (class docstring)."""
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import MixedSingleTaskGP, SingleTaskGP
        from botorch.models.transforms.input import Normalize
        from gpytorch.mlls import ExactMarginalLogLikelihood

        domain = self.domain
        assert isinstance(domain, MixedDomain)
        bounds, _, categorical = domain.code_layout()
        ordinal = [j for j in range(bounds.shape[-1]) if j not in categorical]
        if categorical:
            transform = Normalize(d=bounds.shape[-1], indices=ordinal, bounds=bounds[:, ordinal]) if ordinal else None
            model: Any = MixedSingleTaskGP(codes, train_Y, cat_dims=sorted(categorical), input_transform=transform)
        else:
            model = SingleTaskGP(codes, train_Y, input_transform=Normalize(d=bounds.shape[-1], bounds=bounds))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        return model

    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        from botorch.acquisition.logei import qLogNoisyExpectedImprovement
        from botorch.optim.optimize_mixed import optimize_acqf_mixed_alternating

        domain = self.domain
        assert isinstance(domain, MixedDomain)
        codes = domain.to_codes(train_X)
        pending = None if self.X_pending is None else domain.to_codes(self.X_pending)
        bounds, discrete, categorical = domain.code_layout()
        with self.seeded():  # fitting, qLogNEI's sampler and the optimiser's starts draw from the global RNG
            model = self.build_model(codes, train_Y)
            acqf = qLogNoisyExpectedImprovement(model, X_baseline=codes, X_pending=pending)
            C, _ = optimize_acqf_mixed_alternating(
                acqf, bounds, discrete_dims=discrete or None, cat_dims=categorical or None,
                q=q, num_restarts=self.num_restarts, raw_samples=self.raw_samples,
            )
        return domain.round(domain.from_codes(C.detach()))


class FullyBayesianQLogNEI(QLogNEI):
    r"""``qlognei`` on BoTorch's fully Bayesian GP: :class:`~botorch_unknown_hypers.policies.batch.batch_baselines.QLogNEI`
    with ``surrogate="fully-bayesian"`` (the module docstring; every other option as ``qlognei``'s).
    BoTorch's acquisition averages qLogNEI's improvement over the NUTS samples' GPs."""

    name: ClassVar[str] = "fb-qlognei"

    def __init__(self, domain: Domain, seed: int = 0, device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float64, surrogate: str = "fully-bayesian", **options: Any) -> None:
        super().__init__(domain, seed=seed, device=device, dtype=dtype, surrogate=surrogate, **options)


PEERS: dict[str, type[Policy]] = {
    "optuna-gp": OptunaGPPolicy,
    "optuna-tpe": OptunaTPEPolicy,
    "mixed-qlognei": MixedQLogNEI,
    "fb-qlognei": FullyBayesianQLogNEI,
}
r"""Peer name -> policy class (registered as methods by the benchmark harness)."""

__all__ = [
    "OPTUNA_INSTALL_HINT",
    "FullyBayesianQLogNEI",
    "MixedQLogNEI",
    "OptunaGPPolicy",
    "OptunaTPEPolicy",
    "PEERS",
    "import_optuna",
    "optuna_distributions",
]
