"""A process forked by an agent never runs ablation's code.

An agent that calls ``os.fork()`` without ``exec`` leaves a copy of the whole campaign process
behind. When that copy returns from the agent into ablation, it would run the engine's code
with none of its threads: it posts the result to a loop that is not running, waits on locks
another thread held at the fork, and sleeps forever, holding the run store's files open. So
every place where ablation takes control back from user code compares the process id with the
one it had when it called the user code; in a forked copy it ends the process at once with
``os._exit(0)`` (no ``atexit`` handler, no ``finally`` of the parent's, no flush of the parent's
buffers, so the copy cannot release the parent's lock or write its store).

Where: every threaded call (sync agents, verifiers, scorers; :func:`ablation.run.threads.call_refusing_stop`)
an async agent's await (:meth:`ablation.agents.callables.Agent.call_async`) and a worker of
``--isolation process`` before it answers (:mod:`ablation.run.isolation_worker`). A child that
execs, or ends itself (``multiprocessing``'s fork start method does), is never affected.

Limit: an async agent that forks in the event loop's thread and then awaits lets the copy's
loop run other trials' coroutines until the agent's own coroutine returns; fork in a thread,
or use ``--isolation process``.
"""

from __future__ import annotations

import os

__all__ = ["leave_if_forked"]


def leave_if_forked(pid: int) -> None:
    """End this process at once (``os._exit(0)``) if it is not ``pid``: a copy forked by user code."""
    if os.getpid() != pid:
        os._exit(0)
