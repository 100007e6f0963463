"""Look for processes in ``/proc`` (the fault tests' check that nothing was left behind)."""

from __future__ import annotations

import os


def processes_with_arg(arg: bytes) -> list[int]:
    """Pids of processes one of whose command-line arguments is exactly ``arg``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if arg in fh.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                pass
    return found


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat.rpartition(b")")[2].split()[0] not in (b"Z", b"X")
