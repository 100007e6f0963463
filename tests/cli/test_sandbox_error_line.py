"""``ablation run`` says on stderr why code_tests could not judge code when the sandbox failed.

The sandbox starts for real through a ``bwrap`` on ``PATH`` that stands in front of the real
bubblewrap: one drops the seccomp filter (the code process's self-check finds it missing), the
other refuses to start a sandbox (bubblewrap's own availability probe still passes).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers.cli_shared import run_here

SUITE = """
from ablation import AblationTask
from ablation.verifiers import code_tests

tasks = [AblationTask(task_id="t0", input_data={}, verifier=code_tests(time_limit_s=10),
                      metadata={"tests": "assert x == 1\\n"})]
"""

#: A bwrap that passes every word but ``--seccomp FD`` to the real one: no filter is installed.
WITHOUT_SECCOMP = """#!/bin/sh
skip=0
for word do
  shift
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  if [ "$word" = --seccomp ]; then skip=1; continue; fi
  set -- "$@" "$word"
done
exec {real} "$@"
"""

#: A bwrap whose probe (no ``--seccomp``) runs, but which refuses every sandbox run.
REFUSING = """#!/bin/sh
for word do
  if [ "$word" = --seccomp ]; then echo "bwrap: refusing this sandbox" >&2; exit 1; fi
done
exec {real} "$@"
"""


@pytest.mark.parametrize(
    ("wrapper", "kind", "cause"),
    [(WITHOUT_SECCOMP, "sandbox_check", "seccomp"), (REFUSING, "sandbox_start", "refusing")],
    ids=["self-check-fails", "does-not-start"],
)
def test_a_sandbox_error_gets_one_line_with_its_cause_and_fix(
    tmp_path: Path, wrapper: str, kind: str, cause: str
) -> None:
    real = shutil.which("bwrap")
    assert real is not None, "these tests run the real bubblewrap"
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "bwrap").write_text(wrapper.format(real=real))
    (tools / "bwrap").chmod(0o755)
    (tmp_path / "suite.py").write_text(SUITE)
    (tmp_path / "agents.py").write_text("def right(task_input):\n    return 'x = 1\\n'\n")
    agent = f"{tmp_path / 'agents.py'}:right"
    args = ["run", str(tmp_path / "suite.py"), "--baseline", agent, "--candidate", agent,
            "--no-progress", "--no-store", "--format", "json"]  # fmt: skip
    # in this process: bwrap is looked up on PATH at each sandbox start, its probe cached by path
    proc = run_here(args, {"PATH": os.pathsep.join([str(tools), os.environ.get("PATH", "")])})
    assert proc.returncode == 2, proc.stderr
    report = json.loads(proc.stdout)
    groups = report["errors"]["groups"]
    assert {(g["arm"], g["error_type"]) for g in groups} == {
        ("baseline", "SandboxError"), ("candidate", "SandboxError")
    }
    example = groups[0]["example"]
    assert f": {kind}: " in example and cause in example
    lines = [line for line in proc.stderr.splitlines() if line.startswith("ablation: error:")]
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert f"{sum(g['count'] for g in groups)} trial(s) are errors" in line
    # The cause is the recorded kind and reason, without the task it happened to; then the fix.
    reason = example.split(f": {kind}: ", 1)[1]
    assert f"could not judge agent-written code: {kind}: {reason}; to fix: " in line
    assert "task 't0'" not in line
    assert line.endswith("--sandbox process")
