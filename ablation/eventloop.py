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

A coroutine that swallows its cancellation (``except BaseException: pass`` around an ``await``)
never ends when cancelled. ``asyncio.run`` cancels every task left when its coroutine returns and
waits for them all, so one such user call (an async agent, verifier, scorer or hook the engine
stopped waiting for) would hold the campaign's return, its report and the process exit forever.
:func:`run_coroutine` runs the coroutine with :class:`asyncio.Runner` (its SIGINT handling,
which ``cli/signals.py`` relies on, is kept) but closes the loop itself: the tasks left are
cancelled and get :data:`CLOSE_GRACE_S` to end (the rest of a call :func:`await_or_abandon`
abandoned gets no wait), and any still pending is left pending for good, its
reference count raised so that it is never freed: freeing it would close its coroutine, and one
that swallows ``GeneratorExit`` too can loop forever inside the garbage collector or at
interpreter exit. Such a task holds its memory until the process ends. CPython only, as the
watchdog (``run/watchdog.py``).

References: CPython 3.11-3.13 ``asyncio/runners.py`` (``Runner.run``), ``signal.py``
(``getsignal``, ``_int_to_enum``) and ``enum.py`` (``EnumType.__call__``).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import ctypes
import functools
import inspect
import types
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, ParamSpec, TypeGuard, TypeVar

from ablation.daemon_pool import DaemonExecutor, LoopExecutor
from ablation.errors import ConfigError

__all__ = [
    "CANCEL_GRACE_S", "CLOSE_GRACE_S", "await_or_abandon", "blocking_twin", "call_to_completion",
    "is_awaitable", "refuse_running_loop", "resolved", "run_coroutine",
]

T = TypeVar("T")
P = ParamSpec("P")

#: Seconds a cancelled call gets to end (its clean-up: a ``cmd:`` agent's group killed and
#: reaped) before :func:`await_or_abandon` stops waiting for it.
CANCEL_GRACE_S = 0.5
#: Seconds the tasks left when :func:`run_coroutine`'s coroutine returns get to end once cancelled.
CLOSE_GRACE_S = 5.0

#: The threads behind the default executor of every loop :func:`run_coroutine` starts
#: (``loop.run_in_executor(None, fn)`` in an async agent; each loop its own
#: :class:`~ablation.daemon_pool.LoopExecutor`): daemon workers, so a call that never returns
#: holds neither the loop's close nor the process's exit (:mod:`ablation.daemon_pool`).
_LOOP_POOL = DaemonExecutor("ablation-loop")

#: The loops :func:`run_coroutine` started (and has not closed).
_OWN_LOOPS: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()

#: Calls :func:`await_or_abandon` stopped waiting for, while they are pending.
_abandoned: set[asyncio.Future[Any]] = set()


def run_coroutine(awaitable: Awaitable[T]) -> T:
    """``asyncio.run(awaitable)``'s result, on a new event loop (module docstring): the same
    SIGINT handling, but tasks that do not end when cancelled are left behind, not waited for,
    and so are calls in the loop's default executor (on :data:`_LOOP_POOL`) that never return.

    Raises:
        RuntimeError: when called from a running event loop, as ``asyncio.run``.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop runs in this thread: start one
        pass
    else:
        raise RuntimeError("run_coroutine() cannot be called from a running event loop")
    box: list[T] = []

    async def main() -> None:
        box.append(await awaitable)

    runner = asyncio.Runner()
    try:
        runner.get_loop().set_default_executor(LoopExecutor(_LOOP_POOL))
        _OWN_LOOPS.add(runner.get_loop())
        runner.run(main())
    finally:
        _close(runner.get_loop())
    return box[0]


async def await_or_abandon(
    awaitable: Awaitable[T], on_abandon: Callable[[], None] | None = None, grace_s: float = CANCEL_GRACE_S
) -> T:
    """``await awaitable``, which a cancellation the call swallows cannot hold.

    The call's steps run in the awaiting task, as a plain ``await`` runs them (no task of its own,
    so no extra turn of the loop per call), in a copy of the caller's context taken when the
    await starts (as a task's): context variables it sets are not seen by the caller. Every
    exception thrown into the awaiting task is passed on to the call, as a plain ``await`` does.
    When the awaiting task is cancelled (a deadline, a stop) and the call goes on running instead
    of ending (it swallowed the cancellation: the task's cancellation count is still above what
    it was when the await started, see ``asyncio.Task.cancelling``), the call gets ``grace_s``
    to end; one still running then is abandoned (:meth:`_Abandonable._abandon`: on a loop
    :func:`run_coroutine` started it runs on in a task of its own, on another loop it is left
    suspended), ``on_abandon`` is called, and the cancellation goes on at once.
    A plain ``await`` would wait for such a call forever.

    Assumes the call yields what asyncio's coroutines yield to a task: futures (with
    ``add_done_callback``) or ``None``.

    Raises:
        asyncio.CancelledError: when the caller was cancelled, or the call ended cancelled.
        BaseException: whatever the call raised, unchanged.
    """
    return await _Abandonable(awaitable, on_abandon, grace_s)


#: What runs a call step by step: a coroutine, or the generator an awaitable's ``__await__`` returns.
_Steps = Coroutine[Any, Any, Any] | Generator[Any, Any, Any]


class _Abandonable:
    """The awaitable of :func:`await_or_abandon`: drives the call step by step (PEP 492 ``send``
    and ``throw``), in the awaiting task."""

    __slots__ = ("awaitable", "grace_s", "on_abandon")

    def __init__(self, awaitable: Awaitable[Any], on_abandon: Callable[[], None] | None, grace_s: float) -> None:
        self.awaitable = awaitable
        self.on_abandon = on_abandon
        self.grace_s = grace_s

    def __await__(self) -> Generator[Any, Any, Any]:
        steps = _steps(self.awaitable)
        context = contextvars.copy_context()
        task = asyncio.current_task()
        base = task.cancelling() if task is not None else 0
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                yielded = context.run(steps.send, value) if error is None else context.run(steps.throw, error)
            except StopIteration as stop:
                return stop.value
            if error is not None and task is not None and task.cancelling() > base and _is_cancel(error):
                # the call went on after the task's cancellation: a grace, then abandoned
                yield from self._grace(steps, context, yielded, error)
            try:
                value, error = (yield yielded), None
            except GeneratorExit:
                steps.close()
                raise
            except BaseException as exc:  # thrown into the task: passed on to the call
                value, error = None, exc

    def _grace(
        self, steps: _Steps, context: contextvars.Context, yielded: Any, cancel: BaseException
    ) -> Generator[Any, Any, None]:
        """Drive the call for up to ``grace_s`` more; then raise ``cancel``, the call abandoned
        (:func:`_abandon`) when it has not ended. Never returns."""
        loop = asyncio.get_running_loop()
        end = loop.time() + self.grace_s
        while True:
            waiter = loop.create_future()
            wake = functools.partial(_wake, waiter)
            timer = loop.call_at(end, wake, None)
            watched = callable(getattr(yielded, "add_done_callback", None))
            if watched:
                yielded.add_done_callback(wake)
            else:  # a bare ``yield``: the call asked for one turn of the loop
                loop.call_soon(wake, None)
            waiter._asyncio_future_blocking = True  # type: ignore[attr-defined]  # as Future.__await__
            try:
                yield waiter
            except BaseException:  # cancelled again (or closed): wait no more
                timer.cancel()
                self._abandon(steps, context, yielded, watched, wake)
                raise
            timer.cancel()
            if watched and not yielded.done():  # the grace ended first
                self._abandon(steps, context, yielded, watched, wake)
                raise cancel
            if watched:
                yielded.remove_done_callback(wake)
            elif loop.time() >= end:
                self._abandon(steps, context, yielded, watched, wake)
                raise cancel
            try:
                yielded = context.run(steps.send, None)
            except BaseException:  # it ended: the cancellation goes on
                raise cancel from None

    def _abandon(
        self, steps: _Steps, context: contextvars.Context, yielded: Any, watched: bool,
        wake: Callable[[Any], None],
    ) -> None:
        """Leave the rest of the call: on a loop :func:`run_coroutine` started, it runs on in a
        task of its own, which that loop's close does not wait for (module docstring). On any
        other loop (a caller's own ``asyncio.run``, which waits for every task it cancels when
        it ends) it is never resumed, and never freed: freeing it would close it, and a call that
        swallows ``GeneratorExit`` too can loop forever in the garbage collector or at exit."""
        if watched:
            yielded.remove_done_callback(wake)
        if asyncio.get_running_loop() in _OWN_LOOPS:
            rest = asyncio.ensure_future(_resume(_Resumed(steps, context, yielded)))
            _abandoned.add(rest)
            rest.add_done_callback(_abandoned.discard)
        else:
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(steps))
        if self.on_abandon is not None:
            self.on_abandon()


class _Resumed:
    """The rest of an abandoned call: it first waits for what it last yielded."""

    __slots__ = ("context", "steps", "yielded")

    def __init__(self, steps: _Steps, context: contextvars.Context, yielded: Any) -> None:
        self.steps, self.context, self.yielded = steps, context, yielded

    def __await__(self) -> Generator[Any, Any, Any]:
        steps, context, yielded = self.steps, self.context, self.yielded
        while True:
            try:
                value, error = (yield yielded), None
            except GeneratorExit:
                steps.close()
                raise
            except BaseException as exc:
                value, error = None, exc
            try:
                yielded = context.run(steps.send, value) if error is None else context.run(steps.throw, error)
            except StopIteration as stop:
                return stop.value


async def _resume(rest: _Resumed) -> None:
    """Await ``rest``, what it ends with dropped (``asyncio.run``'s shutdown would report it)."""
    with contextlib.suppress(BaseException):
        await rest


def _steps(awaitable: Awaitable[Any]) -> _Steps:
    """The iterator that runs ``awaitable`` (a coroutine is its own)."""
    if isinstance(awaitable, types.CoroutineType | types.GeneratorType):
        return awaitable
    return awaitable.__await__()  # type: ignore[return-value]  # a generator, by PEP 492


def _is_cancel(error: BaseException) -> bool:
    """Whether ``error`` is a cancellation (its type alone; a user class may lie in ``__class__``)."""
    return issubclass(type(error), asyncio.CancelledError)


def _wake(waiter: asyncio.Future[None], _: Any) -> None:
    """End ``waiter`` unless it has ended."""
    if not waiter.done():
        waiter.set_result(None)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """Close ``loop`` as ``asyncio.Runner.close`` does, without waiting on tasks for ever."""
    try:
        loop.run_until_complete(_settle(loop))
        loop.run_until_complete(_within(loop.shutdown_asyncgens(), CLOSE_GRACE_S))
        loop.run_until_complete(_within(loop.shutdown_default_executor(), CLOSE_GRACE_S))
    finally:
        for task in asyncio.all_tasks(loop):  # still pending: never freed (module docstring)
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(task))
        asyncio.set_event_loop(None)
        _OWN_LOOPS.discard(loop)
        loop.close()


async def _settle(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel every other task; wait up to :data:`CLOSE_GRACE_S` for those not yet abandoned.
    Exceptions they end with are reported as ``asyncio.run`` reports them."""
    tasks = [t for t in asyncio.all_tasks(loop) if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    waited = [t for t in tasks if t not in _abandoned]
    if waited:
        await asyncio.wait(waited, timeout=CLOSE_GRACE_S)
    await asyncio.sleep(0)  # one turn for the abandoned ones
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler({
                "message": "unhandled exception during asyncio.run() shutdown",
                "exception": task.exception(), "task": task,
            })  # fmt: skip


async def _within(awaitable: Awaitable[Any], limit_s: float) -> None:
    """Await ``awaitable`` for at most ``limit_s`` seconds, then leave it."""
    task = asyncio.ensure_future(awaitable)
    await asyncio.wait((task,), timeout=limit_s)
    if not task.done():
        task.cancel()


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
    function to await there, before any coroutine is made (no "never awaited" warning). Else the
    coroutine runs outside any exception handler, so what it raises carries no implicit context
    (no "no running event loop" ``RuntimeError`` above the user's traceback).
    """

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        refuse_running_loop(fn.__name__.removesuffix("_async"), fn.__name__)
        return run_coroutine(fn(*args, **kwargs))

    return run


def refuse_running_loop(blocking: str, awaited: str) -> None:
    """Raise :class:`ConfigError` when an event loop runs in this thread: the blocking call
    ``blocking`` (which would start its own) cannot run there; the message names the coroutine
    function ``awaited`` to await instead. Called before any coroutine is made, so none is left
    unawaited, and outside any exception handler of the caller's.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop runs in this thread
        return
    raise ConfigError(
        f"{blocking}() blocks and cannot run inside a running event loop: "
        f"use `await {awaited}(...)` there (same parameters)"
    )


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


async def resolved(value: Any) -> Any:
    """``value`` awaited while it is awaitable (:func:`is_awaitable`), at most twice: what a sync
    verifier or scorer returned, as ``run_verifier`` and ``run_scorer`` take it."""
    for _ in range(2):
        if is_awaitable(value):
            value = await value
    return value
