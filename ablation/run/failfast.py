"""Fail fast on a broken arm: stop when an arm's first trials all end in one infrastructure error.

An unreachable HTTP agent, a command that does not exist or a module that does not import makes
every trial of its arm an error; running the whole campaign that way wastes time and, worse,
produces a report of "regressions" that are all connection errors. :class:`FailFastSink` wraps
the engine's result sink (e.g. the store's), and when the first ``K`` trials of one arm (``K`` =
``limit``, or all of the arm's planned trials when fewer) ended in the same infrastructure error,
it raises :class:`BrokenArm`, a :class:`~ablation.errors.CampaignAborted`: the campaign is marked
``aborted`` in the store and can be resumed once the agent is fixed. Those ``K`` trials are not
passed on: while an arm may still prove broken, its trials that ended in an infrastructure error
are held back (at most ``K`` per arm), and passed on as soon as it cannot (a trial without such
an error, or with another one), or when the sink closes; and once an arm is broken, its calls
still in flight that end in an infrastructure error are dropped too. So a broken arm leaves none
of its broken trials in the store, and the resume runs them again with the fixed agent instead of
reporting the outage as regressions. Every other trial is passed on at once (kept, and skipped
by a resume); the trials held when the campaign is interrupted are passed on when the sink
closes (a process killed outright loses them, and its resume runs them again).

Infrastructure errors are told apart from an agent's ordinary failures by type: connection
errors, HTTP errors (after the retries the policy allows), a command that cannot start, and
import errors, at the agent or setup stage. Besides the names in :data:`INFRASTRUCTURE_ERRORS`,
every error the transient rule of :mod:`ablation.run.transient` recognised (by class hierarchy and
HTTP status: the connection, time-out, 429 and 5xx errors of openai, anthropic, httpx, requests,
aiohttp and the standard library) counts. A wrong answer, a timeout or an exception the agent
raised about one task never trips it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ablation.errors import CampaignAborted
from ablation.run.transient import recognised_name
from ablation.schema import TaskResult

__all__ = ["DEFAULT_FAIL_FAST", "INFRASTRUCTURE_ERRORS", "BrokenArm", "FailFastSink"]

DEFAULT_FAIL_FAST = 10
"""Trials of one arm inspected before a campaign is declared broken (0 disables the check)."""

INFRASTRUCTURE_ERRORS = frozenset(
    {
        "AgentConnectionError", "ConnectionError", "ConnectionRefusedError",
        "ConnectionResetError", "ConnectionAbortedError", "AgentHttpError", "HTTPError",
        "URLError", "RemoteDisconnected", "gaierror", "FileNotFoundError", "ImportError",
        "ModuleNotFoundError",
    }
)  # fmt: skip
"""Error types that mean the agent cannot be reached or started (not a per-task failure)."""

_CANNOT_START = "cannot start the command"
_HTTP_STATUS = re.compile(r"HTTP \d{3}")


class BrokenArm(CampaignAborted):
    """An arm's first trials all failed with the same infrastructure error.

    Attributes:
        arm: ``"baseline"`` or ``"candidate"``.
        agent: The agent's name.
        error: The shared ``"Type: message"`` of its trials.
        summary: The message without the resume hint (one line).
    """

    def __init__(self, message: str, *, arm: str, agent: str, error: str, summary: str) -> None:
        super().__init__(message)
        self.arm, self.agent, self.error, self.summary = arm, agent, error, summary


def infrastructure_signature(result: TaskResult) -> str | None:
    """The error type of a trial that failed for an infrastructure reason, else ``None``."""
    if result.status != "error" or result.error_stage not in (None, "agent", "setup"):
        return None
    kind = result.error_type or ""
    message = result.error_message or ""
    known = kind in INFRASTRUCTURE_ERRORS or recognised_name(kind)
    if known or (kind == "AgentProcessError" and _CANNOT_START in message):
        status = _HTTP_STATUS.search(message) if kind == "AgentHttpError" else None
        return f"{kind} {status.group(0)}" if status else kind
    return None


class FailFastSink:
    """Result sink that stops the campaign when an arm is broken (see the module docstring).

    Args:
        inner: The sink every trial is passed to first (``None``: none).
        planned: Trials this call will run, per arm (``limit`` is capped by it).
        agents: Agent name per arm, for the message.
        limit: ``K``; 0 disables the check.
        campaign_id: The stored campaign, named in the message so it can be resumed.
    """

    def __init__(
        self,
        inner: Callable[[TaskResult], Any] | None,
        *,
        planned: Mapping[str, int],
        agents: Mapping[str, str],
        limit: int = DEFAULT_FAIL_FAST,
        campaign_id: str | None = None,
    ) -> None:
        self._inner = inner
        self._limit = {arm: min(limit, n) for arm, n in planned.items()} if limit > 0 else {}
        self._agents = dict(agents)
        self._campaign_id = campaign_id
        self._seen: dict[str, list[str | None]] = {arm: [] for arm in self._limit}
        self._first: dict[str, str] = {}
        self._held: dict[str, list[TaskResult]] = {arm: [] for arm in self._limit}
        self._broken: set[str] = set()

    def __call__(self, result: TaskResult) -> None:
        arm = result.arm
        if arm in self._broken and infrastructure_signature(result) is not None:
            return  # a call of the broken arm still in flight when it stopped: the outage too
        limit = self._limit.get(arm, 0)
        seen = self._seen.get(arm)
        if seen is None or limit == 0 or len(seen) >= limit:
            self._pass(result)
            return
        seen.append(infrastructure_signature(result))
        self._first.setdefault(arm, result.error or "")
        if seen[0] is None or len(set(seen)) > 1:  # this arm cannot prove broken any more
            self._release(arm)
            self._pass(result)
            return
        self._held[arm].append(result)
        if len(seen) == limit:
            agent = self._agents.get(arm, arm)
            error = " ".join(self._first[arm].split())
            where = (
                f"; campaign {self._campaign_id} is marked aborted: fix the agent, then resume "
                f"with --resume {self._campaign_id}"
                if self._campaign_id
                else ""
            )
            summary = (
                f"{arm} agent {agent!r} is broken: its first {limit} trial(s) all failed with "
                f"{error[:300]}"
            )
            self._held[arm] = []  # the broken trials go: the resume runs them again
            self._broken.add(arm)
            raise BrokenArm(summary + where, arm=arm, agent=agent, error=error, summary=summary)

    def _pass(self, result: TaskResult) -> None:
        if self._inner is not None:
            self._inner(result)

    def _release(self, arm: str) -> None:
        """Pass on the trials held back for ``arm`` (it cannot prove broken any more)."""
        held, self._held[arm] = self._held[arm], []
        for result in held:
            self._pass(result)

    def close(self) -> None:
        """Pass on any trial still held (none of a broken arm), then close the inner sink when it
        has a ``close`` (the store's writer)."""
        for arm in self._held:
            self._release(arm)
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()
