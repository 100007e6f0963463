"""``ablation compare`` on binary result files imports no scipy (issue 13: start-up of every report).

The command runs in a fresh interpreter with ``PYTHONPROFILEIMPORTTIME=1`` (the environment form
of ``python -X importtime``), which makes the interpreter list every module it imports on stderr;
no ``scipy`` module may appear there, for each output format. One interpreter runs the three
formats one after the other (:func:`ablation.cli.main` each time), writing a line to stderr
before each: what a format imports is listed in its part, and what an earlier one imported is
listed before it, so the lines up to the end of a format's part are what a process of that
format alone would list, or more. Before the binary path got its own distribution functions
(``ablation/stats/_dist.py``), ``stats.bootstrap``, ``stats.power`` and others imported
``scipy.special`` / ``scipy.optimize`` at module level and the exact McNemar test imported
``scipy.stats``.

The same lists hold none of :data:`NOT_IMPORTED` either (issue 13: a 500-line compare in under
0.5 s): each of those modules costs milliseconds of every run and is not needed by a binary
compare: the sequential, repeated-runs, planning and equivalence statistics (``ablation.stats``
loads names on first use) and the ``[tool.ablation]`` type model when there is no such table
(the interpreter runs from the repository, whose pyproject.toml has none).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import REPO, cli_env

FORMATS = ("terminal", "json", "markdown")

#: Modules a binary compare does not import (module docstring).
NOT_IMPORTED = {
    "ablation.stats.sequential",
    "ablation.stats.sequential_cs",
    "ablation.stats.sequential_monitor",
    "ablation.stats.sequential_sim",
    "ablation.stats.repeated",
    "ablation.stats.planning",
    "ablation.stats.equivalence",
    "ablation.cli.tool_settings",
}

#: one worker starts the interpreter of the three formats
pytestmark = pytest.mark.xdist_group("compare-no-scipy")


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


@pytest.fixture(scope="module")
def formats_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[int, str]]]:
    """The folder of the reports, and per format the exit code of ``main`` and the stderr of the
    interpreter from its start to the end of that format's part."""
    work = tmp_path_factory.mktemp("no-scipy")
    base, cand = work / "b.jsonl", work / "c.jsonl"
    _write(base, 0.6, 1)
    _write(cand, 0.7, 2)
    code = (
        "import sys\n"
        "from ablation.cli import main\n"
        f"for fmt in {FORMATS!r}:\n"
        "    print('-- format', fmt, file=sys.stderr, flush=True)\n"
        f"    code = main(['compare', {str(base)!r}, {str(cand)!r}, '--format', fmt, '-o',"
        f" {str(work)!r} + '/report.' + fmt])\n"
        "    print('-- exit', code, file=sys.stderr, flush=True)\n"
        "print('-- done', file=sys.stderr, flush=True)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=cli_env(PYTHONPROFILEIMPORTTIME="1"),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0 and "-- done" in proc.stderr, proc.stderr[-2000:]
    parts = {}
    for fmt in FORMATS:
        through = proc.stderr.split(f"-- format {fmt}\n", 1)
        assert len(through) == 2, proc.stderr[-2000:]
        own, _ = through[1].split("-- exit ", 1)
        exit_code = int(through[1].split("-- exit ", 1)[1].split("\n", 1)[0])
        parts[fmt] = (exit_code, through[0] + own)
    return work, parts


@pytest.mark.parametrize("fmt", FORMATS)
def test_binary_compare_imports_no_scipy(formats_run: tuple[Path, dict[str, tuple[int, str]]], fmt: str) -> None:
    work, parts = formats_run
    code, stderr = parts[fmt]
    assert code in (0, 1), stderr[-2000:]
    out = work / f"report.{fmt}"
    assert out.stat().st_size > 0
    imported = _imported(stderr)
    assert "ablation.stats.binary" in imported  # the import list was captured
    assert "ablation.stats.power" in imported
    scipy_modules = sorted(m for m in imported if m == "scipy" or m.startswith("scipy."))
    assert scipy_modules == []
    assert not NOT_IMPORTED & imported
    if fmt == "json":
        report = json.loads(out.read_text(encoding="utf-8"))
        assert report["n_paired"] == 300  # a full report came out without scipy
