"""The sandbox's start-up is not the code's time: it has its own limit, and overrunning it is an error.

The code's wall-time limit counts from the moment the code process's self-check arrived; before
that no code has run, so a sandbox that is slow to start must not fail correct code, and one that
never reaches its self-check is a ``sandbox_start`` error (``SandboxError`` from ``code_tests``),
never a failed verdict. The start-up is slowed for real by a ``bwrap`` on ``PATH`` in front of the
real bubblewrap: its availability probe (no ``--seccomp``) runs at once, every sandbox run first
sleeps.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from helpers.procs import processes_with_arg

from ablation import verifiers
from ablation.evaluate.code_tests import SandboxError
from ablation.evaluate.sandbox import SandboxLimits, run_python_tests
from ablation.schema import AblationTask

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the sandbox's process checks read /proc"
)

#: A bwrap whose probe runs at once and whose every sandbox run sleeps ``{pause}`` s, then either
#: starts the real sandbox (``{then}`` = ``exec {real} "$@"``) or exits.
SLOW = """#!/bin/sh
for word do
  if [ "$word" = --seccomp ]; then sleep {pause}; {then}; fi
done
exec {real} "$@"
"""

#: The hanging bwrap's sleep, one per test (tests run in parallel), so a test can look for its
#: own afterwards.
HANG, HANG_OWN_LIMIT = "987.25", "987.5"

CODE = "def probe():\n    return 'safe'\n"
TESTS = "assert probe() == 'safe'\n"


def _bwrap_on_path(folder: Path, monkeypatch: pytest.MonkeyPatch, pause: str, then: str) -> None:
    real = shutil.which("bwrap")
    assert real is not None, "these tests run the real bubblewrap"
    tools = folder / "bin"
    tools.mkdir()
    script = SLOW.format(pause=pause, then=then.format(real=real), real=real)
    (tools / "bwrap").write_text(script)
    (tools / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(tools), os.environ.get("PATH", "")]))


def _task() -> AblationTask:
    return AblationTask(task_id="t1", input_data={}, metadata={"tests": TESTS})


def test_a_sandbox_that_hangs_at_launch_is_an_error_not_a_failed_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The factory's verifier waits the default 10 s for a start-up; the verifier built here on
    # the same limits but a 1 s start-up limit shows the same error without that wait.
    assert verifiers.code_tests(time_limit_s=0.5).limits.effective_start_limit_s == 10
    _bwrap_on_path(tmp_path, monkeypatch, HANG, "exit 0")
    verifier = verifiers.CodeTestsVerifier(SandboxLimits(time_limit_s=0.5, start_limit_s=1))
    with pytest.raises(
        SandboxError, match=r"t1.*sandbox_start: .*self-check.*start-up limit of 1 s"
    ):
        verifier(CODE, _task())
    assert processes_with_arg(HANG.encode()) == []


def test_the_start_up_limit_is_its_own_and_the_code_never_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _bwrap_on_path(tmp_path, monkeypatch, HANG_OWN_LIMIT, "exit 0")
    limits = SandboxLimits(time_limit_s=60, start_limit_s=1)
    result = run_python_tests(CODE, TESTS, limits, confinement="bubblewrap")
    assert (result.passed, result.kind, result.error) == (False, "sandbox_start", True)
    assert "start-up limit of 1 s" in result.reason and "never ran" in result.reason
    assert result.tests_run == 0
    assert processes_with_arg(HANG_OWN_LIMIT.encode()) == []


def test_a_start_up_longer_than_the_time_limit_does_not_fail_correct_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The code needs far less than its 2 s; the sandbox takes 2.5 s to start.
    _bwrap_on_path(tmp_path, monkeypatch, "2.5", 'exec {real} "$@"')
    assert verifiers.code_tests(time_limit_s=2)(CODE, _task()) is True
    result = run_python_tests(CODE, TESTS, SandboxLimits(time_limit_s=2), confinement="bubblewrap")
    assert (result.passed, result.kind, result.tests_run) == (True, "passed", 1), result.reason
    assert result.duration_s > 2.5  # the run did outlast the code's limit: the start-up was not in it


def test_the_start_up_limit_defaults_to_ten_seconds_or_the_time_limit() -> None:
    assert SandboxLimits(time_limit_s=0.5).effective_start_limit_s == 10
    assert SandboxLimits(time_limit_s=30).effective_start_limit_s == 30
    assert SandboxLimits(time_limit_s=0.5, start_limit_s=2).effective_start_limit_s == 2
    with pytest.raises(ValueError, match="start_limit_s"):
        SandboxLimits(start_limit_s=0)
