r"""Fixtures shared by the batch-baseline tests: a 2-d box and a 30-point pool on [-2, 2]^2 with data."""

from __future__ import annotations

import pytest
import torch

from botorch_unknown_hypers.domains import BoxDomain, FiniteDomain
from tests.policies.batch_helpers import DT, HI, LO, objective


@pytest.fixture(scope="module")
def box():
    return BoxDomain(torch.tensor([[LO, LO], [HI, HI]], dtype=DT))


@pytest.fixture(scope="module")
def box_data():
    g = torch.Generator().manual_seed(0)
    X = LO + (HI - LO) * torch.rand(15, 2, dtype=DT, generator=g)
    return X, objective(X)


@pytest.fixture(scope="module")
def pool():
    g = torch.Generator().manual_seed(1)
    return FiniteDomain(LO + (HI - LO) * torch.rand(30, 2, dtype=DT, generator=g))


@pytest.fixture(scope="module")
def pool_data(pool):
    X = pool.points[:10]
    return X, objective(X)
