"""Points where the program running ablation may tune its own process; a library call does not.

A report of 10⁶ tasks makes and frees arrays and lists of a million rows, and a campaign with a
store frees most of its heap before it builds the report; reading a large result file leaves its
reader's parsing buffers freed but held. The ``ablation`` command tunes its own
process around that work (:mod:`ablation.cli.tuning`: the cyclic collector paused while a report
is read, paired and built; the C allocator's freed pages given back and its mmap threshold
raised; pyarrow's pool emptied after a large read). A library call (``compare_results``, ``run_ablation_campaign``, ``build_report`` inside
an application's server) leaves the host process as it is: the points below do nothing unless a
program installs :class:`ProcessHooks` for the current context with :func:`installed`, as the
command line does for the duration of one command.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar

__all__ = [
    "ProcessHooks", "during_large_work", "installed", "large_read_finished", "large_work",
    "memory_freed", "owns_process",
]

_F = TypeVar("_F", bound=Callable[..., Any])


class ProcessHooks(Protocol):
    """What a program does to its own process at ablation's tuning points."""

    def large_work(self) -> AbstractContextManager[None]:
        """Around reading, pairing and building a report (it may run nested)."""

    def memory_freed(self) -> None:
        """Much of what the process allocated is garbage now (a campaign's run whose trials are
        stored; the result files ``compare`` built its reports from): it may be given back."""

    def large_read_finished(self) -> None:
        """A large result file is read into columns: its reader's buffers are garbage now."""


_HOOKS: ContextVar[ProcessHooks | None] = ContextVar("ablation_process_hooks", default=None)


@contextlib.contextmanager
def installed(hooks: ProcessHooks) -> Iterator[None]:
    """Use ``hooks`` at the tuning points inside the block (this context and the threads and
    tasks it starts with a copy of it)."""
    token = _HOOKS.set(hooks)
    try:
        yield
    finally:
        _HOOKS.reset(token)


def large_work() -> AbstractContextManager[None]:
    """The installed hooks' ``large_work()``, or a block that changes nothing."""
    hooks = _HOOKS.get()
    return contextlib.nullcontext() if hooks is None else hooks.large_work()


def during_large_work(fn: _F) -> _F:
    """Decorator: run ``fn`` inside :func:`large_work`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with large_work():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def memory_freed() -> None:
    """The installed hooks' ``memory_freed()``, or nothing."""
    hooks = _HOOKS.get()
    if hooks is not None:
        hooks.memory_freed()


def large_read_finished() -> None:
    """The installed hooks' ``large_read_finished()``, or nothing."""
    hooks = _HOOKS.get()
    if hooks is not None:
        hooks.large_read_finished()


def owns_process() -> bool:
    """Whether the program running ablation installed hooks, i.e. owns its process (the command
    line does): only then may ablation set process-wide state such as OpenTelemetry's global
    tracer provider."""
    return _HOOKS.get() is not None
