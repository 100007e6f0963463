"""Agents: every form an arm can take (callables, objects with ``run``, command lines, HTTP).

:mod:`ablation.agents.callables` turns any supported form into one :class:`Agent`;
:mod:`ablation.agents.forms` holds :class:`CommandAgent` and :class:`HttpAgent`.
"""

from ablation.agents.callables import Agent, as_agent
from ablation.agents.forms import (
    AgentConnectionError,
    AgentHttpError,
    AgentProcessError,
    AgentTimeoutError,
    CommandAgent,
    HttpAgent,
)

__all__ = [
    "Agent",
    "AgentConnectionError",
    "AgentHttpError",
    "AgentProcessError",
    "AgentTimeoutError",
    "CommandAgent",
    "HttpAgent",
    "as_agent",
]
