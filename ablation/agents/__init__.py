"""Agents: every form an arm can take (callables, objects with ``run``, command lines, HTTP).

:mod:`ablation.agents.callables` turns any supported form into one :class:`Agent`;
:mod:`ablation.agents.command` and :mod:`ablation.agents.http` hold :class:`CommandAgent` and
:class:`HttpAgent`; :mod:`ablation.agents.forms` their shared errors and JSON reply protocol.
"""

from ablation.agents.callables import Agent, as_agent
from ablation.agents.command import CommandAgent
from ablation.agents.forms import (
    AgentConnectionError,
    AgentHttpError,
    AgentProcessError,
    AgentTimeoutError,
)
from ablation.agents.http import HttpAgent

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
