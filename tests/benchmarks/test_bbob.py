import json
import math

import pytest
import torch

from botorch_unknown_hypers.executors import LocalExecutor, ProcessExecutor, RunSpec
from botorch_unknown_hypers.benchmarks.bbob import (
    budget,
    check_instances,
    grid,
    is_complete,
    pending_specs,
    problem_info,
    run_bbob,
    run_path,
    sweep,
)
from botorch_unknown_hypers.problems.bbob_problems import bbob_problem

pytest.importorskip("ioh")


def test_budget_and_grid_order_cover_every_function_of_an_instance_first():
    assert budget(5) == (10, 50) and budget(2) == (4, 20)
    specs = grid(functions=[1, 2, 3], instances=[1, 2], dims=[5], seeds=[0], methods=["random", "qlognei"])
    assert len(specs) == 12
    assert [s.problem for s in specs[:6]] == ["bbob-f1-i1-d5"] * 2 + ["bbob-f2-i1-d5"] * 2 + ["bbob-f3-i1-d5"] * 2
    assert {s.problem for s in specs[6:]} == {"bbob-f1-i2-d5", "bbob-f2-i2-d5", "bbob-f3-i2-d5"}
    assert all(s.n_init == 10 and s.iterations == 50 and s.batch_size == 1 for s in specs)
    assert [s.options for s in specs[:2]] == [{}, {"surrogate": "fitted"}]


def test_report_instances_and_unknown_methods_are_refused():
    with pytest.raises(ValueError, match="development instances"):
        grid(instances=[6])
    with pytest.raises(ValueError, match="development instances"):
        check_instances([1, 15])
    assert check_instances([6, 7], allow_report=True) == [6, 7]
    with pytest.raises(ValueError, match="unknown method"):
        grid(methods=["no-such-method"])


def test_sweep_writes_complete_records_and_resumes(tmp_path):
    specs = grid(functions=[1, 21], instances=[1], dims=[2], seeds=[0], methods=["random"], noise=(False, True))
    written = list(sweep(specs, tmp_path, LocalExecutor(threads=1), extra={"code": "test"}, progress=False))
    assert len(written) == 4 and all(path is not None and is_complete(path, spec) for spec, path in written)
    spec, path = written[-1]
    record = json.loads(path.read_text())
    problem = bbob_problem(spec.problem)
    f = problem.evaluate_true(torch.tensor(record["x"], dtype=torch.float64))
    torch.testing.assert_close(f, torch.tensor(record["f"], dtype=torch.float64), rtol=1e-9, atol=1e-9)  # values at the recorded points
    assert len(record["f"]) == 4 + 20 and record["config"]["code"] == "test"
    best = [max(record["f"][: j + 1]) for j in range(24)]
    assert record["simple_regret"] == pytest.approx([problem.optimal_value - b for b in best])
    assert record["final_simple_regret"] == pytest.approx(record["simple_regret"][-1])
    assert record["config"]["noisy"] and record["config"]["noise_std"] == pytest.approx(0.01 * problem.spread)
    assert any(abs(y - v) > 0 for y, v in zip(record["y"], record["f"]))  # noisy observations
    times = record["cumulative_time_s"]
    assert times[:4] == [0.0] * 4 and all(b >= a for a, b in zip(times, times[1:]))
    assert pending_specs(specs, tmp_path) == []
    assert list(sweep(specs, tmp_path, LocalExecutor(threads=1), progress=False)) == []  # resumed: nothing to do
    record["complete"] = False
    path.write_text(json.dumps(record))
    (tmp_path / "d2" / specs[0].problem / "random-seed0.json").write_text("{truncated")
    assert pending_specs(specs, tmp_path) == [specs[0], spec]


def test_a_failing_run_is_recorded_and_the_grid_goes_on(tmp_path):
    good = grid(functions=[1], instances=[1], dims=[2], methods=["random"])[0]
    bad = RunSpec("bbob-f2-i1-d2", "random", seed=0, iterations=20, n_init=4, options={"no_such_option": 1})
    assert "no_such_option" in run_bbob(bad).attrs["error"]
    results = list(sweep([bad, good], tmp_path, ProcessExecutor(workers=1, task=run_bbob, threads_per_worker=1), progress=False))
    assert [path is None for _, path in results] == [True, False]  # a worker process: the task registers the problem
    failures = (tmp_path / "failures.jsonl").read_text().splitlines()
    assert len(failures) == 1 and json.loads(failures[0])["problem"] == "bbob-f2-i1-d2"
    assert run_path(tmp_path, good).exists() and not run_path(tmp_path, bad).exists()


def test_a_runs_warnings_are_counted_in_its_record_not_printed(tmp_path, monkeypatch, capfd):
    import warnings

    from gpytorch.utils.warnings import NumericalWarning

    from botorch_unknown_hypers.benchmarks.bbob import compact_record, record_store, run_record
    from botorch_unknown_hypers.policies import registry

    def warning_random(domain, seed=0, **options):  # the random policy, warning at every proposal
        policy = registry.make_policy("random", domain, seed=seed, **options)
        suggest = policy.suggest

        def noisy_suggest(*args, **kwargs):
            warnings.warn("a jitter was added", NumericalWarning)
            return suggest(*args, **kwargs)

        policy.suggest = noisy_suggest
        return policy

    monkeypatch.setitem(registry.METHODS, "warning-random", warning_random)
    spec = grid(functions=[1], instances=[1], dims=[2], methods=["warning-random"])[0]
    history = run_bbob(spec)
    assert history.attrs["warnings"] == {"NumericalWarning": spec.iterations}
    record = run_record(spec, history)
    assert record["warnings"] == {"NumericalWarning": spec.iterations} and compact_record(record)["warnings"] == record["warnings"]
    store = record_store(tmp_path)
    store.add("d2", spec.key[1], compact_record(record))
    assert next(store.records())["warnings"] == {"NumericalWarning": spec.iterations}
    assert "jitter" not in capfd.readouterr().err


def test_problem_info_records_the_optimum_in_both_conventions():
    info = problem_info("bbob-f3-i2-d5")
    assert info["f_star"] == -info["g_star"] and info["spread"] > 0 and not info["noisy"]
    assert math.isfinite(info["spread"]) and info["function_name"]


def test_executors_run_the_bbob_task_with_the_threads_asked():
    from botorch_unknown_hypers.benchmarks.bbob import make_executor

    local = make_executor("local", workers=2, threads=1)
    assert isinstance(local, ProcessExecutor) and local.task is run_bbob and local.threads_per_worker == 1
    pytest.importorskip("ray")
    from botorch_unknown_hypers.executors import RayExecutor

    ray = make_executor("ray", workers=3)
    assert isinstance(ray, RayExecutor) and ray.task is run_bbob and ray.num_cpus == 3
    with pytest.raises(ValueError, match="executor"):
        make_executor("dask")
    with pytest.raises(ValueError, match="threads"):
        make_executor("local", threads=0)


def test_registries_are_untouched_outside_a_benchmark(tmp_path):
    from botorch_unknown_hypers.benchmarks.bbob import bbob_registered
    from botorch_unknown_hypers.policies.registry import list_methods, make_policy
    from botorch_unknown_hypers.problems.problem_registry import get_problem, list_problems

    methods, problems = list_methods(), list_problems()
    assert "optuna-gp" not in methods and not any(p.startswith("bbob-") for p in problems)
    with bbob_registered(["bbob-f5-i2-d2"]):
        problem = get_problem("bbob-f5-i2-d2")
        assert problem.metadata["function"] == 5 and "optuna-gp" in list_methods()
        pytest.importorskip("optuna")
        assert make_policy("optuna-gp", problem.domain).name == "optuna-gp"
    spec = grid(functions=[5], instances=[2], dims=[2], methods=["random"])[0]
    assert not run_bbob(spec).empty
    list(sweep([spec], tmp_path, LocalExecutor(threads=1), progress=False))
    assert list_methods() == methods and list_problems() == problems
    with pytest.raises(ValueError, match="BBOB problem name"):
        with bbob_registered(["branin"]):
            pass


def test_command_line_counts_the_grid_and_refuses_report_instances(tmp_path, capsys):
    from tests.benchmark_loader import load_benchmark

    cli = load_benchmark("bbob")
    own = ["--records", str(tmp_path / "records")]
    assert cli.main(["--out", str(tmp_path), *own, "--dims", "2,5", "--functions", "1-3", "--noise", "both", "--dry-run"]) == 0
    assert "180 runs in the grid, 180 to do" in capsys.readouterr().out  # 3 functions x 5 instances x 2 dims x 2 noises x 3 methods
    assert cli.main(["--out", str(tmp_path), *own, "--instances", "6-15", "--dry-run"]) == 2
    assert "--allow-report-instances" in capsys.readouterr().err
    assert cli.main(["--out", str(tmp_path), *own, "--instances", "6", "--allow-report-instances", "--dry-run"]) == 0
    assert not any(tmp_path.iterdir())  # a dry run writes nothing


def test_method_variants_carry_their_options_label_and_file(tmp_path):
    spelled = "random[note=v1&shrink=[1.0]]"
    specs = grid(functions=[1], instances=[1], dims=[2], methods=["qlognei[num_restarts=4]", spelled, "random"])
    assert [s.method for s in specs] == ["qlognei", "random", "random"]
    assert specs[0].options == {"surrogate": "fitted", "num_restarts": 4}  # on top of the method's own options
    assert specs[1].options == {"note": "v1", "shrink": [1.0]} and specs[1].key[1] == spelled
    assert specs[2].label is None and specs[2].key[1] == "random"
    assert run_path(tmp_path, specs[1]).name == "random_note=v1_shrink=_1.0__-seed0.json"
    assert len({run_path(tmp_path, s) for s in specs}) == 3
    with pytest.raises(ValueError, match="share one run file"):
        grid(functions=[1], instances=[1], dims=[2], methods=["random[x=a&y=b]", "random[x=a_y=b]"])
    with pytest.raises(ValueError, match="key=value"):
        grid(functions=[1], instances=[1], dims=[2], methods=["random[a]"])
    with pytest.raises(ValueError, match="unknown method"):
        grid(functions=[1], instances=[1], dims=[2], methods=["nope[a=1]"])


def test_command_line_splits_methods_outside_brackets(tmp_path, capsys):
    from tests.benchmark_loader import load_benchmark

    cli = load_benchmark("bbob")
    assert cli.split_methods("random, qlognei[shrink=[1.0,0.5]&a=b],x[]") == ["random", "qlognei[shrink=[1.0,0.5]&a=b]", "x[]"]
    argv = ["--out", str(tmp_path), "--records", str(tmp_path / "records"), "--functions", "1", "--instances", "1", "--dry-run"]
    assert cli.main(argv + ["--methods", "random,random[note=[1,2]]"]) == 0
    assert "2 runs in the grid" in capsys.readouterr().out
    assert cli.main(argv + ["--methods", "random[note]"]) == 2
    assert "key=value" in capsys.readouterr().err


def test_a_fresh_clone_resumes_from_the_committed_records(tmp_path, capsys):
    r"""With the default ``--records`` (``benchmarks/results/bbob``), every run the committed records
    hold is skipped: a dry run of the d = 2 development grid of the peers counts only what is missing."""
    from tests.benchmark_loader import load_benchmark

    from botorch_unknown_hypers.benchmarks.bbob import record_store

    cli = load_benchmark("bbob")
    argv = ["--dims", "2", "--functions", "1-24", "--instances", "1-5", "--noise", "both", "--methods", "qlognei", "--dry-run"]
    assert cli.main(argv) == 0
    stored = {r["config"]["problem"] for r in record_store(cli.RECORDS).records()
              if r["config"]["method"] == "qlognei" and r["config"]["instance"] <= 5 and r["config"]["dim"] == 2}
    assert len(stored) > 0
    assert f"240 runs in the grid, {240 - len(stored)} to do" in capsys.readouterr().out
