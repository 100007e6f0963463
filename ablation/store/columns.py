"""Columnar reads of the run store: one arm's trials straight into :class:`TrialColumns`.

Only the columns a report needs are selected (ids, run, status, verdict, latency, cost,
attempts, error type, category, critical flag, tokens, and the quality and metrics dictionaries,
error stage and message through SQLite's ``json_extract``), page by page with keyset pagination on the primary key, so no
:class:`~ablation.schema.TaskResult` is built and the Python objects of one page at a time are
alive besides the growing arrays.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np

from ablation.columns import STATUS_CODES, TrialColumns
from ablation.store.connection import StoreConnection

__all__ = ["ColumnReader"]

_COLUMN_PAGE = 50_000  # rows per lock hold for the columnar read
_SELECT = (
    "SELECT task_id, run, status, passed, latency_s, cost, attempts, error_type, category,"
    " critical, json_extract(result_json, '$.quality'),"
    " json_extract(result_json, '$.quality_errors'),"
    " json_extract(result_json, '$.error_stage'), json_extract(result_json, '$.error_message'),"
    " tokens, json_extract(result_json, '$.metrics')"
    " FROM trials WHERE campaign_id = ? AND arm = ? AND (task_id, run) > (?, ?)"
    " ORDER BY task_id, run LIMIT ?"
)


def _floats(values: tuple[Any, ...]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _named(texts: tuple[Any, ...], n: int, flags: bool) -> dict[str, np.ndarray]:
    """Columns of the JSON dictionaries in ``texts`` (scores, or error flags when ``flags``)."""
    out: dict[str, np.ndarray] = {}
    for i, text in enumerate(texts):
        if text is None or text == "{}":
            continue
        for name, value in json.loads(text).items():
            if name not in out:
                out[name] = np.zeros(n, dtype=bool) if flags else np.full(n, np.nan)
            out[name][i] = True if flags else value
    return out


class ColumnReader(StoreConnection):
    """The columnar trial read of :class:`~ablation.store.run_store.RunStore`."""

    def _column_pages(self, campaign_id: str, arm: str) -> Iterator[list[tuple[Any, ...]]]:
        last: tuple[str, int] = ("", -1)
        with self._op("read trial columns") as conn:
            self._require(conn, campaign_id)
        while True:
            with self._op("read trial columns") as conn:
                rows = conn.execute(_SELECT, (campaign_id, arm, *last, _COLUMN_PAGE)).fetchall()
            if rows:
                yield rows
            if len(rows) < _COLUMN_PAGE:
                return
            last = rows[-1][:2]

    def trial_columns(self, campaign_id: str, arm: str) -> TrialColumns:
        """One arm's trials of a campaign as columns, in ``(task_id, run)`` order.

        Raises:
            StoreError: for an unknown campaign.
        """
        parts = [self._page_columns(page, arm) for page in self._column_pages(campaign_id, arm)]
        if not parts:
            return TrialColumns.verdicts(arm, np.zeros(0, dtype=object), np.zeros(0, dtype=bool))
        return _concat(parts, arm)

    @staticmethod
    def _page_columns(page: list[tuple[Any, ...]], arm: str) -> TrialColumns:
        n = len(page)
        tid, run, status, passed, latency, cost, attempts, error_type, category, critical, q, qe = (
            list(zip(*page, strict=True))[:12]
        )
        stage, message, tokens, metrics = list(zip(*page, strict=True))[12:]
        error = [
            "" if e is None else (f"{e}: {m}" if m else e)
            for e, m in zip(error_type, message, strict=True)
        ]
        codes = STATUS_CODES
        return TrialColumns(
            arm=arm,
            task_id=np.array(tid, dtype=object),
            run=np.array(run, dtype=np.int64),
            passed=np.array(passed, dtype=bool),
            status=np.array([codes[s] for s in status], dtype=np.int8),
            latency_s=_floats(latency),
            cost=_floats(cost),
            tokens=_floats(tokens),
            quality=_named(q, n, flags=False),
            metrics=_named(metrics, n, flags=False),
            category=np.array(category, dtype=object),
            critical=np.array(critical, dtype=bool),
            error_type=np.array([e or "" for e in error_type], dtype=object),
            attempts=np.array(attempts, dtype=np.int64),
            quality_errors=_named(qe, n, flags=True),
            error=np.array(error, dtype=object),
            error_stage=np.array([s or "" for s in stage], dtype=object),
        )


def _concat(parts: list[TrialColumns], arm: str) -> TrialColumns:
    """One :class:`TrialColumns` from the pages' (named columns missing in a page are absent)."""
    if len(parts) == 1:
        return parts[0]

    def cat(name: str) -> Any:
        return np.concatenate([getattr(p, name) for p in parts])

    def named(group: str, fill: Any, dtype: Any) -> dict[str, np.ndarray]:
        names = sorted({k for p in parts for k in getattr(p, group)})
        return {
            k: np.concatenate(
                [getattr(p, group).get(k, np.full(len(p), fill, dtype=dtype)) for p in parts]
            )
            for k in names
        }

    return TrialColumns(
        arm=arm,
        task_id=cat("task_id"),
        run=cat("run"),
        passed=cat("passed"),
        status=cat("status"),
        latency_s=cat("latency_s"),
        cost=cat("cost"),
        tokens=cat("tokens"),
        quality=named("quality", np.nan, float),
        metrics=named("metrics", np.nan, float),
        category=cat("category"),
        critical=cat("critical"),
        error_type=cat("error_type"),
        attempts=cat("attempts"),
        quality_errors=named("quality_errors", False, bool),
        error=cat("error"),
        error_stage=cat("error_stage"),
    )
