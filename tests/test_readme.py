r"""Every Python block of ``README.md`` and ``notebooks/README.md`` runs as written.

The README says its snippets take the data of the reader's loop (``tests/reader_data.py``:
``train_X``, ``train_Y``, ``bounds``, ``f``, ``domain``, and for the tabular example ``arms``,
``means``, ``covariances``). Each file's blocks run in a fresh namespace holding only those
data, so a block that forgets an import fails here. Names a block defines stay visible to the
later blocks of the same file, as they would in a reader's session.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.reader_data import reader_data

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^([ \t]*)```python\n(.*?)^\1```", re.DOTALL | re.MULTILINE)  # also indented, in a list item
PAGES = ["README.md", "notebooks/README.md"]
README_MAX_LINES = 200


def python_blocks(page: str) -> list[str]:
    return [textwrap.dedent(code) for _, code in BLOCK.findall((ROOT / page).read_text())]


def test_the_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    blocks = python_blocks("README.md")
    assert blocks and 'make_policy("qlognei"' in blocks[0]  # the first example: what the BBOB reports support
    assert "mkdocs serve" in text and "mkdocs build" in text  # how to build the site


def test_the_readme_keeps_the_ci_test_command():
    ci_command = next(
        line for line in (ROOT / ".ci/run").read_text().splitlines() if line.startswith("python3 -m venv")
    )
    assert ci_command in (ROOT / "README.md").read_text().splitlines()


def test_the_ci_script_stops_when_a_step_of_a_chained_command_fails(tmp_path):
    # `set -e` ignores a failure before the last command of a && list: each list in .ci/run is
    # followed by a check of its status. Run the script's own lines with the commands replaced
    # by a failing first step, and it must stop with a failure.
    lines = (ROOT / ".ci/run").read_text().splitlines()
    chained = [i for i, line in enumerate(lines) if "&&" in line and not line.startswith("#")]
    assert chained
    for i in chained:
        assert lines[i + 1].strip() == "[ $? -eq 0 ] || exit 1", f".ci/run line {i + 1} is not followed by its check"
        script = tmp_path / f"ci{i}.sh"
        script.write_text("set -euo pipefail\nfalse && true\n" + lines[i + 1] + "\necho reached\n")
        out = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False)
        assert out.returncode == 1 and "reached" not in out.stdout


@pytest.mark.parametrize("page", PAGES)
def test_python_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # blocks may write files (e.g. a saved state)
    namespace = reader_data()
    for i, block in enumerate(python_blocks(page), start=1):
        try:
            exec(compile(block, f"{page} block {i}", "exec"), namespace)
        except Exception as e:  # name the block in the failure
            raise AssertionError(f"{page}, Python block {i} fails: {type(e).__name__}: {e}\n{block}") from e
