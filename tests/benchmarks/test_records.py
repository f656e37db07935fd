import gzip
import json

import pytest

from botorch_unknown_hypers.benchmarks.records import RECORDS_FORMAT, RecordStore, label_file_name, rounded


def _record(problem, seed, regret):
    return {"config": {"problem": problem, "method": "m[a=1]", "seed": seed, "extra": [1.0]},
            "simple_regret": [regret + 1.0, regret], "final_simple_regret": regret}


def test_records_round_trip_replace_by_key_and_survive_a_new_store(tmp_path):
    store = RecordStore(tmp_path, ("problem", "method", "seed"))
    path = store.add("d2", "m[a=1]", _record("p", 0, 0.1234567891234))
    assert path == tmp_path / "d2" / "m_a=1_.jsonl.gz" and label_file_name("m[a=1]") == "m_a=1_"
    store.add("d2", "m[a=1]", _record("p", 1, 2.0))
    store.add("d2", "m[a=1]", _record("p", 0, 0.5))  # the same key replaces the stored run
    fresh = RecordStore(tmp_path, ("problem", "method", "seed"))  # a fresh clone reads the files alone
    records = list(fresh.records())
    assert [(r["config"]["seed"], r["final_simple_regret"]) for r in records] == [(1, 2.0), (0, 0.5)]
    assert all(r["format"] == RECORDS_FORMAT and r["version"] == 1 for r in records)
    assert fresh.has("d2", "m[a=1]", {"problem": "p", "method": "m[a=1]", "seed": 1, "extra": "ignored"})
    assert not fresh.has("d2", "m[a=1]", {"problem": "p", "method": "m[a=1]", "seed": 2})
    assert not fresh.has("d5", "m[a=1]", {"problem": "p", "method": "m[a=1]", "seed": 1})
    lines = gzip.open(path, "rt").read().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["config"]["problem"] == "p" for line in lines)
    assert not list(tmp_path.glob("*/.*.tmp"))  # the temporary file was renamed over the record file


def test_same_records_give_the_same_bytes_and_floats_keep_seven_digits(tmp_path):
    a, b = RecordStore(tmp_path / "a", ("problem",)), RecordStore(tmp_path / "b", ("problem",))
    for store in (a, b):
        store.add("g", "m", {"config": {"problem": "p"}, "r": [1 / 3, float("inf"), 7, "x", {"z": 2 / 3}]})
    assert a.path("g", "m").read_bytes() == b.path("g", "m").read_bytes()
    assert next(a.records())["r"] == [0.3333333, float("inf"), 7, "x", {"z": 0.6666667}]
    assert rounded(123456789.0) == 123456800.0 and rounded(True) is True
    assert a.size_bytes() == a.path("g", "m").stat().st_size


def test_relabel_moves_every_record_under_a_label_that_names_what_ran(tmp_path):
    store = RecordStore(tmp_path, ("problem", "method", "seed", "options"))
    for seed in (0, 1):
        store.add("d2", "auto", {"config": {"problem": "p", "method": "auto", "seed": seed, "options": {}}, "r": seed})
    store.add("d2", "auto[x=1]", {"config": {"problem": "p", "method": "auto[x=1]", "seed": 0, "options": {"x": 1}}, "r": 5})
    assert store.relabel("d2", "auto", "auto[x=0]", {"x": 0}, "x was 0 by default") == 2
    fresh = RecordStore(tmp_path, store.key_fields)
    assert not fresh.path("d2", "auto").exists() and fresh.has("d2", "auto[x=0]", {"problem": "p", "method": "auto[x=0]", "seed": 1, "options": {"x": 0}})
    moved = [r for r in fresh.records() if r["config"]["method"] == "auto[x=0]"]
    assert [r["r"] for r in moved] == [0, 1] and all(r["relabelled"] == {"from": "auto", "note": "x was 0 by default"} for r in moved)
    assert fresh.relabel("d2", "auto[x=1]", "auto", {}, "x is 1 by default now") == 1  # the vacated label takes the new default's runs
    assert [r["config"]["options"] for r in RecordStore(tmp_path, store.key_fields).records() if r["config"]["method"] == "auto"] == [{}]
    assert fresh.relabel("d2", "missing", "auto", {}, "nothing to move") == 0
    fresh.add("d2", "auto[x=1]", {"config": {"problem": "p", "method": "auto", "seed": 0, "options": {}}, "r": 9})
    before = {p: p.read_bytes() for p in fresh.files()}
    with pytest.raises(ValueError, match="1 run\\(s\\) already stored under the new label"):
        fresh.relabel("d2", "auto[x=1]", "auto", {}, "a clash")
    with pytest.raises(ValueError, match="new must differ from old"):
        fresh.relabel("d2", "auto", "auto", {}, "same")
    with pytest.raises(ValueError, match="note must say why"):
        fresh.relabel("d2", "auto", "auto[y=1]", {}, " ")
    assert {p: p.read_bytes() for p in fresh.files()} == before  # nothing changed on refusal


def test_relabel_all_moves_a_default_change_at_once_and_refuses_a_clash_or_a_cycle_before_moving_anything(tmp_path):
    store = RecordStore(tmp_path, ("problem", "method", "seed"))

    def add(label, seed):
        store.add("d2", label, {"config": {"problem": "p", "method": label, "seed": seed, "options": {}}, "r": seed})

    for seed in (0, 1):
        add("auto", seed)  # the old default's runs
        add("auto[x=1]", seed)  # the new default's, spelled out
    add("auto[y=2]", 0)
    assert store.labels("d2") == ["auto", "auto[x=1]", "auto[y=2]"]
    before = {p: p.read_bytes() for p in store.files()}
    with pytest.raises(ValueError, match="a run would be stored twice under 'auto\\[x=0\\]'"):
        store.relabel_all("d2", {"auto": "auto[x=0]", "auto[y=2]": "auto[x=0]"}, {}, "a clash")
    with pytest.raises(ValueError, match="the moves form a cycle"):
        store.relabel_all("d2", {"auto": "auto[x=1]", "auto[x=1]": "auto"}, {}, "a swap")
    assert {p: p.read_bytes() for p in store.files()} == before  # nothing moved on refusal
    moves = {"auto[x=1]": "auto", "auto": "auto[x=0]", "auto[y=2]": "auto[y=2]", "missing": "auto[z=3]"}
    moved = store.relabel_all("d2", moves, {"auto[x=0]": {"x": 0}, "auto": {}}, "x is 1 by default now")
    assert moved == {"auto": 2, "auto[x=1]": 2} and list(moved) == ["auto", "auto[x=1]"]  # auto is vacated first
    fresh = RecordStore(tmp_path, store.key_fields)
    assert fresh.labels("d2") == ["auto", "auto[x=0]", "auto[y=2]"]
    by_label = {}
    for r in fresh.records():
        by_label.setdefault(r["config"]["method"], []).append(r)
    assert [r["relabelled"]["from"] for r in by_label["auto"]] == ["auto[x=1]"] * 2
    assert all(r["config"]["options"] == {"x": 0} for r in by_label["auto[x=0]"]) and "relabelled" not in by_label["auto[y=2]"][0]


def test_refusals_name_the_argument(tmp_path):
    with pytest.raises(ValueError, match="key_fields"):
        RecordStore(tmp_path, ())
    store = RecordStore(tmp_path, ("problem", "seed"))
    with pytest.raises(ValueError, match="record: expected a 'config' with the fields"):
        store.add("g", "m", {"config": {"problem": "p"}})
    assert not store.files()  # nothing written on refusal


def test_bbob_sweep_records_resume_and_report_from_the_store(tmp_path):
    from botorch_unknown_hypers.benchmarks.bbob import grid, pending_specs, record_store, sweep
    from botorch_unknown_hypers.benchmarks.bbob_report import load_runs
    from botorch_unknown_hypers.executors import LocalExecutor

    specs = grid(functions=[1, 2], instances=[1], dims=[2], methods=["random"], noise=(False, True))
    store = record_store(tmp_path)
    done = list(sweep(specs[:3], None, LocalExecutor(threads=1), progress=False, store=store))
    assert all(path is not None for _, path in done)
    assert pending_specs(specs, None, record_store(tmp_path)) == specs[3:]  # a fresh store resumes from the files
    runs = load_runs(tmp_path)
    assert sorted(r["config"]["problem"] for r in runs) == sorted(s.problem for s in specs[:3])
    assert {p.parent.name for p in store.files()} == {"d2", "d2-noisy"}
    run = runs[0]
    assert len(run["simple_regret"]) == 4 + 20 and "x" not in run and "cpu_s" in run
    assert load_runs(tmp_path, instances=[2]) == []
    # A dimension's groups alone are read; their runs are the same as the whole store's.
    assert load_runs(tmp_path, dims=[2]) == runs and load_runs(tmp_path, dims=[5]) == []
    assert [p.parent.name for p in store.files(["d2-noisy"])] == ["d2-noisy"] * len(list((tmp_path / "d2-noisy").glob("*.jsonl.gz")))
    assert list(store.records(["d5"])) == []
    with pytest.raises(ValueError, match="out and store"):
        list(sweep(specs, None, LocalExecutor(threads=1), progress=False))


def _add_many(root, start):
    store = RecordStore(root, ("problem",))
    for k in range(start, start + 20):
        store.add("g", "m", {"config": {"problem": f"p{k}"}})


def test_two_processes_adding_to_one_file_lose_no_record(tmp_path):
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_add_many, args=(tmp_path, start)) for start in (0, 100)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    keys = sorted(r["config"]["problem"] for r in RecordStore(tmp_path, ("problem",)).records())
    assert keys == sorted([f"p{k}" for k in range(20)] + [f"p{k}" for k in range(100, 120)])


def test_the_relabel_script_respells_every_label_of_a_method_after_a_default_change(tmp_path, capsys):
    r"""``benchmarks/relabel_records.py --respell``: the bare name moves to its old default spelled
    out, the new default's spelled-out label becomes the bare name, other labels keep theirs;
    ``--dry-run`` moves nothing."""
    from tests.benchmark_loader import load_benchmark

    script = load_benchmark("relabel_records")
    store = RecordStore(tmp_path, ("problem", "method", "seed"))
    for group in ("d2", "d5"):
        for label in ("auto", "auto[acquisition=logei-plugin]", "auto[probe=0]", "qlognei"):
            store.add(group, label, {"config": {"problem": "p", "method": label, "seed": 0, "options": {}}})
    argv = ["--study", str(tmp_path), "--respell", "auto", "--old-defaults", '{"acquisition": "lognei"}',
            "--new-defaults", '{"acquisition": "logei-plugin"}', "--note", "logei-plugin is the default now"]
    before = {p: p.read_bytes() for p in store.files()}
    script.main([*argv, "--dry-run"])
    assert "d2: auto -> auto[acquisition=lognei] (dry run)" in capsys.readouterr().out
    assert {p: p.read_bytes() for p in store.files()} == before
    script.main(argv)
    assert "d5: 1 record(s) auto[acquisition=logei-plugin] -> auto" in capsys.readouterr().out
    fresh = RecordStore(tmp_path, store.key_fields)
    for group in ("d2", "d5"):
        assert fresh.labels(group) == ["auto", "auto[acquisition=lognei]", "auto[probe=0&acquisition=lognei]", "qlognei"]
    options = {r["config"]["method"]: r["config"]["options"] for r in fresh.records(["d2"])}
    assert options["auto[probe=0&acquisition=lognei]"] == {"probe": 0, "acquisition": "lognei"} and options["qlognei"] == {}
    with pytest.raises(SystemExit):
        script.main(["--study", str(tmp_path), "--respell", "auto", "--old", "auto", "--note", "x"])
