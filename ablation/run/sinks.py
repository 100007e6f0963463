"""Result sinks for the engine: where each finished trial goes the moment it is done.

:class:`StoreSink` hands trials to a writer thread that commits them to a
:class:`~ablation.store.run_store.RunStore`, so SQLite's work runs beside the agents.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

from ablation.schema import TaskResult
from ablation.store.run_store import RunStore

__all__ = ["StoreSink"]


class StoreSink:
    """Store sink: a writer thread commits finished trials as soon as it gets them.

    The event loop only hands each finished trial over (a queue put), so SQLite's work runs
    beside the agents instead of between them; the writer commits whatever has arrived in one
    transaction (one trial when the campaign is slow, a few when it is fast). A crash loses at
    most the trials handed over but not yet committed - microseconds of work, which a resume
    runs again exactly like trials still in flight; nothing is ever stored twice. A store error
    is raised from the next call or from :meth:`close`, never lost. When the store falls behind,
    at most ``max_pending`` trials wait for it: the next hand-over blocks until the writer
    catches up (back-pressure), so memory stays bounded however fast the agents are.

    Args:
        store: The run store.
        campaign_id: The campaign the trials belong to.
        max_batch: Most trials in one transaction.
        linger_s: How long the writer waits after the first trial of a batch for others to join
            it (a trial is committed at most this long after it finished, plus the write).
        max_pending: Most trials handed over and not yet taken by the writer.
    """

    _STOP = object()

    def __init__(
        self, store: RunStore, campaign_id: str, *, max_batch: int = 1000, linger_s: float = 0.002,
        max_pending: int = 2000,
    ) -> None:
        self._store = store
        self._linger_s = linger_s
        self._campaign_id = campaign_id
        self._max_batch = max_batch
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max_pending)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._write, name="ablation-store", daemon=True)
        self._thread.start()

    def __call__(self, result: TaskResult) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(result)

    def _write(self) -> None:
        stop = False
        while not stop:
            batch = [self._queue.get()]
            # Linger a moment so a fast campaign's trials share a commit: fewer wake-ups of this
            # thread, less contention with the agents for the interpreter lock.
            time.sleep(self._linger_s)
            while len(batch) < self._max_batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if batch[-1] is self._STOP:
                stop = True
                batch.pop()
            if batch and self._error is None:
                try:
                    self._store.append_many(self._campaign_id, batch)
                except BaseException as exc:  # raised again by __call__ or close()
                    self._error = exc

    def close(self) -> None:
        """Commit everything handed over, stop the writer, raise a store error met on the way."""
        if self._thread.is_alive():
            self._queue.put(self._STOP)
            self._thread.join()
        if self._error is not None:
            raise self._error
