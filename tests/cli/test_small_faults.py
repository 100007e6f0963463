"""Small faults at the command line's edges, each end to end.

``ablation report`` keeps the drill-downs' expected outputs; a closed stdout is one line (or
works with ``--output``); a string ``margin`` in ``[tool.ablation]`` is "not a number", not "not
an integer"; a NaN verdict is one message, not two.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from helpers.cli import LAUNCH, REPO, cli_env
from helpers.cli_shared import run_here

_SUITE = '''
from ablation import AblationTask

tasks = [AblationTask(task_id=f"t{i}", input_data={"k": i}, expected_output={"answer": i})
         for i in range(4)]


def baseline(x):
    return {"answer": x["k"]}


def candidate(x):
    return {"answer": -1} if x["k"] == 1 else {"answer": x["k"]}
'''


def _suite(tmp_path: Path) -> list[str]:
    suite = tmp_path / "suite.py"
    suite.write_text(_SUITE)
    return ["run", str(suite), "--baseline", f"{suite}:baseline", "--candidate",
            f"{suite}:candidate", "--no-progress"]  # fmt: skip


def test_report_keeps_the_expected_output_of_the_drilldowns(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    ran = run_here([*_suite(tmp_path), "--store", str(store), "--format", "json", "--details"])
    assert ran.returncode in (0, 2), ran.stderr
    again = run_here(["report", "--store", str(store), "--format", "json", "--details"])
    assert again.returncode == ran.returncode, again.stderr
    first, second = json.loads(ran.stdout)["details"], json.loads(again.stdout)["details"]
    assert [d["expected_output"] for d in first] == [{"answer": 1}]
    assert second == first


def _closed_stdout(args: list[str]) -> subprocess.CompletedProcess[str]:
    """``ablation ARGS >&-``: started with file descriptor 1 closed."""
    command = shlex.join([sys.executable, "-c", LAUNCH, *args]) + " >&-"
    return subprocess.run(
        ["sh", "-c", command], cwd=REPO, env=cli_env(), stderr=subprocess.PIPE, text=True,
        timeout=60, check=False,
    )  # fmt: skip


def test_a_closed_stdout_is_one_line_and_output_still_works(tmp_path: Path) -> None:
    proc = _closed_stdout([*_suite(tmp_path), "--no-store"])
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert "standard output is closed" in line and "--output" in line
    out = tmp_path / "report.json"
    proc = _closed_stdout([*_suite(tmp_path), "--no-store", "--format", "json", "--output", str(out)])
    assert proc.returncode in (0, 2), proc.stderr
    assert json.loads(out.read_text())["n_paired"] == 4


def _rows(path: Path, verdict: str) -> Path:
    path.write_text(f'{{"id": "a", "passed": {verdict}}}\n{{"id": "b", "passed": true}}\n')
    return path


def test_a_string_margin_is_not_a_number(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ablation]\nmargin = "0.02"\n')
    rows = _rows(tmp_path / "r.jsonl", "true")
    proc = run_here(["compare", str(rows), str(rows)], cwd=tmp_path)
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert "[tool.ablation] margin: Input should be a valid number (got '0.02')" in line


def test_a_nan_verdict_is_one_message(tmp_path: Path) -> None:
    rows = _rows(tmp_path / "nan.jsonl", "NaN")
    proc = run_here(["compare", str(rows), str(rows)])
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert line == (
        f"ablation: error: {rows}:1: verdict 'passed' is nan: neither a verdict nor a number "
        "(task id 'a')"
    )
