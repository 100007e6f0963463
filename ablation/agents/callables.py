"""Turn every supported agent form into one :class:`Agent`.

Supported forms: a sync callable, an async callable, an object with a ``run`` method (sync or
async), a dict with a ``"run"`` entry, and a pydantic-ai ``Agent`` (run with the task input as
its prompt; :mod:`ablation.agents.sdk` reads its result). A command line and an HTTP endpoint are objects with
``run``: :class:`CommandAgent` and :class:`HttpAgent` (in :mod:`ablation.agents.forms`). Anything else (a string, a number, ``None``) raises
:class:`~ablation.errors.AgentSpecError` (a :class:`TypeError`) naming what was given: the
framework never silently turns a value into a constant answer.
"""

from __future__ import annotations

import _signal
import inspect
import os
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ablation.agents.sdk import pydantic_ai_runner
from ablation.errors import AblationError, AgentSpecError
from ablation.eventloop import call_to_completion
from ablation.forks import leave_if_forked
from ablation.schema import callable_name, is_async_callable

__all__ = ["Agent", "SignalHandlerChanged", "as_agent", "stopping_handlers"]

#: The signals that stop a command (``cli/signals.py``); an async agent runs in the thread that
#: may change their handlers, and must not.
_STOPPING = tuple(
    s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None
)


class SignalHandlerChanged(AblationError, RuntimeError):
    """An async agent replaced the handler of a signal that stops the command; it was restored.

    A sync agent cannot (``signal.signal`` outside the main thread raises ``ValueError``, its
    error); an async agent runs on the event loop's thread, which is the main one under the
    command. Left in place, its handler could ignore SIGTERM (the campaign ran on to the end) or
    restore the default (the process died with the campaign ``running``).
    """


def stopping_handlers() -> tuple[Any, ...]:
    """The raw handlers of SIGINT, SIGTERM and SIGHUP (``_signal.getsignal``: no enum lookup,
    cheap); a campaign takes them once, when it starts, and every async call is held to them."""
    return tuple(_signal.getsignal(s) for s in _STOPPING)


def _restore(before: tuple[Any, ...], *, quiet: bool = False) -> None:
    """Put back handlers an async agent replaced, and (unless ``quiet``: an exception is already
    on its way) make that the trial's error."""
    changed = [
        (sig, was) for sig, was, now in zip(_STOPPING, before, stopping_handlers(), strict=True) if now is not was
    ]
    if not changed:
        return
    for sig, was in changed:
        signal.signal(sig, was)
    if quiet:
        return
    names = ", ".join(signal.Signals(sig).name for sig, _ in changed)
    raise SignalHandlerChanged(
        f"the agent replaced the handler of {names}, which stops the campaign; it was restored "
        "(run such an agent as a sync agent or with --isolation process)"
    )


@dataclass(frozen=True)
class Agent:
    """One arm's agent in the single form the engine runs.

    Attributes:
        name: Stable name, used in provenance and for resume checks.
        fn: The callable taking the task input.
        is_async: True when ``fn`` returns an awaitable (run on the event loop); sync agents run
            in a thread pool or the user's executor.
    """

    name: str
    fn: Callable[[Any], Any]
    is_async: bool

    async def call_async(self, input_data: Any, handlers: tuple[Any, ...] | None = None) -> Any:
        """Await an async agent (only valid when ``is_async``).

        A copy of the process the agent forked ends here (:mod:`ablation.forks`); a handler of
        SIGINT, SIGTERM or SIGHUP that differs from ``handlers`` (the campaign's, taken when it
        started; default: those before this call) is restored and is the trial's error
        (:class:`SignalHandlerChanged`). With several agents awaiting at once, the trial that
        ends first after the change is the one that records it.
        """
        pid = os.getpid()
        if handlers is None:
            handlers = stopping_handlers()
        try:
            result = self.fn(input_data)
            if inspect.isawaitable(result):
                result = await result
        except BaseException:  # its error, or a cancellation: that stays what is raised
            leave_if_forked(pid)
            _restore(handlers, quiet=True)
            raise
        leave_if_forked(pid)
        _restore(handlers)
        return result

    def call_sync(self, input_data: Any) -> Any:
        """Call a sync agent; an awaitable it returns is run to completion in this thread."""
        return call_to_completion(self.fn, input_data)


def as_agent(obj: Any, *, name: str | None = None) -> Agent:
    """Wrap any supported agent form.

    Args:
        obj: A callable, an object with ``run``, a dict with ``"run"``, or an :class:`Agent`.
        name: Name to record; defaults to the callable's ``module:qualname`` (or ``obj.name``).

    Returns:
        The :class:`Agent`.

    Raises:
        AgentSpecError: if ``obj`` is not one of the supported forms.
    """
    if isinstance(obj, Agent):
        return obj if name is None else Agent(name, obj.fn, obj.is_async)
    fn: Any
    if isinstance(obj, Mapping):
        if "run" not in obj:
            raise AgentSpecError(
                f"an agent given as a dict needs a 'run' entry; got keys {sorted(map(str, obj))}"
            )
        fn = obj["run"]
        if not callable(fn):
            raise AgentSpecError(f"the 'run' entry of the agent dict is not callable: {fn!r:.80}")
        label = name or (str(obj["name"]) if "name" in obj else callable_name(fn))
        return Agent(label, fn, is_async_callable(fn))
    if isinstance(obj, str | bytes | int | float | bool) or obj is None:
        raise AgentSpecError(
            f"an agent must be a callable, an object with run(), or a dict with 'run'; "
            f"got {type(obj).__name__} {obj!r:.80}"
        )
    pydantic_ai = pydantic_ai_runner(obj)
    if pydantic_ai is not None:
        return Agent(name or callable_name(obj), pydantic_ai, True)
    run = getattr(obj, "run", None)
    if callable(run) and not inspect.isclass(obj):
        return Agent(name or callable_name(obj), run, is_async_callable(run))
    if callable(obj) and not inspect.isclass(obj):
        return Agent(name or callable_name(obj), obj, is_async_callable(obj))
    raise AgentSpecError(
        f"an agent must be a callable, an object with run(), or a dict with 'run'; "
        f"got {type(obj).__name__} {obj!r:.80}"
    )
