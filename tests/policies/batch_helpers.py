r"""Shared set-up of the batch-baseline tests (test_batch_baselines, test_batch_sampling).

The box and pool fixtures are in tests/policies/conftest.py.
"""

from __future__ import annotations

import json

import torch

from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec
from botorch_unknown_hypers.policies.registry import METHODS

BATCH_BASELINES = {name: METHODS[name] for name in ("gp-ts", "bucb", "ucbpe", "sp", "kb-ei", "dpp-ts", "qlognei")}
SPEC = {"kernel": "matern52", "lengthscale": 0.7, "outputscale": 1.0, "noise_variance": 1e-6}
FAST = dict(num_restarts=2, raw_samples=32)
LO, HI = -2.0, 2.0
DT = torch.float64

# Policies whose batch cannot repeat a point on a pool (TS, SP and DPP-TS draw at random).
NO_REPEATS_ON_POOL = {"bucb", "ucbpe", "kb-ei", "qlognei"}


def objective(X: torch.Tensor) -> torch.Tensor:
    return (torch.sin(2.0 * X[:, :1]) + torch.cos(1.5 * X[:, 1:]) - 0.2 * (X**2).sum(-1, keepdim=True))


def make(name: str, domain, seed: int = 3, **options):
    return BATCH_BASELINES[name](domain, seed=seed, surrogate="paper", surrogate_spec=SPEC, **FAST, **options)


def pool_index(pool, X):
    idx = pool.index_of(X)
    assert (idx >= 0).all()
    return idx.tolist()


def check_batch_in_domain_deterministic_and_resumable(name, kind, domain, X, Y):
    r"""A ``q = 4`` batch is in the domain, diverse, deterministic given the seed, leaves the
    caller's RNG alone, and a JSON state round trip gives the same next batch."""
    q = 4
    first = make(name, domain, seed=3)
    assert first.name == name
    torch.manual_seed(123)
    rng_before = torch.get_rng_state()
    batch = first.suggest(X, Y, q=q)
    assert torch.equal(torch.get_rng_state(), rng_before)  # the caller's RNG is untouched
    assert batch.shape == (q, 2)
    assert domain.contains(batch).all()
    assert first.selected == [SurrogateSpec.from_dict(SPEC).label()] * q
    assert first.n_candidates == 1 and first.state.n == 1
    n_distinct = torch.unique(batch, dim=0).shape[0]
    if kind == "box" or name in NO_REPEATS_ON_POOL:
        assert torch.pdist(batch).min() > 1e-4
    else:
        assert n_distinct >= 2

    # Deterministic given the seed.
    twin = make(name, domain, seed=3)
    assert torch.equal(twin.suggest(X, Y, q=q), batch)

    # JSON round trip into a fresh policy (other seed) gives the same next batch.
    state = json.loads(json.dumps(first.state_dict()))
    fresh = make(name, domain, seed=99)
    fresh.load_state_dict(state)
    assert fresh.state.n == 1 and fresh.state.history == first.state.history
    X2, Y2 = torch.cat([X, batch]), torch.cat([Y, objective(batch)])
    assert torch.equal(fresh.suggest(X2, Y2, q=q), first.suggest(X2, Y2, q=q))
    assert first.state.n == 2
