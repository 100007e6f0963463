"""What a process-isolation worker prints, passed on to this process's stderr up to a limit.

A worker's agents print to its stdout and stderr, which go to one pipe of the parent's
(:class:`ablation.run.isolation.ProcessIsolation`); a thread per worker copies the pipe to the
parent's stderr (file descriptor 2, as the worker wrote before). Past
:data:`WORKER_OUTPUT_LIMIT` bytes in one agent call the rest of that call's output is read and
dropped, so a chatty agent never blocks on a full pipe: one line says so when the limit is
reached, and one gives the count of bytes not shown when the next call starts or the worker
ends, so an agent that floods (a loop of prints) cannot fill the terminal or the CI log. Output is counted against the call that is
running when it is read, so the last bytes of one call (at most what the pipe holds, 64 KiB on
Linux, plus one read) can be shown under the next call's limit.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import BinaryIO

__all__ = ["WORKER_OUTPUT_LIMIT", "forward_output"]

#: Bytes of a worker's output shown on stderr per agent call.
WORKER_OUTPUT_LIMIT = 1 << 20
_CHUNK = 1 << 16


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def forward_output(
    pipe: BinaryIO,
    label: str,
    *,
    limit: int = WORKER_OUTPUT_LIMIT,
    sink: int = 2,
    call: Callable[[], int] = lambda: 0,
) -> int:
    """Copy ``pipe`` to the file descriptor ``sink`` until end of file, ``limit`` bytes per call.

    Args:
        pipe: The worker's output (read with ``read1``: what has arrived, never waiting for more).
        label: How the notices name the worker.
        limit: Bytes passed on per agent call; the rest is read and counted.
        sink: Where the output goes (this process's stderr).
        call: The number of the worker's current agent call; each new number starts a new limit.

    Returns:
        The number of bytes dropped, over all calls. A pipe closed under the reader (the worker
        discarded) ends the copy like end of file. The pipe is closed when the copy ends.
    """
    current, shown, dropped, total = call(), 0, 0, 0

    def count() -> None:
        if dropped:
            with contextlib.suppress(OSError):
                _write_all(sink, f"ablation: {label}: {dropped} bytes of output not shown\n".encode())

    try:
        while chunk := pipe.read1(_CHUNK):  # type: ignore[attr-defined]
            if (now := call()) != current:  # a new agent call: a new limit
                count()
                current, shown, dropped = now, 0, 0
            keep = chunk[: max(0, limit - shown)]
            if keep:
                _write_all(sink, keep)
                shown += len(keep)
            if len(keep) < len(chunk):
                if not dropped:
                    note = f"\nablation: {label}: a call's output past {limit} bytes is not shown\n"
                    _write_all(sink, note.encode())
                dropped += len(chunk) - len(keep)
                total += len(chunk) - len(keep)
    except (OSError, ValueError):
        pass
    finally:
        with contextlib.suppress(OSError, ValueError):
            pipe.close()
        count()
    return total
