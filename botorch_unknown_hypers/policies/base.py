r"""The policy interface: what a loop, the CLI and Ax call on every rule.

A *policy* is a Bayesian-optimisation rule with memory. At round :math:`t` it receives all
data :math:`D_{t-1}` and proposes a batch :math:`x_{t,1..q}` (:meth:`Policy.suggest`); it is
then told the observations (:meth:`Policy.observe`). After a ``suggest`` it exposes what the
rule used (``selected``, ``n_candidates``, ``diagnostics``, ``robust_point``); a benchmark
problem may tell it about itself once per run (:meth:`Policy.bind_task`).

Memory lives in one dataclass of tensors and plain values, ``policy.state`` (play counts,
recorded widths :math:`\beta_\tau\sigma_{\tau-1}(x_\tau)`, prequential residuals, eliminated
sets, hyperposteriors). :meth:`Policy.state_dict` saves it with the shared JSON codec of
:mod:`~botorch_unknown_hypers.policies.state` together with the generator's state, and
:meth:`Policy.load_state_dict` validates everything before changing anything, so a campaign
stops and resumes with the identical next suggestion, and a bad state leaves the policy as it
was. Nothing is pickled.

Randomness comes only from the policy's own ``torch.Generator`` (seeded at construction, part
of the state), never from the caller's global RNG, so runs are deterministic given a seed.
Inputs are checked once, here, at the boundary (:func:`~botorch_unknown_hypers.domains.check_observations`),
and the check is read before the rule's round begins: data it refuses raise its named error
before anything of the rule changes.
"""

from __future__ import annotations

import dataclasses
import typing
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator, Sequence

import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.models.transforms import Normalize
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import DEFAULT_SEARCH, check_search
from botorch_unknown_hypers.acquisition.multistart import check_multistart
from botorch_unknown_hypers.acquisition.optimize import Restarts, fixed_raw_points, maximize, maximize_slot
from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.checks import check_int
from botorch_unknown_hypers.domains import Domain, check_domain, check_observations, check_points, observation_checks
from botorch_unknown_hypers.host import read_together
from botorch_unknown_hypers.models.candidate_gp import CandidateGP
from botorch_unknown_hypers.models.factor_cache import CandidateFactor, FactorCache
from botorch_unknown_hypers.regret_bounds import information_gain_of_model
from botorch_unknown_hypers.policies.pending_plays import upgrade_pending
from botorch_unknown_hypers.policies.state import decode_state, encode_state
from botorch_unknown_hypers.policies.tasks import TaskInfo
from botorch_unknown_hypers.rng import draw_seed, forked_rng
from botorch_unknown_hypers.shared_constraints import constraints_on

STATE_VERSION = 4
r"""Version tag of :meth:`Policy.state_dict`. Versions 2 (a rule held at most one pending
selection) and 3 (each rule family its own pending dataclass) are upgraded on load
(:func:`upgrade_state`); any other version is refused."""
UPGRADABLE = (2, 3)

_STATE_KEYS = {"version", "name", "seed", "generator", "num_observed", "selected", "n_candidates", "state"}


@dataclass
class NoState:
    r"""The state of a rule without memory."""


def generator_state_to_list(generator: torch.Generator) -> list[int]:
    r"""A CPU generator's state as a JSON-safe list of bytes."""
    return generator.get_state().tolist()


def generator_state_from_list(state: Any) -> Tensor:
    r"""Inverse of :func:`generator_state_to_list`; ``ValueError`` for anything but a valid state."""
    if not isinstance(state, list) or not all(type(v) is int and 0 <= v < 256 for v in state):
        raise ValueError("state['generator'] must be a list of bytes (ints in [0, 255]).")
    tensor = torch.tensor(state, dtype=torch.uint8)
    try:  # wrong length / layout: torch raises RuntimeError; check on a scratch generator
        torch.Generator(device="cpu").set_state(tensor)
    except RuntimeError as e:
        raise ValueError(f"state['generator'] is not a valid CPU generator state: {e}") from None
    return tensor


def upgrade_state(state_type: type, rule: Any, version: int) -> Any:
    r"""The JSON of a rule's state of ``version`` in the current layout (a copy; never modified).

    Version 2 to 3: a ``pending`` field that is now a list of selections (balancing and
    elimination rules take batches) gets the single selection or nothing; elimination's
    ``pending_scale`` moves into its pending selection as ``scale``.

    Version 3 to 4: every pending entry takes the one layout of
    :class:`~botorch_unknown_hypers.policies.pending_plays.PendingPlay`
    (:func:`~botorch_unknown_hypers.policies.pending_plays.upgrade_pending`).
    """
    if version == STATE_VERSION or not isinstance(rule, dict):
        return rule
    rule = dict(rule)
    hints = typing.get_type_hints(state_type) if dataclasses.is_dataclass(state_type) else {}
    if typing.get_origin(hints.get("pending")) is list and not isinstance(rule.get("pending"), list):
        single = rule.get("pending")
        scale = rule.pop("pending_scale", None)
        if isinstance(single, dict) and scale is not None:
            single = {**single, "scale": scale}
        rule["pending"] = [] if single is None else [single]
    if isinstance(rule.get("pending"), list):
        rule["pending"] = [upgrade_pending(entry) for entry in rule["pending"]]
    return rule


class Policy(ABC):
    r"""Base class of every rule.

    Subclasses implement :meth:`_suggest` and, if they keep memory, :meth:`_observe`, set
    ``self.state`` to their state dataclass in ``__init__`` and may check a loaded state
    against their configuration (:meth:`_check_state`) and rebuild derived objects after a
    load (:meth:`_after_load`).

    Args:
        domain: The search space (:class:`~botorch_unknown_hypers.domains.BoxDomain` or
            :class:`~botorch_unknown_hypers.domains.FiniteDomain`).
        seed: Seed of the policy's generator.
        device: Device of all computations (default: the domain's).
        dtype: Floating dtype of all computations (default ``torch.float64``).
        num_restarts, raw_samples: Multi-start settings of box maximisations.
        search: The refinement of the restarts of every box maximisation: ``"scipy"``
            (BoTorch's L-BFGS-B on the host) or ``"torch"`` (the batched projected L-BFGS of
            :mod:`~botorch_unknown_hypers.acquisition.device_search`, on the policy's device,
            from the same raw samples and restarts). Pools are scored exhaustively either way.

    Attributes:
        name: The registered method name.
        min_observations: The fewest observations :meth:`suggest` accepts.
        max_batch_size: The largest batch :meth:`suggest` proposes (``None``: any).
        state: The rule's memory, a dataclass saved by :meth:`state_dict`.
        selected: Text label of the hyperparameter used for each point of the last batch
            (empty strings where not applicable); logged as ``selected``.
        n_candidates: Number of hyperparameter candidates the rule considered for the last
            batch (0 where not applicable).
        diagnostics: JSON-safe per-round diagnostics of the last round (empty by default).
        robust_point: For robust rules, the ``1 x d`` point whose worst case the rule optimised
            in the last round (the queried point may be a perturbation of it); else ``None``.
        factor_caches: The rule's Cholesky factor caches, one per noise variance
            (:meth:`candidate_factors`); derived data, not part of the state.
    """

    name: ClassVar[str] = "policy"
    min_observations: ClassVar[int] = 1
    r"""The fewest observations :meth:`suggest` accepts (0 for rules that start from their prior)."""
    max_batch_size: ClassVar[int | None] = None
    r"""The largest ``q`` :meth:`suggest` accepts (``None``: any)."""
    supports_pending: ClassVar[bool] = False
    r"""Whether :meth:`suggest` conditions on ``X_pending`` (points still being evaluated)."""
    KEPT_MODULE_SETS: ClassVar[int] = 4
    r"""How many recent candidate sets :meth:`candidate_modules` keeps the modules of."""

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        num_restarts: int = 10,
        raw_samples: int = 512,
        search: str = DEFAULT_SEARCH,
    ) -> None:
        check_domain(domain)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed must be an int, got {seed!r}.")
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise ValueError(f"dtype must be a floating-point torch.dtype, got {dtype!r}.")
        check_multistart(num_restarts, raw_samples)
        check_search(search)
        self.device = torch.device(device) if device is not None else domain.device
        self.dtype = dtype
        self.domain = domain.to(device=self.device, dtype=dtype)
        self.seed = seed
        self.generator = torch.Generator(device="cpu").manual_seed(seed)
        self.num_restarts = num_restarts
        self.raw_samples = raw_samples
        self.search = search
        self.num_observed = 0
        self.state: Any = NoState()
        self.selected: list[str] = []
        self.n_candidates = 0
        self.diagnostics: dict[str, Any] = {}
        self.robust_point: Tensor | None = None
        self.factor_caches: dict[float | None, FactorCache] = {}
        self.X_pending: Tensor | None = None
        self._unit = Normalize(self.domain.dim, bounds=self.domain.bounds)
        self._raw_points: tuple[tuple[int, int], Tensor | None] | None = None  # derived: (seed, raw_samples), points
        self._unit_points: tuple[Tensor, Tensor] | None = None  # derived: points, their unit-cube image
        self._modules: dict[tuple[Any, ...], tuple[Any, Any, Any]] = {}  # derived: candidate_modules
        self._round_inputs: list[Tensor | None] | None = None  # derived: _checked_inputs, unit_inputs

    # ------------------------------------------------------------------ public
    def suggest(self, train_X: Tensor, train_Y: Tensor, q: int = 1, X_pending: Tensor | None = None) -> Tensor:
        r"""Propose the next batch.

        Args:
            train_X: ``n x d`` inputs observed so far.
            train_Y: ``n x 1`` (or ``n``) observations so far.
            q: Batch size.
            X_pending: ``p x d`` points still being evaluated (BoTorch's convention): a rule that
                supports them (:attr:`supports_pending`) conditions its variance on them, the
                mean frozen, and proposes none of them again. Available to the rule as
                ``self.X_pending`` while it proposes.

        Returns:
            A ``q x d`` tensor of points in the domain.
        """
        check_int("q", q, 1)
        if self.max_batch_size is not None and q > self.max_batch_size:
            raise ValueError(f"q: {self.name} proposes at most {self.max_batch_size} point(s) per round, got {q}.")
        pending = None if X_pending is None else check_points(self.domain, X_pending, "X_pending", allow_empty=True)
        if pending is not None and pending.shape[0] == 0:
            pending = None
        if pending is not None and not self.supports_pending:
            raise ValueError(f"X_pending: {self.name} does not condition on pending points; `buh list` shows the rules that do.")
        train_X, train_Y = self._checked_inputs(train_X, train_Y)
        if train_X.shape[0] < self.min_observations:
            raise ValueError(
                f"train_X must hold at least {self.min_observations} observation(s) for {self.name!r} "
                f"(start from an initial design, e.g. domain.sample(n, seed)), got {train_X.shape[0]}."
            )
        self.X_pending = pending
        try:
            X = self._suggest(train_X, train_Y, q)
        finally:
            self.X_pending = None
        if X.shape != (q, self.domain.dim):
            raise RuntimeError(f"{type(self).__name__} returned shape {tuple(X.shape)}, expected ({q}, {self.domain.dim}).")
        if len(self.selected) != q:
            self.selected = [""] * q
        return X

    def _checked_inputs(self, train_X: Tensor, train_Y: Tensor) -> tuple[Tensor, Tensor]:
        r"""``check_observations`` of the round's data; and, in the same host read, whether their
        unit-cube image extends the last round's (kept by :meth:`unit_inputs`), so that the factor
        caches need not compare them again (a second read only when the data are not an extension).
        The check is read here, before the round: refused data leave the rule as it was."""
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
        r"""``(U, prefix)``: ``train_X`` in unit-cube coordinates, computed once per round for the
        round's data, and the unit inputs of the last round that ``U`` was checked to extend
        (``None`` when not checked: other data, or the first round)."""
        held = self._round_inputs
        if held is None or held[0] is not train_X:
            return self._unit(train_X), None
        if held[1] is None:
            held[1] = self._unit(train_X)
        return held[1], held[2]

    def observe(self, X: Tensor, Y: Tensor) -> None:
        r"""Record the observations of the last batch (``q x d``, ``q`` or ``q x 1``).

        Validation happens before anything changes, so a rejected call leaves the policy's
        state untouched.
        """
        X, Y = self._observation_inputs(X, Y)
        self._observe(X, Y)
        self.num_observed += X.shape[0]

    def _observation_inputs(self, X: Any, Y: Any) -> tuple[Tensor, Tensor]:
        r"""``(X, Y)`` of :meth:`observe` as ``q x d`` and ``q x 1`` tensors, checked
        (:func:`~botorch_unknown_hypers.domains.check_observations`, one host read). A rule whose
        :meth:`_observe` checks them with its own first read, before it changes anything,
        converts them here without reading."""
        return check_observations(self.domain, X, Y)

    def bind_task(self, task: TaskInfo) -> None:
        r"""Learn what a benchmark problem tells about itself (priors, the true prior, a fixed
        surrogate); :func:`~botorch_unknown_hypers.loop.run` calls it once per run. Rules that
        need nothing ignore it (the default)."""

    def state_dict(self) -> dict[str, Any]:
        r"""JSON-safe state: name, seed, generator state, counters and the rule's ``state``."""
        return {
            "version": STATE_VERSION,
            "name": self.name,
            "seed": self.seed,
            "generator": generator_state_to_list(self.generator),
            "num_observed": self.num_observed,
            "selected": list(self.selected),
            "n_candidates": self.n_candidates,
            "state": encode_state(self.state),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        r"""Restore :meth:`state_dict`; ``ValueError`` (policy unchanged) on a bad dict."""
        if not isinstance(state, dict):
            raise ValueError("state must be a dict produced by state_dict().")
        version = state.get("version")
        if version != STATE_VERSION and version not in UPGRADABLE:
            raise ValueError(f"state['version'] must be {STATE_VERSION} (or {', '.join(map(str, UPGRADABLE))}, upgraded on load), got {version!r}.")
        unknown = set(state) - _STATE_KEYS
        if unknown:
            raise ValueError(f"state has unknown keys {sorted(map(str, unknown))}; expected {sorted(_STATE_KEYS)}.")
        if state.get("name") != self.name:
            raise ValueError(f"state is for policy {state.get('name')!r}, not {self.name!r}.")
        gen_state = generator_state_from_list(state.get("generator"))
        num_observed, seed = state.get("num_observed"), state.get("seed")
        if type(num_observed) is not int or num_observed < 0:
            raise ValueError(f"state['num_observed'] must be a non-negative int, got {num_observed!r}.")
        if type(seed) is not int:
            raise ValueError(f"state['seed'] must be an int, got {seed!r}.")
        selected, n_candidates = state.get("selected"), state.get("n_candidates")
        if not isinstance(selected, list) or not all(isinstance(s, str) for s in selected):
            raise ValueError("state['selected'] must be a list of strings.")
        if type(n_candidates) is not int or n_candidates < 0:
            raise ValueError(f"state['n_candidates'] must be a non-negative int, got {n_candidates!r}.")
        rule_state = decode_state(
            type(self.state),
            upgrade_state(type(self.state), state.get("state"), version),
            dtype=self.dtype,
            device=self.device,
            path="state['state']",
        )
        self._check_state(rule_state)
        # Everything is validated: only now is the policy changed.
        self.generator.set_state(gen_state)
        self.seed, self.num_observed = seed, num_observed
        self.selected, self.n_candidates = list(selected), n_candidates
        self.state = rule_state
        self.diagnostics = {}
        self._after_load()

    # ----------------------------------------------------------- for subclasses
    @abstractmethod
    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        r"""Return ``q x d`` points; set ``selected``, ``n_candidates`` and ``diagnostics``."""

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        r"""Update the rule's memory (default: none)."""

    def _check_state(self, state: Any) -> None:
        r"""Check a decoded state against the policy's configuration (``ValueError``)."""

    def _after_load(self) -> None:
        r"""Rebuild what derives from ``self.state`` after a load (default: nothing)."""

    def candidate_factors(
        self,
        spec: CandidateSpec,
        train_X: Tensor,
        noise: float | None = None,
        keep: CandidateSpec | list[str] | None = None,
        points: Tensor | None = None,
        keys: list[str] | None = None,
    ) -> CandidateFactor | None:
        r"""Cholesky factors of ``spec``'s candidates on ``train_X`` in unit-cube coordinates.

        They come from the rule's :class:`~botorch_unknown_hypers.models.factor_cache.FactorCache`
        for ``noise`` (each candidate's own noise variance when ``None``), which keeps them across
        rounds: new observations are appended by block updates, new candidates are factorised
        once, absent ones dropped; the candidates of ``keep`` stay cached and are brought up to date
        only when next asked for (a rule that uses one candidate per round). Derived data, never
        saved. ``points`` (``m x d``, raw units): points fixed for the campaign at which the
        factors also carry :math:`L_u^{-1}k_u(X, R)`, updated with them
        (:meth:`~botorch_unknown_hypers.models.factor_cache.FactorCache.set_points`; a call
        without ``points`` leaves the cache's points as they are). ``None`` for candidate families that
        do not state their noise variances or cannot be identified by their JSON (a mean
        function held as Python code): the model then factorises itself. ``keys``:
        :meth:`candidate_keys` of ``spec`` when the caller holds them (and ``keep`` may be given by
        its keys too).
        """
        factors = self.candidate_factor_sets(spec, train_X, [noise], keep, points, keys)
        return None if factors is None else factors[0]

    def candidate_factor_sets(
        self,
        spec: CandidateSpec,
        train_X: Tensor,
        noises: Sequence[float | None],
        keep: CandidateSpec | list[str] | None = None,
        points: Tensor | None = None,
        keys: list[str] | None = None,
    ) -> list[CandidateFactor] | None:
        r""":meth:`candidate_factors` at each of ``noises`` (distinct), one cache each, with the
        caches' reads made together (:func:`~botorch_unknown_hypers.host.read_together`: one
        copy per round for a rule's GP noise and its information gain's, not one each); the
        fixed ``points`` go to the first noise's cache. ``None`` where :meth:`candidate_keys` is."""
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
                self._unit_points = (points, self._unit(points.to(train_X)))
            caches[0].set_points(self._unit_points[1], raw=points)  # the model's transform of points is the policy's
        unit, prefix = self.unit_inputs(train_X)

        def build(one: CandidateSpec, one_keys: list[str]) -> tuple[Any, Any, Any] | None:
            return self.candidate_modules(one, one_keys, train_X)

        steps = [cache.factor_steps(spec, unit, keep, keys=keys, build=build, prefix=prefix) for cache in caches]
        return read_together(steps)

    @staticmethod
    def candidate_keys(spec: CandidateSpec) -> list[str] | None:
        r"""The identity of each of ``spec``'s candidates, its JSON
        (:meth:`~botorch_unknown_hypers.models.factor_cache.FactorCache.keys`, one host copy), by
        which the factors and the modules of a candidate set are kept across rounds; ``None`` for
        families that do not state their noise variances or have no JSON."""
        try:
            spec.noise_variances()
            return FactorCache.keys(spec)  # raises where there is no JSON
        except ValueError:
            return None

    def candidate_modules(self, spec: CandidateSpec, keys: list[str] | None, like: Tensor) -> tuple[Any, Any, Any] | None:
        r"""``spec.build(d)`` on ``like``'s device and dtype, built once per candidate set (its
        ``keys``, :meth:`candidate_keys`) and handed out again while the set is one of the last
        :attr:`KEPT_MODULE_SETS` asked for: the round's models share them (frozen, never written)
        instead of building GPyTorch modules, and their constraints, every round. A new set shares
        the constraints of a kept one on the same device and dtype. Derived, never saved. ``None``
        without ``keys`` (the model builds its own)."""
        if keys is None:
            return None
        memo = (tuple(keys), self.domain.dim, like.dtype, like.device)
        modules = self._modules.pop(memo, None)
        held = None if modules is None else next(modules[1].parameters(), None)  # moved by a model's .to()?
        if held is None or (held.dtype, held.device) != (like.dtype, like.device):
            shared = next(filter(None, (constraints_on(*kept[1:], like) for kept in reversed(self._modules.values()))), None)
            modules = spec.to(device=like.device, dtype=like.dtype).build(dim=self.domain.dim, constraints=shared)
        self._modules[memo] = modules  # the most recent last
        while len(self._modules) > self.KEPT_MODULE_SETS:
            del self._modules[next(iter(self._modules))]
        return modules

    def information_gain(self, model: CandidateGP, factor: CandidateFactor | None = None, noise: float | None = None) -> Tensor:
        r""":math:`I = \tfrac12\log\det(I + s^{-1}K)` of every candidate of ``model`` (``K``): from
        ``factor`` (the factors at noise ``s``, one per candidate of ``model``) when given, from the
        model's own factors when ``noise`` is ``None``, else from a fresh factorisation."""
        if factor is not None:
            return factor.information_gain()
        if noise is None and model.factor is not None:
            return model.factor.information_gain()
        variance = None if noise is None else torch.full((1,), float(noise), dtype=self.dtype, device=self.device)
        return information_gain_of_model(model, noise_variance=variance).reshape(-1)

    def maximize(self, acqf: AcquisitionFunction, q: int = 1, **options: Any) -> Tensor:
        r"""``q x d`` maximiser of ``acqf`` over the policy's domain (exhaustive on a pool,
        multi-start L-BFGS-B on a box; :func:`~botorch_unknown_hypers.acquisition.optimize.maximize`)
        with the policy's generator and its ``num_restarts`` / ``raw_samples``."""
        X, _ = maximize(
            acqf,
            self.domain,
            self.generator,
            q=q,
            num_restarts=self.num_restarts,
            raw_samples=self.raw_samples,
            search=self.search,
            **options,
        )
        return X

    def maximize_slot(
        self, acqf: AcquisitionFunction, exclude: Tensor | None = None, initial_points: Tensor | None = None, warm: Restarts | None = None
    ) -> tuple[Tensor, Restarts | None]:
        r"""One slot of a batch filled one point at a time, with the policy's generator and
        multi-start settings: the ``1 x d`` point and the restarts that warm-start the next slot
        (:func:`~botorch_unknown_hypers.acquisition.optimize.maximize_slot`)."""
        return maximize_slot(
            acqf, self.domain, self.generator, self.num_restarts, self.raw_samples, initial_points, exclude, warm, self.search
        )

    def campaign_raw_points(self, seed: int | None) -> Tensor | None:
        r""":func:`~botorch_unknown_hypers.acquisition.optimize.fixed_raw_points` of the policy's
        domain and ``raw_samples`` for ``seed`` (``None`` for ``None``), drawn once and then handed
        out as the same tensor while the seed and ``raw_samples`` stay: derived data, never saved.
        Handing out one tensor lets the factor cache see at no host read that the points are the
        ones its solves carry."""
        if seed is None:
            return None
        key = (seed, self.raw_samples)
        if self._raw_points is None or self._raw_points[0] != key:
            self._raw_points = (key, fixed_raw_points(self.domain, self.raw_samples, seed))
        return self._raw_points[1]

    def next_seed(self) -> int:
        r"""A fresh integer seed from the policy's generator (for BoTorch / Sobol calls)."""
        return draw_seed(self.generator)

    @contextmanager
    def seeded(self) -> Iterator[None]:
        r"""Run a block with the global RNG forked and seeded from the policy's generator.

        For library calls that draw from the global RNG (pathwise sample paths, model fitting),
        so that the policy stays deterministic and the caller's RNG is untouched.
        """
        with forked_rng(self.next_seed(), self.device):
            yield
