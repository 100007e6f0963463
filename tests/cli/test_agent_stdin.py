"""An agent that reads stdin cannot hold ``ablation run`` open, whatever stdin is.

With thread isolation an agent calling ``input()`` while the command's stdin was a pipe left
open (``producer | ablation run ...``, some CI runners) blocked: its trials timed out, then
the command waited for the pipe to close and aborted at exit (exit code 134). Now user code
reads ``/dev/null`` unless stdin is a terminal: end-of-file at once, each trial's ``EOFError``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import LAUNCH, cli_env

AGENTS = """\
def echo(x):
    return x


def reader(x):
    return input()
"""

SUITE = """\
from ablation import AblationTask

tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(3)]
"""


@pytest.mark.slow
def test_an_agent_reading_an_open_stdin_pipe_neither_hangs_nor_aborts_the_run(
    tmp_path: Path,
) -> None:
    (tmp_path / "agents.py").write_text(AGENTS, encoding="utf-8")
    (tmp_path / "suite.py").write_text(SUITE, encoding="utf-8")
    args = ["run", "suite.py", "--baseline", "agents.py:echo", "--candidate", "agents.py:reader",
            "--timeout", "2", "--format", "json", "--no-progress", "--no-store"]  # fmt: skip
    out, err = tmp_path / "out.json", tmp_path / "err.txt"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCH, *args], cwd=tmp_path, env=cli_env(),
            stdin=subprocess.PIPE, stdout=stdout, stderr=stderr,
        )  # fmt: skip
        try:
            code = proc.wait(timeout=60)  # stdin stays open meanwhile
        finally:
            proc.kill()
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()
    assert code == 2, err.read_text(encoding="utf-8")  # the candidate errored on every task
    report = json.loads(out.read_text(encoding="utf-8"))
    [group] = report["errors"]["groups"]
    assert (group["arm"], group["error_type"], group["count"]) == ("candidate", "EOFError", 3)
