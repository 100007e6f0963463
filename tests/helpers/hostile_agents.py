"""Agents that misbehave on purpose, for ``slow_suite.py`` (task ``tNNN`` expects ``3 * NNN``).

Each misbehaves only on task ``n == 1`` and answers correctly elsewhere, so one campaign shows
both that the fault costs one trial and that the others are recorded.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any


class CustomBase(BaseException):
    """A ``BaseException`` subclass that is not an ``Exception``."""


def ok(x: dict[str, Any]) -> int:
    """Always right."""
    return 3 * x["n"]


def exit0(x: dict[str, Any]) -> int:
    """``sys.exit(0)`` on task 1."""
    if x["n"] == 1:
        sys.exit(0)
    return 3 * x["n"]


def exit3(x: dict[str, Any]) -> int:
    """``sys.exit(3)`` on task 1."""
    if x["n"] == 1:
        sys.exit(3)
    return 3 * x["n"]


def ctrl_c(x: dict[str, Any]) -> int:
    """Raises ``KeyboardInterrupt`` on task 1 (no signal was sent)."""
    if x["n"] == 1:
        raise KeyboardInterrupt
    return 3 * x["n"]


def custom_base(x: dict[str, Any]) -> int:
    """Raises a custom ``BaseException`` on task 1."""
    if x["n"] == 1:
        raise CustomBase("custom")
    return 3 * x["n"]


async def generator_exit(x: dict[str, Any]) -> int:
    """An async agent raising ``GeneratorExit`` on task 1."""
    await asyncio.sleep(0)
    if x["n"] == 1:
        raise GeneratorExit
    return 3 * x["n"]


def hang(x: dict[str, Any]) -> int:
    """A sync agent that never returns on task 1."""
    if x["n"] == 1:
        time.sleep(10**9)
    return 3 * x["n"]


async def busy(x: dict[str, Any]) -> int:
    """An async agent that never awaits on task 1 (blocks the event loop)."""
    if x["n"] == 1:
        while True:
            pass
    await asyncio.sleep(0)
    return 3 * x["n"]


def hard_exit(x: dict[str, Any]) -> int:
    """``os._exit(7)`` on task 1 (only survivable with process isolation)."""
    if x["n"] == 1:
        os._exit(7)
    return 3 * x["n"]


class _BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("repr boom")


def bad_repr(x: dict[str, Any]) -> Any:
    """Returns an object whose ``__repr__`` raises on task 1."""
    if x["n"] == 1:
        return _BadRepr()
    return 3 * x["n"]


def surrogate(x: dict[str, Any]) -> Any:
    """Returns a string holding a lone surrogate on task 1."""
    if x["n"] == 1:
        return "bad \ud800 text"
    return 3 * x["n"]


def escapes(x: dict[str, Any]) -> Any:
    """Returns terminal escapes, an OSC 8 link, BEL, RLO and NUL on task 1."""
    if x["n"] == 1:
        return (
            "\x1b[2J\x1b[H\x1b[32mALL TESTS PASSED\x1b[0m\x07"
            "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ \u202eRLO \x00NUL"
        )
    return 3 * x["n"]
