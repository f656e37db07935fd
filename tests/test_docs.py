r"""The Python examples of ``docs/`` run as written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from botorch_unknown_hypers.policies import registry

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def python_blocks(page: Path) -> list[str]:
    return BLOCK.findall(page.read_text())


def test_the_architecture_page_has_its_worked_example():
    assert len(python_blocks(DOCS / "architecture.md")) == 4  # the engine's configuration, the worked example


@pytest.mark.parametrize("page", ["architecture.md"])
def test_python_blocks_run_in_order(page, monkeypatch):
    # The blocks of one page share a module (dataclasses need it registered in sys.modules).
    module = types.ModuleType(f"docs_{Path(page).stem}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    # The example registers a method: give it a copy of the registry, restored afterwards.
    monkeypatch.setattr(registry, "METHODS", dict(registry.METHODS))
    for block in python_blocks(DOCS / page):
        exec(compile(block, f"docs/{page}", "exec"), module.__dict__)
