r"""Move a method's study records to a new label, in every group of a study that holds them.

When a method's default changes, the runs made under its bare name ran the old default; they
move to a label that spells the old default out, so that every label in the records names what
ran (:meth:`~botorch_unknown_hypers.benchmarks.records.RecordStore.relabel`). The options of a
moved BBOB record become those of the new label (:func:`~botorch_unknown_hypers.policies.registry.parse_method_spec`).

Usage::

    python benchmarks/relabel_records.py --study benchmarks/results/bbob --old auto \
        --new 'auto[reduction=map&noise_floor=null]' --note "run as auto while H2a was its default"
    python benchmarks/relabel_records.py --study benchmarks/results/mixed-optuna --field sampler ...
"""

from __future__ import annotations

import argparse

from botorch_unknown_hypers.benchmarks.records import RecordStore
from botorch_unknown_hypers.policies.registry import parse_method_spec


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", required=True, help="the study's record store (benchmarks/results/<study>)")
    parser.add_argument("--old", required=True, help="the label the runs carry now")
    parser.add_argument("--new", required=True, help="the label that names what ran")
    parser.add_argument("--note", required=True, help="why, kept in every moved record")
    parser.add_argument("--field", default="method", help="the configuration field that holds the label (default: method)")
    args = parser.parse_args(argv)
    store = RecordStore(args.study, ("problem", args.field, "seed"))
    options = parse_method_spec(args.new)[1]
    for group in sorted({path.parent.name for path in store.files()}):
        moved = store.relabel(group, args.old, args.new, options, args.note, field=args.field)
        if moved:
            print(f"{group}: {moved} record(s) {args.old} -> {args.new}")


if __name__ == "__main__":
    main()
