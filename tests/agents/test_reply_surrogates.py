"""A lone surrogate in a command or HTTP reply's model name, metric or tool name is stored escaped.

JSON's ``\\ud800`` escape decodes to a lone surrogate, which UTF-8 cannot encode. In the reply's
``usage.model`` it ended the whole campaign (``PydanticSerializationError ... surrogates not
allowed`` when the trial was stored or the report written), one agent's answer stopping every
trial. Each text of the reply's fields is escaped as every other text a trial holds is
(``schema.safe_text``); the reference escape is Python's ``backslashreplace`` codec error
handler. Replies come from a real process and a real socket server; the campaign is stored.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.raw_server import raw_servers, replying

from ablation import AblationTask, CampaignConfig, CampaignRun, RunStore, run_ablation_campaign
from ablation.agents import AgentProcessError, CommandAgent, HttpAgent

REPLY = (
    b'{"output": "\\udc00a", "cost": {"amount": 0.5, "currency": "\\ud800"},'
    b' "metrics": {"m\\ud83d": 2}, "usage": {"model": "gpt\\ud800x", "input_tokens": 3,'
    b' "output_tokens": 4, "tool_calls": {"\\udfff": 1}}}'
)


def _escaped(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def test_the_reply_holds_lone_surrogates() -> None:
    """The premise: the decoded texts cannot be encoded as UTF-8."""
    decoded = json.loads(REPLY)
    for text in (decoded["usage"]["model"], decoded["cost"]["currency"], *decoded["metrics"]):
        with pytest.raises(UnicodeEncodeError):
            text.encode("utf-8")


def _printer(tmp_path: Path) -> CommandAgent:
    path = tmp_path / "reply.json"
    path.write_bytes(REPLY)
    return CommandAgent(["sh", "-c", 'cat >/dev/null; cat "$0"', str(path)], name="printer", timeout_s=20)


@pytest.fixture
def url(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(REPLY)
    with raw_servers(monkeypatch) as start:
        yield start(replying(head + REPLY, linger=True))


def test_the_reply_fields_are_escaped(tmp_path: Path, url: str) -> None:
    decoded = json.loads(REPLY)
    for got in (asyncio.run(_printer(tmp_path).run(1)), HttpAgent(url, timeout_s=10).run(1)):
        assert got.output == decoded["output"]  # the output is the agent's answer, checked as given
        assert got.usage.model == _escaped(decoded["usage"]["model"])
        assert got.cost.currency == _escaped(decoded["cost"]["currency"])
        assert got.metrics == {_escaped(k): v for k, v in decoded["metrics"].items()}
        assert got.usage.tool_calls == {_escaped(k): v for k, v in decoded["usage"]["tool_calls"].items()}


@pytest.mark.parametrize("kind", ["command", "http"])
def test_a_stored_campaign_runs_to_its_end(tmp_path: Path, url: str, kind: str) -> None:
    def agent() -> object:
        return _printer(tmp_path) if kind == "command" else HttpAgent(url, timeout_s=10)

    tasks = [AblationTask(task_id="t", input_data=1, expected_output="x")]
    info = CampaignRun()
    config = CampaignConfig(n_resamples=200, concurrency=2)
    run_ablation_campaign(agent(), agent(), tasks, config=config, store=tmp_path / "runs.db", run_info=info)
    with RunStore(tmp_path / "runs.db") as store:
        stored = store.results(info.campaign_id or "", arm="candidate")
    assert len(stored) == 1
    for r in stored:
        assert r.status == "completed" and r.usage is not None
        assert r.usage.model == _escaped(json.loads(REPLY)["usage"]["model"])


@pytest.mark.parametrize("levels", [500, 900])
def test_a_deeply_nested_field_is_still_the_agents_error(tmp_path: Path, levels: int) -> None:
    """The texts are escaped where a field holds text only: a field nested as deep as the JSON
    decoder allows (its limit is the interpreter's recursion limit) is refused as before, not a
    RecursionError of the escaping."""
    reply = b'{"output": 1, "metrics": ' + b"[" * levels + b"]" * levels + b"}"
    json.loads(reply)  # the premise: the decoder reads it
    path = tmp_path / "reply.json"
    path.write_bytes(reply)
    agent = CommandAgent(["sh", "-c", 'cat >/dev/null; cat "$0"', str(path)], name="printer", timeout_s=20)
    with pytest.raises(AgentProcessError, match="invalid fields: field 'metrics': Input should be a valid dictionary"):
        asyncio.run(agent.run(1))
