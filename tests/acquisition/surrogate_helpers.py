r"""Shared set-up of the tests of pending-point acquisitions, Thompson samples and TS-RSR: the
TS-RSR paper's fixed Matérn-5/2 surrogate on the box [-2, 2]^2 and a smooth test function."""

from __future__ import annotations

import torch

from botorch_unknown_hypers.models.fixed_gp import SurrogateSpec

SPEC = SurrogateSpec(kernel="matern52", lengthscale=(0.6,), outputscale=1.0, noise_variance=1e-4)
BOUNDS = torch.tensor([[-2.0, -2.0], [2.0, 2.0]], dtype=torch.float64)


def surrogate_data(n=15, seed=0):
    r"""``n`` uniform points of the box and ``2 + 4 sin(2 x_1) cos(x_2)`` there (``n x 1``)."""
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 2, generator=g, dtype=torch.float64) * 4 - 2
    Y = 2.0 + 4.0 * torch.sin(2 * X[:, :1]) * torch.cos(X[:, 1:])
    return X, Y
