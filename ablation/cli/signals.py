"""SIGTERM and SIGHUP stop a command the way Ctrl-C (SIGINT) does.

CI cancellation, ``timeout``, ``docker stop`` and Kubernetes send SIGTERM; a closed terminal sends
SIGHUP. Python's default for both is to die at once (exit 143 or 129): no ``finally`` runs, so a
stored campaign stays ``running`` and the process groups of running ``cmd:`` agents are orphaned.
While a command runs, :func:`terminations_interrupt` hands both signals to the SIGINT path:

- inside ``asyncio.run`` (a campaign), to the handler the asyncio runner installed for SIGINT,
  which cancels the main task: every trial is cancelled (a ``cmd:`` agent's group is killed, a
  process-isolation worker is killed), the stored campaign is marked ``interrupted``, and
  ``KeyboardInterrupt`` reaches the command, which prints one line and exits 1. A second signal
  raises ``KeyboardInterrupt`` at once, as a second Ctrl-C does;
- anywhere else, :class:`~ablation.run.trial.Terminated` (a ``KeyboardInterrupt``) is raised
  where the main thread is; landing in user code on that thread (an inline verifier), it is
  never taken for that trial's error.

Assumptions: handlers can only be installed from the main thread (elsewhere nothing changes); the
asyncio runner installs its SIGINT handler only when SIGINT had Python's default handler (a job
started with ``&`` by a non-interactive shell ignores SIGINT), and then the signal raises
``KeyboardInterrupt`` where the loop is, which the runner turns into the cancellation of every task.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

__all__ = ["TERMINATIONS", "terminations_interrupt"]

#: The signals handled like SIGINT.
TERMINATIONS: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGHUP)


def _asyncio_sigint_handler() -> Any:
    """The asyncio runner's SIGINT handler when one is installed, else ``None``.

    The runner's handler is recognised by its shape: a ``functools.partial`` of a method bound to
    an ``asyncio.Runner``. (``signal.getsignal`` formats the handler's repr in a failed enum lookup;
    while the campaign runs, that repr is the short one of a pending task.)
    """
    import asyncio

    handler = signal.getsignal(signal.SIGINT)
    if isinstance(handler, functools.partial):
        owner = getattr(handler.func, "__self__", None)
        if isinstance(owner, asyncio.Runner):
            return handler
    return None


def _on_termination(signum: int, frame: FrameType | None) -> None:
    handler = _asyncio_sigint_handler()
    if handler is not None:
        handler(signal.SIGINT, frame)
        return
    from ablation.run.trial import Terminated

    raise Terminated(signal.Signals(signum).name)


@contextlib.contextmanager
def terminations_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP act as SIGINT (module docstring); restored after.

    A signal whose disposition is ``SIG_IGN`` when the block starts (``nohup`` ignores SIGHUP)
    stays ignored.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[signal.Signals, Any] = {}
    try:
        for sig in TERMINATIONS:
            old = signal.getsignal(sig)
            if old is not signal.SIG_IGN:
                signal.signal(sig, _on_termination)
                previous[sig] = old
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
