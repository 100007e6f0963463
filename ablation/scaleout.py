"""Scale-out: run sync agents on a Dask ``distributed`` cluster through its executor.

The engine accepts any :class:`concurrent.futures.Executor`; a Dask client's
``get_executor()`` is one, so trials run on the cluster's workers while results stream back to
the local event loop and into the local store. Needs the optional extra ``ablation[dask]``.
Async agents keep running on the local event loop (they are I/O bound by nature).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import Executor

from ablation.errors import ConfigError

__all__ = ["dask_executor"]


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
    cluster = None
    if local_workers is not None:
        if local_workers < 1:
            raise ConfigError("--dask-local needs at least one worker")
        cluster = LocalCluster(
            n_workers=local_workers, threads_per_worker=1, processes=True,
            dashboard_address=None, silence_logs=40,
        )
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        yield client.get_executor()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
