"""Columnar reads of the run store: one arm's trials straight into :class:`TrialColumns`.

An arm's trials are read from its column blocks (:mod:`ablation.store.blocks`): a few rows of
packed columns, no per-trial Python object. A campaign stored before blocks existed, in a store
opened read-only since (a writable open writes the missing blocks), is read from its rows:
only the columns a report needs are selected (ids, run, status, verdict, latency, cost,
attempts, error type, category, critical flag, tokens, and the quality and metrics dictionaries,
error stage and message through SQLite's ``json_extract`` - only for rows whose JSON may hold
them, see ``_SCALAR``: parsing every row's JSON was most of such a report's time), page by page
with keyset pagination on the primary key, so no
:class:`~ablation.schema.TaskResult` is built and the Python objects of one page at a time are
alive besides the growing arrays.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

import numpy as np

from ablation.columns import STATUS_CODES, TrialColumns
from ablation.store.blocks import SharedIds, concat_columns, read_blocks, write_top_block
from ablation.store.connection import StoreConnection

__all__ = ["ColumnReader"]

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


def _floats(values: tuple[Any, ...]) -> np.ndarray:
    return np.array(values, dtype=float)  # numpy reads None as NaN


def _named(parsed: dict[int, list[Any]], n: int) -> list[dict[str, np.ndarray]]:
    """Quality scores, quality error flags and metrics from the parsed JSON arrays by row."""
    out: list[dict[str, np.ndarray]] = [{}, {}, {}]
    for i, values in parsed.items():
        for group, (named, flags) in enumerate(zip(values[:3], (False, True, False), strict=True)):
            for name, value in (named or {}).items():
                column = out[group].get(name)
                if column is None:
                    column = out[group][name] = np.zeros(n, bool) if flags else np.full(n, np.nan)
                column[i] = True if flags else value
    return out


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


class ColumnReader(StoreConnection):
    """The columnar trial read of :class:`~ablation.store.run_store.RunStore`."""

    def _column_pages(
        self, campaign_id: str, arm: str, held: sqlite3.Connection | None = None
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Pages of an arm's rows, each read under its own lock hold (or on ``held``, a
        connection whose lock the caller holds)."""
        last: tuple[str, int] = ("", -1)
        with self._op("read trial columns") if held is None else nullcontext(held) as conn:
            self._require(conn, campaign_id)
        while True:
            with self._op("read trial columns") if held is None else nullcontext(held) as conn:
                rows = conn.execute(_SELECT, (campaign_id, arm, *last, _COLUMN_PAGE)).fetchall()
            if rows:
                yield rows
            if len(rows) < _COLUMN_PAGE:
                return
            last = rows[-1][:2]

    def campaign_columns(self, campaign_id: str) -> tuple[TrialColumns, TrialColumns]:
        """Both arms' trials as columns (baseline, candidate), like :meth:`trial_columns`, with
        one set of id strings: blocks of the same tasks are decoded once, and when the arms
        hold the same ids in the same order the candidate shares the baseline's id array
        (~70 MB per 1e6 trials otherwise).

        Raises:
            StoreError: for an unknown campaign.
        """
        shared = SharedIds()
        baseline = self._arm_columns(campaign_id, "baseline", shared)
        candidate = self._arm_columns(campaign_id, "candidate", shared)
        if candidate.task_id is baseline.task_id:
            return baseline, candidate  # the same blocks of ids: one column already
        if len(baseline) == len(candidate) and bool(np.all(baseline.task_id == candidate.task_id)):
            candidate = dataclasses.replace(candidate, task_id=baseline.task_id)
        return baseline, candidate

    def trial_columns(self, campaign_id: str, arm: str) -> TrialColumns:
        """One arm's trials of a campaign as columns, in ``(task_id, run)`` order.

        Read from the campaign's column blocks (:mod:`ablation.store.blocks`), or from its rows
        when the blocks do not hold every stored trial (a campaign stored before blocks existed,
        in a store opened read-only since).

        Raises:
            StoreError: for an unknown campaign.
        """
        return self._arm_columns(campaign_id, arm, None)

    def _arm_columns(
        self, campaign_id: str, arm: str, shared: SharedIds | None
    ) -> TrialColumns:
        """:meth:`trial_columns`, sharing decoded ids through ``shared`` (see ``read_blocks``)."""
        held = None
        with self._op("read trial columns") as conn:
            self._require(conn, campaign_id)
            if self.schema_version >= 4:  # a version-3 file opened read-only has no blocks
                held = read_blocks(conn, campaign_id, arm, shared)
        return self._row_columns(campaign_id, arm) if held is None else held

    def _row_columns(
        self, campaign_id: str, arm: str, held: sqlite3.Connection | None = None
    ) -> TrialColumns:
        """:meth:`trial_columns` read from the ``trials`` rows, page by page."""
        pages = self._column_pages(campaign_id, arm, held)
        parts = [self._page_columns(page, arm) for page in pages]
        if not parts:
            return TrialColumns.verdicts(arm, np.zeros(0, dtype=object), np.zeros(0, dtype=bool))
        return concat_columns(parts, arm)

    def _backfill_blocks(self) -> None:
        """Write the column blocks of every campaign stored before blocks existed.

        Run when a writable open migrated a store from before blocks existed; each campaign is
        one transaction, so an interrupted backfill leaves the rest on the (slower) row reads.
        """
        with self._op("find campaigns without column blocks") as conn:
            pending = [row[0] for row in conn.execute("SELECT id FROM campaigns WHERE blocks = 0")]
        for campaign_id in pending:
            with self._op("write column blocks", transaction=True) as conn:
                conn.execute("DELETE FROM trial_blocks WHERE campaign_id = ?", (campaign_id,))
                for arm in ("baseline", "candidate"):
                    write_top_block(conn, campaign_id, self._row_columns(campaign_id, arm, conn))
                conn.execute("UPDATE campaigns SET blocks = 1 WHERE id = ?", (campaign_id,))

    @staticmethod
    def _page_columns(page: list[tuple[Any, ...]], arm: str) -> TrialColumns:
        n = len(page)
        columns = list(zip(*page, strict=True))
        tid, run, status, passed, latency, cost, attempts, error_type, category, critical = (
            columns[:10]
        )
        tokens, extras = columns[10:]
        # rows whose JSON may hold quality, metrics or error details: [q, qe, m, stage, message]
        parsed = {i: json.loads(text) for i, text in enumerate(extras) if text is not None}
        quality, quality_errors, metrics = _named(parsed, n)
        error, stage = _errors(error_type, parsed)
        return TrialColumns(
            arm=arm,
            task_id=np.array(tid, dtype=object),
            run=np.array(run, dtype=np.int64),
            passed=np.array(passed, dtype=bool),
            status=np.fromiter(map(STATUS_CODES.__getitem__, status), np.int8, n),
            latency_s=_floats(latency),
            cost=_floats(cost),
            tokens=_floats(tokens),
            quality=quality,
            metrics=metrics,
            category=np.array(category, dtype=object),
            critical=np.array(critical, dtype=bool),
            error_type=np.array([e or "" for e in error_type], dtype=object),
            attempts=np.array(attempts, dtype=np.int64),
            quality_errors=quality_errors,
            error=np.array(error, dtype=object),
            error_stage=np.array(stage, dtype=object),
        )
