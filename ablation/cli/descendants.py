"""No process started by a thread-mode agent outlives ``ablation run``.

A Python agent running in the ablation process may start a child (``subprocess.Popen`` without
waiting, a server, a forked copy) and return; nothing else would ever stop it. While ``run``
runs, :func:`descendants_killed` makes the process a child subreaper (Linux
``PR_SET_CHILD_SUBREAPER``), so a descendant whose parent exits (a double fork, a daemon) is
re-parented to it rather than to init, and on the way out (normal end, error, Ctrl-C, SIGTERM)
kills every descendant it has then with SIGKILL, ``setsid`` ones included, and reaps its own
children. Processes that were already descendants when the block started are left alone, and
the subreaper setting is restored, so an in-process caller keeps its own children.

Assumptions: Linux ``/proc`` (elsewhere the block changes nothing); the campaign's own children
(``cmd:`` agents, isolation workers, a local Dask cluster) are gone by then, so any descendant
left was started by user code. Limit: ``kill -9`` of ablation itself runs no clean-up; children
of a killed run are re-parented to the next subreaper or init.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Iterator

__all__ = ["descendants", "descendants_killed"]

_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


def descendants(root: int) -> set[int]:
    """Pids of every live descendant of ``root`` (from ``/proc``; empty where there is none)."""
    children: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    fields = fh.read().rpartition(b")")[2].split()
            except OSError:
                continue
            if fields and fields[0] != b"Z":
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _prctl() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


@contextlib.contextmanager
def descendants_killed() -> Iterator[None]:
    """Within the block, this process is a subreaper; at its end, new descendants are killed."""
    me = os.getpid()
    before = descendants(me)
    libc = _prctl()
    was = ctypes.c_int(0)
    if libc is not None:
        libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(was), 0, 0, 0)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        yield
    finally:
        try:
            _kill_new(me, before)
        finally:
            if libc is not None and not was.value:
                libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def _kill_new(me: int, before: set[int]) -> None:
    """SIGKILL the descendants not in ``before`` until none is left (2 s at most); reap ours."""
    deadline = time.monotonic() + 2.0
    killed: set[int] = set()
    while True:
        left = descendants(me) - before
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        killed |= left
        for pid in [*killed]:
            try:
                reaped = os.waitpid(pid, os.WNOHANG)[0] != 0
            except OSError:  # not our child (its own parent reaps it), or already gone
                reaped = True
            if reaped:
                killed.discard(pid)
        if (not left and not killed) or time.monotonic() > deadline:
            return
        time.sleep(0.01)
