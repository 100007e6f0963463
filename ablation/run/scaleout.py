"""Scale-out: run sync agents on a Dask ``distributed`` cluster through its executor.

The engine accepts any :class:`concurrent.futures.Executor`; a Dask client's
``get_executor()`` is one, so trials run on the cluster's workers while results stream back to
the local event loop and into the local store. Needs the optional extra ``ablation[dask]``.
Async agents keep running on the local event loop (they are I/O bound by nature).

Every agent call is its own Dask task. A worker that dies (an agent calling ``os._exit``, a
segfault) is charged to the trial it was running, never to another one: the local cluster's
scheduler sends a worker one task at a time (``worker-saturation`` 1.0, so no innocent task waits
in a dying worker's queue) and marks the task that was running when its worker died as failed
at once (``allowed-failures`` 0); and a trial whose task failed with ``KilledWorker`` is
submitted once more as a new task, so a trial that only shared a worker with the culprit (on a
remote scheduler with other settings) runs again, while the culprit kills a worker again and
is recorded with that error. The scheduler's and the nannies' log records go through
:mod:`logging` as ``ablation.dask`` DEBUG records (shown with ``--verbose``), not to stderr.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from typing import Any

from ablation.errors import ConfigError
from ablation.sources.modules import FILE_MODULE_PREFIX

__all__ = ["dask_executor"]


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


#: Submissions of one trial when its task fails with ``KilledWorker`` (the first and one more).
_KILLED_WORKER_TRIES = 2


def _resubmitting(submit: Callable[[], Future[Any]], tries: int = _KILLED_WORKER_TRIES) -> Future[Any]:
    """A future of ``submit()``'s outcome that submits again when it fails with ``KilledWorker``."""
    outer: Future[Any] = Future()

    def settle(inner: Future[Any], left: int) -> None:
        if inner.cancelled():
            outer.cancel()
            return
        exc = inner.exception()
        if exc is not None and type(exc).__name__ == "KilledWorker" and left > 1:
            again = submit()
            again.add_done_callback(lambda f: settle(f, left - 1))
        elif exc is not None:
            outer.set_exception(exc)
        else:
            outer.set_result(inner.result())

    first = submit()
    first.add_done_callback(lambda f: settle(f, tries))
    return outer


def _run_pickled(blob: bytes, *args: Any) -> Any:
    """Worker side: rebuild the callable sent by value and call it."""
    import cloudpickle

    return cloudpickle.loads(blob)(*args)


class _ByValueExecutor(Executor):
    """Sends each callable to the workers by value (cloudpickle), then runs it there.

    Dask pickles with the standard pickler first, which sends a function by reference to its
    module; a module executed from a file exists only in this process, so the reference would not
    resolve on a worker. Pickling the callable ourselves, after registering those modules by
    value, ships their code. Blobs are cached per callable, so the cost is paid once per agent.
    """

    def __init__(self, inner: Executor) -> None:
        self._inner = inner
        self._blobs: dict[Any, bytes] = {}

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        import cloudpickle

        try:
            blob = self._blobs.get(fn)
        except TypeError:  # unhashable callable
            blob = None
        if blob is None:
            _ship_file_modules_by_value()  # also files loaded after the executor was made
            blob = cloudpickle.dumps(fn)
            with contextlib.suppress(TypeError):
                self._blobs[fn] = blob
        return _resubmitting(lambda: self._inner.submit(_run_pickled, blob, *args, **kwargs))

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._inner.shutdown(wait=wait)  # Dask's ClientExecutor takes no cancel_futures


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
            import dask

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
            # pure=False: a new key for every call, so a resubmission is a new task.
            yield _ByValueExecutor(client.get_executor(pure=False))
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
