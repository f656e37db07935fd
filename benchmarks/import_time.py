r"""Import time of the package on top of BoTorch's own, measured in one run.

Each sample is a fresh interpreter that times one statement, in wall-clock time
(``time.perf_counter``) and in CPU time of the process (``time.process_time``, which a busy
machine inflates far less), the interpreter's start-up excluded: ``import botorch`` alone, and ``import
botorch_unknown_hypers`` (which imports BoTorch itself). Samples of the statements are
interleaved (one of each per repeat) so that a change of load on the machine hits all of
them alike, and the median over ``--repeats`` is reported with the difference

.. math:: \Delta = \operatorname{median}(t_{\text{buh}}) - \operatorname{median}(t_{\text{botorch}}),

the time ``import botorch_unknown_hypers`` adds to ``import botorch`` (target: at most 0.5 s).
The package's root imports its candidate sets alone and the rest of its public names on first
use, so two more statements time what a loop pays: ``from botorch_unknown_hypers import
make_policy, run`` (the models, the loop, the method registry), against ``import
botorch.acquisition``, the BoTorch layer that every acquisition function subclasses and that
loads ``scipy.spatial``; their difference is the package's own share of that import.
Each fresh interpreter also lists which of the heavy modules the import left in
``sys.modules`` (the benchmark harness, pandas, Pyro, ``scipy.signal``, matplotlib, Ax, Ray).

With ``--checkout DIR`` (repeatable) the same is measured for other checkouts of the package
(e.g. an older commit), interleaved in the same run; the default is this script's checkout.
Each checkout's package is copied to a scratch folder and compiled to bytecode first, so that
every checkout is timed alike (from bytecode) and none is written to.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/import_time.py --repeats 9 --checkout . --checkout ../old
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HEAVY = ["botorch_unknown_hypers.problems", "pandas", "pyro", "scipy.signal", "matplotlib", "ax", "ray"]

_TIMER = """
import json, sys, time
start, cpu = time.perf_counter(), time.process_time()
{statement}
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({{"wall": wall, "cpu": cpu, "loaded": [m for m in {heavy!r} if m in sys.modules]}}))
"""


STATEMENTS = {
    "botorch": "import botorch",
    "package": "import botorch_unknown_hypers",
    "acquisition": "import botorch.acquisition",
    "api": "from botorch_unknown_hypers import make_policy, run",
}
r"""The timed statements, by a short name."""


def time_import(statement: str, pythonpath: str) -> dict:
    r"""Wall and CPU seconds to run the import ``statement`` in a fresh interpreter with
    ``PYTHONPATH=pythonpath``, and the heavy modules it left loaded."""
    env = {**os.environ, "PYTHONPATH": pythonpath}
    out = subprocess.run(
        [sys.executable, "-c", _TIMER.format(statement=statement, heavy=HEAVY)],
        env=env, capture_output=True, text=True, check=True,
        cwd=pythonpath,  # `python -c` puts the working directory first on sys.path
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def compiled_copy(checkout: str, into: Path) -> str:
    r"""A copy of ``checkout``'s package under ``into`` with its bytecode compiled, so that every
    checkout (a read-only one too) is timed from bytecode, and nothing is written to it."""
    shutil.copytree(Path(checkout) / "botorch_unknown_hypers", into / "botorch_unknown_hypers",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into)], check=True)
    return str(into)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="fresh interpreters per statement (median)")
    parser.add_argument("--checkout", action="append", default=None, help="a checkout of the package (repeatable)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}.")
    checkouts = [str(Path(c).resolve()) for c in (args.checkout or [Path(__file__).resolve().parents[1]])]
    scratch = Path(tempfile.mkdtemp(prefix="import_time_"))
    copies = {path: compiled_copy(path, scratch / str(i)) for i, path in enumerate(checkouts)}
    print(f"python {sys.version.split()[0]}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
          f"{os.cpu_count()} CPUs, {args.repeats} repeats (median)")
    # compile and cache the bytecode, and warm the file-system cache, before any sample
    for path in checkouts:
        for statement in STATEMENTS.values():
            time_import(statement, copies[path])
    samples: dict[tuple[str, str, str], list[float]] = {}
    loaded: dict[str, list[str]] = {}
    for _ in range(args.repeats):
        for path in checkouts:
            for name, statement in STATEMENTS.items():
                result = time_import(statement, copies[path])
                for clock in ("wall", "cpu"):
                    samples.setdefault((name, path, clock), []).append(result[clock])
                if name == "package":
                    loaded[path] = result["loaded"]
    base = time_import(STATEMENTS["botorch"], copies[checkouts[0]])["loaded"]
    shutil.rmtree(scratch)
    print(f"heavy modules loaded by `import botorch` itself: {', '.join(base) or 'none'}")
    for path in checkouts:
        print(f"\ncheckout {path}")
        print(f"  {'median seconds':52s} {'wall':>7s} {'cpu':>7s}")
        med = {
            (name, clock): statistics.median(samples[(name, path, clock)])
            for name in STATEMENTS for clock in ("wall", "cpu")
        }
        for name, statement in STATEMENTS.items():
            print(f"  {statement:52s} {med[(name, 'wall')]:7.3f} {med[(name, 'cpu')]:7.3f}")
        for label, name, over in (
            ("package over botorch (target <= 0.5 s)", "package", "botorch"),
            ("public API over botorch.acquisition", "api", "acquisition"),
        ):
            print(f"  {label:52s} {med[(name, 'wall')] - med[(over, 'wall')]:7.3f} "
                  f"{med[(name, 'cpu')] - med[(over, 'cpu')]:7.3f}")
        print(f"  heavy modules loaded by the package import: {', '.join(loaded[path]) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
