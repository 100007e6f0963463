"""Trial reads of the run store: streaming pages, results, light rows, keys and counts.

:class:`TrialReader` owns every read of the ``trials`` table. A campaign's streams go through
:meth:`TrialReader._pages`, keyset pagination on the primary key taking :data:`_PAGE` rows per
lock hold, so memory stays bounded and the consumer may append to the store while it iterates.
A trial's JSON may be large (an agent's trace of 10^4 long steps is tens of megabytes), so the
reads of one task's trials decode one trial per call (:meth:`TrialReader.task_runs`,
:meth:`TrialReader.trial`), as does the stream of the drill-downs' tasks
(:meth:`TrialReader.iter_task_trials`), and :meth:`TrialReader.trace_steps` reads a range of a
trace with SQLite's JSON functions: the rest of the trial never reaches Python.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

import pydantic_core

from ablation.schema import TaskResult, to_jsonable
from ablation.store.connection import StoreConnection
from ablation.store.format import ROW_COLUMNS, TrialRow, load_trial

__all__ = ["TrialReader"]

_PAGE = 2000  # rows per lock hold when streaming
#: Task ids bound per query by :meth:`TrialReader.results` (SQLite before 3.32 allows 999
#: parameters per statement; three more are bound beside them).
_IDS_PER_QUERY = 900
#: Steps :meth:`TrialReader.trace_steps` reads per ``json_extract`` call (one path argument each:
#: SQLite allows 127 arguments to a function unless built otherwise).
_PATHS_PER_CALL = 100
#: One trial of one campaign, by its primary key.
_ONE_TRIAL = "FROM trials WHERE campaign_id = ? AND task_id = ? AND arm = ? AND run = ?"


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
        where = self._trial_where(campaign_id)
        rows = self._rows_of_tasks(campaign_id, task_ids, "result_json", arm)
        rows.reverse()
        found = []
        while rows:  # each row's text is dropped once decoded: not every text beside every trial
            row = rows.pop()
            found.append(load_trial(campaign_id, row[-1], where(row)))
        return found

    def _rows_of_tasks(
        self, campaign_id: str, task_ids: Collection[str], column: str | None = None, arm: str | None = None
    ) -> list[tuple[Any, ...]]:
        """``(task_id, arm, run[, column])`` of the trials of ``task_ids`` (of ``arm`` when given),
        in ``(task_id, arm, run)`` order; ``task_ids`` given as one string means that single id.

        Ids are bound as parameters, :data:`_IDS_PER_QUERY` at a time: SQLite's json_each would
        cut an id at U+0000. Ids go in sorted order, and Python orders str by code point as
        SQLite's BINARY collation orders their UTF-8, so the chunks' rows, each chunk in
        (task_id, arm, run) order, are in that order together. An id with a lone surrogate cannot
        be bound (nor stored: the store escapes them), so it matches nothing.

        Raises:
            StoreError: for an unknown campaign.
        """
        ids = sorted(i for i in ({task_ids} if isinstance(task_ids, str) else set(task_ids)) if _bindable(i))
        rows: list[tuple[Any, ...]] = []
        selected = "task_id, arm, run" + (f", {column}" if column else "")
        with self._op(f"read the trials of campaign {campaign_id!r}") as conn:
            self._require(conn, campaign_id)
            for start in range(0, len(ids), _IDS_PER_QUERY):
                chunk = ids[start : start + _IDS_PER_QUERY]
                sql = (
                    f"SELECT {selected} FROM trials WHERE campaign_id = ? AND (? IS NULL OR arm = ?)"
                    f" AND task_id IN ({', '.join('?' * len(chunk))}) ORDER BY task_id, arm, run"
                )
                rows.extend(self._rows(conn, sql, (campaign_id, arm, arm, *chunk), self._trial_where(campaign_id)))
        return rows

    def iter_task_trials(
        self, campaign_id: str, task_ids: Collection[str], *, keep: Callable[[str, str, int], bool] | None = None
    ) -> Iterator[TaskResult]:
        """Stream the trials of ``task_ids`` in ``(task_id, arm, run)`` order, one row per read.

        The trials' keys are listed first (no trial is decoded), then each trial ``keep`` accepts
        (called once per stored trial, in that order; all without it) is read by its key and
        decoded on its own, so a consumer that keeps only
        what it needs of each holds one whole trial at a time, however long its trace. No lock
        is held between trials: the consumer may use the store meanwhile. A trial removed
        between the listing and its read is skipped.

        Raises:
            StoreError: for an unknown campaign, or a trial that cannot be read (naming it).
        """
        rows = self._rows_of_tasks(campaign_id, task_ids)
        keys = [(r[0], r[1], r[2]) for r in rows if keep is None or keep(r[0], r[1], r[2])]
        del rows
        for task_id, arm, run in keys:
            found = self.trial(campaign_id, task_id, arm, run)
            if found is not None:
                yield found
            del found  # not alive while the next trial is decoded

    def task_runs(self, campaign_id: str, task_id: str) -> list[tuple[str, int]]:
        """``(arm, run)`` of every stored trial of one task, in that order; no trial is decoded.

        Raises:
            StoreError: for an unknown campaign.
        """
        with self._op(f"read the trials of campaign {campaign_id!r}") as conn:
            self._require(conn, campaign_id)
            if not _bindable(task_id):
                return []
            sql = "SELECT task_id, arm, run FROM trials WHERE campaign_id = ? AND task_id = ? ORDER BY arm, run"
            rows = self._rows(conn, sql, (campaign_id, task_id), self._trial_where(campaign_id))
        return [(r[1], r[2]) for r in rows]

    def trial(self, campaign_id: str, task_id: str, arm: str, run: int) -> TaskResult | None:
        """One stored trial, decoded (``None`` when the campaign holds none of that task, arm and
        run). Only its row is read, so a caller that reads a task's trials one at a time, keeping
        what it shows of each, holds one whole trial at a time.

        Raises:
            StoreError: for an unknown campaign, or a trial that cannot be read (naming it).
        """
        with self._op(f"read the trials of campaign {campaign_id!r}") as conn:
            self._require(conn, campaign_id)
            if not (_bindable(task_id) and _bindable(arm)):
                return None
            sql = f"SELECT task_id, arm, run, result_json {_ONE_TRIAL}"
            rows = self._rows(conn, sql, (campaign_id, task_id, arm, run), self._trial_where(campaign_id))
        if not rows:
            return None
        row = rows.pop()
        return load_trial(campaign_id, row[-1], self._trial_named(campaign_id, *row[:3]))

    def _one_value(
        self, conn: sqlite3.Connection, expression: str, params: Sequence[Any], key: tuple[str, str, str, int]
    ) -> tuple[Any] | None:
        """``SELECT expression`` (taking ``params``) of the trial ``key`` (campaign, task, arm,
        run), or ``None`` without that trial; a text SQLite's JSON functions refuse is the
        error naming the trial."""
        try:
            return conn.execute(f"SELECT {expression} {_ONE_TRIAL}", (*params, *key)).fetchone()  # type: ignore[no-any-return]
        except sqlite3.OperationalError as exc:
            self._name_not_json(conn, exc, key[0], key[2])
            raise

    def trace_length(self, campaign_id: str, task_id: str, arm: str, run: int) -> int | None:
        """Steps of one trial's trace, counted by SQLite (``json_array_length``: the trial is not
        decoded); ``None`` when the campaign holds no such trial or its trace is not a list.

        Raises:
            StoreError: for an unknown campaign, or a trial whose stored text is not JSON.
        """
        key = (campaign_id, task_id, arm, run)
        with self._op(f"read the trials of campaign {campaign_id!r}") as conn:
            self._require(conn, campaign_id)
            if not (_bindable(task_id) and _bindable(arm)):
                return None
            # one JSON function a statement: SQLite copies the text for each one that parses it
            row = self._one_value(conn, "json_array_length(result_json, '$.trace')", (), key)
            if row is None or row[0] is None or row[0] > 0:
                return None if row is None or row[0] is None else int(row[0])
            row = self._one_value(conn, "json_type(result_json, '$.trace')", (), key)  # [] or null
            return 0 if row is not None and row[0] == "array" else None

    def trace_steps(self, campaign_id: str, task_id: str, arm: str, run: int, start: int, stop: int) -> list[Any]:
        """Steps ``start`` to ``stop - 1`` of one trial's trace, read by SQLite (``json_extract``
        of each step's path: the rest of the trial never reaches Python), each decoded as
        :class:`~ablation.schema.TaskResult` decodes its trace (pydantic's JSON parser, then
        :func:`~ablation.schema.to_jsonable`). Assumes ``stop`` is at most the trace's length
        (:meth:`trace_length`; a step past the end reads as ``None``); empty when the campaign
        holds no such trial.

        Raises:
            StoreError: for an unknown campaign, or a trial whose stored text is not JSON.
        """
        key = (campaign_id, task_id, arm, run)
        steps: list[Any] = []
        with self._op(f"read the trials of campaign {campaign_id!r}") as conn:
            self._require(conn, campaign_id)
            if not (_bindable(task_id) and _bindable(arm)):
                return steps
            for first in range(max(0, start), stop, _PATHS_PER_CALL):
                indices = range(first, min(stop, first + _PATHS_PER_CALL))
                # two paths at least: json_extract gives one path's value as SQL, not as JSON
                paths = [f"$.trace[{i}]" for i in indices] * (1 + (len(indices) == 1))
                row = self._one_value(conn, f"json_extract(result_json{', ?' * len(paths)})", paths, key)
                if row is None:
                    return []
                steps += to_jsonable(pydantic_core.from_json(row[0]))[: len(indices)]
        return steps

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
