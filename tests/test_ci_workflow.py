"""The GitHub Action (``action.yml``) and ``examples/ci/github-workflow.yml``, run without a runner.

The workflow's step that uses the action is read from the YAML, and the action's ``run`` steps are
executed in order, as bash would, in a scratch copy of the project, with the variables a runner
sets (``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_EVENT_PATH`` ...) pointing at files.
The ``uses:`` steps (setup-python, actions/cache, upload-artifact) are not run: the cache is the
store directory kept between two simulated runs. The pull-request comment talks to a local HTTP
server that implements the three GitHub endpoints it uses. No network, no runner.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import REPO, cli_env

WORKFLOW = REPO / "examples" / "ci" / "github-workflow.yml"
ACTION = REPO / "action.yml"
_EXPR = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def _action_inputs(workflow_file: Path = WORKFLOW, uses: str = "./", action_file: Path = ACTION) -> dict[str, Any]:
    workflow = yaml.safe_load(workflow_file.read_text())
    [step] = [s for s in workflow["jobs"]["ablation"]["steps"] if s.get("uses") == uses]
    action = yaml.safe_load(action_file.read_text())
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    unknown = set(step["with"]) - set(inputs)
    assert not unknown, f"the workflow passes inputs the action does not declare: {unknown}"
    return {**inputs, **{k: str(v) for k, v in step["with"].items()}}


def _value(expr: str, inputs: dict[str, str], outputs: dict[str, str]) -> str:
    kind, _, name = expr.partition(".")
    if kind == "inputs":
        return inputs[name]
    if expr.startswith("steps.run.outputs."):
        return outputs.get(expr.removeprefix("steps.run.outputs."), "")
    if expr == "github.action_path":
        return str(REPO)
    raise AssertionError(f"the simulation does not know {expr!r}")


def _run_action(
    tmp: Path, inputs: dict[str, str], runner: dict[str, str], action_file: Path = ACTION
) -> tuple[dict[str, str], int]:
    """Run the action's ``run`` steps; return the step outputs and the last step's exit code."""
    action = yaml.safe_load(action_file.read_text())
    outputs: dict[str, str] = {}
    code = 0
    for step in action["runs"]["steps"]:
        if "run" not in step or step.get("name") == "install ablation":  # installed: this venv
            continue
        condition = step.get("if", "")
        if "github.event_name == 'pull_request'" in condition and runner["GITHUB_EVENT_NAME"] != "pull_request":
            continue
        env = {k: _EXPR.sub(lambda m: _value(m.group(1), inputs, outputs), str(v))
               for k, v in step.get("env", {}).items()}  # fmt: skip
        output_file = tmp / f"output-{len(outputs)}.txt"
        output_file.write_text("")
        command = step["run"].replace("python -m", f"{shlex_quote(sys.executable)} -m")
        done = subprocess.run(["bash", "-c", command], cwd=tmp, capture_output=True, text=True,
                              env=cli_env(**runner, **env, GITHUB_OUTPUT=str(output_file)), timeout=240)  # fmt: skip
        code = done.returncode
        for line in output_file.read_text().splitlines():
            key, _, value = line.partition("=")
            outputs[key] = value
        step_name = step.get("name")
        if step_name != "gate":
            assert code == 0, f"step {step_name!r} failed: {done.stderr}"
        runner.setdefault("_log", "")
        runner["_log"] += done.stdout + done.stderr
    return outputs, code


def shlex_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


class _FakeGitHub(BaseHTTPRequestHandler):
    """The issue-comment endpoints of the GitHub REST API, in memory."""

    comments: list[dict[str, Any]]
    calls: list[str]
    refuse = False

    def _reply(self, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> dict[str, Any]:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def do_GET(self) -> None:
        self.calls.append(f"GET {self.path}")
        self._reply(200, self.comments if "page=1" in self.path else [])

    def do_POST(self) -> None:
        self.calls.append(f"POST {self.path}")
        if self.refuse:
            self._reply(403, {"message": "Resource not accessible by integration"})
            return
        self.comments.append({"id": len(self.comments) + 100, "body": self._body()["body"]})
        self._reply(201, self.comments[-1])

    def do_PATCH(self) -> None:
        self.calls.append(f"PATCH {self.path}")
        number = int(self.path.rsplit("/", 1)[1])
        comment = next(c for c in self.comments if c["id"] == number)
        comment["body"] = self._body()["body"]
        self._reply(200, comment)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def github() -> Iterator[tuple[str, type[_FakeGitHub]]]:
    handler = type("Handler", (_FakeGitHub,), {"comments": [{"id": 7, "body": "a human's comment"}], "calls": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # shutdown() waits for the loop's next poll: 0.05 s, not serve_forever's default 0.5 s
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()


def _project(tmp: Path) -> None:
    for folder in ("tasks", "agents"):
        shutil.copytree(REPO / folder, tmp / folder, ignore=shutil.ignore_patterns("__pycache__"))


def _runner(tmp: Path, event: str, api: str, head_repo: str = "owner/project") -> dict[str, str]:
    event_file = tmp / f"event-{event}.json"
    payload = {"pull_request": {"number": 5, "head": {"repo": {"full_name": head_repo}}}} if event == "pull_request" else {}
    event_file.write_text(json.dumps(payload))
    summary = tmp / f"summary-{event}-{head_repo.replace('/', '-')}.md"
    return {"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": str(event_file), "GITHUB_REPOSITORY": "owner/project",
            "GITHUB_API_URL": api, "GITHUB_STEP_SUMMARY": str(summary), "SOURCE_DATE_EPOCH": "0"}  # fmt: skip


@pytest.mark.slow
def test_the_workflow_runs_reuses_the_cached_baseline_and_keeps_one_comment(
    tmp_path: Path, github: tuple[str, type[_FakeGitHub]]
) -> None:
    api, server = github
    _project(tmp_path)
    inputs = {**_action_inputs(), "token": "test-token"}
    # a push to main fills the store (the cache) ...
    outputs, code = _run_action(tmp_path, inputs, _runner(tmp_path, "push", api))
    first = json.loads((tmp_path / "ablation-report.json").read_text())
    assert outputs["exit-code"] in ("0", "2") and code == int(outputs["exit-code"])
    assert outputs["verdict"] == {"0": "pass", "2": "fail"}[outputs["exit-code"]]
    junit = ET.parse(tmp_path / "ablation-junit.xml").getroot()
    assert (int(junit.get("failures", "-1")) > 0) == (outputs["exit-code"] == "2")
    assert server.calls == []  # no comment outside a pull request
    # ... and a pull request reuses its baseline, and comments
    runner = _runner(tmp_path, "pull_request", api)
    outputs, code = _run_action(tmp_path, inputs, runner)
    second = json.loads((tmp_path / "ablation-report.json").read_text())
    assert second["provenance"]["baseline_reused_from"] == first["provenance"]["campaign_id"]
    summary = Path(runner["GITHUB_STEP_SUMMARY"]).read_text()
    assert "JUnit (ablation-junit.xml)" in summary and "Verdict" in summary
    assert len(server.comments) == 2  # the human's, and ours
    ours = [c for c in server.comments if c["body"].startswith("<!-- ablation-report -->")]
    assert len(ours) == 1 and (tmp_path / outputs["report"]).read_text().strip() in ours[0]["body"]
    # the next push to the pull request updates the same comment
    _run_action(tmp_path, inputs, _runner(tmp_path, "pull_request", api))
    assert len(server.comments) == 2 and server.calls[-1].startswith("PATCH ")


@pytest.mark.slow
def test_forks_and_refusals_skip_the_comment_cleanly(tmp_path: Path, github: tuple[str, type[_FakeGitHub]]) -> None:
    api, server = github
    _project(tmp_path)
    inputs = {**_action_inputs(), "token": "read-only", "reuse-baseline": "false"}
    fork = _runner(tmp_path, "pull_request", api, head_repo="someone/fork")
    outputs, _ = _run_action(tmp_path, inputs, fork)
    assert server.calls == [] and "from a fork" in fork["_log"]
    server.refuse = True
    same = _runner(tmp_path, "pull_request", api)
    outputs, code = _run_action(tmp_path, inputs, same)
    assert "the API refused it" in same["_log"] and code == int(outputs["exit-code"])


@pytest.mark.slow
def test_an_error_is_exit_1_and_reported(tmp_path: Path, github: tuple[str, type[_FakeGitHub]]) -> None:
    api, server = github
    _project(tmp_path)
    inputs = {**_action_inputs(), "token": "t", "command": "run tasks/missing.py --baseline a.py:b --candidate a.py:c"}
    runner = _runner(tmp_path, "pull_request", api)
    outputs, code = _run_action(tmp_path, inputs, runner)
    assert (outputs["exit-code"], outputs["verdict"], code) == ("1", "error", 1)
    assert "ablation could not produce a report" in Path(runner["GITHUB_STEP_SUMMARY"]).read_text()
    assert "tasks/missing.py" in server.comments[-1]["body"]
    (tmp_path / "before.jsonl").write_text('{"id": "a", "score": 0.5}\n{"id": "b", "score": 0.7}\n')
    inputs["command"] = "compare before.jsonl missing.jsonl --field score"  # a file it cannot read
    outputs, code = _run_action(tmp_path, inputs, runner)
    assert (outputs["exit-code"], code) == ("1", 1) and "missing.jsonl" in server.comments[-1]["body"]
    assert not (tmp_path / "ablation-junit.xml").exists()
    inputs["command"] = "report latest"  # not a command the action runs: an error, reported
    outputs, code = _run_action(tmp_path, inputs, runner)
    assert (outputs["exit-code"], code) == ("1", 1) and "must start with run or compare" in server.comments[-1]["body"]


def test_a_failed_gate_fails_the_job_unless_told_otherwise() -> None:
    from ablation.cli.github_action import main

    def finish(**env: str) -> int:
        import os

        saved = dict(os.environ)
        os.environ.update(env)
        try:
            return main(["finish"])
        finally:
            os.environ.clear()
            os.environ.update(saved)

    assert finish(ABLATION_EXIT_CODE="2") == 2
    assert finish(ABLATION_EXIT_CODE="2", ABLATION_FAIL_ON_GATE="false") == 0
    assert finish(ABLATION_EXIT_CODE="1", ABLATION_FAIL_ON_GATE="false") == 1
    assert finish(ABLATION_EXIT_CODE="0") == 0


@pytest.mark.slow
def test_the_workflow_ablation_init_writes_runs_as_written(tmp_path: Path, github: tuple[str, type[_FakeGitHub]]) -> None:
    from ablation.cli import main

    project = tmp_path / "project"
    assert main(["init", str(project)]) == 0
    vendored = project / ".github" / "actions" / "ablation" / "action.yml"
    assert vendored.read_text() == ACTION.read_text() == (REPO / "ablation" / "cli" / "action.yml").read_text()
    workflow = project / ".github" / "workflows" / "ablation.yml"
    inputs = {**_action_inputs(workflow, "./.github/actions/ablation", vendored), "token": "t"}
    from ablation.cli.scaffold import install_source

    assert inputs["install"] == json.loads(install_source()[0])  # never PyPI's other "ablation"
    api, server = github
    outputs, code = _run_action(project, inputs, _runner(tmp_path, "pull_request", api), vendored)
    assert outputs["verdict"] == {"0": "pass", "2": "fail"}[outputs["exit-code"]]
    assert code == int(outputs["exit-code"])  # the job ends as the command did
    assert server.comments[-1]["body"].startswith("<!-- ablation-report -->")
    assert ".ablation/" in (project / ".gitignore").read_text().splitlines()
