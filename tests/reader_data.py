r"""The data a reader brings to the snippets of the README and the ``docs/`` pages.

The pages say their snippets take the data of the reader's own loop: ``train_X`` (``n x d``,
float64, inside ``bounds``), ``train_Y`` (``n x 1``), ``bounds`` (``2 x d``), a black box ``f``
(``m x d -> m x 1``), the ``domain = BoxDomain(bounds)``, for the tabular example ``arms``,
``means`` and ``covariances``, and a candidate set ``my_candidate_spec``. The tests run every
block on these.
"""

from __future__ import annotations

from typing import Any

import torch

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.domains import BoxDomain


def reader_data() -> dict[str, Any]:
    r"""A 2-d box, 8 observations of a smooth function, and a 20-arm pool with two priors."""
    gen = torch.Generator().manual_seed(0)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)

    def f(X: torch.Tensor) -> torch.Tensor:
        return (torch.sin(6 * X[..., :1]) * X[..., 1:]).reshape(*X.shape[:-1], 1)

    train_X = torch.rand(8, 2, generator=gen, dtype=torch.float64)
    arms = torch.linspace(0, 1, 20, dtype=torch.float64).unsqueeze(-1)
    dist = (arms - arms.T).square()
    covariances = torch.stack([torch.exp(-dist / (2 * ls**2)) for ls in (0.1, 0.3)]) + 1e-8 * torch.eye(20)
    domain = BoxDomain(bounds)
    return {
        "bounds": bounds,
        "f": f,
        "train_X": train_X,
        "train_Y": f(train_X),
        "domain": domain,
        "arms": arms,
        "means": torch.zeros(2, 20, dtype=torch.float64),
        "covariances": covariances,
        "my_candidate_spec": KernelCandidates.from_lengthscales(
            torch.tensor([0.4, 0.2], dtype=torch.float64), kernel="matern52"
        ),
    }
