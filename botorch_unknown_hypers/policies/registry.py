r"""Registry of method names (the ``buh`` contract) to policy classes.

The built-in methods are registered as ``"module:Class"`` paths (:data:`METHOD_PATHS`) and
imported when a method is first built, looked up in :data:`METHODS` or its limits asked
(:func:`method_limits`): ``import botorch_unknown_hypers`` loads none of the rules' modules
(nor what they import, e.g. Pyro for ``nuts-gp-ucb``), and ``buh list`` still lists every
name. :func:`register_method` takes a factory ``factory(domain, seed=..., device=...,
dtype=..., **options)`` (a policy class or any callable).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any, Callable

import torch

from botorch_unknown_hypers.checks import check_device
from botorch_unknown_hypers.domains import Domain, check_domain
from botorch_unknown_hypers.policies.base import Policy

PolicyFactory = Callable[..., Policy]

_POLICIES = "botorch_unknown_hypers.policies"

METHOD_PATHS: dict[str, str] = {
    "random": f"{_POLICIES}.baselines.standard_baselines:RandomPolicy",
    "mle-gp-ucb": f"{_POLICIES}.baselines.standard_baselines:MLEGPUCB",
    "mle-gp-ts": f"{_POLICIES}.baselines.standard_baselines:GPThompsonSampling",
    "lb-gp-ucb": f"{_POLICIES}.balancing.lb_gp_ucb:LBGPUCB",
    "lb-gp-ucb-auto": f"{_POLICIES}.presets.auto:LBGPUCBAuto",
    "a-gp-ucb": f"{_POLICIES}.balancing.lb_gp_ucb:AGPUCB",
    "lnb-gp-ucb": f"{_POLICIES}.balancing.norm_balancing:LNBGPUCB",
    "nuts-gp-ucb": f"{_POLICIES}.balancing.nuts:NUTSGPUCB",
    "hb-gp-ucb": f"{_POLICIES}.balancing.hyperparameter_balancing:HyperparameterBalancing",
    "he-gp-ucb": f"{_POLICIES}.elimination.he_gp_ucb:HEGPUCB",
    "he-gp-ucb-auto": f"{_POLICIES}.presets.auto:HEGPUCBAuto",
    "auto": f"{_POLICIES}.presets.auto:Auto",
    "mle-candidates": f"{_POLICIES}.elimination.candidate_baselines:MLECandidates",
    "expected-ucb": f"{_POLICIES}.elimination.candidate_baselines:ExpectedUCB",
    "he-stableopt": f"{_POLICIES}.elimination.stableopt:HEStableOpt",
    "stableopt-mle": f"{_POLICIES}.elimination.stableopt:StableOptMLE",
    "pe-gp-ts": f"{_POLICIES}.prior_selection.prior_elimination:PEGPTS",
    "pe-gp-ucb": f"{_POLICIES}.prior_selection.prior_elimination:PEGPUCB",
    "hp-gp-ts": f"{_POLICIES}.prior_selection.hyperprior:HPGPTS",
    "map-gp-ts": f"{_POLICIES}.prior_selection.hyperprior:MAPGPTS",
    "oracle-gp-ts": f"{_POLICIES}.prior_selection.prior_elimination:OracleGPTS",
    "oracle-gp-ucb": f"{_POLICIES}.prior_selection.prior_elimination:OracleGPUCB",
    "ts-rsr": f"{_POLICIES}.batch.ts_rsr_rule:TSRSR",
    "gp-ts": f"{_POLICIES}.batch.batch_sampling:BatchThompsonSampling",
    "bucb": f"{_POLICIES}.batch.batch_baselines:BUCB",
    "ucbpe": f"{_POLICIES}.batch.batch_baselines:UCBPE",
    "sp": f"{_POLICIES}.batch.batch_sampling:StochasticPolicy",
    "kb-ei": f"{_POLICIES}.batch.batch_baselines:KrigingBelieverEI",
    "dpp-ts": f"{_POLICIES}.batch.batch_sampling:DPPThompsonSampling",
    "qlognei": f"{_POLICIES}.batch.batch_baselines:QLogNEI",
    "ec-gp-ucb": f"{_POLICIES}.misspecified.misspecified_rules:ECGPUCB",
    "phased-gp-us": f"{_POLICIES}.misspecified.misspecified_rules:PhasedGPUS",
    "regret-balancing": f"{_POLICIES}.misspecified.misspecified_rules:RegretBalancing",
}
r"""The built-in methods: name to ``"module:Class"`` (the one place a rule's module is named)."""


def _resolve(path: str) -> PolicyFactory:
    module, _, attribute = path.partition(":")
    factory: PolicyFactory = getattr(importlib.import_module(module), attribute)
    return factory


class MethodRegistry(MutableMapping[str, PolicyFactory]):
    r"""Method name to factory; an entry given as a ``"module:Class"`` path is imported on first
    lookup (and kept), so iterating, ``in`` and ``len`` import nothing."""

    def __init__(self, entries: Mapping[str, PolicyFactory | str]) -> None:
        self._entries: dict[str, PolicyFactory | str] = dict(entries)

    def __getitem__(self, name: str) -> PolicyFactory:
        entry = self._entries[name]
        if isinstance(entry, str):
            entry = self._entries[name] = _resolve(entry)
        return entry

    def __setitem__(self, name: str, factory: PolicyFactory | str) -> None:
        self._entries[name] = factory

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __repr__(self) -> str:
        return f"MethodRegistry({sorted(self._entries)})"


METHODS: MutableMapping[str, PolicyFactory] = MethodRegistry(METHOD_PATHS)
r"""Every registered method, name to factory (the built-ins imported on first lookup)."""


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or name not in METHODS:
        raise ValueError(f"unknown method {name!r}; valid methods: {', '.join(list_methods())}.")
    return name


def register_method(name: str, factory: PolicyFactory, overwrite: bool = False) -> None:
    r"""Register ``factory(domain, seed=..., device=..., dtype=..., **options)`` under ``name``.

    Raises:
        ValueError: if ``name`` is taken (and not ``overwrite``), is not a non-empty string, or
            ``factory`` is not callable.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}.")
    if not callable(factory):
        raise ValueError(f"factory must be callable (a Policy class or a function), got {factory!r}.")
    if name in METHODS and not overwrite:
        raise ValueError(f"method {name!r} is already registered.")
    METHODS[name] = factory


def list_methods() -> list[str]:
    r"""Every registered method name, sorted (imports no rule's module)."""
    return sorted(METHODS)


def method_limits(name: str) -> tuple[int | None, int]:
    r"""``(max_batch_size, min_observations)`` of the method registered as ``name``
    (``(None, 0)`` for a factory that declares neither), known before any policy is built."""
    factory = METHODS[_check_name(name)]
    return getattr(factory, "max_batch_size", None), getattr(factory, "min_observations", 0)


def parse_method_spec(spec: str) -> tuple[str, dict[str, Any]]:
    r"""``"name"`` or ``"name[key=value&...]"`` to ``(name, options)``: the written form of a method
    with options on the benchmarks' command lines and in their run files. Values are decoded as
    JSON (``shrink=[1.0,0.5]``, ``restart=true``), else kept as text (``acquisition=ucb``).

    Raises:
        ValueError: for a ``spec`` that is not a string, an empty name, a bracket that is not
            closed at the end, or an item that is not ``key=value`` with a new, non-empty key.
    """
    if not isinstance(spec, str):
        raise ValueError(f"spec must be a string name[key=value&...], got {spec!r}.")
    name, bracket, rest = spec.partition("[")
    if not name:
        raise ValueError(f"method {spec!r}: the name before '[' is empty.")
    options: dict[str, Any] = {}
    if bracket:
        if not rest.endswith("]"):
            raise ValueError(f"method {spec!r}: options must be written name[key=value&...].")
        for item in filter(None, rest[:-1].split("&")):
            key, sep, value = item.partition("=")
            if not sep or not key or key in options:
                raise ValueError(f"method {spec!r}: option {item!r} is not key=value with a new, non-empty key.")
            try:
                options[key] = json.loads(value)
            except json.JSONDecodeError:
                options[key] = value
    return name, options


def respell_for_defaults(spec: str, name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    r"""The spec that runs what ``spec`` ran, once method ``name``'s defaults changed from ``old``
    to ``new`` (both give every changed option: ``old[k]`` is what ran where ``spec`` is silent).

    Only the options of ``old`` are touched: one that ``spec`` does not give is added at its old
    value (``auto`` -> ``auto[acquisition=lognei]``), one that ``spec`` gives at its new default is
    dropped (``auto[acquisition=logei-plugin]`` -> ``auto``); every other item keeps its text and
    place, and added items follow in ``old``'s order. A spec of another method is returned as it is.

    Raises:
        ValueError: for ``old`` and ``new`` with different keys, or ``spec`` not a method spec
            (:func:`parse_method_spec`).
    """
    if set(old) != set(new):
        raise ValueError(f"old and new must give the same options, got {sorted(old)} and {sorted(new)}.")
    method, options = parse_method_spec(spec)
    if method != name:
        return spec
    items = [item.partition("=")[0::2] for item in spec.partition("[")[2][:-1].split("&") if item]  # (key, text)
    kept = [f"{key}={text}" for key, text in items if key not in new or options[key] != new[key]]
    added = [f"{key}={value if isinstance(value, str) else json.dumps(value)}" for key, value in old.items() if key not in options]
    for item in added:  # the added text must parse back to the old value
        key, _, text = item.partition("=")
        if parse_method_spec(f"{name}[{item}]")[1][key] != old[key]:
            raise ValueError(f"old[{key!r}] = {old[key]!r} cannot be written as a spec option (it reads back as {text!r}).")
    return name if not kept + added else f"{name}[{'&'.join(kept + added)}]"


def make_policy(
    name: str,
    domain: Domain,
    seed: int = 0,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float64,
    **options: Any,
) -> Policy:
    r"""Build the policy registered as ``name``.

    Raises:
        ValueError: for an unknown name (the message lists the valid ones), a ``domain`` that
            is not a :class:`~botorch_unknown_hypers.domains.Domain`, a ``device`` torch does not
            know or cannot use, a ``dtype`` other than ``torch.float64``/``torch.float32``, or
            any option the rule refuses.
        TypeError: for an option the rule does not take.
    """
    factory = METHODS[_check_name(name)]
    check_domain(domain)
    check_device("device", device)
    if dtype not in (torch.float64, torch.float32):
        raise ValueError(f"dtype must be torch.float64 or torch.float32 (the GP algebra needs one of them), got {dtype!r}.")
    return factory(domain, seed=seed, device=device, dtype=dtype, **options)
