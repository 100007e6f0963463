"""Scale-out: run sync agents on a Dask ``distributed`` cluster through its executor.

:func:`dask_executor` yields an executor backed by a Dask cluster (``--dask-local``,
``--dask-scheduler``); a campaign given a Dask client's own ``get_executor()`` wraps it the same
way (:func:`cluster_executor`). Trials run on the workers, results stream back into the local
store. Needs the extra ``ablation[dask]``. Async agents keep running on the local event loop.

Every agent call is a Dask task (an *attempt*); the worker tells the scheduler when it starts and
ends one, this process hears it and, while trials are pending, looks at the scheduler's workers
every :data:`_POLL_S` s. So a dying worker (``os._exit``, a segfault) is charged to the trial it
was running, never to another, whatever the scheduler's settings. An attempt whose worker crashed
while running it is submitted once more (a trial that only shared the process with the culprit
runs again; the culprit kills again and is recorded with ``KilledWorker``); one lost before it
started, or on a worker that announced it was closing, is submitted again uncounted (at most
:data:`_MAX_ATTEMPTS` attempts). When no worker is left, every pending trial is settled at once,
with the ``KilledWorker`` of its crash or with :class:`~ablation.errors.NoWorkerLeft` naming the
cause: the client's cluster object (``Client(LocalCluster())``) holds no worker and does not adapt,
or a scheduler that had workers has had none for :data:`_NO_WORKER_GRACE_S` s. (A ``LocalCluster``
closes a nanny for good when its restarted worker is not back ``lost-worker-timeout`` after a
death, likely when every task kills its worker; the scheduler keeps the rest queued forever.)

The local cluster of :func:`dask_executor` sends a worker one task at a time (``worker-saturation``
1.0), fails a task at its worker's first death (``allowed-failures`` 0) and keeps its nannies, which
restart dead workers. Dask's log records are ``ablation.dask`` DEBUG records (``--verbose``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import sys
import threading
import time
import types
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from typing import Any

from ablation.errors import ConfigError, NoWorkerLeft
from ablation.sources.modules import FILE_MODULE_PREFIX

__all__ = ["cluster_executor", "dask_executor"]


def _ship_file_modules_by_value() -> None:
    """Let workers run agents loaded from files (``agents/x.py:name``).

    Such modules exist only in this process (they were executed from a path, not imported from
    a package the workers also have), so cloudpickle must send their code by value.
    """
    import cloudpickle

    for name, module in list(sys.modules.items()):
        if name.startswith(FILE_MODULE_PREFIX) and module is not None:
            with contextlib.suppress(ValueError):  # already registered
                cloudpickle.register_pickle_by_value(module)


#: Seconds between two looks at the scheduler's workers while trials are pending.
_POLL_S = 0.2
#: Seconds a scheduler that had workers may have none before its pending trials fail.
_NO_WORKER_GRACE_S = 10.0
#: Attempts of one trial whose worker died while they ran before it is charged ``KilledWorker``.
_DEATHS_CHARGED = 2
#: Attempts of one trial in all, counting those lost in a dying worker's queue before they started.
_MAX_ATTEMPTS = 4


def _run_pickled(topic: str, attempt: str, blob: bytes, *args: Any) -> Any:
    """Worker side: rebuild the callable sent by value and call it, reporting start and end."""
    import cloudpickle

    _report(topic, attempt, "start")
    try:
        return cloudpickle.loads(blob)(*args)
    finally:
        _report(topic, attempt, "end")


def _report(topic: str, attempt: str, phase: str) -> None:
    """Tell the scheduler, and wait until it heard, that this worker starts or ended ``attempt``.

    Assumes a Dask worker's task thread; elsewhere, or if the scheduler cannot be told, nothing.
    """
    with contextlib.suppress(Exception):  # the report only sharpens the blame for a dead worker
        from distributed import get_worker
        from distributed.utils import sync

        worker = get_worker()
        msg = [attempt, worker.address, str(worker.get_current_task()), phase]
        sync(worker.loop, worker.scheduler.log_event, topic=topic, msg=msg)


def _killed_worker(key: str, address: str) -> BaseException:
    """Dask's own ``KilledWorker`` for an attempt whose worker died while it ran."""
    from distributed.scheduler import KilledWorker

    last: Any = types.SimpleNamespace(address=address)  # all its message reads of the worker
    return KilledWorker(task=key, last_worker=last, allowed_failures=0)


@dataclasses.dataclass(eq=False)
class _Trial:
    """One agent call: its attempts (Dask tasks) until one settles ``outer``, the engine's future.

    ``attempt``: the current attempt's id (others are ignored); ``inner``: its future; ``running``:
    worker -> Dask key where it started and has not ended; ``killed``: Dask's ``KilledWorker`` for
    it, until the watch judges it; ``deaths``: the errors of attempts whose worker crashed.
    """

    submit: Callable[[str], Future[Any]]
    outer: Future[Any] = dataclasses.field(default_factory=Future)
    attempt: str = ""
    inner: Future[Any] | None = None
    running: dict[str, str] = dataclasses.field(default_factory=dict)
    killed: BaseException | None = None
    attempts: int = 0
    deaths: list[BaseException] = dataclasses.field(default_factory=list)


class _ByValueExecutor(Executor):
    """Runs each call on a Dask cluster, charging a dead worker to its own trial (module docstring).

    Dask pickles a function by reference to its module; a module executed from a file exists only
    in this process, so this executor pickles the callable itself (cloudpickle, those modules by
    value), once per callable.

    Args:
        inner: A Dask client's executor (``client.get_executor()``); its options are kept.
        client: That client (synchronous).
    """

    def __init__(self, inner: Executor, client: Any) -> None:
        self._inner, self._client = inner, client
        self._blobs: dict[Any, bytes] = {}
        self._topic = f"ablation-attempts-{uuid.uuid4().hex}"
        self._lock = threading.Lock()
        self._pending: dict[str, _Trial] = {}  # by current attempt id
        self._watching = self._had_workers = False
        self._no_workers_since: float | None = None
        client.subscribe_topic(self._topic, self._on_report)  # before any task: a FIFO stream

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        blob = self._blob(fn)
        trial = _Trial(lambda attempt: self._inner.submit(
            _run_pickled, self._topic, attempt, blob, *args, **kwargs))  # fmt: skip
        trial.outer.add_done_callback(lambda _: self._forget(trial))
        self._launch(trial)
        return trial.outer

    def _blob(self, fn: Callable[..., Any]) -> bytes:
        import cloudpickle

        with contextlib.suppress(TypeError):  # an unhashable callable is pickled every time
            if fn in self._blobs:
                return self._blobs[fn]
        _ship_file_modules_by_value()  # also files loaded after the executor was made
        blob = cloudpickle.dumps(fn)
        with contextlib.suppress(TypeError):
            self._blobs[fn] = blob
        return blob

    def _launch(self, trial: _Trial) -> None:
        """Submit a new attempt of ``trial``, cancelling the current one."""
        attempt = uuid.uuid4().hex
        with self._lock:
            if trial.outer.done():
                return
            self._pending.pop(trial.attempt, None)
            old, trial.inner, trial.killed, trial.running = trial.inner, None, None, {}
            trial.attempt, trial.attempts = attempt, trial.attempts + 1
            self._pending[attempt] = trial
            if not self._watching:  # the watch ends when nothing is pending
                self._watching = True
                threading.Thread(target=self._watch, name="ablation-dask", daemon=True).start()
        if old is not None:
            old.cancel()  # the scheduler forgets a task still queued or rescheduled
        try:
            inner = trial.submit(attempt)
        except BaseException as exc:  # a closed client, an unpicklable input
            self._finish(trial, exc)
            return
        with self._lock:
            current = trial.attempt == attempt and not trial.outer.done()
            trial.inner = inner if current else trial.inner
        if current:
            inner.add_done_callback(lambda f: self._settle(trial, attempt, f))
        else:
            inner.cancel()

    def _settle(self, trial: _Trial, attempt: str, inner: Future[Any]) -> None:
        """An attempt ended (on the client's thread): settle the trial, or judge a dead worker."""
        exc = None if inner.cancelled() else inner.exception()
        with self._lock:
            if trial.attempt != attempt or trial.outer.done():
                return  # a dropped attempt, or the trial is settled
            if exc is not None and type(exc).__name__ == "KilledWorker" and trial.running:
                trial.killed = exc  # the watch asks whether that worker crashed (not from here)
                return
        if inner.cancelled():
            trial.outer.cancel()
        elif exc is not None and type(exc).__name__ == "KilledWorker":  # lost before it started
            self._lost(trial, attempt, exc, crashed=False)
        else:
            self._finish(trial, exc, None if exc else inner.result())

    def _lost(self, trial: _Trial, attempt: str, exc: BaseException, *, crashed: bool) -> None:
        """Attempt ``attempt`` was lost with its worker: charge the trial or try again."""
        with self._lock:
            if trial.attempt != attempt or trial.outer.done():
                return  # dropped already
            self._pending.pop(attempt, None)
            trial.attempt = ""  # nobody else acts on this attempt
            if crashed:
                trial.deaths.append(exc)
            charge = len(trial.deaths) >= _DEATHS_CHARGED or trial.attempts >= _MAX_ATTEMPTS
        if charge:
            self._finish(trial, exc)
        else:
            self._launch(trial)

    def _finish(self, trial: _Trial, exc: BaseException | None, result: Any = None) -> None:
        with contextlib.suppress(Exception):  # settled already (cancelled by the engine)
            if exc is None:
                trial.outer.set_result(result)
            else:
                trial.outer.set_exception(exc)

    def _forget(self, trial: _Trial) -> None:
        """The trial is settled: let go of its attempt (a Dask future still held is recomputed
        whenever the worker holding its result dies) and cancel it if it still runs."""
        with self._lock:
            self._pending.pop(trial.attempt, None)
            inner, trial.inner = trial.inner, None
        if inner is not None and not inner.done():
            inner.cancel()  # the engine gave up (a timeout) or the trial was settled without it

    def _on_report(self, event: tuple[float, Any]) -> None:
        """A worker reports the start or the end of an attempt (on the client's thread)."""
        with contextlib.suppress(Exception):
            attempt, address, key, phase = event[1]
            with self._lock:
                trial = self._pending.get(attempt)
                if trial is not None and phase == "start":
                    trial.running[address] = key
                elif trial is not None:  # ended: the death of that worker is not its doing
                    trial.running.pop(address, None)

    def _watch(self) -> None:
        """While trials are pending: judge dead workers' attempts; settle all when none is left."""
        while True:
            with self._lock:
                if not self._pending:
                    self._watching = False
                    return
                # Reports heard before the poll asked: their workers had registered by then.
                seen = [(a, t, dict(t.running), t.killed) for a, t in self._pending.items()]
            with contextlib.suppress(Exception):  # a closing client: its futures end cancelled
                self._check(seen, set(self._client.nthreads()))
            time.sleep(_POLL_S)

    def _check(self, seen: list[tuple[str, _Trial, dict[str, str], Any]], workers: set[str]) -> None:
        for attempt, trial, running, killed in seen:
            gone = [(address, key) for address, key in running.items() if address not in workers]
            if gone or killed is not None:
                crashed = any(not self._announced_closing(address) for address, _ in gone)
                exc = killed or _killed_worker(gone[0][1], gone[0][0])
                self._lost(trial, attempt, exc, crashed=crashed)
        if workers:
            self._had_workers, self._no_workers_since = True, None
            return
        now = time.monotonic()
        self._no_workers_since = self._no_workers_since or now
        cause = self._no_worker_cause(now - self._no_workers_since)
        with self._lock:
            trials = list(self._pending.values()) if cause else []
        for trial in trials:
            self._finish(trial, trial.deaths[-1] if trial.deaths else NoWorkerLeft(
                f"no Dask worker left to run the trial: {cause}"))  # fmt: skip

    def _announced_closing(self, address: str) -> bool:
        """Whether a worker that left had told the scheduler it was closing (its nanny or the
        cluster closed it); a crash or a kill gives no notice."""
        try:
            events = self._client.get_events(address)
        except Exception:  # unknown: a crash, as the scheduler counts it
            return False
        status = [m.get("status") for _, m in events
                  if isinstance(m, dict) and m.get("action") == "worker-status-change"]  # fmt: skip
        return bool(status) and str(status[-1]).startswith("closing")

    def _no_worker_cause(self, idle_s: float) -> str | None:
        """Why no worker will come, or ``None`` while one still may."""
        cluster = getattr(self._client, "cluster", None)
        members = getattr(cluster, "workers", None)
        if isinstance(members, dict) and not members and getattr(cluster, "_adaptive", 1) is None:
            return f"the {type(cluster).__name__} has closed all its workers"
        if self._had_workers and idle_s >= _NO_WORKER_GRACE_S:
            return f"the scheduler has had no worker for {idle_s:.0f} s"
        return None

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._inner.shutdown(wait=wait)  # Dask's ClientExecutor takes no cancel_futures


def cluster_executor(executor: Executor) -> Executor:
    """The executor a campaign runs on: a Dask client's ``get_executor()`` gets this module's care.

    Any other executor (and one made by :func:`dask_executor`) is returned as it is; so is the
    executor of an asynchronous client, whose calls this module cannot make from a thread.
    """
    client = getattr(executor, "_client", None)
    dask = type(executor).__module__.startswith("distributed") and client is not None
    if not dask or isinstance(executor, _ByValueExecutor) or getattr(client, "asynchronous", True):
        return executor
    return _ByValueExecutor(executor, client)


@contextlib.contextmanager
def dask_executor(
    *, scheduler: str | None = None, local_workers: int | None = None
) -> Iterator[Executor]:
    """Yield an executor backed by a Dask cluster, and close the client (and local cluster).

    Args:
        scheduler: Address of a running scheduler (``tcp://host:8786``).
        local_workers: Start a ``LocalCluster`` with this many worker processes instead.
    """
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - depends on the installed extras
        raise ConfigError(
            "Dask scale-out needs the optional extra: pip install 'ablation[dask]'"
        ) from None
    if (scheduler is None) == (local_workers is None):
        raise ConfigError("give exactly one of a scheduler address or a local worker count")
    _ship_file_modules_by_value()
    with _dask_logs_as_debug():
        cluster = None
        if local_workers is not None:
            if local_workers < 1:
                raise ConfigError("--dask-local needs at least one worker")
            settings = {"distributed.scheduler.worker-saturation": 1.0,
                        "distributed.scheduler.allowed-failures": 0}  # fmt: skip
            with dask.config.set(settings):
                cluster = LocalCluster(
                    n_workers=local_workers, threads_per_worker=1, processes=True,
                    dashboard_address=":0", silence_logs=logging.CRITICAL,  # the workers' own
                )
            _route_dask_logs()  # again: the cluster set the level of this process's loggers
            client = Client(cluster)
        else:
            client = Client(scheduler)
        try:
            executor = _ByValueExecutor(client.get_executor(pure=False), client)
            # Read when a worker is removed: never close a nanny, it restarts its dead worker.
            keep = {"distributed.deploy.lost-worker-timeout": "100000 days"}
            with dask.config.set(keep) if cluster is not None else contextlib.nullcontext():
                yield executor
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def _route_dask_logs() -> None:
    logger = logging.getLogger("distributed")
    logger.handlers[:] = [_ToDebug()]
    logger.propagate = False
    logger.setLevel(logging.DEBUG if _DASK_LOG.isEnabledFor(logging.DEBUG) else logging.CRITICAL + 1)


class _ToDebug(logging.Handler):
    """Re-emits a record of Dask's loggers as a DEBUG record of ``ablation.dask``."""

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            _DASK_LOG.debug("%s: %s: %s", record.name, record.levelname, record.getMessage())


_DASK_LOG = logging.getLogger("ablation.dask")


@contextlib.contextmanager
def _dask_logs_as_debug() -> Iterator[None]:
    """Within the block, Dask's ``distributed`` loggers write only through ``ablation.dask``."""
    logger = logging.getLogger("distributed")
    saved = (logger.handlers[:], logger.propagate, logger.level)
    _route_dask_logs()
    try:
        yield
    finally:
        logger.handlers[:], logger.propagate = saved[0], saved[1]
        logger.setLevel(saved[2])
