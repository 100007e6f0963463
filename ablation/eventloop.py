"""Run an awaitable to completion on a new event loop, without formatting its result.

``asyncio.run(coro)``, called from the main thread, makes the SIGINT handler a
``functools.partial`` holding the main task. When it restores the old handler, ``signal.getsignal``
and then ``signal.signal`` (returning the handler it replaces) each try to turn that handler into a
``signal.Handlers`` member; that fails, and the failed lookup builds its message with
``repr(handler)``: the repr of the finished task, which holds ``reprlib.repr(result)`` (strings,
lists and dicts are shortened before they are formatted, any other object is formatted in full).
So ``asyncio.run`` would format the whole result twice for messages nobody reads, which for a large
report (a 10⁶-task campaign, or drill-downs holding large outputs) costs seconds. Here the result
leaves the task through a list and the task itself returns ``None``; an exception propagates as
before.

References: CPython 3.11-3.13 ``asyncio/runners.py`` (``Runner.run``), ``signal.py``
(``getsignal``, ``_int_to_enum``) and ``enum.py`` (``EnumType.__call__``).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import types
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeGuard, TypeVar

from ablation.errors import ConfigError

__all__ = ["blocking_twin", "call_to_completion", "is_awaitable", "run_coroutine"]

T = TypeVar("T")
P = ParamSpec("P")


def run_coroutine(awaitable: Awaitable[T]) -> T:
    """``asyncio.run(awaitable)``'s result, on a new event loop (module docstring).

    Raises:
        RuntimeError: when called from a running event loop, as ``asyncio.run``.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await awaitable)

    asyncio.run(main())
    return box[0]


def call_to_completion(fn: Callable[[Any], Any], argument: Any) -> Any:
    """``fn(argument)``, with an awaitable it returns run to completion here (:func:`run_coroutine`).

    How a sync call site (``Agent.call_sync``, a process-isolation worker) calls an agent that
    may be async or may return an awaitable.
    """
    result = fn(argument)
    if inspect.isawaitable(result):
        return run_coroutine(result)
    return result


def blocking_twin(fn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The blocking twin of a coroutine function, with exactly its parameters.

    Called inside a running event loop it raises :class:`ConfigError` naming the coroutine
    function to await there, before any coroutine is made (no "never awaited" warning).
    """

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop runs in this thread: start one
            return run_coroutine(fn(*args, **kwargs))
        blocking = fn.__name__.removesuffix("_async")
        raise ConfigError(
            f"{blocking}() blocks and cannot run inside a running event loop: "
            f"use `await {fn.__name__}(...)` there (same parameters)"
        )

    return run


def is_awaitable(value: Any) -> TypeGuard[Awaitable[Any]]:
    """:func:`inspect.isawaitable` read from the value's type alone (``isinstance`` asks the
    value's ``__class__``, which user code may make raise); a type whose check raises is no
    awaitable. For what a user's verifier or scorer returned."""
    kind = type(value)
    try:
        if kind is types.GeneratorType:  # a generator-based coroutine (types.coroutine)
            return bool(value.gi_code.co_flags & inspect.CO_ITERABLE_COROUTINE)
        return issubclass(kind, Awaitable)
    except Exception:
        return False
