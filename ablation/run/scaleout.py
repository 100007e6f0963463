"""Scale-out: run sync agents on a Dask ``distributed`` cluster through its executor.

The engine accepts any :class:`concurrent.futures.Executor`; a Dask client's
``get_executor()`` is one, so trials run on the cluster's workers while results stream back to
the local event loop and into the local store. Needs the optional extra ``ablation[dask]``.
Async agents keep running on the local event loop (they are I/O bound by nature).
"""

from __future__ import annotations

import contextlib
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
        return self._inner.submit(_run_pickled, blob, *args, **kwargs)

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
    cluster = None
    if local_workers is not None:
        if local_workers < 1:
            raise ConfigError("--dask-local needs at least one worker")
        cluster = LocalCluster(
            n_workers=local_workers, threads_per_worker=1, processes=True,
            dashboard_address=":0", silence_logs=40,
        )
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        yield _ByValueExecutor(client.get_executor())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
