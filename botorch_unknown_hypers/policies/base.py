r"""The policy interface: what a loop, the CLI and Ax call on every rule.

A *policy* is a Bayesian-optimisation rule with memory. At round :math:`t` it receives all
data :math:`D_{t-1}` and proposes a batch :math:`x_{t,1..q}` (:meth:`Policy.suggest`); it is
then told the observations (:meth:`Policy.observe`). After a ``suggest`` it exposes what the
rule used (``selected``, ``n_candidates``, ``diagnostics``, ``robust_point``); a benchmark
problem may tell it about itself once per run (:meth:`Policy.bind_task`).

Memory lives in one dataclass of tensors and plain values, ``policy.state`` (play counts,
recorded widths :math:`\beta_\tau\sigma_{\tau-1}(x_\tau)`, prequential residuals, eliminated
sets, hyperposteriors). :meth:`Policy.state_dict` saves it with the shared JSON codec of
:mod:`~botorch_unknown_hypers.policies.json_state` together with the generator's state, and
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
from typing import Any, ClassVar, Iterator

import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from torch import Tensor

from botorch_unknown_hypers.acquisition.device_search import AUTO_SEARCH, resolve_search
from botorch_unknown_hypers.acquisition.multistart import check_multistart
from botorch_unknown_hypers.candidates import CandidateSpec
from botorch_unknown_hypers.checks import check_int
from botorch_unknown_hypers.domains import Domain, check_domain, check_observations, check_points
from botorch_unknown_hypers.models.factor_cache import CandidateFactor, FactorCache
from botorch_unknown_hypers.policies.context import RoundContext, SearchOptions
from botorch_unknown_hypers.policies.round.pending_plays import upgrade_pending
from botorch_unknown_hypers.policies.json_state import decode_state, encode_state
from botorch_unknown_hypers.policies.tasks import TaskInfo

STATE_VERSION = 5
r"""Version tag of :meth:`Policy.state_dict`. Versions 2 (a rule held at most one pending
selection), 3 (each rule family its own pending dataclass) and 4 (three layouts of the survivor
flags) are upgraded on load (:func:`upgrade_state`); any other version is refused."""
UPGRADABLE = (2, 3, 4)

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
    :class:`~botorch_unknown_hypers.policies.round.pending_plays.PendingPlay`
    (:func:`~botorch_unknown_hypers.policies.round.pending_plays.upgrade_pending`).

    Version 4 to 5: every candidate-set rule keeps its survivors in one layout, ``alive`` (with
    ``eliminated_at``) at the top of its state: balancing's ``active`` is renamed, and prior
    elimination's nested ``survivors`` (``alive``, ``eliminated_at``, ``kept_last``) moves up.
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
    if "alive" in hints and "alive" not in rule:
        if "active" in rule and "active" not in hints:
            rule["alive"] = rule.pop("active")
        survivors = rule.get("survivors") if "survivors" not in hints else None
        if isinstance(survivors, dict):
            del rule["survivors"]
            rule.update({k: v for k, v in survivors.items() if k in hints})
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
            from the same raw samples and restarts); ``"auto"`` (the default): ``"torch"`` on a
            CUDA device, ``"scipy"`` elsewhere. Pools are scored exhaustively either way.

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
        context: The rule's :class:`~botorch_unknown_hypers.policies.context.RoundContext`: its
            domain, generator, search options, pending points and the derived data kept across
            rounds (factor caches, modules, raw points), never saved. The pieces of a round
            receive it instead of the rule.
    """

    name: ClassVar[str] = "policy"
    min_observations: ClassVar[int] = 1
    r"""The fewest observations :meth:`suggest` accepts (0 for rules that start from their prior)."""
    max_batch_size: ClassVar[int | None] = None
    r"""The largest ``q`` :meth:`suggest` accepts (``None``: any)."""
    supports_pending: ClassVar[bool] = False
    r"""Whether :meth:`suggest` conditions on ``X_pending`` (points still being evaluated)."""

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
        num_restarts: int = 10,
        raw_samples: int = 512,
        search: str = AUTO_SEARCH,
    ) -> None:
        check_domain(domain)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed must be an int, got {seed!r}.")
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise ValueError(f"dtype must be a floating-point torch.dtype, got {dtype!r}.")
        check_multistart(num_restarts, raw_samples)
        resolve_search(search, "cpu")  # the argument's check, before any state
        self.device = torch.device(device) if device is not None else domain.device
        self.dtype = dtype
        self.domain = domain.to(device=self.device, dtype=dtype)
        self.seed = seed
        self.generator = torch.Generator(device="cpu").manual_seed(seed)
        self.context = RoundContext(
            self.domain, self.generator, self.device, dtype, SearchOptions(num_restarts, raw_samples, resolve_search(search, self.device))
        )
        self.num_observed = 0
        self.state: Any = NoState()
        self.selected: list[str] = []
        self.n_candidates = 0
        self.diagnostics: dict[str, Any] = {}
        self.robust_point: Tensor | None = None

    @property
    def num_restarts(self) -> int:
        r"""Restarts refined per box maximisation (:class:`~botorch_unknown_hypers.policies.context.SearchOptions`)."""
        return self.context.options.num_restarts

    @property
    def raw_samples(self) -> int:
        r"""Raw points scored per box maximisation."""
        return self.context.options.raw_samples

    @property
    def search(self) -> str:
        r"""The refinement of every box maximisation (``"scipy"`` or ``"torch"``)."""
        return self.context.options.search

    @property
    def X_pending(self) -> Tensor | None:
        r"""``p x d`` points being evaluated while the rule proposes (``None`` otherwise)."""
        return self.context.X_pending

    @property
    def factor_caches(self) -> dict[float | None, FactorCache]:
        r"""The rule's Cholesky factor caches, one per noise variance (derived, never saved)."""
        return self.context.factor_caches

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
        train_X, train_Y = self.context.checked_inputs(train_X, train_Y)  # read before the round: refused data change nothing
        if train_X.shape[0] < self.min_observations:
            raise ValueError(
                f"train_X must hold at least {self.min_observations} observation(s) for {self.name!r} "
                f"(start from an initial design, e.g. domain.sample(n, seed)), got {train_X.shape[0]}."
            )
        self.context.X_pending = pending
        try:
            X = self._suggest(train_X, train_Y, q)
        finally:
            self.context.X_pending = None
        if X.shape != (q, self.domain.dim):
            raise RuntimeError(f"{type(self).__name__} returned shape {tuple(X.shape)}, expected ({q}, {self.domain.dim}).")
        if len(self.selected) != q:
            self.selected = [""] * q
        return X

    def observe(self, X: Tensor, Y: Tensor) -> None:
        r"""Record the observations of the last batch (``q x d``, ``q`` or ``q x 1``).

        Validation happens before anything changes, so a rejected call leaves the policy's
        state untouched.
        """
        X, Y = check_observations(self.domain, X, Y)  # one host read, before any state changes
        self._observe(X, Y)
        self.num_observed += X.shape[0]

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
        r"""Cholesky factors of ``spec``'s candidates on ``train_X`` at ``noise``, kept across rounds
        (:meth:`~botorch_unknown_hypers.policies.context.RoundContext.candidate_factor_sets`)."""
        factors = self.context.candidate_factor_sets(spec, train_X, [noise], keep, points, keys)
        return None if factors is None else factors[0]

    def maximize(self, acqf: AcquisitionFunction, q: int = 1, **options: Any) -> Tensor:
        r"""``q x d`` maximiser of ``acqf`` over the policy's domain with its generator and search
        options (:meth:`~botorch_unknown_hypers.policies.context.RoundContext.maximize`)."""
        return self.context.maximize(acqf, q, **options)

    def campaign_raw_points(self, seed: int | None) -> Tensor | None:
        r"""The campaign's fixed raw points for ``seed``
        (:meth:`~botorch_unknown_hypers.policies.context.RoundContext.campaign_raw_points`)."""
        return self.context.campaign_raw_points(seed)

    def next_seed(self) -> int:
        r"""A fresh integer seed from the policy's generator (for BoTorch / Sobol calls)."""
        return self.context.next_seed()

    @contextmanager
    def seeded(self) -> Iterator[None]:
        r"""Run a block with the global RNG forked and seeded from the policy's generator.

        For library calls that draw from the global RNG (pathwise sample paths, model fitting),
        so that the policy stays deterministic and the caller's RNG is untouched.
        """
        with self.context.seeded():
            yield
