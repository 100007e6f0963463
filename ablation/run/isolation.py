"""Process isolation: Python agents run in worker processes, so a crash costs one trial.

With ``CampaignConfig(isolation="process")`` (``ablation run --isolation process``), every call of
a Python agent (sync or async) is sent to a worker process: an agent that calls ``os._exit``,
segfaults, raises ``SystemExit``, exhausts its memory or never returns takes down its worker, not
the campaign. The trial is recorded as an error (:class:`WorkerDied`, naming the exit status or
signal and the task), the worker is replaced, and the campaign goes on. A trial that runs past
``timeout_s`` kills its worker's whole process group.

Design (stated assumptions):

- Workers are fresh interpreters started with :mod:`subprocess` (never ``fork``: the engine has
  threads), each in a session of its own so ``killpg`` reaches whatever it started. They speak
  length-prefixed pickle frames over pipes (:mod:`ablation.run.isolation_worker`). At most
  ``concurrency`` workers exist (the engine never has more calls in flight); each is reused
  until it dies or the campaign ends, when all are killed (also on Ctrl-C, on errors, at
  interpreter exit, and by the kernel when the parent dies: ``PR_SET_PDEATHSIG``).
- The agent is sent by pickle, once per worker. A function or class from a module pickles by
  reference; one from a file loaded by path (``agents/x.py:name``, how the command line loads
  specs) is re-loaded by the worker from the same file, as is a spec's pydantic-ai ``Agent``. Lambdas, closures and functions defined in
  ``__main__`` cannot be sent: :func:`open_isolation` refuses them up front, naming the agent.
- Task inputs and outputs cross by pickle: an output that cannot be pickled is that trial's error
  (:class:`UnsendableOutput`), and an exception that cannot be rebuilt from its pickle is made
  here as its own class, or the nearest base this process has (:func:`_rebuilt`), so retries and
  fail-fast see it as without isolation. The parent unpickles what the worker sends back, so this is a fault
  boundary, not a security boundary: the worker runs the user's agent with the user's rights.
- Command and HTTP agents already run outside the interpreter and are not sent to workers;
  verifiers, scorers and hooks stay in the parent.

Cost: one interpreter start per worker (a few hundred milliseconds, paid ``concurrency`` times)
and a pickle round trip plus a thread hand-off per call. The start, and the loading of the agent
in the worker, are the campaign's cost, not a trial's: before a call, :meth:`ProcessIsolation.ready`
sets aside for the trial a worker that has loaded its agent, while the trial's clock is stopped
(the engine's turn, :meth:`~ablation.run.deadlines.Deadlines.paused`), so neither counts in the
call's latency or against ``timeout_s``; a start and load that take longer than ``timeout_s`` and
:data:`LOAD_WAIT_S` are given up (the worker killed), and the call then loads the agent on its
trial's clock.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import inspect
import io
import pickle
import sys
import time
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

from ablation.agents import CommandAgent, HttpAgent
from ablation.agents.callables import Agent
from ablation.agents.sdk import pydantic_ai_runner
from ablation.config import CampaignConfig
from ablation.errors import AblationError, AgentSpecError, ConfigError
from ablation.run.isolation_worker import file_attr
from ablation.run.threads import run_in_daemon_thread
from ablation.run.worker_process import Worker, describe_status
from ablation.sources.modules import FILE_MODULE_PREFIX, loaded_from

__all__ = [
    "LOAD_WAIT_S",
    "FilePickler",
    "ProcessIsolation",
    "RemoteTraceback",
    "UnsendableOutput",
    "WorkerDied",
    "live_workers",
    "open_isolation",
]

_PROTOCOL = pickle.HIGHEST_PROTOCOL
#: Least time a worker gets to start and load an agent before a call (``timeout_s`` when longer).
LOAD_WAIT_S = 60.0
_OUTPUT_WAIT_S = 0.5  # at close, for the workers' last output (a process that escaped may hold it)
_MAIN_REFERENCE = b"\x8c\x08__main__"  # how a pickle names the module __main__


class WorkerDied(AblationError, RuntimeError):
    """A worker process ended (exit, signal, memory) while it ran an agent call.

    Attributes:
        returncode: The worker's exit status (negative: the signal that killed it).
    """

    def __init__(self, message: str, returncode: int | None) -> None:
        super().__init__(message)
        self.returncode = returncode


class UnsendableOutput(AblationError, TypeError):
    """An agent's output (or a task's input) cannot cross between processes by pickle."""


class RemoteTraceback(AblationError):
    """Carries the worker's traceback text as the ``__cause__`` of an exception sent back."""

    def __str__(self) -> str:
        return "\n" + str(self.args[0]) if self.args else ""


class FilePickler(pickle.Pickler):
    """Pickles functions and classes of files loaded by path by name (:func:`file_attr`).

    The standard pickler checks that ``module.qualname`` is the very object being pickled; a
    file loaded twice (the same file for both arms) holds two module objects under one name, so
    that check fails for the first. Sending the name lets the worker load the file once.
    """

    def reducer_override(self, obj: Any) -> Any:
        agent = getattr(obj, "pydantic_ai_agent", None) if inspect.isfunction(obj) else None
        if agent is not None and loaded_from(agent) is not None:  # unpicklable: loaded by the worker
            self.by_place = agent
            return pydantic_ai_runner, (agent,)
        if obj is getattr(self, "by_place", None):
            return file_attr, loaded_from(obj)
        module = getattr(obj, "__module__", None)
        if (
            isinstance(module, str)
            and module.startswith(FILE_MODULE_PREFIX)
            and (isinstance(obj, type) or inspect.isfunction(obj))
            and "<locals>" not in obj.__qualname__
            and "<lambda>" not in obj.__qualname__
        ):
            return file_attr, (module, obj.__qualname__)
        return NotImplemented


def _dumps(obj: Any) -> bytes:
    buffer = io.BytesIO()
    FilePickler(buffer, protocol=_PROTOCOL).dump(obj)
    return buffer.getvalue()


_POOLS: weakref.WeakSet[ProcessIsolation] = weakref.WeakSet()


@atexit.register
def _kill_all_workers() -> None:
    for pool in list(_POOLS):
        pool.close()


def live_workers() -> list[int]:
    """Pids of the worker processes this process has started and not yet killed."""
    return [w.proc.pid for pool in list(_POOLS) for w in pool.workers if w.proc.poll() is None]


class ProcessIsolation:
    """A bounded set of worker processes that run Python agent calls.

    Args:
        agents: The campaign's agents by arm; each Python agent is pickled here, once.
        memory_mb: Address-space limit of each worker in MiB (``RLIMIT_AS``), or ``None``.
        max_output_bytes: Largest output a worker sends back (0: no cap); a larger one is that
            trial's ``OutputTooLarge``.

    Raises:
        AgentSpecError: an agent cannot be sent to a worker (a lambda, a closure, a function
            defined in ``__main__``), naming the agent and what to do instead.
    """

    def __init__(
        self, agents: Mapping[str, Agent], memory_mb: int | None = None, max_output_bytes: int = 0
    ) -> None:
        self.memory_mb = memory_mb
        self.max_output_bytes = max_output_bytes
        self.workers: list[Worker] = []
        self._idle: list[Worker] = []
        self._reserved: weakref.WeakKeyDictionary[asyncio.Task[Any], Worker] = weakref.WeakKeyDictionary()
        self._blobs = {arm: _agent_blob(agent) for arm, agent in agents.items() if handles(agent)}
        self._overran: set[bytes] = set()  # agents whose load overran the wait of :meth:`ready`
        self._files: dict[str, str] = {}
        self._seen_modules = -1
        _POOLS.add(self)

    def handles(self, arm: str) -> bool:
        """True when this arm's agent runs in a worker process."""
        return arm in self._blobs

    async def call(self, arm: str, input_data: Any, task_id: str) -> Any:
        """Run this arm's agent on ``input_data`` in a worker and return (or raise) its result.

        Raises:
            WorkerDied: the worker ended during the call (it is replaced for the next call).
            UnsendableOutput: the input or the output cannot be pickled.
            BaseException: whatever the agent raised, rebuilt here (its traceback as the cause).
        """
        try:
            input_blob = _dumps(input_data)
        except Exception as exc:
            raise UnsendableOutput(
                f"the input of task {task_id!r} cannot be sent to a worker process "
                f"(isolation='process'): {type(exc).__name__}: {exc}"
            ) from None
        request = self._request(arm, input_blob)
        worker = self._reserved.pop(_current(), None) or self._take(self._blobs[arm])
        try:
            reply = await run_in_daemon_thread(worker.roundtrip, request)
        except BaseException:  # timeout or stop: the call cannot be abandoned, its worker can
            self._discard(worker)
            raise
        if reply is None:
            self._discard(worker)
            returncode = worker.proc.returncode
            raise WorkerDied(
                f"worker process {worker.proc.pid} {describe_status(returncode)} while running "
                f"task {task_id!r} ({arm}); the worker was replaced",
                returncode,
            )
        self._idle.append(worker)
        answer = pickle.loads(reply)
        if answer[0] == "ok":
            worker.agents.add(self._blobs[arm])
        return _unpack(answer, task_id)

    async def ready(self, arm: str, timeout_s: float | None) -> None:
        """Set aside, for the calling task's next :meth:`call` of ``arm``, a worker that has
        loaded its agent: an idle one that has, else one made to load it now (started when none
        is idle), waiting for the load up to ``timeout_s`` or :data:`LOAD_WAIT_S`, the longer. A
        load that fails is left for the call to report; a worker that dies or overruns that wait
        while loading is killed, and the call takes another. Once a load of the arm's agent has
        overrun the wait, its later calls load it on their own trial's clock with no wait first
        (a module that hangs on import costs each trial its ``timeout_s``, not that plus the
        wait). Nothing for an arm whose agent does not run in a worker."""
        if not self.handles(arm) or self._blobs[arm] in self._overran:
            return
        blob, task = self._blobs[arm], _current()
        worker = self._reserved.pop(task, None) or self._take(blob)
        if blob not in worker.agents:
            load = run_in_daemon_thread(worker.roundtrip, self._request(arm, None))
            try:
                reply = await asyncio.wait_for(load, max(timeout_s or 0.0, LOAD_WAIT_S))
            except BaseException as exc:  # the load cannot be abandoned, its worker can
                self._discard(worker)
                if isinstance(exc, TimeoutError):  # overran: the call loads on its trial's clock
                    self._overran.add(blob)
                    return
                raise
            if reply is None:
                self._discard(worker)
                return
            if pickle.loads(reply)[0] == "ready":
                worker.agents.add(blob)
        self._reserved[task] = worker

    def _request(self, arm: str, input_blob: bytes | None) -> bytes:
        """The frame asking a worker to run ``arm``'s agent on ``input_blob`` (``None``: load it)."""
        return pickle.dumps(
            (self._file_modules(), list(sys.path), self._blobs[arm], input_blob), protocol=_PROTOCOL
        )

    def _take(self, blob: bytes) -> Worker:
        """An idle worker, one that has loaded the agent ``blob`` first; a new one when none is."""
        for i in range(len(self._idle) - 1, -1, -1):
            if blob in self._idle[i].agents:
                return self._idle.pop(i)
        return self._idle.pop() if self._idle else self._start()

    def close(self) -> None:
        """Kill every worker and its process group (idempotent), then wait up to half a second
        for the last of their output to reach stderr."""
        workers, self.workers, self._idle = self.workers, [], []
        self._reserved.clear()
        for worker in workers:
            worker.kill()
        deadline = time.monotonic() + _OUTPUT_WAIT_S
        for worker in workers:
            worker.output.join(max(0.0, deadline - time.monotonic()))

    def _start(self) -> Worker:
        worker = Worker(self.memory_mb, self.max_output_bytes)
        self.workers.append(worker)
        return worker

    def _discard(self, worker: Worker) -> None:
        worker.kill()
        with contextlib.suppress(ValueError):
            self.workers.remove(worker)

    def _file_modules(self) -> dict[str, str]:
        """Modules loaded by path in this process (re-read when ``sys.modules`` grew)."""
        if len(sys.modules) != self._seen_modules:
            self._seen_modules = len(sys.modules)
            self._files = {
                name: str(module.__file__)
                for name, module in list(sys.modules.items())
                if name.startswith(FILE_MODULE_PREFIX) and getattr(module, "__file__", None)
            }
        return self._files


def _current() -> asyncio.Task[Any]:
    """The task of the trial calling (a worker set aside by ``ready`` is that task's)."""
    task = asyncio.current_task()
    assert task is not None, "called from a coroutine run by a task"
    return task


def handles(agent: Agent) -> bool:
    """True for a Python agent; command and HTTP agents already run outside the interpreter."""
    return not isinstance(getattr(agent.fn, "__self__", None), CommandAgent | HttpAgent)


def _agent_blob(agent: Agent) -> bytes:
    hint = (
        "use a module-level function (or an instance of a module-level class) in an importable "
        "module or a file given as file.py:NAME, or isolation='thread'"
    )
    try:
        blob = _dumps(agent.fn)
    except Exception as exc:
        raise AgentSpecError(
            f"agent {agent.name!r} cannot be sent to a worker process (isolation='process'): "
            f"{type(exc).__name__}: {exc}; lambdas, closures and local functions cannot be "
            f"pickled: {hint}"
        ) from None
    if _MAIN_REFERENCE in blob:
        raise AgentSpecError(
            f"agent {agent.name!r} cannot be sent to a worker process (isolation='process'): it "
            f"is defined in __main__ (the script being run), which a worker cannot import: {hint}"
        )
    return blob


def _unpack(reply: tuple[Any, ...], task_id: str) -> Any:
    kind = reply[0]
    if kind == "ok":
        try:
            return pickle.loads(reply[1])
        except Exception as error:
            raise UnsendableOutput(
                f"the output of task {task_id!r} cannot be rebuilt from its pickle: "
                f"{type(error).__name__}: {error}"
            ) from None
    if kind == "unsendable":
        raise UnsendableOutput(f"task {task_id!r}: {reply[1]} (isolation='process')")
    raised: BaseException | None = None
    if kind == "raised":
        text = reply[2]
        with contextlib.suppress(Exception):
            raised = pickle.loads(reply[1])
        name, message = "WorkerError", text.strip().splitlines()[-1] if text.strip() else ""
    else:
        name, message, text = reply[1], reply[2], reply[3]
        raised = _rebuilt(str(name), message, reply[4] if len(reply) > 4 else ())
    if raised is None:
        raised = type(str(name), (Exception,), {"__module__": "worker"})(message)
    raised.__cause__ = RemoteTraceback(text)
    raise raised


def _rebuilt(name: str, message: str, lineage: Sequence[tuple[str, str]]) -> BaseException | None:
    """An exception the worker could not send whole, as its own class when this process has it
    (the agent's module is loaded here too), else as a class of its name under the nearest base
    this process has, so that ``retry_on``, the transient errors and fail-fast see a
    ``ConnectionError`` subclass as one, as they do without isolation. Made with the class's
    ``__new__`` and the message as its only argument, never its ``__init__`` (whose arguments
    are why it could not be rebuilt from its pickle); ``None`` when no class of the lineage is
    found or can be made. Assumption: the message is all that is kept (no other attribute)."""
    for depth, (module, qualname) in enumerate(lineage):
        found: Any = sys.modules.get(module)
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if not (isinstance(found, type) and issubclass(found, BaseException)):
            continue
        try:
            cls = found if depth == 0 else type(name, (found,), {"__module__": "worker"})
            made = cls.__new__(cls, message)
            if isinstance(made, BaseException):
                made.args = (message,)  # OSError's __new__ leaves them to an __init__ it overrides
                return made
        except Exception:
            continue
    return None


def open_isolation(
    config: CampaignConfig, agents: Mapping[str, Agent], executor: Executor | None
) -> ProcessIsolation | None:
    """The workers of a campaign with ``isolation="process"`` (``None`` for threads).

    Raises:
        ConfigError: ``isolation="process"`` together with a user executor (Dask): pick one.
        AgentSpecError: an agent cannot be sent to a worker.
    """
    if config.isolation != "process":
        return None
    if executor is not None:
        raise ConfigError(
            "isolation='process' runs agents in local worker processes; it cannot be combined "
            "with an executor (Dask): drop one of them"
        )
    return ProcessIsolation(
        agents, memory_mb=config.worker_memory_mb, max_output_bytes=config.max_output_bytes
    )
