"""``benchmarks/bench_scale.py --quick`` runs end to end at tiny sizes (no timing is asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.first
@pytest.mark.slow
def test_bench_scale_quick_runs_every_figure() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_scale.py"), "--quick", "--big", "50",
         "--sizes", "20"],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    figures = [line for line in lines if line.startswith(("PASS", "MISS"))]
    assert len(figures) == 10
    assert not [line for line in figures if "ERROR" in line]
    assert any(line.strip().startswith("20 ") for line in lines)
