r"""Registry of method names (the ``buh`` contract) to policy classes."""

from __future__ import annotations

from typing import Any, Callable

import torch

from botorch_unknown_hypers.policies.auto import HEGPUCBAuto, LBGPUCBAuto
from botorch_unknown_hypers.policies.balancing import AGPUCB, LBGPUCB
from botorch_unknown_hypers.policies.base import Policy
from botorch_unknown_hypers.policies.batch import TSRSR
from botorch_unknown_hypers.policies.batch_baselines import BUCB, UCBPE, KrigingBelieverEI, QLogNEI
from botorch_unknown_hypers.policies.batch_sampling import BatchThompsonSampling, DPPThompsonSampling, StochasticPolicy
from botorch_unknown_hypers.policies.baselines import GPThompsonSampling, MLEGPUCB, RandomPolicy
from botorch_unknown_hypers.policies.candidate_baselines import ExpectedUCB, MLECandidates
from botorch_unknown_hypers.policies.elimination import HEGPUCB
from botorch_unknown_hypers.policies.hyperparameter_balancing import HyperparameterBalancing
from botorch_unknown_hypers.policies.misspecified import ECGPUCB, PhasedGPUS, RegretBalancing
from botorch_unknown_hypers.policies.norm_balancing import LNBGPUCB
from botorch_unknown_hypers.policies.hyperprior import HPGPTS, MAPGPTS
from botorch_unknown_hypers.policies.prior_elimination import PEGPTS, PEGPUCB, OracleGPTS, OracleGPUCB
from botorch_unknown_hypers.policies.nuts import NUTSGPUCB
from botorch_unknown_hypers.policies.stableopt import HEStableOpt, StableOptMLE
from botorch_unknown_hypers.domains import Domain

PolicyFactory = Callable[..., Policy]

METHODS: dict[str, PolicyFactory] = {
    "random": RandomPolicy,
    "mle-gp-ucb": MLEGPUCB,
    "mle-gp-ts": GPThompsonSampling,
    "lb-gp-ucb": LBGPUCB,
    "lb-gp-ucb-auto": LBGPUCBAuto,
    "a-gp-ucb": AGPUCB,
    "lnb-gp-ucb": LNBGPUCB,
    "nuts-gp-ucb": NUTSGPUCB,
    "hb-gp-ucb": HyperparameterBalancing,
    "he-gp-ucb": HEGPUCB,
    "he-gp-ucb-auto": HEGPUCBAuto,
    "mle-candidates": MLECandidates,
    "expected-ucb": ExpectedUCB,
    "he-stableopt": HEStableOpt,
    "stableopt-mle": StableOptMLE,
    "pe-gp-ts": PEGPTS,
    "pe-gp-ucb": PEGPUCB,
    "hp-gp-ts": HPGPTS,
    "map-gp-ts": MAPGPTS,
    "oracle-gp-ts": OracleGPTS,
    "oracle-gp-ucb": OracleGPUCB,
    "ts-rsr": TSRSR,
    "gp-ts": BatchThompsonSampling,
    "bucb": BUCB,
    "ucbpe": UCBPE,
    "sp": StochasticPolicy,
    "kb-ei": KrigingBelieverEI,
    "dpp-ts": DPPThompsonSampling,
    "qlognei": QLogNEI,
    "ec-gp-ucb": ECGPUCB,
    "phased-gp-us": PhasedGPUS,
    "regret-balancing": RegretBalancing,
}


def register_method(name: str, factory: PolicyFactory, overwrite: bool = False) -> None:
    r"""Register ``factory(domain, seed=..., device=..., dtype=..., **options)`` under ``name``."""
    if name in METHODS and not overwrite:
        raise ValueError(f"method {name!r} is already registered.")
    METHODS[name] = factory


def list_methods() -> list[str]:
    return sorted(METHODS)


def method_limits(name: str) -> tuple[int | None, int]:
    r"""``(max_batch_size, min_observations)`` of the method registered as ``name``
    (``(None, 0)`` for a factory that declares neither), known before any policy is built."""
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; valid methods: {', '.join(list_methods())}.")
    factory = METHODS[name]
    return getattr(factory, "max_batch_size", None), getattr(factory, "min_observations", 0)


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
        ValueError: for an unknown name (the message lists the valid ones).
    """
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; valid methods: {', '.join(list_methods())}.")
    return METHODS[name](domain, seed=seed, device=device, dtype=dtype, **options)
