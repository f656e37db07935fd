r"""Every Python block of ``README.md`` and ``notebooks/README.md`` runs as written.

The README says its snippets take the data of the reader's loop (``train_X``, ``train_Y``,
``bounds``, ``f``, ``domain``, and for the tabular example ``arms``, ``means``,
``covariances``). Each block runs in a fresh namespace holding only those data, so a block
that forgets an import fails here. Names a block defines stay visible to the later blocks
of the same file, as they would in a reader's session.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import torch

from botorch_unknown_hypers.candidates import KernelCandidates
from botorch_unknown_hypers.domains import BoxDomain

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
PAGES = ["README.md", "notebooks/README.md"]


def _reader_data() -> dict[str, Any]:
    r"""The data a reader brings: a 2-d box, 8 observations of a smooth function."""
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


def python_blocks(page: str) -> list[str]:
    return BLOCK.findall((ROOT / page).read_text())


def test_the_readmes_have_python_blocks():
    assert len(python_blocks("README.md")) >= 5


@pytest.mark.parametrize("page", PAGES)
def test_python_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # blocks may write files (e.g. a saved state)
    namespace = _reader_data()
    for i, block in enumerate(python_blocks(page), start=1):
        try:
            exec(compile(block, f"{page} block {i}", "exec"), namespace)
        except Exception as e:  # name the block in the failure
            raise AssertionError(f"{page}, Python block {i} fails: {type(e).__name__}: {e}\n{block}") from e
