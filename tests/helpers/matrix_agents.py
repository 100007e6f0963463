"""The fault matrix's agents (``tests/faults/test_fault_matrix.py``).

``honest`` answers every task of ``matrix_suite.py`` correctly. ``hostile`` misbehaves in the way
the task's ``kind`` names: it raises, exits, hangs, floods, returns what cannot be stored, or
answers a code task with code that attacks the sandbox. It is an async agent, so with
``--isolation process`` one campaign exercises every fault, the event-loop-blocking ones included.
"""

from __future__ import annotations

import ctypes
import os
import random
import sys
import time
import urllib.request
from typing import Any

HONEST_CODE = "def add(a, b):\n    return a + b\n"


def escape_code(sleep_arg: str) -> str:
    """Code that double-forks, calls ``setsid`` and execs ``sleep sleep_arg`` in a fresh environment.

    The tests look for a leftover process by ``sleep_arg`` across the whole machine, so each
    test passes its own: a test running beside it on another worker must not be blamed for it.
    """
    return (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execve('/bin/sleep', ['sleep', {sleep_arg!r}], {{'X': '1'}})\n"
        "    os._exit(0)\n"
        "time.sleep(0.3)\n" + HONEST_CODE
    )


def escape_sleep_arg() -> str:
    """A ``sleep`` argument of 419 s and a fraction no other test draws (``escape_code``)."""
    return f"419.{random.SystemRandom().randrange(10**9):09d}1"


HOSTILE_CODE = {
    "sb_kill_parent": "import os\nos.kill(os.getppid(), 9)\n" + HONEST_CODE.replace("+", "-"),
    "sb_escape": escape_code(os.environ.get("MATRIX_ESCAPE_SLEEP", "419.25")),
    "sb_frames": (
        "import sys\n"
        "f = sys._getframe()\n"
        "while f is not None:\n"
        "    for name, value in list(f.f_locals.items()) + list(f.f_globals.items()):\n"
        "        if callable(value) and 'report' in name:\n"
        "            try:\n"
        "                value(True, 'passed', 'all tests passed', 1, 1)\n"
        "            except BaseException:\n"
        "                pass\n"
        "    f = f.f_back\n"
    ),
    "sb_eq": (
        "class E:\n    def __eq__(self, other):\n        return True\n\n"
        "def add(a, b):\n    return E()\n"
    ),
}


class BadRepr:
    """An output whose ``repr`` raises."""

    def __repr__(self) -> str:
        raise RuntimeError("repr boom")


def honest(x: dict[str, Any]) -> Any:
    """The right answer for every task."""
    return HONEST_CODE if x["kind"].startswith("sb_") else "ok"


async def hostile(x: dict[str, Any]) -> Any:
    """Misbehaves as ``x["kind"]`` says; answers ``"ok"`` for kind ``ok``."""
    kind = x["kind"]
    if kind in HOSTILE_CODE:
        return HOSTILE_CODE[kind]
    if kind == "raise":
        raise ValueError("boom")
    if kind == "sys_exit":
        sys.exit(3)
    if kind == "os_exit":
        os._exit(7)
    if kind == "segfault":
        ctypes.string_at(0)
    if kind == "hang":
        time.sleep(10**9)  # blocks the worker's event loop and never returns
    if kind == "http_hang":
        port = os.environ["MATRIX_HTTP_PORT"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10**6) as response:
            return response.read().decode()
    if kind == "busy":
        while True:
            pass
    if kind == "flood":
        while True:
            sys.stdout.write("A" * 65536)
    if kind == "surrogate":
        return "bad \ud800 text"
    if kind == "unrepresentable":
        return BadRepr()
    return "ok"
