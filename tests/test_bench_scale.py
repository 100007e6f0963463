"""``benchmarks/bench_scale.py --quick`` runs end to end at tiny sizes (no timing is asserted).

The script runs each figure in a child process (``bench_scale.py --child NAME N TMP``), and a CLI
figure's child runs the ``ablation`` command as its own subprocess. Here one figure (``help``)
takes both steps as real processes, so the two launch lines are checked as written; every other
child and command runs in this process through the script's own entry points (``main`` with the
child's arguments, and :func:`helpers.cli.run_here`), which is what those processes would run
without their interpreter starts and imports (~20 of them, most of the test's time).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from helpers.cli import run_here

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "bench_scale.py"
#: The command the script runs a CLI figure with (``bench_scale._cli``).
CLI_LAUNCH = "from ablation.cli import main_entry; main_entry()"


def _bench_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_scale", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _main(bench: ModuleType, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """``bench_scale.py ARGV`` in this process: its exit code and what it printed."""
    out = io.StringIO()
    with monkeypatch.context() as m, contextlib.redirect_stdout(out):
        m.setattr(sys, "argv", [str(BENCH), *argv])
        code = bench.main()
    return code, out.getvalue()


def _run_here(bench: ModuleType, monkeypatch: pytest.MonkeyPatch, launched: list[str]) -> None:
    """Give the script a ``subprocess`` whose ``run`` starts children and commands in this
    process, except the ``help`` figure's child (and so its ``ablation --help``) and
    ``compileall``, which run for real; ``launched`` records which way each call went."""

    def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        if cmd[:3] == [sys.executable, "-c", CLI_LAUNCH]:
            launched.append("cli")
            here = run_here(cmd[3:])
            return subprocess.CompletedProcess(cmd, here.returncode, None, here.stderr)
        if cmd[:3] == [sys.executable, str(BENCH), "--child"] and cmd[3] != "help":
            launched.append("child")
            code, out = _main(bench, cmd[2:], monkeypatch)
            return subprocess.CompletedProcess(cmd, code, out, "")
        launched.append("real")
        return subprocess.run(cmd, **kwargs)

    fake = SimpleNamespace(run=run, PIPE=subprocess.PIPE, DEVNULL=subprocess.DEVNULL)
    monkeypatch.setattr(bench, "subprocess", fake)


@pytest.mark.slow
def test_bench_scale_quick_runs_every_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _bench_module()
    launched: list[str] = []
    _run_here(bench, monkeypatch, launched)
    code, out = _main(bench, ["--quick", "--big", "50", "--sizes", "20"], monkeypatch)
    assert code == 0, out
    lines = out.splitlines()
    figures = [line for line in lines if line.startswith(("PASS", "MISS"))]
    assert len(figures) == 11  # the async ratio at two sizes: "from 1k tasks up"
    assert not [line for line in figures if "ERROR" in line], out
    assert any(line.strip().startswith("20 ") for line in lines)
    assert "error" not in out.split("scaling", 1)[1], out
    # compileall and the help figure's child ran as processes; the rest here, CLI commands too
    assert launched.count("real") == 2 and launched.count("cli") == 5, launched


def test_a_cli_figure_that_fails_raises_instead_of_being_timed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # exit 1 is an error (no store here), not "a gate failed": it was once timed as a figure
    bench = _bench_module()
    _run_here(bench, monkeypatch, [])
    missing = ["report", "--store", str(tmp_path / "none.db"), "--format", "json"]
    with pytest.raises(RuntimeError, match="exited 1"):
        bench._cli(missing)
    out = tmp_path / "r.json"
    with pytest.raises(RuntimeError, match="exited 1"):
        bench._cli([*missing, "-o", str(out)], out)
