"""An Anthropic ``BetaMessage`` (what ``client.beta.messages.create`` returns) is read as the
``Message`` it mirrors: its text, usage and tool calls, never an opaque object whose usage is lost.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("anthropic")

from anthropic.types import Message
from anthropic.types.beta import BetaMessage

from ablation.agents.sdk import sdk_output
from ablation.outputs import AgentOutput

REPLY: dict[str, Any] = {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "stop_reason": "tool_use", "stop_sequence": None,
    "content": [
        {"type": "text", "text": "Let me look. "},
        {"type": "tool_use", "id": "tu_1", "name": "search", "input": {"q": "x"}},
        {"type": "text", "text": "Done."},
    ],
    "usage": {
        "input_tokens": 120, "output_tokens": 45, "cache_read_input_tokens": 300,
        "cache_creation_input_tokens": 50,
        "cache_creation": {"ephemeral_5m_input_tokens": 20, "ephemeral_1h_input_tokens": 30},
        "server_tool_use": {"web_search_requests": 2, "web_fetch_requests": 0},
    },
}  # fmt: skip


def test_a_beta_message_reads_as_the_message_it_mirrors() -> None:
    beta = sdk_output(BetaMessage.model_validate(REPLY))
    plain = sdk_output(Message.model_validate(REPLY))
    assert isinstance(plain, AgentOutput) and isinstance(beta, AgentOutput)
    assert beta.output == plain.output == "Let me look. Done."
    assert beta.usage == plain.usage
    usage = beta.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.cached_tokens) == (120 + 300 + 50, 45, 300)
    assert usage.tool_calls == {"search": 1}
