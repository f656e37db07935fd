r"""Regenerate every study table of the docs from the committed records, running nothing.

Each table between ``<!-- table: NAME -->`` and ``<!-- end table -->`` in ``docs/*.md`` is
recomputed from ``benchmarks/results/`` (``botorch_unknown_hypers/benchmarks/tables.py`` lists
the tables). ``--check`` writes nothing and exits 1 when a table differs from its records.

Usage::

    python benchmarks/tables.py            # rewrite the tables
    python benchmarks/tables.py --check    # are the docs the records' tables?
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from botorch_unknown_hypers.benchmarks.tables import regenerate

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--docs", type=Path, default=ROOT / "docs", help="the Markdown files (default docs/)")
    p.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "results", help="the study records")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if a table differs from its records")
    args = p.parse_args(argv)
    try:
        changed = regenerate(args.docs, args.results, check=args.check)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    verb = "differ from their records" if args.check else "rewritten"
    print(f"{len(changed)} table(s) {verb}" + (": " + ", ".join(changed) if changed else "."))
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
