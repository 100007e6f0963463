"""An SDK result whose usage holds no count (NaN, an infinity, a fraction, a negative) is the
trial's error naming the field.

The OpenAI client reads a provider's JSON with Python's decoder (``NaN`` and ``Infinity`` are read)
and builds its result without validating it, so such a value reached ``int()``: ``NaN`` and
infinities failed with a message naming no field, and ``2.5`` was cut to 2 tokens and priced.
The server here is a real local HTTP server writing what Python's ``json.dumps`` writes for these
values; the client is the real ``openai`` package.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers.json_server import json_server

from ablation import AblationEngine, AblationTask, CampaignConfig

openai = pytest.importorskip("openai")

MODEL = "gpt-4o-mini"


def _completion(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": MODEL,
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                     "message": {"role": "assistant", "content": "4"}}],
        "usage": usage,
    }  # fmt: skip


BAD = [float("nan"), float("inf"), -float("inf"), 2.5, -3]
FIELDS = [
    ("prompt_tokens", lambda v: {"prompt_tokens": v, "completion_tokens": 1, "total_tokens": 1}),
    ("completion_tokens", lambda v: {"prompt_tokens": 3, "completion_tokens": v, "total_tokens": 3}),
    ("prompt_tokens_details.cached_tokens",
     lambda v: {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4, "prompt_tokens_details": {"cached_tokens": v}}),
]  # fmt: skip


Run = Callable[[dict[str, Any]], list[Any]]


@pytest.fixture(scope="module")
def trials_for() -> Iterator[Run]:
    """``trials_for(usage)``: the trials of a one-task campaign whose agent asks the module's server,
    which answers with ``usage``. One server and one client for the module (a server's shutdown
    takes half a second); every trial is still a real HTTP call read by the real client."""
    reply: dict[str, Any] = {}
    with json_server(lambda body: _completion(reply["usage"])) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="test", max_retries=0)

        def agent(question: Any) -> Any:
            return client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": str(question)}])

        def run(usage: dict[str, Any]) -> list[Any]:
            reply["usage"] = usage
            task = AblationTask(task_id="t", input_data="2+2", expected_output="4")
            return AblationEngine(CampaignConfig(concurrency=1)).run(agent, agent, [task])

        yield run


@pytest.mark.parametrize("value", BAD, ids=repr)
@pytest.mark.parametrize(("field", "usage"), FIELDS, ids=[f for f, _ in FIELDS])
def test_a_usage_that_is_no_count_is_the_trials_error(trials_for: Run, field: str, usage: Any, value: float) -> None:
    assert not (math.isfinite(value) and value >= 0 and value == int(value))  # the reference: no count
    results = trials_for(usage(value))
    assert len(results) == 2
    for r in results:
        assert (r.status, r.passed, r.usage, r.cost, r.tokens) == ("error", False, None, None, None)
        assert r.error_stage == "agent" and r.error is not None
        assert r.error.startswith(f"AgentProcessError: the SDK result's usage {field} is {value!r}, not a token")


def test_whole_counts_are_still_read(trials_for: Run) -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4, "prompt_tokens_details": {"cached_tokens": 2}}
    for r in trials_for(usage):
        assert r.status == "completed" and r.usage is not None
        assert (r.usage.input_tokens, r.usage.output_tokens, r.usage.cached_tokens) == (3, 1, 2)
