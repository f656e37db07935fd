import json
import re
import subprocess
import sys

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from tests.benchmark_loader import BENCHMARKS, load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("round_profile")


def test_host_reads_are_counted_once_each_however_they_nest(bench):
    t, other = torch.arange(3.0), torch.arange(3.0)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        bool(t.sum() > 0)  # is_nonzero -> item -> _local_scalar_dense
        torch.equal(t, other)
        t[0].item()  # item -> _local_scalar_dense
        t + other  # no host read
    counts = bench.count_syncs(prof.events())
    assert counts["aten::is_nonzero"] == 1 and counts["aten::equal"] == 1 and counts["aten::item"] == 2
    assert counts["aten::_local_scalar_dense"] == 2
    assert counts["outer"] == 3  # one wait each
    assert counts["sum"] == 2 + 1 + 1  # the sum counts a nested read twice


def test_reads_inside_the_objective_are_told_apart_from_the_rules(bench):
    t = torch.arange(3.0)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        bool(t.sum() > 0)
        with torch.profiler.record_function(bench.OBJECTIVE):
            t[0].item()
            with torch.profiler.record_function("inner"):
                bool(t.sum() > 1)
    counts = bench.count_syncs(prof.events())
    assert counts["outer"] == 3 and counts[bench.OBJECTIVE] == 2


def test_read_sites_name_the_package_lines_and_leave_torch_as_it_was(bench):
    methods = {name: getattr(torch.Tensor, name) for name in bench.READ_METHODS}
    equal = torch.equal
    found = bench.read_sites("lb-gp-ucb", 40, "cpu", search="torch")
    assert all(getattr(torch.Tensor, name) is m for name, m in methods.items()) and torch.equal is equal
    counts = [count for count, _, _ in found]
    assert counts == sorted(counts, reverse=True) and sum(counts) > 0
    ops = {op for _, op, _ in found}
    assert ops <= {*bench.READ_METHODS, "equal"}
    sites = [site for _, _, site in found]
    assert all(re.fullmatch(r"\S+\.py:\d+ \S+", site) for site in sites)
    # the objective's reads (BoTorch's test function checks its inputs) are found in its problem
    assert any(site.startswith("botorch_unknown_hypers/problems/") for site in sites)
    assert any(site.startswith("botorch_unknown_hypers/acquisition/") for site in sites)  # the rule's search


def _run(*args: str) -> tuple[str, dict]:
    out = subprocess.run(
        [sys.executable, str(BENCHMARKS / "round_profile.py"), *args], capture_output=True, text=True, check=False, timeout=1200
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def _check_output(stdout: str, methods: list[str], results: dict, searches: tuple[str, ...] = ("scipy",)) -> None:
    pattern = r"^\| ([a-z-]+) \| (scipy|torch) \| ([\d.]+) \|" + r" (\d+) \|" * 9 + "$"
    rows = {(m.group(1), m.group(2)): m.groups()[2:] for m in re.finditer(pattern, stdout, re.M)}
    assert sorted(rows) == sorted((m, s) for m in methods for s in searches)
    for seconds, scalar, item, equal, nonzero, to_list, summed, outer, objective, rule in rows.values():
        assert float(seconds) > 0 and int(summed) == int(scalar) + int(equal) + int(nonzero) + int(to_list)
        assert int(outer) >= int(to_list)
        assert int(outer) <= int(summed)
        # Michalewicz-5 is a BoTorch test function, which checks its inputs: the objective reads
        assert int(objective) > 0 and int(rule) == int(outer) - int(objective)
    memory = re.findall(r"factors ([\d.]+) GiB \(8 K n\^2\); peak resident above baseline (-?[\d.]+) GiB = (-?[\d.]+)x the factors", stdout)
    timing = re.findall(r"round ([\d.]+) s, one batched Cholesky of the 16 matrices ([\d.]+) s: ratio ([\d.]+)x", stdout)
    assert len(memory) == len(timing) == len(searches), stdout
    assert [he["search"] for he in results["he_rounds"]] == list(searches)
    for he in results["he_rounds"]:
        assert he["factor_bytes"] == 8 * 16 * results["args"]["he_n"] ** 2
        assert he["peak_reset"] or "peak NOT reset" in stdout  # a kernel without clear_refs: said, not hidden
        assert he["peak_ratio"] == pytest.approx(he["peak_above_baseline"] / he["factor_bytes"])
        assert he["cholesky_ratio"] == pytest.approx(he["round_seconds"] / he["cholesky_seconds"])
    assert [(r["method"], r["search"]) for r in results["rounds"]] == [(m, s) for m in methods for s in searches]


def test_quick_run_of_one_method_prints_parsable_rows(tmp_path):
    path = tmp_path / "profile.json"
    stdout = _run("--quick", "--methods", "he-gp-ucb", "--searches", "torch", "--json", str(path))
    _check_output(stdout, ["he-gp-ucb"], json.loads(path.read_text()), ("torch",))


@pytest.mark.slow
def test_quick_run_of_every_method_prints_parsable_rows(tmp_path, bench):
    path = tmp_path / "profile.json"
    stdout = _run("--quick", "--searches", "scipy", "torch", "--json", str(path))
    _check_output(stdout, list(bench.METHODS), json.loads(path.read_text()), ("scipy", "torch"))


def test_the_factor_upkeep_of_a_round_copies_no_factor(bench):
    r"""Appending a round's row copies :math:`O(Kn)` bytes (the factor's rows since its base, the
    fixed raw points' solves), not the factors' :math:`8Kn^2`: at n = 272, K = 4 the upkeep writes
    under half the factors' bytes (one copy of them would be more)."""
    copied = bench.copied_bytes(272, 4, "cpu")
    assert 0 < copied["upkeep"] < 0.5 * copied["factor_bytes"] and copied["rest"] > 0
