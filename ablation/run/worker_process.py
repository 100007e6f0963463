"""One worker process of process isolation: started, spoken to one frame at a time, killed.

:class:`Worker` starts a fresh interpreter running :func:`ablation.run.isolation_worker.main` in a
session of its own (so ``killpg`` reaches whatever it started), with the package on its
``PYTHONPATH``, and passes what its agents print to stderr through a thread
(:mod:`ablation.run.worker_output`). :class:`ablation.run.isolation.ProcessIsolation` owns the
workers and decides which call goes to which.

Assumption: one call at a time per worker (the pool hands a worker to one trial).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from ablation.run.isolation_worker import WORKER_MARKER, read_frame, write_frame
from ablation.run.worker_output import forward_output

__all__ = ["Worker", "describe_status"]

_LAUNCH = "from ablation.run.isolation_worker import main; main()"
_REAP_S = 5.0


def describe_status(returncode: int | None) -> str:
    """How a worker ended, from its exit status (``None``: it only closed its pipe)."""
    if returncode is None:
        return "closed its pipe"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name} (signal {-returncode})"
    return f"exited with status {returncode}"


class Worker:
    """One worker process and its pipes (used from one call at a time)."""

    def __init__(self, memory_mb: int | None, max_output_bytes: int = 0) -> None:
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _LAUNCH, WORKER_MARKER, str(os.getpid()), str(memory_mb or 0),
             str(max_output_bytes)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            start_new_session=True,
        )  # fmt: skip
        self.agents: set[bytes] = set()  # the agents it has loaded
        self.calls = 0
        # what its agents print, passed on to stderr up to a limit per call (run/worker_output.py)
        self.output = threading.Thread(
            target=forward_output, args=(self.proc.stderr, f"isolation worker {self.proc.pid}"),
            kwargs={"call": lambda: self.calls}, daemon=True, name="ablation-worker-output",
        )  # fmt: skip
        self.output.start()

    def roundtrip(self, request: bytes) -> bytes | None:
        """Send one request and wait for its reply; ``None`` when the worker died first."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.calls += 1
        try:
            write_frame(self.proc.stdin, request)  # type: ignore[arg-type]
            return read_frame(self.proc.stdout)  # type: ignore[arg-type]
        except (OSError, EOFError, ValueError):
            return None

    def status(self) -> int | None:
        """The exit status once the worker is gone (waits a little for the kernel to report it)."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self.proc.wait(timeout=_REAP_S)
        return None

    def kill(self) -> None:
        """Kill the worker's process group, reap it, close its pipes (never blocks for long)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        self.status()
        # A reader thread may still hold the stdout lock: close from a thread of its own.
        threading.Thread(target=self._close_pipes, daemon=True, name="ablation-pipes").start()

    def _close_pipes(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(Exception):
                if pipe is not None:
                    pipe.close()
