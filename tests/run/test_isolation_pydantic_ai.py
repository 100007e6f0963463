"""A pydantic-ai ``Agent`` named by ``file.py:NAME`` or ``pkg.mod:NAME`` runs under
``--isolation process``: an Agent holds context variables and cannot be pickled, so each worker
builds it from its own load of the module, and its runs report the usage they report in the
command's own process (the reference: the same command with ``--isolation thread``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_here

pytest.importorskip("pydantic_ai")

AGENT = '''
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import RequestUsage


def model(messages, info):
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2})],
                             usage=RequestUsage(input_tokens=1000, output_tokens=50), model_name="gpt-4o")
    return ModelResponse(parts=[TextPart("3")], usage=RequestUsage(input_tokens=1200, output_tokens=20),
                         model_name="gpt-4o")


agent = Agent(FunctionModel(model, model_name="gpt-4o"))


@agent.tool_plain
def add(a: int, b: int) -> int:
    return a + b
'''


def _report(tmp_path: Path, isolation: str) -> dict:
    done = run_here(
        ["run", "suite.jsonl", "--baseline", "pai_agents:agent", "--candidate", "pai_agents.py:agent",
         "--isolation", isolation, "--concurrency", "2", "--no-store", "--no-progress", "--format", "json"],
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_pydantic_ai_agent_runs_in_worker_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))  # pkg.mod:NAME is imported from here
    (tmp_path / "pai_agents.py").write_text(AGENT)
    (tmp_path / "suite.jsonl").write_text(
        "".join(json.dumps({"task_id": f"t{i}", "input_data": "add", "expected_output": "3"}) + "\n" for i in range(2))
    )
    isolated, threaded = _report(tmp_path, "process"), _report(tmp_path, "thread")
    assert isolated["errors"]["groups"] == [] and isolated["table"]["both_pass"] == 2
    for arm in ("baseline", "candidate"):
        assert isolated[arm]["cost_total"] == threaded[arm]["cost_total"] is not None
    assert isolated["metrics"] == threaded["metrics"]
