r"""The Python examples of every ``docs/`` page run as written.

Each page's blocks run in order in one fresh module (dataclasses need it registered in
``sys.modules``) that holds the reader's data of ``tests/reader_data.py``, the data the pages
say their snippets take. A block that registers a method or a problem gets copies of the
registries, restored afterwards; files a block writes go to a temporary directory. Blocks of
other languages (``bash``, ``text``) are not run.
"""

from __future__ import annotations

import re
import textwrap
import sys
import types
from pathlib import Path

import pytest

from botorch_unknown_hypers.policies import registry
from botorch_unknown_hypers.problems import problem_registry
from tests.reader_data import reader_data

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCK = re.compile(r"^([ \t]*)```python\n(.*?)^\1```", re.DOTALL | re.MULTILINE)  # also indented, in a list item


def python_blocks(page: Path) -> list[str]:
    return [textwrap.dedent(code) for _, code in BLOCK.findall(page.read_text())]


PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if python_blocks(p))


def test_the_architecture_page_has_its_worked_example():
    assert len(python_blocks(DOCS / "architecture.md")) == 4  # the round's configuration, the worked example


def test_the_pages_that_moved_out_of_the_readme_keep_their_examples():
    assert len(python_blocks(DOCS / "usage.md")) >= 7
    assert "## Scale: exact GPs at thousands of observations" in (DOCS / "benchmarks.md").read_text()


@pytest.mark.parametrize("page", PAGES)
def test_python_blocks_run_in_order(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = types.ModuleType(f"docs_{Path(page).stem.replace('-', '_')}")
    module.__dict__.update(reader_data())
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(registry, "METHODS", dict(registry.METHODS))
    monkeypatch.setattr(problem_registry, "PROBLEMS", dict(problem_registry.PROBLEMS))
    for i, block in enumerate(python_blocks(DOCS / page), start=1):
        try:
            exec(compile(block, f"docs/{page} block {i}", "exec"), module.__dict__)
        except Exception as e:  # name the block in the failure
            raise AssertionError(f"docs/{page}, Python block {i} fails: {type(e).__name__}: {e}\n{block}") from e
