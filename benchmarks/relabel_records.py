r"""Move a method's study records to a new label, in every group of a study that holds them.

When a method's default changes, the runs made under its bare name ran the old default; they
move to a label that spells the old default out, so that every label in the records names what
ran (:meth:`~botorch_unknown_hypers.benchmarks.records.RecordStore.relabel`). The options of a
moved BBOB record become those of the new label (:func:`~botorch_unknown_hypers.policies.registry.parse_method_spec`).

``--respell NAME`` moves every label of method ``NAME`` at once, after its defaults changed from
``--old-defaults`` to ``--new-defaults`` (JSON objects with the same keys): each label becomes
the one that runs what it ran (:func:`~botorch_unknown_hypers.policies.registry.respell_for_defaults`),
so the bare name goes to a spelled-out label and the new default's spelled-out label becomes the
bare name (:meth:`~botorch_unknown_hypers.benchmarks.records.RecordStore.relabel_all`; a clash or a
cycle moves nothing in that group). ``--dry-run`` prints the moves without making them.

Usage::

    python benchmarks/relabel_records.py --study benchmarks/results/bbob --old auto \
        --new 'auto[reduction=map&noise_floor=null]' --note "run as auto while H2a was its default"
    python benchmarks/relabel_records.py --study benchmarks/results/mixed-optuna --field sampler ...
    python benchmarks/relabel_records.py --study benchmarks/results/bbob --respell auto \
        --old-defaults '{"acquisition": "lognei"}' --new-defaults '{"acquisition": "logei-plugin"}' --note "..."
"""

from __future__ import annotations

import argparse
import json

from botorch_unknown_hypers.benchmarks.records import RecordStore
from botorch_unknown_hypers.policies.registry import parse_method_spec, respell_for_defaults


def _json_object(text: str) -> dict:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", required=True, help="the study's record store (benchmarks/results/<study>)")
    parser.add_argument("--old", help="the label the runs carry now")
    parser.add_argument("--new", help="the label that names what ran")
    parser.add_argument("--respell", metavar="NAME", help="respell every label of method NAME after a change of its defaults")
    parser.add_argument("--old-defaults", type=_json_object, help="with --respell: the changed options' old defaults (JSON object)")
    parser.add_argument("--new-defaults", type=_json_object, help="with --respell: their new defaults (JSON object, the same keys)")
    parser.add_argument("--dry-run", action="store_true", help="with --respell: print the moves, make none")
    parser.add_argument("--note", required=True, help="why, kept in every moved record")
    parser.add_argument("--field", default="method", help="the configuration field that holds the label (default: method)")
    args = parser.parse_args(argv)
    store = RecordStore(args.study, ("problem", args.field, "seed"))
    groups = sorted({path.parent.name for path in store.files()})
    if args.respell is None:
        if args.old is None or args.new is None:
            parser.error("give --old and --new, or --respell with --old-defaults and --new-defaults")
        options = parse_method_spec(args.new)[1]
        for group in groups:
            moved = store.relabel(group, args.old, args.new, options, args.note, field=args.field)
            if moved:
                print(f"{group}: {moved} record(s) {args.old} -> {args.new}")
        return
    if args.old is not None or args.new is not None or args.old_defaults is None or args.new_defaults is None:
        parser.error("--respell takes --old-defaults and --new-defaults, not --old or --new")
    for group in groups:
        labels = store.labels(group, args.field)
        moves = {label: respell_for_defaults(label, args.respell, args.old_defaults, args.new_defaults) for label in labels}
        moves = {old: new for old, new in moves.items() if old != new}
        if args.dry_run:
            for old, new in moves.items():
                print(f"{group}: {old} -> {new} (dry run)")
            continue
        options = {new: parse_method_spec(new)[1] for new in moves.values()}
        for old, moved in store.relabel_all(group, moves, options, args.note, field=args.field).items():
            print(f"{group}: {moved} record(s) {old} -> {moves[old]}")


if __name__ == "__main__":
    main()
