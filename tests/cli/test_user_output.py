"""What user code prints during ``ablation run`` goes to stderr; stdout holds the report alone.

An agent that prints (``print``, a write to file descriptor 1, a child process that inherits it),
or a suite that prints when it is loaded, used to put its text on stdout before the report, so
``ablation run --format json | jq`` could not parse it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import LAUNCH, cli_env

from ablation.cli import main

SUITE = """\
from ablation import AblationTask

print("suite-import-noise")
tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(2)]
"""

AGENTS = """\
import os
import subprocess
import sys


def quiet(x):
    return x


def noisy(x):
    print("agent-print", x)
    sys.stdout.flush()
    os.write(1, b"agent-fd1\\n")
    subprocess.run([sys.executable, "-c", "print('agent-child')"], check=True)
    return x


def printing(x):
    print("agent-print", x)
    return x


def closes_stdout(x):
    sys.stdout.close()
    return x
"""

NOISE = ("suite-import-noise", "agent-print", "agent-fd1", "agent-child")


def _files(tmp_path: Path) -> None:
    (tmp_path / "suite.py").write_text(SUITE, encoding="utf-8")
    (tmp_path / "agents.py").write_text(AGENTS, encoding="utf-8")


def _run(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["run", "suite.py", "--baseline", "agents.py:quiet", "--candidate", "agents.py:noisy",
            "--no-progress", "--no-store", *extra]  # fmt: skip
    return subprocess.run(
        [sys.executable, "-c", LAUNCH, *args], cwd=tmp_path, env=cli_env(), capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_json_report_on_stdout_parses_whatever_the_agent_prints(
    tmp_path: Path, isolation: str
) -> None:
    _files(tmp_path)
    done = _run(tmp_path, "--format", "json", "--isolation", isolation)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # the old code put the agent's lines before the JSON
    assert report["n_paired"] == 2
    for text in NOISE:
        assert text not in done.stdout
        assert text in done.stderr, text  # moved, not lost


@pytest.mark.slow
def test_terminal_report_on_stdout_holds_no_agent_text(tmp_path: Path) -> None:
    _files(tmp_path)
    done = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Verdict: PASS" in done.stdout
    assert not [text for text in NOISE if text in done.stdout]
    assert all(text in done.stderr for text in NOISE)


def test_in_process_main_keeps_the_callers_stdout_for_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller that replaced ``sys.stdout`` (here pytest's capture) gets the report there and
    the agent's prints on ``sys.stderr``; ``sys.stdout`` is the caller's again afterwards."""
    _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = sys.stdout
    code = main(["run", "suite.py", "--baseline", "agents.py:quiet", "--candidate",
                 "agents.py:printing", "--no-progress", "--no-store", "--format", "json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["n_paired"] == 2
    assert "agent-print 0" in err and "agent-print 1" in err
    assert sys.stdout is before


def test_an_agent_closing_sys_stdout_changes_neither_the_report_nor_the_exit_code(
    tmp_path: Path,
) -> None:
    """Once the command ended 1 with 'ValueError: I/O operation on closed file' after a PASS."""
    _files(tmp_path)
    args = ["run", "suite.py", "--baseline", "agents.py:quiet", "--candidate",
            "agents.py:closes_stdout", "--no-progress", "--no-store", "--format", "json"]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCH, *args], cwd=tmp_path, env=cli_env(), capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdict"] == "pass"
