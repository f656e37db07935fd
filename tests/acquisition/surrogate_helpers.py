r"""Shared set-up of the tests of pending-point acquisitions, Thompson samples and TS-RSR: the
TS-RSR paper's fixed Matérn-5/2 surrogate on the box [-2, 2]^2 and a smooth test function."""

from __future__ import annotations

import torch

from botorch_unknown_hypers.acquisition.pending import condition_on_pending
from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec, fixed_hyperparameter_gp

SPEC = SurrogateSpec(kernel="matern52", lengthscale=(0.6,), outputscale=1.0, noise_variance=1e-4)
BOUNDS = torch.tensor([[-2.0, -2.0], [2.0, 2.0]], dtype=torch.float64)


def surrogate_data(n=15, seed=0):
    r"""``n`` uniform points of the box and ``2 + 4 sin(2 x_1) cos(x_2)`` there (``n x 1``)."""
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 2, generator=g, dtype=torch.float64) * 4 - 2
    Y = 2.0 + 4.0 * torch.sin(2 * X[:, :1]) * torch.cos(X[:, 1:])
    return X, Y


def conditioned_on_three_pending():
    r"""``(X, model, Q, cond)``: the fixed surrogate on :func:`surrogate_data`, three pending
    points ``Q`` (two close together) and the model conditioned on them one at a time."""
    X, Y = surrogate_data()
    model = fixed_hyperparameter_gp(X, Y, SPEC)
    Q = torch.tensor([[0.1, 0.2], [0.5, -0.3], [0.1, 0.25]], dtype=torch.float64)
    model.posterior(X[:1])
    cond = model
    for i in range(3):
        cond = condition_on_pending(cond, Q[i : i + 1])
    return X, model, Q, cond
