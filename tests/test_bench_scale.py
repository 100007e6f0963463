"""``benchmarks/bench_scale.py --quick`` runs end to end at tiny sizes (no timing is asserted)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

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
    assert len(figures) == 11  # the async ratio at two sizes: "from 1k tasks up"
    assert not [line for line in figures if "ERROR" in line]
    assert any(line.strip().startswith("20 ") for line in lines)


def _bench_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "benchmarks" / "bench_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_cli_figure_that_fails_raises_instead_of_being_timed(tmp_path: Path) -> None:
    # exit 1 is an error (no store here), not "a gate failed": it was once timed as a figure
    bench = _bench_module()
    missing = ["report", "--store", str(tmp_path / "none.db"), "--format", "json"]
    with pytest.raises(RuntimeError, match="exited 1"):
        bench._cli(missing)
    out = tmp_path / "r.json"
    with pytest.raises(RuntimeError, match="exited 1"):
        bench._cli([*missing, "-o", str(out)], out)
