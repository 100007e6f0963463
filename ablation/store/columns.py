"""Columnar reads of the run store: one arm's trials straight into :class:`TrialColumns`.

An arm's trials are read from its snapshot (:mod:`ablation.store.snapshot`): one blob of
columns, no per-trial Python object, used only while the rows are those it was written from.
Without a current snapshot (none written yet, rows added since, or an older store opened
read-only) the arm is read from its rows, and a writable store writes the snapshot: only the
columns a report needs are selected (ids, run, status, verdict, latency, cost,
attempts, error type, category, critical flag, tokens, and the quality and metrics dictionaries,
error stage and message through SQLite's ``json_extract`` - only for rows whose JSON may hold
them, see ``_SCALAR``: parsing every row's JSON was most of such a report's time; the distinct
currencies and sources of the costs from the rows with a cost, ``_UNITS``), page by page
with keyset pagination on the primary key, so no
:class:`~ablation.schema.TaskResult` is built and the Python objects of one page at a time are
alive besides the growing arrays.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any

import numpy as np

from ablation.columns import STATUS_CODES, TrialColumns, named_columns, share_ids
from ablation.errors import TooManyNames
from ablation.outputs import VALUE_LIMIT
from ablation.schema import RUN_LIMIT
from ablation.store import snapshot
from ablation.store.connection import StoreConnection
from ablation.store.format import SCHEMA_VERSION, TaskDigests, damaged

__all__ = ["ColumnReader"]

_log = logging.getLogger(__name__)
_COLUMN_PAGE = 50_000  # rows per lock hold for the columnar read
# The first "output": is the top-level key (the fields before it are escaped strings and
# numbers). When the output is not an object or array, an unescaped '"quality":{}' (etc.) can
# only be the top-level field itself - the other dictionaries hold numbers or strings - so a
# plain substring test proves the field empty without parsing the row's JSON. Any other row
# (an object output, another writer's spacing) is parsed by json_extract as before.
_OUTPUT = "instr(result_json, '\"output\":')"
_SCALAR = f"({_OUTPUT} > 0 AND substr(result_json, {_OUTPUT} + 9, 1) NOT IN ('{{', '['))"
_SELECT = (
    "SELECT task_id, run, status, passed, latency_s, cost, attempts, error_type, category,"
    f" critical, tokens, CASE WHEN error_type IS NULL AND {_SCALAR}"
    " AND instr(result_json, '\"quality\":{},\"quality_errors\":{}')"
    " AND instr(result_json, '\"metrics\":{}') AND instr(result_json, '\"error_stage\":null')"
    " THEN NULL ELSE json_extract(result_json, '$.quality', '$.quality_errors', '$.metrics',"
    " '$.error_stage', '$.error_message') END"
    " FROM trials WHERE campaign_id = ? AND arm = ? AND (task_id, run) > (?, ?)"
    " ORDER BY task_id, run LIMIT ?"
)
# The currency and source of the costs: parsed from the JSON of the rows with a cost only.
_UNITS = (
    "SELECT DISTINCT json_extract(result_json, '$.cost_currency'), json_extract(result_json,"
    " '$.cost_source') FROM trials WHERE campaign_id = ? AND arm = ? AND cost IS NOT NULL"
)


def _floats(values: tuple[Any, ...], name: str, *, negative: bool = False) -> np.ndarray:
    """A stored column of numbers, NaN where NULL; an infinity or a value past
    :data:`~ablation.outputs.VALUE_LIMIT` (SQLite keeps them; a :class:`~ablation.schema.TaskResult`
    never holds one) is refused, and unless ``negative`` a value below zero."""
    out = np.array(values, dtype=float)  # numpy reads None as NaN
    if (np.abs(out) >= VALUE_LIMIT).any() or (not negative and (out < 0).any()):
        raise ValueError(f"a {name} is past {VALUE_LIMIT:g}{'' if negative else ' or negative'}")
    return out


def _runs(values: tuple[Any, ...]) -> np.ndarray:
    out = np.array(values, dtype=np.int64)
    if out.size and (out.min() < 0 or out.max() >= RUN_LIMIT):
        raise ValueError("a run index is out of range")
    return out


def _named(parsed: dict[int, list[Any]], n: int) -> list[dict[str, np.ndarray]]:
    """Quality scores, quality error flags and metrics from the parsed JSON arrays by row
    (:func:`~ablation.columns.named_columns`: a name past its bound raises :class:`TooManyNames`)."""
    return [
        named_columns(((i, values[group]) for i, values in parsed.items()), n, kind, flags)
        for group, (kind, flags) in enumerate(zip(_KINDS, (False, True, False), strict=True))
    ]


#: What :func:`_named`'s groups hold, as :func:`~ablation.columns.named_columns` names them.
_KINDS = ("quality", "quality error", "metric")


def _errors(types: tuple[Any, ...], parsed: dict[int, list[Any]]) -> tuple[list[str], list[str]]:
    """Full error texts and stages from the error types and the parsed arrays by row."""
    n = len(types)
    error, stage = [""] * n, [""] * n
    for i, values in parsed.items():
        stage_i, message = values[3:]
        e = types[i]
        stage[i] = stage_i or ""
        error[i] = "" if e is None else (f"{e}: {message}" if message else e)
    return error, stage


def _shared_texts(values: Sequence[Any]) -> np.ndarray:
    """A column of few distinct texts with one object per distinct text (SQLite returns a new
    ``str`` for every row: a million category labels would be a million objects)."""
    seen: dict[Any, Any] = {}
    out = np.empty(len(values), dtype=object)
    out[:] = [seen.setdefault(v, v) for v in values]
    return out


def _campaign_tasks(conn: sqlite3.Connection, campaign_id: str, where: str) -> list[str]:
    """The ids of a campaign's tasks: the keys of its stored digests (decoded whole; ``where``:
    the store and campaign, for the error of digests that do not decode)."""
    sql = "SELECT task_digests_json FROM campaigns WHERE id = ?"
    rows = StoreConnection._rows(conn, sql, (campaign_id,), lambda _: where)
    return list(TaskDigests(rows[0][0], where))


def _fingerprints(conn: sqlite3.Connection, campaign_id: str) -> dict[str, tuple[int, int]]:
    """``arm -> (count, sum of rowids)`` of a campaign's trial rows, as the ``trial_counts``
    triggers keep them in the same transaction as every insert, delete or update of a row (an arm
    that is not UTF-8 text names no arm: its rows are then read, not a snapshot)."""
    sql = "SELECT arm, n, rowid_sum FROM trial_counts WHERE campaign_id = ?"
    rows = StoreConnection._rows(conn, sql, (campaign_id,))
    return {arm: (n, total) for arm, n, total in rows if n and isinstance(arm, str)}


def _read_snapshot(
    conn: sqlite3.Connection, rowid: int, arm: str, shared: dict[bytes, np.ndarray] | None, where: str
) -> TrialColumns | None:
    """An arm's snapshot, read whole by SQLite's incremental blob I/O (a SELECT of a blob of
    tens of megabytes reads its overflow pages several times slower); ``None`` when it cannot
    be decoded (a damaged file: the zip's CRC-32 or layout), said as a warning, so that the
    caller reads the rows, the store's source of truth (``where``: the store and campaign)."""
    with conn.blobopen("arm_snapshots", "data", rowid, readonly=True) as blob:
        data = blob.read()
    try:
        return snapshot.decode(data, arm, shared)
    except (ValueError, TypeError, KeyError, IndexError, OSError, EOFError, zipfile.BadZipFile) as exc:
        _log.warning("%s: the %s snapshot cannot be read (%s: %s); reading the trial rows instead",
                     where, arm, type(exc).__name__, " ".join(str(exc).split()))  # fmt: skip
        return None


class ColumnReader(StoreConnection):
    """The columnar trial read of :class:`~ablation.store.run_store.RunStore`."""

    def _where(self, campaign_id: str) -> str:
        return f"run store {self.path}: campaign {campaign_id!r}"

    def _reading(
        self, campaign_id: str, arm: str, held: sqlite3.Connection | None
    ) -> AbstractContextManager[sqlite3.Connection]:
        """One lock hold of a read of an arm's rows (``held``: a connection whose lock the caller
        holds), its errors naming the campaign and arm."""
        if held is not None:
            return nullcontext(held)
        return self._op(f"read the {arm} trials of campaign {campaign_id!r}")

    def _column_pages(
        self, campaign_id: str, arm: str, held: sqlite3.Connection | None = None
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Pages of an arm's rows, each read under its own lock hold (or on ``held``, a
        connection whose lock the caller holds)."""
        last: tuple[str, int] = ("", -1)
        with self._reading(campaign_id, arm, held) as conn:
            self._require(conn, campaign_id)

        def named(row: Sequence[Any]) -> str:
            return self._trial_named(campaign_id, row[0], arm, row[1])

        while True:
            with self._reading(campaign_id, arm, held) as conn:
                try:
                    rows = self._rows(conn, _SELECT, (campaign_id, arm, *last, _COLUMN_PAGE), named)
                except sqlite3.OperationalError as exc:
                    self._name_not_json(conn, exc, campaign_id, arm)
                    raise
            if rows:
                yield rows
            if len(rows) < _COLUMN_PAGE:
                return
            last = rows[-1][:2]

    def campaign_columns(self, campaign_id: str) -> tuple[TrialColumns, TrialColumns]:
        """Both arms' trials as columns (baseline, candidate), like :meth:`trial_columns`; when
        the arms hold the same ids in the same order, the candidate shares the baseline's id
        array (~70 MB per 1e6 trials otherwise).

        Raises:
            StoreError: for an unknown campaign.
        """
        shared: dict[bytes, np.ndarray] = {}
        baseline = self._arm_columns(campaign_id, "baseline", shared)
        candidate = self._arm_columns(campaign_id, "candidate", shared)
        return baseline, share_ids(baseline, candidate)

    def trial_columns(self, campaign_id: str, arm: str) -> TrialColumns:
        """One arm's trials of a campaign as columns, in ``(task_id, run)`` order.

        Read from the arm's snapshot (:mod:`ablation.store.snapshot`) when it is current (the
        rows' count and ``rowid`` sum are those it was written with); otherwise from the rows,
        and a writable store then writes the snapshot for the next read.

        Raises:
            StoreError: for an unknown campaign.
        """
        return self._arm_columns(campaign_id, arm, None)

    def _arm_columns(
        self, campaign_id: str, arm: str, shared: dict[bytes, np.ndarray] | None
    ) -> TrialColumns:
        """:meth:`trial_columns`, sharing decoded ids through ``shared`` (see ``decode``)."""
        with self._op(f"read the {arm} trials of campaign {campaign_id!r}") as conn:
            self._require(conn, campaign_id)
            found = self._current_snapshots(conn, campaign_id).get(arm)
            where = self._where(campaign_id)
            held = None if found is None else _read_snapshot(conn, found[0], arm, shared, where)
        if held is not None:
            return held
        if self.read_only:
            return self._row_columns(campaign_id, arm)
        return self._write_snapshot(campaign_id, arm, None)

    def write_snapshots(self, campaign_id: str) -> None:
        """Write the arm snapshots a campaign lacks (or holds stale), one arm at a time, with the
        campaign's task ids decoded once for both."""
        with self._op(f"read the snapshots of campaign {campaign_id!r}") as conn:
            self._require(conn, campaign_id)
            missing = [arm for arm in ("baseline", "candidate")
                       if arm not in self._current_snapshots(conn, campaign_id)]  # fmt: skip
        if missing and not self.read_only:
            tasks = self._task_ids(campaign_id)
            for arm in missing:
                self._write_snapshot(campaign_id, arm, tasks)

    def _task_ids(self, campaign_id: str) -> set[str]:
        """The ids of the campaign's tasks."""
        with self._op(f"read the tasks of campaign {campaign_id!r}") as conn:
            return set(_campaign_tasks(conn, campaign_id, self._where(campaign_id)))

    def _write_snapshot(self, campaign_id: str, arm: str, tasks: set[str] | None) -> TrialColumns:
        """Read an arm's columns from its rows and write them as its snapshot, in one
        transaction (``tasks``: the campaign's task ids, read here when ``None``)."""
        with self._op("write an arm snapshot", transaction=True) as conn:
            columns = self._row_columns(campaign_id, arm, conn)
            n, rowid_sum = _fingerprints(conn, campaign_id).get(arm, (0, 0))
            if tasks is None:
                tasks = set(_campaign_tasks(conn, campaign_id, self._where(campaign_id)))
            matched = len(tasks) == len(ids := set(columns.task_id.tolist())) and ids == tasks
            del ids
            conn.execute(
                "INSERT OR REPLACE INTO arm_snapshots (campaign_id, arm, n, rowid_sum, tasks_match,"
                " data) VALUES (?, ?, ?, ?, ?, ?)",
                (campaign_id, arm, n, rowid_sum, int(matched), snapshot.encode(columns)),
            )
        return columns

    def expected_ids(self, campaign_id: str) -> list[str] | None:
        """The ids a report of the campaign expects: its tasks, or ``None`` when both arms'
        current snapshots hold exactly its tasks (then expecting them changes nothing, and the
        stored digests, ~32 MB per million tasks, are not decoded).

        Raises:
            StoreError: for an unknown campaign.
        """
        with self._op(f"read the expected ids of campaign {campaign_id!r}") as conn:
            self._require(conn, campaign_id)
            found = self._current_snapshots(conn, campaign_id)
            if len(found) == 2 and all(matched for _, matched in found.values()):
                return None
            return _campaign_tasks(conn, campaign_id, self._where(campaign_id)) or None

    def _current_snapshots(
        self, conn: sqlite3.Connection, campaign_id: str
    ) -> dict[str, tuple[int, bool]]:
        """``arm -> (rowid, tasks match)`` of the campaign's snapshots whose rows are unchanged."""
        if self.schema_version < SCHEMA_VERSION:  # an older file opened read-only: no snapshots
            return {}
        sql = "SELECT arm, rowid, n, rowid_sum, tasks_match FROM arm_snapshots WHERE campaign_id = ?"
        stored = self._rows(conn, sql, (campaign_id,))  # an arm not UTF-8 text matches no arm
        if not stored:
            return {}
        rows = _fingerprints(conn, campaign_id)
        return {
            arm: (rowid, bool(matched))
            for arm, rowid, n, rowid_sum, matched in stored
            if isinstance(arm, str) and rows.get(arm, (0, 0)) == (n, rowid_sum)
        }

    def _row_columns(
        self, campaign_id: str, arm: str, held: sqlite3.Connection | None = None
    ) -> TrialColumns:
        """:meth:`trial_columns` read from the ``trials`` rows, page by page."""
        pages = self._column_pages(campaign_id, arm, held)
        try:
            parts = [self._checked_page(page, arm, self._where(campaign_id)) for page in pages]
            if not parts:
                return TrialColumns.verdicts(arm, np.zeros(0, dtype=object), np.zeros(0, dtype=bool))
            columns = snapshot.concat_columns(parts, arm)
        except TooManyNames as exc:  # an agent's doing: said with its campaign and arm
            raise TooManyNames(f"{self._where(campaign_id)}: the {arm} trials: {exc}") from None
        with self._reading(campaign_id, arm, held) as conn:
            where = f"{self._where(campaign_id)}: the cost currency of a {arm} trial"
            units = self._rows(conn, _UNITS, (campaign_id, arm), lambda _: where)
        return replace(columns, cost_units=frozenset(map(tuple, units)))

    @classmethod
    def _checked_page(cls, page: list[tuple[Any, ...]], arm: str, where: str) -> TrialColumns:
        """:meth:`_page_columns`; a page that cannot be decoded is a :class:`StoreError` naming
        its first row that cannot (decoded one by one only then)."""
        try:
            return cls._page_columns(page, arm)
        except (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError):
            for row in page:
                with damaged(f"{where}: the {arm} trial of task {row[0]!r} (run {row[1]!r})"):
                    cls._page_columns([row], arm)
            raise

    @staticmethod
    def _page_columns(page: list[tuple[Any, ...]], arm: str) -> TrialColumns:
        n = len(page)
        columns = list(zip(*page, strict=True))
        tid, run, status, passed, latency, cost, attempts, error_type, category, critical = (
            columns[:10]
        )
        tokens, extras = columns[10:]
        if not set(map(type, tid)) <= {str}:
            raise TypeError("a task id is not text")
        # rows whose JSON may hold quality, metrics or error details: [q, qe, m, stage, message]
        parsed = {i: json.loads(text) for i, text in enumerate(extras) if text is not None}
        quality, quality_errors, metrics = _named(parsed, n)
        error, stage = _errors(error_type, parsed)
        return TrialColumns(
            arm=arm,
            task_id=np.array(tid, dtype=object),
            run=_runs(run),
            passed=np.array(passed, dtype=bool),
            status=np.fromiter(map(STATUS_CODES.__getitem__, status), np.int8, n),
            latency_s=_floats(latency, "latency"),
            cost=_floats(cost, "cost", negative=True),
            tokens=_floats(tokens, "token count"),
            quality=quality,
            metrics=metrics,
            category=_shared_texts(category),
            critical=np.array(critical, dtype=bool),
            error_type=_shared_texts([e or "" for e in error_type]),
            attempts=np.array(attempts, dtype=np.int64),
            quality_errors=quality_errors,
            error=np.array(error, dtype=object),
            error_stage=_shared_texts(stage),
        )
