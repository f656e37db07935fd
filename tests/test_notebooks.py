"""The worked examples in ``notebooks/`` run, at small budgets, and are committed without outputs.

Each notebook is executed with ``nbclient`` in a fresh ``python3`` kernel with
``BUH_NOTEBOOK_SMALL=1`` (the notebooks' switch to tiny budgets), ``MPLBACKEND=Agg``
and one thread; the executed copy stays in memory, nothing is written to the repository.
"""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
CELL_TIMEOUT_S = 300


def _require(module: str):
    return pytest.importorskip(module, reason=f"executing the notebooks needs {module} (pip install -e '.[test]')")


def test_notebooks_exist():
    names = [p.stem for p in NOTEBOOKS]
    assert names == ["01_quickstart", "02_any_hyperparameter", "03_batch_ts_rsr", "04_reproduce_a_figure", "auto_presets"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path: Path):
    nbformat = _require("nbformat")
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)
    assert 'SMALL = os.environ.get("BUH_NOTEBOOK_SMALL") == "1"' in code[0].source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path: Path, monkeypatch: pytest.MonkeyPatch):
    nbformat = _require("nbformat")
    nbclient = _require("nbclient")
    _require("ipykernel")
    monkeypatch.setenv("BUH_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},  # the kernel's working directory
    )
    client.execute()  # raises CellExecutionError with the failing cell and its traceback
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
