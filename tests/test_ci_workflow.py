"""The ablation commands of examples/ci/github-workflow.yml run, in a scratch copy of the project.

GitHub-only steps (checkout, setup-python, gh, upload-artifact) are not run; every line that starts
with ``ablation`` is, in order, with ``GITHUB_STEP_SUMMARY`` set as on a runner, and the files it
promises (the Markdown report, the JUnit XML) are checked.
"""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.cli import REPO, cli_env, run

WORKFLOW = REPO / "examples" / "ci" / "github-workflow.yml"


def _commands() -> list[list[str]]:
    lines = [line.strip() for line in WORKFLOW.read_text().splitlines()]
    return [shlex.split(line)[1:] for line in lines if line.startswith("ablation ")]


@pytest.mark.slow
def test_workflow_commands_run(tmp_path: Path) -> None:
    commands = _commands()
    assert [c[0] for c in commands] == ["run", "report"]
    summary = tmp_path / "summary.md"
    store = tmp_path / "runs.db"
    for args in commands:
        args = [a if not a.startswith("ablation-") else str(tmp_path / a) for a in args]
        done = run([*args, "--store", str(store)], cli_env(GITHUB_STEP_SUMMARY=str(summary)), timeout=240)
        assert done.returncode in (0, 2), done.stderr
    assert (tmp_path / "ablation-report.md").read_text().strip()
    root = ET.parse(tmp_path / "ablation-junit.xml").getroot()
    assert root.tag == "testsuites" and root.find("testsuite/testcase") is not None
    assert summary.read_text().strip()
