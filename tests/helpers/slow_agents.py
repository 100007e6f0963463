"""Slow, deterministic agents for ``slow_suite.py`` (sync functions at module level).

Every agent sleeps 20-50 ms (a deterministic function of the task number) and answers
``3 * n``, except on its own failure pattern:

- ``baseline`` fails when ``n % 10 == 3``;
- ``candidate`` fails when ``n % 10 == 7`` (20 regressions per 200 tasks) and when
  ``n % 20 == 3`` (so it fixes ``n % 20 == 13``: 10 improvements per 200 tasks);
- ``candidate_b`` fails only when ``n % 10 == 3`` and ``n % 20 == 3`` (10 improvements);
- ``candidate_c`` fails when ``n % 10 in (3, 9)`` (20 regressions).

Environment variables, read at every call (so a test can change them in-process):

- ``SLOW_AGENTS_SCALE``: multiplies the sleeps (``0`` makes the agents instant; default 1).
- ``SLOW_AGENTS_COUNTER_DIR``: when set, every call appends one line ``"<n> <pid>"`` to
  ``<dir>/<agent>.calls``: a call counter that works across processes (and tells which process
  ran the call, e.g. a Dask worker).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any


def delay_s(n: int) -> float:
    """The unscaled sleep of task ``n``: 20-50 ms."""
    return 0.020 + ((n * 7919) % 31) / 1000


def _call(agent: str, task: dict[str, Any], fails: bool) -> int:
    counter_dir = os.environ.get("SLOW_AGENTS_COUNTER_DIR")
    if counter_dir:
        with open(Path(counter_dir) / f"{agent}.calls", "a", encoding="utf-8") as fh:
            fh.write(f"{task['n']} {os.getpid()}\n")
    scale = float(os.environ.get("SLOW_AGENTS_SCALE", "1"))
    if scale > 0:
        time.sleep(delay_s(task["n"]) * scale)
    return -1 if fails else 3 * task["n"]


def calls(counter_dir: str | os.PathLike[str], agent: str) -> int:
    """How many times ``agent`` was called since ``counter_dir`` was empty."""
    path = Path(counter_dir) / f"{agent}.calls"
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def callers(counter_dir: str | os.PathLike[str], agent: str) -> set[int]:
    """Process ids that ran ``agent``."""
    path = Path(counter_dir) / f"{agent}.calls"
    if not path.exists():
        return set()
    return {int(line.split()[1]) for line in path.read_text(encoding="utf-8").splitlines()}


def baseline(task: dict[str, Any]) -> int:
    """Fails when ``n % 10 == 3``."""
    return _call("baseline", task, task["n"] % 10 == 3)


def candidate(task: dict[str, Any]) -> int:
    """Regresses ``n % 10 == 7``; fixes ``n % 20 == 13``."""
    n = task["n"]
    return _call("candidate", task, n % 10 == 7 or n % 20 == 3)


def candidate_b(task: dict[str, Any]) -> int:
    """Fixes ``n % 20 == 13``; no regression."""
    return _call("candidate_b", task, task["n"] % 20 == 3)


def candidate_c(task: dict[str, Any]) -> int:
    """Regresses ``n % 10 == 9``."""
    return _call("candidate_c", task, task["n"] % 10 in (3, 9))
