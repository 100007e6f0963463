"""The tasks a campaign's drill-downs show: their input and expected output, kept in the store.

A stored campaign does not keep its suite, so ``ablation report`` could not show what a
regressed task asked and expected. When a campaign's report is built, the input and expected
output of every task its drill-downs show are written to the ``task_details`` table (plain JSON,
at most the report's drill-downs: a thousand tasks); a later report of the campaign reads them
back. The table is created by :data:`~ablation.store.format.DDL` on every writable open (no
schema version change: an older ``ablation`` ignores the table); a store opened read-only that
predates it has none, and its reports show no inputs.

The category of a task is stored with its trials; a task with no stored trial (one a sequential
campaign never ran once it had decided) has its suite category kept in the ``task_categories``
table when the campaign's report is built, the same way (created on a writable open; none in an
older store), so the viewer lists it under its own category.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from ablation.errors import StoreError
from ablation.schema import to_jsonable
from ablation.store.connection import StoreConnection

__all__ = ["TaskDetailStore"]

_log = logging.getLogger(__name__)


class TaskDetailStore(StoreConnection):
    """The ``task_details`` reads and writes of :class:`~ablation.store.run_store.RunStore`."""

    def save_task_details(self, campaign_id: str, details: Mapping[str, tuple[Any, Any]]) -> None:
        """Keep ``task_id -> (input, expected output)`` for the campaign (replacing older rows)."""
        if self.read_only or not details:
            return
        rows = [
            (campaign_id, tid, json.dumps(to_jsonable(inp)), json.dumps(to_jsonable(expected)))
            for tid, (inp, expected) in details.items()
        ]
        with self._op("write task details", transaction=True) as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO task_details (campaign_id, task_id, input_json,"
                " expected_json) VALUES (?, ?, ?, ?)",
                rows,
            )

    def save_task_categories(self, campaign_id: str, categories: Mapping[str, str]) -> None:
        """Keep ``task_id -> category`` for the campaign (replacing older rows)."""
        if self.read_only or not categories:
            return
        with self._op("write task categories", transaction=True) as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO task_categories (campaign_id, task_id, category)"
                " VALUES (?, ?, ?)",
                [(campaign_id, tid, category) for tid, category in categories.items()],
            )

    def task_categories(self, campaign_id: str) -> dict[str, str]:
        """``task_id -> category`` kept for the campaign (empty when none, or when the store
        predates the table; a row that is not text is left out: the categories are only shown,
        so neither is an error)."""
        sql = "SELECT task_id, category FROM task_categories WHERE campaign_id = ?"
        try:
            with self._op("read task categories") as conn:
                rows = self._rows(conn, sql, (campaign_id,))
        except StoreError as exc:
            if "no such table" not in str(exc):
                _log.warning("run store %s: campaign %r: its tasks' categories are not shown (%s)",
                             self.path, campaign_id, exc)  # fmt: skip
            return {}
        return {tid: c for tid, c in rows if isinstance(tid, str) and isinstance(c, str)}  # not damaged

    def task_details(self, campaign_id: str) -> dict[str, tuple[Any, Any]]:
        """``task_id -> (input, expected output)`` kept for the campaign (empty when none).

        The rows are only shown beside a report, so one that does not read (not JSON or not
        UTF-8: a damaged store) is a warning naming it, and its task shows no input; a table
        that cannot be read at all is one warning, and no task shows one.
        """
        sql = "SELECT task_id, input_json, expected_json FROM task_details WHERE campaign_id = ?"
        where = f"run store {self.path}: campaign {campaign_id!r}"
        try:
            with self._op("read task details") as conn:
                rows = self._rows(conn, sql, (campaign_id,))
        except StoreError as exc:
            if "no such table" not in str(exc):  # else a read-only store older than the table
                _log.warning("%s: its tasks' inputs are not shown (%s)", where, exc)
            return {}
        details = {}
        for tid, inp, exp in rows:
            try:
                details[str(tid)] = (json.loads(inp), json.loads(exp))
            except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError
                _log.warning("%s: the input of task %r cannot be read (%s); it is not shown",
                             where, tid, " ".join(str(exc).split()[:20]))  # fmt: skip
        return details
