"""Trial reads of the run store: streaming pages, results, light rows, keys and counts.

:class:`TrialReader` owns every read of the ``trials`` table. Streams go through
:meth:`TrialReader._pages`, keyset pagination on the primary key taking :data:`_PAGE` rows per
lock hold, so memory stays bounded and the consumer may append to the store while it iterates.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

from ablation.schema import TaskResult
from ablation.store.connection import StoreConnection
from ablation.store.format import ROW_COLUMNS, TrialRow, load_trial

__all__ = ["TrialReader"]

_PAGE = 2000  # rows per lock hold when streaming
#: Task ids bound per query by :meth:`TrialReader.results` (SQLite before 3.32 allows 999
#: parameters per statement; three more are bound beside them).
_IDS_PER_QUERY = 900


def _bindable(task_id: str) -> bool:
    """Whether ``task_id`` can be bound as SQLite text (UTF-8: no lone surrogate)."""
    try:
        task_id.encode()
    except UnicodeEncodeError:
        return False
    return True


class TrialReader(StoreConnection):
    """The trial reads of :class:`~ablation.store.run_store.RunStore`."""

    def _trial_where(self, campaign_id: str) -> Callable[[Sequence[Any]], str]:
        """What names a row ``(task_id, arm, run, ...)`` of the campaign in a store error."""
        return lambda row: self._trial_named(campaign_id, row[0], row[1], row[2])

    def _pages(
        self, columns: str, campaign_id: str, arm: str | None = None
    ) -> Iterator[list[tuple[Any, ...]]]:
        """A campaign's rows in ``(task_id, arm, run)`` order, one page per lock hold.

        Keyset pagination on the primary key: no statement stays open between pages, so memory
        is bounded and the consumer may append to the store while iterating.
        """
        arm_sql, head = (
            ("", (campaign_id,)) if arm is None else (" AND arm = ?", (campaign_id, arm))
        )
        sql = (
            f"SELECT task_id, arm, run, {columns} FROM trials WHERE campaign_id = ?{arm_sql}"
            " AND (task_id, arm, run) > (?, ?, ?) ORDER BY task_id, arm, run LIMIT ?"
        )
        last: tuple[Any, ...] = ("", "", -1)
        with self._op(f"read the trials of campaign {campaign_id!r}") as conn:
            self._require(conn, campaign_id)
        where = self._trial_where(campaign_id)
        while True:
            with self._op(f"read the trials of campaign {campaign_id!r}") as conn:
                try:
                    rows = self._rows(conn, sql, (*head, *last, _PAGE), where)
                except sqlite3.OperationalError as exc:
                    self._name_not_json(conn, exc, campaign_id, arm)
                    raise
            if rows:
                yield rows
            if len(rows) < _PAGE:
                return
            last = rows[-1][:3]

    def iter_results(self, campaign_id: str, *, arm: str | None = None) -> Iterator[TaskResult]:
        """Stream a campaign's trials (optionally one arm) in ``(task_id, arm, run)`` order.

        Memory stays bounded by one page of rows, whatever the campaign's size.
        """
        where = self._trial_where(campaign_id)
        for page in self._pages("result_json", campaign_id, arm):
            for row in page:
                yield load_trial(campaign_id, row[-1], where(row))

    def results(
        self,
        campaign_id: str,
        *,
        arm: str | None = None,
        task_ids: Collection[str] | None = None,
    ) -> list[TaskResult]:
        """A campaign's trials in ``(task_id, arm, run)`` order, optionally filtered.

        ``task_ids`` given as one string means that single id.

        Raises:
            StoreError: for an unknown campaign.
        """
        if task_ids is None:
            return list(self.iter_results(campaign_id, arm=arm))
        # Ids are bound as parameters, :data:`_IDS_PER_QUERY` at a time: SQLite's json_each
        # would cut an id at U+0000. Ids go in sorted order, and Python orders str by code point
        # as SQLite's BINARY collation orders their UTF-8, so the chunks' rows, each chunk in
        # (task_id, arm, run) order, are in that order together. An id with a lone surrogate
        # cannot be bound (nor stored: the store escapes them), so it matches nothing.
        ids = [i for i in ({task_ids} if isinstance(task_ids, str) else set(task_ids))
               if _bindable(i)]  # fmt: skip
        ids.sort()
        rows: list[tuple[Any, ...]] = []
        where = self._trial_where(campaign_id)
        with self._op(f"read the trials of campaign {campaign_id!r}") as conn:
            self._require(conn, campaign_id)
            for start in range(0, len(ids), _IDS_PER_QUERY):
                chunk = ids[start : start + _IDS_PER_QUERY]
                sql = (
                    "SELECT task_id, arm, run, result_json FROM trials WHERE campaign_id = ?"
                    " AND (? IS NULL OR arm = ?)"
                    f" AND task_id IN ({', '.join('?' * len(chunk))}) ORDER BY task_id, arm, run"
                )
                params = (campaign_id, arm, arm, *chunk)
                rows.extend(self._rows(conn, sql, params, where))
        return [load_trial(campaign_id, r[-1], where(r)) for r in rows]

    def trial_rows(self, campaign_id: str) -> Iterator[TrialRow]:
        """Stream light :class:`TrialRow` tuples in ``(task_id, arm, run)`` order.

        Only the quality and metrics dictionaries are taken from ``result_json`` (by SQLite's
        ``json_extract``), so no :class:`TaskResult` is built and memory stays bounded.
        """
        loads = json.loads
        for page in self._pages(ROW_COLUMNS, campaign_id):
            for r in page:
                yield TrialRow(
                    r[0], r[1], r[2], r[3], bool(r[4]), r[5], r[6], r[7], r[8], r[9],
                    {} if r[10] in (None, "{}") else loads(r[10]),
                    {} if r[11] in (None, "{}") else loads(r[11]),
                    r[12], bool(r[13]), r[14], r[15], r[16],
                    None if r[17] in (None, "{}") else loads(r[17]),
                )  # fmt: skip

    def completed_keys(self, campaign_id: str) -> set[tuple[str, str, int]]:
        """``(task_id, arm, run)`` of every stored trial of a campaign: what a resume skips.

        Raises:
            StoreError: for an unknown campaign.
        """
        with self._op(f"read the trial keys of campaign {campaign_id!r}") as conn:
            self._require(conn, campaign_id)
            sql = "SELECT task_id, arm, run FROM trials WHERE campaign_id = ?"
            return set(self._rows(conn, sql, (campaign_id,), self._trial_where(campaign_id)))

    def count(self, campaign_id: str, *, arm: str | None = None) -> int:
        """Number of stored trials of a campaign (optionally of one arm).

        Raises:
            StoreError: for an unknown campaign.
        """
        with self._op("count trials") as conn:
            self._require(conn, campaign_id)
            sql = "SELECT COUNT(*) FROM trials WHERE campaign_id = ? AND (? IS NULL OR arm = ?)"
            return int(conn.execute(sql, (campaign_id, arm, arm)).fetchone()[0])
