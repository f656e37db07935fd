r"""The package's architecture: the import-layers contract, module sizes, one place per idea.

The layers (``pyproject.toml``, ``[tool.importlinter]``) point down only:
``domains`` -> ``candidates``/``confidence`` -> ``models`` -> ``acquisition`` -> ``policies``
-> ``loop`` -> ``problems`` -> the harness (``cli``, ``report``, ``integrations``, ...).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "botorch_unknown_hypers"
LINT_IMPORTS = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))


def lint_imports(package_parent: Path) -> subprocess.CompletedProcess:
    r"""Run import-linter with the project's configuration on the package found in ``package_parent``."""
    env = {"PYTHONPATH": str(package_parent), "PATH": str(Path(sys.executable).parent)}
    return subprocess.run(
        [LINT_IMPORTS, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=package_parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_layers_contract_is_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "bad_import"),
    [
        ("domains.py", "import botorch_unknown_hypers.problems"),  # the bottom imports the harness
        ("policies/base.py", "from botorch_unknown_hypers.problems import get_problem"),  # the library imports its benchmarks
        ("models/candidate_gp.py", "import botorch_unknown_hypers.acquisition.ucb"),  # a model imports an acquisition
    ],
)
def test_a_wrong_import_breaks_the_contract(tmp_path, module, bad_import):
    copy = tmp_path / "botorch_unknown_hypers"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / module
    target.write_text(target.read_text() + f"\n{bad_import}  # deliberately wrong\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout and "0 kept, 1 broken" in result.stdout


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_is_over_600_lines():
    sizes = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in _modules()}
    assert {p: n for p, n in sizes.items() if n > 600} == {}


def test_policies_never_branch_on_the_domain_type():
    pattern = re.compile(r"isinstance\(.*(FiniteDomain|BoxDomain)")
    offenders = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in (PACKAGE / "policies").rglob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), start=1)
        if pattern.search(line)
    ]
    assert offenders == []


def test_no_reference_to_notes_outside_the_repository():
    pattern = re.compile(r"gotcha|DESIGN\.md|\bA1[0-9]\b", re.IGNORECASE)
    offenders = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in _modules()
        for i, line in enumerate(p.read_text().splitlines(), start=1)
        if pattern.search(line)
    ]
    assert offenders == []


def test_no_private_botorch_import():
    pattern = re.compile(r"from (botorch|gpytorch|linear_operator)[\w.]* import .*\b_[a-z]\w*")
    offenders = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in _modules()
        for i, line in enumerate(p.read_text().splitlines(), start=1)
        if pattern.search(line)
    ]
    assert offenders == []
