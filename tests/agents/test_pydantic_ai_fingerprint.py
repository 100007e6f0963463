"""A pydantic-ai ``Agent`` given as the agent is fingerprinted by its definition, so a resume
refuses one whose instructions, tools or model changed, and resumes an unchanged one.

Every pydantic-ai agent runs through the same function of ``ablation.agents.sdk`` and is an
instance of the same class, whose sources say nothing of the agent: the fingerprint must come
from the agent's own instructions, tools and model, and not from what a run changes. Two agents are built from the same
definition (distinct objects) to show that equal definitions give equal fingerprints.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent, Tool
from pydantic_ai.models.test import TestModel

from ablation import AblationTask, run_ablation_campaign
from ablation.agents import as_agent
from ablation.agents.fingerprint import agent_fingerprint
from ablation.errors import ResumeMismatchError


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def add_edited(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b + 1


def _agent(instructions: str = "Answer with the sum.", tool: object = add, model: str = "a") -> Agent:
    return Agent(
        TestModel(custom_output_text="ok", model_name=model), instructions=instructions,
        tools=[Tool(tool, name="add")],  # type: ignore[arg-type]
    )  # fmt: skip


def test_a_pydantic_ai_agent_is_fingerprinted_by_its_definition() -> None:
    same = {agent_fingerprint(as_agent(_agent())), agent_fingerprint(_agent()), agent_fingerprint(_agent())}
    assert len(same) == 1
    [original] = same
    edits = [_agent(instructions="Answer in French."), _agent(tool=add_edited), _agent(model="b")]
    found = [agent_fingerprint(as_agent(edited)) for edited in edits]
    assert len({original, *found}) == 4  # each edit is seen


def test_a_run_does_not_change_the_fingerprint() -> None:
    """pydantic-ai names an unnamed agent after the caller's variable at its first run, and a
    TestModel keeps its last request: neither is the definition, so a resume in the same process
    after a run (an interrupted campaign in a notebook) sees the same agent."""
    agent = _agent()
    before = agent_fingerprint(agent)
    agent.run_sync("q")
    assert agent.name == "agent"  # the run named it
    assert agent_fingerprint(agent) == before == agent_fingerprint(_agent())


def test_a_resume_refuses_an_edited_pydantic_ai_agent(tmp_path: Path) -> None:
    tasks = [AblationTask(task_id=f"t{i}", input_data=f"q{i}", expected_output="ok") for i in range(2)]
    store = tmp_path / "runs.db"
    run_ablation_campaign(_agent(), _agent(), tasks, store=store)
    with pytest.raises(ResumeMismatchError, match=r"candidate agent .* changed since the campaign started"):
        run_ablation_campaign(_agent(), _agent(instructions="Answer in French."), tasks, store=store, resume=True)
    report = run_ablation_campaign(_agent(), _agent(), tasks, store=store, resume=True)
    assert report.n_paired == 2
