"""The committed GPU checks (benchmarks/gpu_checks.sh): valid bash, every script and test it names
exists, and on a machine without CUDA it says so and stops before running anything."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu_checks.sh"


def test_the_script_parses_and_names_only_files_that_exist():
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)
    text = SCRIPT.read_text()
    named = set(re.findall(r"(?:benchmarks|tests)/[\w/]+\.py", text))
    assert {"tests/test_cuda.py", "benchmarks/round_profile.py", "benchmarks/campaign_scaling.py"} <= named
    assert all((ROOT / path).exists() for path in named)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device runs the checks for real")
def test_without_cuda_it_stops_at_once_and_says_why(tmp_path):
    done = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "no CUDA device" in done.stderr
    assert "==" not in done.stdout  # no step ran
