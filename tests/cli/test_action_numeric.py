"""The GitHub Action on a numeric ``compare --field``: the same files, outputs, job summary,
pull-request comment and exit as a pass/fail comparison.

The action's steps run from ``action.yml`` as in ``tests/test_ci_workflow.py`` (its runner
simulation: real subprocesses, the runner's variables pointing at files, a local stand-in for the
GitHub comment API). The references are what ``ablation compare`` itself writes: its JSON (the
verdict, every gate), and its ``--format markdown`` and ``--format junit`` documents, which the
action's report and JUnit file must equal.
"""

from __future__ import annotations

import json
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import REPO
from helpers.cli_shared import run_here
from test_ci_workflow import _action_inputs, _FakeGitHub, _run_action, _runner

pytestmark = pytest.mark.slow

_TASKS = 20


@pytest.fixture
def github() -> Iterator[tuple[str, type[_FakeGitHub]]]:
    handler = type("Handler", (_FakeGitHub,), {"comments": [{"id": 7, "body": "a human's comment"}], "calls": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()


def _scores(tmp: Path) -> None:
    """``before.jsonl`` and two candidates of it: ``better.jsonl`` (every score up by about 0.05)
    and ``worse.jsonl`` (down by about 0.2: a significant regression, its gate fails)."""
    for name, shift in (("before", 0.0), ("better", 0.05), ("worse", -0.2)):
        rows = [{"id": f"t{i}", "score": round(0.5 + 0.01 * i + shift + (0.01 * (i % 3) if shift else 0), 4)}
                for i in range(_TASKS)]  # fmt: skip
        (tmp / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _reference(tmp: Path, command: str, fmt: str) -> str:
    """What ``ablation COMMAND --format FMT`` prints (in this process, from ``tmp``)."""
    done = run_here([*command.split(), "--format", fmt], cwd=tmp)
    assert done.returncode in (0, 2), done.stderr
    return done.stdout


def _check_agrees(tmp: Path, command: str, outputs: dict[str, str], code: int) -> dict[str, Any]:
    """The action's files and outputs say what ``ablation COMMAND`` says; returns its JSON."""
    doc = json.loads((tmp / outputs["json"]).read_text())
    assert doc["document"].startswith("numeric")
    assert outputs["verdict"] == doc["verdict"]
    assert outputs["exit-code"] == {"pass": "0", "fail": "2"}[doc["verdict"]] == str(code)
    assert (tmp / outputs["report"]).read_text() == _reference(tmp, command, "markdown")
    junit_text = (tmp / outputs["junit"]).read_text()
    assert junit_text == _reference(tmp, command, "junit")
    junit = ET.fromstring(junit_text)
    comparisons = list(doc["candidates"].values()) if "candidates" in doc else [doc]
    gates = [g for c in comparisons for g in c["gates"]]
    assert int(junit.get("tests", "-1")) == len(gates)
    assert int(junit.get("failures", "-1")) == sum(g["status"] not in ("pass", "off") for g in gates)
    assert (int(junit.get("failures", "0")) > 0) == (doc["verdict"] == "fail")
    return doc


def test_a_numeric_pass_is_reported_as_a_pass(tmp_path: Path, github: tuple[str, type[_FakeGitHub]]) -> None:
    api, server = github
    _scores(tmp_path)
    command = "compare before.jsonl better.jsonl --field score"
    runner = _runner(tmp_path, "push", api)
    outputs, code = _run_action(tmp_path, {**_action_inputs(), "command": command, "token": "t"}, runner)
    assert (outputs["exit-code"], outputs["verdict"], code) == ("0", "pass", 0)
    _check_agrees(tmp_path, command, outputs, code)
    summary = Path(runner["GITHUB_STEP_SUMMARY"]).read_text()
    assert (tmp_path / outputs["report"]).read_text().strip() in summary
    assert f"JUnit (ablation-junit.xml): {2} test(s), 0 failure(s)" in summary
    assert server.calls == []  # a push: no comment
    # every output the step writes is one action.yml declares, so a workflow can read it
    declared = set(yaml.safe_load((REPO / "action.yml").read_text())["outputs"])
    assert set(outputs) == declared


def test_a_numeric_fail_fails_the_job_and_comments(tmp_path: Path, github: tuple[str, type[_FakeGitHub]]) -> None:
    api, server = github
    _scores(tmp_path)
    command = "compare before.jsonl worse.jsonl --field score"
    runner = _runner(tmp_path, "pull_request", api)
    outputs, code = _run_action(tmp_path, {**_action_inputs(), "command": command, "token": "t"}, runner)
    assert (outputs["exit-code"], outputs["verdict"], code) == ("2", "fail", 2)
    doc = _check_agrees(tmp_path, command, outputs, code)
    assert [g["name"] for g in doc["gates"] if g["status"] == "fail"] == ["no significant regression"]
    [ours] = [c for c in server.comments if c["body"].startswith("<!-- ablation-report -->")]
    report = (tmp_path / outputs["report"]).read_text()
    assert report.strip() in ours["body"] and "verdict FAIL" in report
    assert "ablation could not produce a report" not in Path(runner["GITHUB_STEP_SUMMARY"]).read_text()


def test_several_after_files_and_a_bad_file(tmp_path: Path, github: tuple[str, type[_FakeGitHub]]) -> None:
    api, server = github
    _scores(tmp_path)
    command = "compare before.jsonl better.jsonl worse.jsonl --field score"
    inputs = {**_action_inputs(), "command": command, "token": "t"}
    runner = _runner(tmp_path, "pull_request", api)
    outputs, code = _run_action(tmp_path, inputs, runner)
    assert (outputs["exit-code"], outputs["verdict"], code) == ("2", "fail", 2)
    doc = _check_agrees(tmp_path, command, outputs, code)
    assert list(doc["candidates"]) == ["better.jsonl", "worse.jsonl"]
    junit = ET.parse(tmp_path / outputs["junit"]).getroot()
    assert [s.get("name") for s in junit] == ["ablation: better.jsonl", "ablation: worse.jsonl"]
    report = (tmp_path / outputs["report"]).read_text()
    assert "Holm across 2 candidates" in report and report.strip() in server.comments[-1]["body"]
    # a file that cannot be read stays an error, with ablation's line, and no stale report
    inputs["command"] = "compare before.jsonl missing.jsonl --field score"
    outputs, code = _run_action(tmp_path, inputs, runner)
    assert (outputs["exit-code"], outputs["verdict"], code) == ("1", "error", 1)
    assert "missing.jsonl" in server.comments[-1]["body"] and not (tmp_path / "ablation-junit.xml").exists()
    assert len([c for c in server.comments if c["body"].startswith("<!-- ablation-report -->")]) == 1
