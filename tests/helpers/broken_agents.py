"""Agents for the default-verdict tests: one that raises on every task, one that answers.

``tasks/arithmetic.py`` is the suite; ``working`` is its left-to-right baseline.
"""

from __future__ import annotations

from agents.arithmetic import baseline as working

__all__ = ["raising", "working"]


def raising(task: dict) -> float:
    """An agent whose every call fails (an ordinary exception, not an infrastructure error)."""
    raise RuntimeError(f"model refused {task['expression']!r}")
