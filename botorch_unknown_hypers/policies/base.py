r"""The policy protocol: ``suggest`` / ``observe`` with JSON-safe state.

A *policy* is a Bayesian-optimisation rule with memory. At round :math:`t` it
receives all data :math:`D_{t-1}` and proposes a batch :math:`x_{t,1..q}`
(``suggest``); it is then told the observations (``observe``). Rules that keep
state across rounds (balancing counts, recorded widths
:math:`\beta_\tau \sigma_{\tau-1}(x_\tau)`, prequential residuals, eliminated
sets, hyperposteriors) keep it in plain attributes that ``state_dict`` turns
into JSON-safe dicts (no pickle) and ``load_state_dict`` restores, so a
campaign can stop and resume with identical next suggestions.

Randomness comes only from the policy's own ``torch.Generator`` (seeded at
construction and part of the state), never from the global RNG, so runs are
deterministic given a seed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import contextmanager
from typing import Any, Iterator

import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from torch import Tensor

from botorch_unknown_hypers.acquisition.optimize import maximize
from botorch_unknown_hypers.domains import BoxDomain, Domain, FiniteDomain, check_observations
from botorch_unknown_hypers.rng import draw_seed, forked_rng

STATE_VERSION = 1


def generator_state_to_list(generator: torch.Generator) -> list[int]:
    return generator.get_state().tolist()


def generator_state_from_list(state: list[int]) -> Tensor:
    if not isinstance(state, list) or not all(isinstance(v, int) and 0 <= v < 256 for v in state):
        raise ValueError("state['generator'] must be a list of bytes (ints in [0, 255]).")
    tensor = torch.tensor(state, dtype=torch.uint8)
    try:  # wrong length / layout: torch raises RuntimeError; check on a scratch generator
        torch.Generator(device="cpu").set_state(tensor)
    except RuntimeError as e:
        raise ValueError(f"state['generator'] is not a valid CPU generator state: {e}") from None
    return tensor


class Policy(ABC):
    r"""Base class of every rule.

    Subclasses implement :meth:`_suggest` and, if they keep memory,
    :meth:`_observe`, :meth:`_extra_state` and :meth:`_load_extra_state`.

    Attributes:
        name: The registered method name.
        selected: Text label of the hyperparameter used for each point of the last
            batch (empty strings where not applicable); logged as ``selected``.
        n_candidates: Number of hyperparameter candidates the rule considered for
            the last batch (0 where not applicable).
    """

    name: str = "policy"
    num_restarts: int = 10
    raw_samples: int = 512

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        if not isinstance(domain, (BoxDomain, FiniteDomain)):
            raise ValueError(f"domain must be a BoxDomain or FiniteDomain, got {type(domain).__name__}.")
        self.device = torch.device(device) if device is not None else domain.device
        self.dtype = dtype
        self.domain = domain.to(device=self.device, dtype=dtype)
        self.seed = int(seed)
        self.generator = torch.Generator(device="cpu").manual_seed(self.seed)
        self.num_observed = 0
        self.selected: list[str] = []
        self.n_candidates = 0

    # ------------------------------------------------------------------ public
    def suggest(self, train_X: Tensor, train_Y: Tensor, q: int = 1) -> Tensor:
        r"""Propose the next batch.

        Args:
            train_X: ``n x d`` inputs observed so far.
            train_Y: ``n x 1`` (or ``n``) observations so far.
            q: Batch size.

        Returns:
            A ``q x d`` tensor of points in the domain.
        """
        if not isinstance(q, int) or q < 1:
            raise ValueError(f"q must be a positive integer, got {q!r}.")
        train_Y = check_observations(self.domain, train_X, train_Y, "train_X", "train_Y")
        train_X = train_X.to(device=self.device, dtype=self.dtype)
        train_Y = train_Y.to(device=self.device, dtype=self.dtype)
        X = self._suggest(train_X, train_Y, q)
        if X.shape != (q, self.domain.dim):
            raise RuntimeError(f"{type(self).__name__} returned shape {tuple(X.shape)}, expected ({q}, {self.domain.dim}).")
        if len(self.selected) != q:
            self.selected = [""] * q
        return X

    def observe(self, X: Tensor, Y: Tensor) -> None:
        r"""Record the observations of the last batch.

        Validation happens before anything changes, so a rejected call leaves the
        policy's state untouched.
        """
        Y = check_observations(self.domain, X, Y)
        self._observe(X.to(device=self.device, dtype=self.dtype), Y.to(device=self.device, dtype=self.dtype))
        self.num_observed += X.shape[0]

    def state_dict(self) -> dict[str, Any]:
        r"""JSON-safe state: name, seed, generator state, counters and the rule's own state."""
        return {
            "version": STATE_VERSION,
            "name": self.name,
            "seed": self.seed,
            "generator": generator_state_to_list(self.generator),
            "num_observed": self.num_observed,
            "selected": list(self.selected),
            "n_candidates": self.n_candidates,
            "extra": self._extra_state(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        r"""Restore :meth:`state_dict`; raises ``ValueError`` (state unchanged) on a bad dict."""
        if not isinstance(state, dict):
            raise ValueError("state must be a dict produced by state_dict().")
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"state['version'] must be {STATE_VERSION}, got {state.get('version')!r}.")
        if state.get("name") != self.name:
            raise ValueError(f"state is for policy {state.get('name')!r}, not {self.name!r}.")
        gen_state = generator_state_from_list(state.get("generator"))
        num_observed = state.get("num_observed")
        if not isinstance(num_observed, int) or num_observed < 0:
            raise ValueError("state['num_observed'] must be a non-negative int.")
        seed = state.get("seed", self.seed)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError("state['seed'] must be an int.")
        selected = state.get("selected", [])
        if not isinstance(selected, list) or not all(isinstance(s, str) for s in selected):
            raise ValueError("state['selected'] must be a list of strings.")
        n_candidates = state.get("n_candidates", 0)
        if not isinstance(n_candidates, int) or isinstance(n_candidates, bool) or n_candidates < 0:
            raise ValueError("state['n_candidates'] must be a non-negative int.")
        self._check_extra_state(state.get("extra", {}))
        # Everything is validated: only now is the policy changed.
        self.generator.set_state(gen_state)
        self.seed = seed
        self.num_observed = num_observed
        self.selected = list(selected)
        self.n_candidates = n_candidates
        self._load_extra_state(state.get("extra", {}))

    # ----------------------------------------------------------- for subclasses
    @abstractmethod
    def _suggest(self, train_X: Tensor, train_Y: Tensor, q: int) -> Tensor:
        """Return ``q x d`` points; set ``self.selected`` and ``self.n_candidates``."""

    def _observe(self, X: Tensor, Y: Tensor) -> None:
        """Update the rule's memory (default: none)."""

    def _extra_state(self) -> dict[str, Any]:
        return {}

    def _check_extra_state(self, extra: dict[str, Any]) -> None:
        """Validate ``extra`` before anything is loaded (raise ``ValueError``)."""

    def _load_extra_state(self, extra: dict[str, Any]) -> None:
        pass

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
            **options,
        )
        return X

    def next_seed(self) -> int:
        r"""A fresh integer seed from the policy's generator (for BoTorch / Sobol calls)."""
        return draw_seed(self.generator)

    @contextmanager
    def seeded(self) -> Iterator[None]:
        r"""Run a block with the global RNG forked and seeded from the policy's generator.

        For library calls that draw from the global RNG (pathwise sample paths),
        so that the policy stays deterministic and the caller's RNG is untouched.
        """
        with forked_rng(self.next_seed(), self.device):
            yield


def check_optimizer_options(num_restarts: int, raw_samples: int) -> None:
    r"""``num_restarts >= 1`` and ``raw_samples >= num_restarts`` (as ``optimize_acqf`` needs)."""
    if num_restarts < 1 or raw_samples < num_restarts:
        raise ValueError(
            f"num_restarts must be >= 1 and raw_samples >= num_restarts, got {num_restarts} and {raw_samples}."
        )
