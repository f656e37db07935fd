r"""The package's architecture: the import-layers contract, no import cycle, one place per idea.

The layers (``pyproject.toml``, ``[tool.importlinter]``) point down only:
``domains`` -> ``candidates``/``confidence`` -> ``models`` -> ``acquisition`` -> ``policies``
-> ``loop`` -> ``problems`` -> the harness (``cli``, ``report``, ``integrations``, ...).
A second contract keeps the package's own ``__init__`` and the modules of its public names light:
they import neither the harness nor pandas, Pyro, matplotlib, Ax or Ray.
"""

from __future__ import annotations

import json
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


def test_the_contracts_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "bad_import", "broken"),
    [
        ("domains.py", "import botorch_unknown_hypers.problems", 2),  # the bottom imports the harness
        ("policies/base.py", "from botorch_unknown_hypers.problems import get_problem", 2),  # the library imports its benchmarks
        ("candidates.py", "import botorch_unknown_hypers.problems", 2),  # the root's one eager import pulls the harness
        ("models/candidate_gp.py", "import botorch_unknown_hypers.acquisition.ucb", 1),  # a model imports an acquisition
        ("__init__.py", "from botorch_unknown_hypers.problems import get_problem", 1),  # the harness at import again
        ("loop.py", "import matplotlib.pyplot", 1),  # a plotting library at import
        ("policies/registry.py", "from botorch_unknown_hypers.policies.balancing.nuts import NUTSGPUCB", 1),  # Pyro's NUTS at import
    ],
)
def test_a_wrong_import_breaks_a_contract(tmp_path, module, bad_import, broken):
    copy = tmp_path / "botorch_unknown_hypers"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / module
    target.write_text(target.read_text() + f"\n{bad_import}  # deliberately wrong\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout and f"{2 - broken} kept, {broken} broken" in result.stdout


HEAVY = ["botorch_unknown_hypers.problems", "pandas", "pyro", "scipy.signal", "matplotlib", "ax", "ray"]
# BoTorch's optimisers and samplers (and the SciPy they load): imported when a rule first runs them.
OPTIMISERS = ["scipy.optimize", "botorch.generation", "botorch.optim", "botorch.fit", "botorch.sampling.pathwise"]
# BoTorch's acquisition layer (which loads scipy.spatial) and the library: with the first name that needs them.
DEFERRED = ["scipy.spatial", "botorch.acquisition", "botorch_unknown_hypers.loop", "botorch_unknown_hypers.policies"]


def _loaded_after(statement: str, modules: list[str] = HEAVY) -> dict[str, list[str]]:
    r"""Per module of ``modules``, the names of it (the module and its submodules) in
    ``sys.modules`` after ``statement`` in a fresh interpreter."""
    return _loaded_after_each([statement], modules)[0]


def _loaded_after_each(statements: list[str], modules: list[str]) -> list[dict[str, list[str]]]:
    r"""Run ``statements`` one after the other in one fresh interpreter; after each, per module of
    ``modules``, the names of it (the module and its submodules) in ``sys.modules``."""
    snapshot = (
        f"print(json.dumps({{h: sorted(m for m in sys.modules if m == h or m.startswith(h + '.')) for h in {modules!r}}}))"
    )
    code = "import json, sys\n" + "".join(f"{statement}\n{snapshot}\n" for statement in statements)
    env = {"PYTHONPATH": str(ROOT), "PATH": str(Path(sys.executable).parent), "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.strip().splitlines()[-len(statements):]]


@pytest.fixture(scope="module")
def loaded_by_imports() -> dict[str, dict[str, list[str]]]:
    r"""What one fresh interpreter holds after ``import botorch``, then ``import
    botorch_unknown_hypers``, then ``from botorch_unknown_hypers import make_policy, run``
    (each import adds to the previous; BoTorch's modules are loaded by the first)."""
    statements = {
        "botorch": "import botorch",
        "package": "import botorch_unknown_hypers",
        "api": "from botorch_unknown_hypers import make_policy, run",
    }
    after = _loaded_after_each(list(statements.values()), HEAVY + OPTIMISERS + DEFERRED)
    return dict(zip(statements, after))


def test_importing_the_package_loads_no_harness_and_no_heavy_dependency(loaded_by_imports):
    after_botorch, after_package = loaded_by_imports["botorch"], loaded_by_imports["package"]
    for heavy in HEAVY:
        # GPyTorch (and so `import botorch`) imports Pyro itself where it is installed: the
        # package must add none of it (e.g. pyro.infer's NUTS of nuts-gp-ucb).
        assert after_package[heavy] == after_botorch[heavy], heavy
    for heavy in ["botorch_unknown_hypers.problems", "pandas", "scipy.signal", "matplotlib", "ax", "ray"]:
        assert after_package[heavy] == [], heavy


def test_importing_the_public_api_loads_no_harness_and_no_optimiser_beyond_botorch(loaded_by_imports):
    after_botorch, after_api = loaded_by_imports["botorch"], loaded_by_imports["api"]
    for module in HEAVY + OPTIMISERS:
        assert after_api[module] == after_botorch[module], module


def test_importing_the_package_defers_botorch_acquisition_until_a_name_needs_it(loaded_by_imports):
    # The root loads its candidate sets alone; BoTorch's acquisition layer (and the
    # scipy.spatial it loads, about 0.3 s) comes with the first model, loop or rule name.
    for module in DEFERRED:
        assert loaded_by_imports["botorch"][module] == [], module
        assert loaded_by_imports["package"][module] == [], module
        assert loaded_by_imports["api"][module], module


@pytest.mark.parametrize("package", ["botorch_unknown_hypers", *(f"botorch_unknown_hypers.{p}" for p in ("models", "acquisition", "policies"))])
def test_every_public_name_imports_in_a_fresh_interpreter(package):
    # `import *` takes every name of __all__, the lazy ones through the module __getattr__;
    # each is then the object its defining module holds, and dir() lists it.
    _loaded_after(
        f"import importlib, {package} as pkg\n"
        f"from {package} import *\n"
        "for name in pkg.__all__:\n"
        "    value = globals()[name]\n"
        "    assert getattr(pkg, name) is value and name in dir(pkg), name\n"
        "    home = getattr(value, '__module__', None)\n"
        "    if home is not None and home.startswith('botorch_unknown_hypers'):\n"
        "        assert getattr(importlib.import_module(home), name, value) is value, name\n"
        "try:\n"
        "    pkg.no_such_name\n"
        "except AttributeError as e:\n"
        f"    assert 'no_such_name' in str(e) and {package!r} in str(e)\n"
        "else:\n"
        "    raise AssertionError('no AttributeError')"
    )


def test_the_public_names_import_as_before():
    after = _loaded_after(
        "import botorch_unknown_hypers as buh\n"
        "from botorch_unknown_hypers import *\n"
        "assert get_problem is buh.get_problem and callable(get_problem)\n"
        "assert set(buh.__all__) <= set(dir(buh))\n"
        "assert len(buh.policies.METHODS) >= 30"
    )
    assert after["botorch_unknown_hypers.problems"]  # get_problem is imported on first use


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _import_graph() -> dict[str, set[str]]:
    r"""Module -> the package modules it imports anywhere in its file (top level, functions and
    ``TYPE_CHECKING`` blocks alike)."""
    import ast

    names = {}
    for path in _modules():
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {m: set() for m in names}
    for module, path in names.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            graph[module].update(t for t in targets if t in names and t != module)
    return graph


def test_no_import_cycle_in_the_package():
    r"""No module imports, however indirectly, a module that imports it (a depth-first search for
    a back edge over every import statement, deferred or not)."""
    graph = _import_graph()
    colour: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        colour[module] = 1
        for target in sorted(graph[module]):
            if colour.get(target) == 1:
                cycles.append(path[path.index(target):] + [target] if target in path else [module, target])
            elif target not in colour:
                visit(target, path + [target])
        colour[module] = 2

    for module in sorted(graph):
        if module not in colour:
            visit(module, [module])
    assert cycles == []
    assert "botorch_unknown_hypers.policies.context" in graph["botorch_unknown_hypers.policies.round.candidate_round"]  # the graph is read


def test_no_piece_of_a_round_takes_its_rule():
    r"""The pieces of a round receive the rule's context and state, never the rule: no method in
    the package takes a ``rule`` argument after ``self``, and the round and the pieces import
    no policy base class."""
    pattern = re.compile(r"def [a-z_]+\(self, rule")
    found = [f"{path.relative_to(ROOT)}:{i}" for path in sorted(PACKAGE.rglob("*.py"))
             for i, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == []
    for name in ("round/candidate_round", "round/shared_pieces", "balancing/balancing_pieces", "prior_selection/prior_pieces", "context"):
        source = (PACKAGE / "policies" / f"{name}.py").read_text()
        assert "policies.base import" not in source, name


def test_each_family_of_rules_has_its_folder():
    r"""``policies/`` holds the interface (base, context, registry, tasks, the JSON codec) and one
    folder per family, each module named for what it holds."""
    policies = PACKAGE / "policies"
    assert sorted(p.name for p in policies.glob("*.py")) == ["__init__.py", "base.py", "context.py", "json_state.py", "registry.py", "tasks.py"]
    folders = sorted(p.name for p in policies.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == ["balancing", "baselines", "batch", "elimination", "misspecified", "presets", "prior_selection", "round"]
    for folder in folders:  # the tests mirror the folders
        assert (ROOT / "tests" / "policies" / folder / "__init__.py").exists(), folder


def test_module_names_are_unique_in_the_package():
    names = [path.name for path in PACKAGE.rglob("*.py") if path.name != "__init__.py"]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []


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
