"""Trial writes of the run store: one trial per transaction, or many in one.

:class:`TrialWriter` owns the INSERTs into the ``trials`` table (each trial is written once, as
its row): :meth:`TrialWriter.append` (one committed transaction), :meth:`TrialWriter.append_many` (all or
nothing, in bounded chunks; the engine's path, through :class:`~ablation.run.sinks.StoreSink`)
and the error that names a duplicate trial or an unknown campaign when an INSERT breaks a
constraint.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterable

from ablation.errors import StoreError
from ablation.schema import TaskResult
from ablation.store.connection import StoreConnection
from ablation.store.format import CHUNK, INSERT_TRIAL, trial_params

__all__ = ["TrialWriter"]


class TrialWriter(StoreConnection):
    """The trial writes of :class:`~ablation.store.run_store.RunStore`."""

    def _integrity_error(
        self, conn: sqlite3.Connection, exc: sqlite3.IntegrityError, campaign_id: str, r: TaskResult
    ) -> StoreError:
        if "FOREIGN KEY" in str(exc).upper():
            return self._unknown(conn, campaign_id)
        return StoreError(
            f"duplicate trial in campaign {campaign_id!r}: (task_id={r.task_id!r}, "
            f"arm={r.arm!r}, run={r.run}) is already stored"
        )

    def append(self, campaign_id: str, result: TaskResult) -> None:
        """Store one trial as its own committed transaction.

        Raises:
            StoreError: if the campaign is unknown, or ``(task_id, arm, run)`` is already stored
                for it (naming the key); nothing is written then.
        """
        params = trial_params(campaign_id, result)
        with self._op("append a trial", transaction=True) as conn:
            try:
                conn.execute(INSERT_TRIAL, params)
            except sqlite3.IntegrityError as exc:
                raise self._integrity_error(conn, exc, campaign_id, result) from None

    def append_many(self, campaign_id: str, results: Iterable[TaskResult]) -> int:
        """Store several trials in one transaction (all or nothing); return how many.

        ``results`` is consumed while the store is locked: it must not use this store.

        Raises:
            StoreError: as :meth:`append`; on any error nothing of this call is kept.
        """
        n = 0
        rows = iter(results)
        with self._op("append trials", transaction=True) as conn:
            self._require(conn, campaign_id)
            while chunk := list(itertools.islice(rows, CHUNK)):  # bounded memory for big imports
                conn.execute("SAVEPOINT chunk")
                try:
                    conn.executemany(INSERT_TRIAL, [trial_params(campaign_id, r) for r in chunk])
                except sqlite3.IntegrityError:
                    # Replay row by row to name the offending trial; the whole call rolls back.
                    conn.execute("ROLLBACK TO SAVEPOINT chunk")
                    for result in chunk:
                        try:
                            conn.execute(INSERT_TRIAL, trial_params(campaign_id, result))
                        except sqlite3.IntegrityError as exc:
                            raise self._integrity_error(conn, exc, campaign_id, result) from None
                    raise
                conn.execute("RELEASE SAVEPOINT chunk")
                n += len(chunk)
        return n
