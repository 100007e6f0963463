"""``ablation compare`` on binary result files imports no scipy (issue 13: start-up of every report).

The command runs through the real command line in a subprocess with ``PYTHONPROFILEIMPORTTIME=1``
(the environment form of ``python -X importtime``), which makes the interpreter list every module
it imports on stderr; no ``scipy`` module may appear there, for each output format. Before the
binary path got its own distribution functions (``ablation/stats/_dist.py``), ``stats.bootstrap``,
``stats.power`` and others imported ``scipy.special`` / ``scipy.optimize`` at module level and
the exact McNemar test imported ``scipy.stats``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.helpers.cli import cli_env, run


def _write(path: Path, rate: float, seed: int) -> None:
    rng = random.Random(seed)
    rows = (json.dumps({"id": f"task-{i:04d}", "passed": rng.random() < rate}) for i in range(300))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def _imported(stderr: str) -> set[str]:
    """Module names from ``-X importtime`` lines (``import time: self | cumulative | name``)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


@pytest.mark.parametrize("fmt", ["terminal", "json", "markdown"])
def test_binary_compare_imports_no_scipy(tmp_path: Path, fmt: str) -> None:
    base, cand = tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    _write(base, 0.6, 1)
    _write(cand, 0.7, 2)
    out = tmp_path / f"report.{fmt}"
    proc = run(
        ["compare", str(base), str(cand), "--format", fmt, "-o", str(out)],
        cli_env(PYTHONPROFILEIMPORTTIME="1"),
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert out.stat().st_size > 0
    imported = _imported(proc.stderr)
    assert "ablation.stats.binary" in imported  # the import list was captured
    assert "ablation.stats.power" in imported
    scipy_modules = sorted(m for m in imported if m == "scipy" or m.startswith("scipy."))
    assert scipy_modules == []
    if fmt == "json":
        report = json.loads(out.read_text(encoding="utf-8"))
        assert report  # a full report came out without scipy
