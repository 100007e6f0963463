"""The task table of one campaign: one row per task, filtered, searched, sorted and paged.

A row counts each arm's passes, runs and failed trials (errors and timeouts) of the task and takes
its outcome from the campaign's report: a task is a regression or an improvement exactly when the
report lists it as one, and flaky when the report's flaky list names it. Nothing statistical is
computed here. The table is columns (numpy arrays in task-id order), so a filter is a boolean
mask, a sort one stable ``argsort`` and a page a slice: at 10^5 tasks a page costs milliseconds
once the table is built.

Assumptions: task ids are strings; the two arms' columns come from one campaign (or two campaigns
of one suite) as :class:`~ablation.columns.TrialColumns`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from ablation.columns import TrialColumns
from ablation.report import AblationReport

__all__ = ["FILTERS", "OUTCOMES", "SORTS", "Page", "TaskTable", "task_table"]

#: Outcome labels, by code.
OUTCOMES = ("regression", "improvement", "both pass", "both fail", "mixed", "one arm only")
#: The ``show`` filter values.
FILTERS = ("all", "regressions", "improvements", "errors", "flaky", "critical")
#: Sortable columns: ``sort`` value -> attribute of :class:`TaskTable`.
SORTS = {
    "id": "ids", "category": "category", "outcome": "outcome", "baseline": "base_rate",
    "candidate": "cand_rate", "errors": "errors", "latency_b": "base_latency",
    "latency_c": "cand_latency",
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Page:
    """One page of the filtered, sorted table: row positions and counts."""

    rows: np.ndarray
    total: int
    page: int
    pages: int


@dataclasses.dataclass(frozen=True)
class TaskTable:
    """Per-task columns of a campaign, aligned with ``ids`` (sorted task ids)."""

    ids: np.ndarray
    category: np.ndarray
    critical: np.ndarray
    base_passes: np.ndarray
    base_runs: np.ndarray
    cand_passes: np.ndarray
    cand_runs: np.ndarray
    errors: np.ndarray
    base_latency: np.ndarray
    cand_latency: np.ndarray
    outcome: np.ndarray
    flaky: np.ndarray
    categories: tuple[str, ...]

    @property
    def base_rate(self) -> np.ndarray:
        """Baseline pass fraction per task (NaN without runs)."""
        return _rate(self.base_passes, self.base_runs)

    @property
    def cand_rate(self) -> np.ndarray:
        """Candidate pass fraction per task (NaN without runs)."""
        return _rate(self.cand_passes, self.cand_runs)

    def __len__(self) -> int:
        return len(self.ids)

    def select(
        self, *, show: str = "all", category: str = "", query: str = "", sort: str = "id",
        descending: bool = False, page: int = 1, size: int = 50,
    ) -> Page:  # fmt: skip
        """The rows of one page: filter (``show``, ``category``), search (``query``: a
        case-insensitive substring of the id), sort (a :data:`SORTS` key) and page (from 1).

        Unknown ``show`` or ``sort`` values are treated as ``"all"`` and ``"id"``.
        """
        mask = self._mask(show)
        if category:
            mask &= self.category == category
        if query:
            needle = query.casefold()
            found = np.fromiter((needle in i.casefold() for i in self.ids), bool, len(self.ids))
            mask &= found
        rows = np.flatnonzero(mask)
        if sort in SORTS and sort != "id":
            values = getattr(self, SORTS[sort])[rows]
            if values.dtype.kind == "f":  # NaN last in either direction
                values = np.where(np.isnan(values), -np.inf if descending else np.inf, values)
            rank = _rank(values)
            rows = rows[np.lexsort((rows, -rank if descending else rank))]  # ties in id order
        elif descending:
            rows = rows[::-1]
        size = max(1, min(size, 500))
        pages = max(1, -(-len(rows) // size))
        page = min(max(1, page), pages)
        return Page(rows[(page - 1) * size : page * size], len(rows), page, pages)

    def _mask(self, show: str) -> np.ndarray:
        if show == "regressions":
            return self.outcome == 0
        if show == "improvements":
            return self.outcome == 1
        if show == "errors":
            return self.errors > 0
        if show == "flaky":
            return self.flaky.copy()
        if show == "critical":
            return self.critical.copy()
        return np.ones(len(self.ids), bool)

    def row(self, i: int) -> dict[str, Any]:
        """Row ``i`` as plain values."""
        return {
            "task_id": str(self.ids[i]), "category": str(self.category[i]),
            "critical": bool(self.critical[i]), "outcome": OUTCOMES[int(self.outcome[i])],
            "baseline": (int(self.base_passes[i]), int(self.base_runs[i])),
            "candidate": (int(self.cand_passes[i]), int(self.cand_runs[i])),
            "errors": int(self.errors[i]), "flaky": bool(self.flaky[i]),
            "latency": (_number(self.base_latency[i]), _number(self.cand_latency[i])),
        }  # fmt: skip


def _number(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def _rate(passes: np.ndarray, runs: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(runs > 0, passes / np.maximum(runs, 1), np.nan)


def _rank(values: np.ndarray) -> np.ndarray:
    _, inverse = np.unique(values, return_inverse=True)
    return np.asarray(inverse, dtype=np.int64)


def _per_task(
    cols: TrialColumns, index: dict[str, int], n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Passes, runs, failed trials and mean completed latency per task of one arm."""
    codes = np.fromiter((index[t] for t in cols.task_id), np.int64, len(cols))
    passes = np.bincount(codes, weights=cols.passed, minlength=n).astype(np.int64)
    runs = np.bincount(codes, minlength=n).astype(np.int64)
    failed = np.bincount(codes, weights=cols.status != 0, minlength=n).astype(np.int64)
    done = (cols.status == 0) & ~np.isnan(cols.latency_s)
    total = np.bincount(codes[done], weights=cols.latency_s[done], minlength=n)
    count = np.bincount(codes[done], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        latency = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return passes, runs, failed, latency


def _labels(
    ids: Sequence[str], index: dict[str, int], arms: Sequence[TrialColumns]
) -> tuple[np.ndarray, np.ndarray]:
    """Category (``"default"`` when none) and critical flag per task, from either arm."""
    category = np.full(len(ids), "default", dtype=object)
    critical = np.zeros(len(ids), bool)
    for cols in arms:
        codes = np.fromiter((index[t] for t in cols.task_id), np.int64, len(cols))
        if cols.category is not None:
            known = np.fromiter((c is not None for c in cols.category), bool, len(cols))
            category[codes[known]] = cols.category[known]
        if cols.critical is not None:
            critical[codes[cols.critical]] = True
    return category, critical


def task_table(
    baseline: TrialColumns, candidate: TrialColumns, report: AblationReport
) -> TaskTable:
    """Build the table of every task either arm has trials of, outcomes from ``report``."""
    ids = sorted(set(baseline.task_id.tolist()) | set(candidate.task_id.tolist()))
    index = {t: i for i, t in enumerate(ids)}
    n = len(ids)
    bp, br, bf, bl = _per_task(baseline, index, n)
    cp, cr, cf, cl = _per_task(candidate, index, n)
    category, critical = _labels(ids, index, (baseline, candidate))
    outcome = np.full(n, 4, np.int8)
    outcome[(bp == br) & (cp == cr)] = 2
    outcome[(bp == 0) & (cp == 0)] = 3
    outcome[(br == 0) | (cr == 0)] = 5
    for code, listed in ((0, report.regressions), (1, report.improvements)):
        where = [index[t] for t in listed if t in index]
        outcome[where] = code
    flaky = np.zeros(n, bool)
    flaky[[index[f.task_id] for f in report.flaky if f.task_id in index]] = True
    return TaskTable(
        ids=np.array(ids, dtype=object), category=category, critical=critical,
        base_passes=bp, base_runs=br, cand_passes=cp, cand_runs=cr, errors=bf + cf,
        base_latency=bl, cand_latency=cl, outcome=outcome, flaky=flaky,
        categories=tuple(sorted(set(category.tolist()))),
    )  # fmt: skip
