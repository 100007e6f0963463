"""Agents that take down their own process, for process isolation tests on ``slow_suite.py``.

Task ``tNNN`` expects ``3 * NNN``. Each agent misbehaves only on task ``n == 1`` and answers
correctly elsewhere, so one campaign shows that the fault costs exactly one trial.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import sys
from typing import Any

# Shared with the thread-mode fault tests (explicit re-exports: agents are named by spec here).
from helpers.hostile_agents import busy as busy
from helpers.hostile_agents import hang as hang
from helpers.hostile_agents import ok as ok


async def ok_async(x: dict[str, Any]) -> int:
    """Always right, asynchronously."""
    await asyncio.sleep(0)
    return 3 * x["n"]


def wrong_on_even(x: dict[str, Any]) -> int:
    """Right on odd tasks, off by one on even ones (an honest agent with failures)."""
    return 3 * x["n"] + (1 if x["n"] % 2 == 0 else 0)


def hard_exit(x: dict[str, Any]) -> int:
    """``os._exit(3)`` on task 1: the whole interpreter ends at once."""
    if x["n"] == 1:
        os._exit(3)
    return 3 * x["n"]


def segfault(x: dict[str, Any]) -> int:
    """Reads address 0 on task 1 (SIGSEGV)."""
    if x["n"] == 1:
        ctypes.string_at(0)
    return 3 * x["n"]


def system_exit(x: dict[str, Any]) -> int:
    """``sys.exit(4)`` on task 1."""
    if x["n"] == 1:
        sys.exit(4)
    return 3 * x["n"]


def hog(x: dict[str, Any]) -> int:
    """Allocates 4 GiB on task 1 (``MemoryError`` under a worker memory cap)."""
    if x["n"] == 1:
        block = bytearray(4 * 1024**3)
        return len(block)
    return 3 * x["n"]


def unpicklable(x: dict[str, Any]) -> Any:
    """Returns a generator (cannot be pickled) on task 1."""
    if x["n"] == 1:
        return (i for i in range(3))
    return 3 * x["n"]


def pid(x: dict[str, Any]) -> int:
    """The pid of the process running the agent (task 0 fails, the rest are right)."""
    return os.getpid() if x["n"] == 0 else 3 * x["n"]


def raises(x: dict[str, Any]) -> int:
    """Raises ``ValueError`` on task 1."""
    if x["n"] == 1:
        raise ValueError(f"bad input {x['n']}")
    return 3 * x["n"]
