r"""The round context: what the pieces of a round may use, and nothing of the rule that owns it.

A rule (:class:`~botorch_unknown_hypers.policies.base.Policy`) owns one :class:`RoundContext`
for its lifetime. It holds

- the search space (``domain``), the device and dtype of every computation, the rule's one
  ``torch.Generator`` (the only source of randomness, :meth:`RoundContext.seeded` for library calls
  that draw from the global RNG);
- the multi-start settings of every box maximisation (:class:`SearchOptions`);
- the points still being evaluated in the current round (``X_pending``, ``p x d`` or ``None``);
- the derived data kept across rounds, never saved: the Cholesky factors of the candidate GPs
  :math:`L_u L_u^\top = K_u(X, X) + s_u I` per noise variance (:meth:`RoundContext.candidate_factor_sets`,
  extended by block updates as rows arrive), the GPyTorch modules of recent candidate sets, the
  campaign's fixed raw points and the unit-cube image :math:`(x - l)/(u - l)` of the round's data.

The pieces of :class:`~botorch_unknown_hypers.policies.round.candidate_round.CandidateSetRound` receive the context
and the rule's state, never the rule. The host copies of the round's values are made by the round
itself (:class:`~botorch_unknown_hypers.policies.round.candidate_round.RoundData`), not here.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator, Sequence

import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.models.transforms import Normalize
from torch import Tensor

from botorch_unknown_hypers.acquisition.optimize import Restarts, fixed_raw_points, maximize, maximize_slot
from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.domains import Domain, check_observations, observation_checks
from botorch_unknown_hypers.host import read_together
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.factor_cache import CandidateFactor, FactorCache
from botorch_unknown_hypers.regret_bounds import information_gain_of_model
from botorch_unknown_hypers.rng import draw_seed, forked_rng
from botorch_unknown_hypers.shared_constraints import constraints_on


@dataclass(frozen=True)
class SearchOptions:
    r"""How a box is searched: ``raw_samples`` scored points, the best ``num_restarts`` refined by
    ``search`` (``"scipy"``: BoTorch's L-BFGS-B on the host; ``"torch"``: the batched projected
    L-BFGS on the rule's device). Pools are scored exhaustively either way."""

    num_restarts: int = 10
    raw_samples: int = 512
    search: str = "scipy"


class RoundContext:
    r"""The round's environment (module docstring).

    Args:
        domain: The search space, on ``device`` and in ``dtype``.
        generator: The rule's generator (CPU).
        device, dtype: Of every computation.
        options: The multi-start settings of box maximisations.

    Attributes:
        X_pending: ``p x d`` points being evaluated while the rule proposes (``None`` otherwise).
        factor_caches: The factor caches, one per noise variance (``None``: each candidate's own).
    """

    KEPT_MODULE_SETS: ClassVar[int] = 4
    r"""How many recent candidate sets :meth:`candidate_modules` keeps the modules of."""

    def __init__(self, domain: Domain, generator: torch.Generator, device: torch.device, dtype: torch.dtype, options: SearchOptions) -> None:
        self.domain = domain
        self.generator = generator
        self.device = device
        self.dtype = dtype
        self.options = options
        self.X_pending: Tensor | None = None
        self.factor_caches: dict[float | None, FactorCache] = {}
        self._unit = Normalize(domain.dim, bounds=domain.bounds)
        self._raw_points: tuple[tuple[int, int], Tensor | None] | None = None  # (seed, raw_samples), points
        self._unit_points: tuple[Tensor, Tensor] | None = None  # points, their unit-cube image
        self._modules: dict[tuple[Any, ...], tuple[Any, Any, Any]] = {}  # candidate_modules
        self._round_inputs: list[Tensor | None] | None = None  # checked_inputs, unit_inputs

    # ------------------------------------------------------------------ data
    def checked_inputs(self, train_X: Tensor, train_Y: Tensor) -> tuple[Tensor, Tensor]:
        r""":func:`~botorch_unknown_hypers.domains.check_observations` of a round's data and, in the
        same host read, whether their unit-cube image extends the last round's (kept for
        :meth:`unit_inputs`), so that the factor caches need not compare them again (a second read
        only when the data are not an extension). Raises before anything is kept on refused data."""
        held = self._round_inputs
        last = None if held is None else held[1]
        X, Y, valid = observation_checks(self.domain, train_X, train_Y, "train_X", "train_Y", allow_empty=True)
        unit = None
        if valid is not None and last is not None and X.shape[0] >= last.shape[0]:
            unit = self._unit(X)
            verdict = valid & (unit[: last.shape[0]] == last).all()
            if bool(verdict):
                self._round_inputs = [X, unit, last]  # this round's data, their unit image, the prefix checked
                return X, Y
        X, Y = check_observations(self.domain, X, Y, "train_X", "train_Y", allow_empty=True)
        self._round_inputs = [X, unit, None]
        return X, Y

    def unit_inputs(self, train_X: Tensor) -> tuple[Tensor, Tensor | None]:
        r"""``(U, prefix)``: ``train_X`` (``n x d``) in unit-cube coordinates, computed once per
        round for the round's data, and the unit inputs of the last round that ``U`` was checked to
        extend (``None`` when not checked: other data, or the first round)."""
        held = self._round_inputs
        if held is None or held[0] is not train_X:
            return self._unit(train_X), None
        unit = held[1]
        if unit is None:
            unit = held[1] = self._unit(train_X)
        return unit, held[2]

    # ------------------------------------------------------------- factors
    def candidate_factor_sets(
        self,
        spec: CandidateSpec,
        train_X: Tensor,
        noises: Sequence[float | None],
        keep: CandidateSpec | list[str] | None = None,
        points: Tensor | None = None,
        keys: list[str] | None = None,
    ) -> list[CandidateFactor] | None:
        r"""Cholesky factors of ``spec``'s candidates on ``train_X`` (unit-cube coordinates) at each
        of ``noises`` (distinct; ``None``: each candidate's own noise variance), one
        :class:`~botorch_unknown_hypers.models.factor_cache.FactorCache` each, kept across rounds
        (new rows appended by block updates, new candidates factorised once, absent ones dropped;
        those of ``keep`` stay cached), the caches' reads made together (one host copy per round,
        :func:`~botorch_unknown_hypers.host.read_together`). ``points`` (``m x d``, raw units): points
        fixed for the campaign at which the first cache also carries :math:`L_u^{-1}k_u(X, R)`.
        ``keys``: :meth:`candidate_keys` of ``spec`` when the caller holds them. ``None`` for
        families without stated noise variances or a JSON identity (the model factorises itself)."""
        keys = self.candidate_keys(spec) if keys is None else keys
        if keys is None:
            return None
        if len(set(noises)) != len(noises):
            raise ValueError(f"noises must be distinct (one cache each), got {list(noises)!r}.")
        caches = []
        for noise in noises:
            cache = self.factor_caches.get(noise)
            if cache is None:
                cache = self.factor_caches[noise] = FactorCache(noise=noise)
            caches.append(cache)
        if points is not None:
            known = self._unit_points
            if known is None or known[0] is not points or (known[1].dtype, known[1].device) != (train_X.dtype, train_X.device):
                known = self._unit_points = (points, self._unit(points.to(train_X)))
            caches[0].set_points(known[1], raw=points)  # the model's transform of points is the context's
        unit, prefix = self.unit_inputs(train_X)

        def build(one: CandidateSpec, one_keys: list[str]) -> tuple[Any, ...]:
            modules = self.candidate_modules(one, one_keys, train_X)
            assert modules is not None  # keys given: the modules are built
            return modules

        steps = [cache.factor_steps(spec, unit, keep, keys=keys, build=build, prefix=prefix) for cache in caches]
        return read_together(steps)

    @staticmethod
    def candidate_keys(spec: CandidateSpec) -> list[str] | None:
        r"""The identity of each of ``spec``'s candidates, its JSON
        (:meth:`~botorch_unknown_hypers.models.factor_cache.FactorCache.keys`, one host copy), by
        which factors and modules are kept across rounds; ``None`` for families that do not state
        their noise variances or have no JSON."""
        return FactorCache.cacheable_keys(spec)

    def candidate_modules(self, spec: CandidateSpec, keys: list[str] | None, like: Tensor) -> tuple[Any, Any, Any] | None:
        r"""``spec.build(d)`` on ``like``'s device and dtype, built once per candidate set (its
        ``keys``) and handed out again while the set is one of the last :attr:`KEPT_MODULE_SETS`
        asked for: the round's models share them (frozen, never written). A new set shares the
        constraints of a kept one on the same device and dtype. ``None`` without ``keys``."""
        if keys is None:
            return None
        memo = (tuple(keys), self.domain.dim, like.dtype, like.device)
        modules = self._modules.pop(memo, None)
        held = None if modules is None else next(modules[1].parameters(), None)  # moved by a model's .to()?
        if modules is None or held is None or (held.dtype, held.device) != (like.dtype, like.device):
            shared = next(filter(None, (constraints_on(*kept[1:], like) for kept in reversed(self._modules.values()))), None)
            modules = spec.to(device=like.device, dtype=like.dtype).build(dim=self.domain.dim, constraints=shared)
        self._modules[memo] = modules  # the most recent last
        while len(self._modules) > self.KEPT_MODULE_SETS:
            del self._modules[next(iter(self._modules))]
        return modules

    def information_gain(self, model: CandidateGP, factor: CandidateFactor | None = None, noise: float | None = None) -> Tensor:
        r""":math:`I = \tfrac12\log\det(I + s^{-1}K)` of every candidate of ``model`` (``K``): from
        ``factor`` (the factors at noise ``s``) when given, from the model's own factors when
        ``noise`` is ``None``, else from a fresh factorisation."""
        if factor is not None:
            return factor.information_gain()
        if noise is None and model.factor is not None:
            return model.factor.information_gain()
        variance = None if noise is None else torch.full((1,), float(noise), dtype=self.dtype, device=self.device)
        return information_gain_of_model(model, noise_variance=variance).reshape(-1)

    def campaign_raw_points(self, seed: int | None) -> Tensor | None:
        r""":func:`~botorch_unknown_hypers.acquisition.optimize.fixed_raw_points` of the domain and
        ``raw_samples`` for ``seed`` (``None`` for ``None``), drawn once and then handed out as the
        same tensor while the seed and ``raw_samples`` stay, so that the factor cache sees at no
        host read that the points are the ones its solves carry."""
        if seed is None:
            return None
        key = (seed, self.options.raw_samples)
        if self._raw_points is None or self._raw_points[0] != key:
            self._raw_points = (key, fixed_raw_points(self.domain, self.options.raw_samples, seed))
        return self._raw_points[1]

    # -------------------------------------------------------------- search
    def maximize(self, acqf: AcquisitionFunction, q: int = 1, **options: Any) -> Tensor:
        r"""``q x d`` maximiser of ``acqf`` over the domain (exhaustive on a pool, multi-start on a
        box; :func:`~botorch_unknown_hypers.acquisition.optimize.maximize`) with the generator and
        the search options."""
        o = self.options
        X, _ = maximize(acqf, self.domain, self.generator, q=q, num_restarts=o.num_restarts, raw_samples=o.raw_samples, search=o.search, **options)
        return X

    def maximize_slot(
        self, acqf: AcquisitionFunction, exclude: Tensor | None = None, initial_points: Tensor | None = None, warm: Restarts | None = None
    ) -> tuple[Tensor, Restarts | None]:
        r"""One slot of a batch filled one point at a time: the ``1 x d`` point and the restarts
        that warm-start the next slot (:func:`~botorch_unknown_hypers.acquisition.optimize.maximize_slot`)."""
        o = self.options
        return maximize_slot(acqf, self.domain, self.generator, o.num_restarts, o.raw_samples, initial_points, exclude, warm, o.search)

    # ----------------------------------------------------------- randomness
    def next_seed(self) -> int:
        r"""A fresh integer seed from the generator (for BoTorch / Sobol calls)."""
        return draw_seed(self.generator)

    @contextmanager
    def seeded(self) -> Iterator[None]:
        r"""Run a block with the global RNG forked and seeded from the generator (pathwise sample
        paths, model fitting): the rule stays deterministic and the caller's RNG is untouched."""
        with forked_rng(self.next_seed(), self.device):
            yield


__all__ = ["RoundContext", "SearchOptions"]
