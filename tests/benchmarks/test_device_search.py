import json
import re
import subprocess
import sys

import numpy as np
import pytest

from tests.benchmark_loader import BENCHMARKS, load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("device_search")


def test_summary_gaps_are_relative_to_scipy_and_positive_when_worse(bench):
    rows = [{"scipy": 2.0, "torch": 1.0}, {"scipy": -4.0, "torch": -4.0}, {"scipy": 0.0, "torch": 1e-3}, {"scipy": -1.0, "torch": -1.0 + 1e-7}]
    out = bench.summary(rows, "torch")
    gaps = sorted([0.5, 0.0, -1e-3 / bench.TINY, -1e-7])
    assert out["problems"] == 4 and out["worst"] == pytest.approx(0.5)
    assert out["median"] == pytest.approx(np.quantile(gaps, 0.5)) and out["p90"] == pytest.approx(np.quantile(gaps, 0.9))
    assert out["as_good"] == pytest.approx(3 / 4)


def test_quick_run_prints_and_writes_the_records(tmp_path):
    path = tmp_path / "search.json"
    out = subprocess.run([sys.executable, str(BENCHMARKS / "device_search.py"), "--quick", "--json", str(path)],
                         capture_output=True, text=True, check=False, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    results = json.loads(path.read_text())
    rows = {m.group(1): m.groups() for m in re.finditer(r"^\| (torch|adam|scipy) \| (\d+) \|", out.stdout, re.M)}
    assert sorted(rows) == ["adam", "scipy", "torch"]
    assert results["calls"] > 0 and len(results["rows"]) == results["summary"]["torch"]["problems"] == int(rows["torch"][1])
    assert all(np.isfinite([r["scipy"], r["torch"], r["adam"]]).all() for r in results["rows"])
