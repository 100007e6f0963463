"""The task table of one campaign: one row per task, filtered, searched, sorted and paged.

A row counts each arm's passes, runs and failed trials (errors and timeouts) of the task, the
candidate's apart too (a regression whose candidate trial failed is the report's
``errored_regressions``: an error, not a wrong answer); its
outcome comes from the report's own pairing and classification, without the report's statistics
(which cost a second at 10^5 tasks): a task is a regression or an improvement exactly when the
report lists it as one, and flaky when the report's flaky list names it. A task the pairing leaves
out as a whole (one arm only, no completed trial under ``on_error="exclude"``, not run after a
sequential stop, missing, unknown) is a row too, its outcome ``excluded`` and its reasons the
report's; its counts are of its stored trials. Nothing statistical is computed here. The table is
columns (numpy arrays in task-id order), so a filter is a boolean mask, a sort one stable
``argsort`` and a page a slice: at 10^5 tasks a page costs milliseconds once the table is built.

The search and the category filter also match what a page shows: an id or a category goes onto
a page through :func:`~ablation.render._format.printable` (a control character as ``\\xNN``), and
a browser shows a run of white space as one space, so text copied from a page (or a form's
escaped value sent back) finds its row, as the raw text does (:func:`shown`). A task page
reached with an id as shown opens that task when one id alone is shown so (:meth:`TaskTable.named`).

Assumptions: task ids are strings; the two arms' columns come from one campaign (or two campaigns
of one suite) as :class:`~ablation.columns.TrialColumns`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ablation.analysis.breakdowns import classify
from ablation.analysis.pair_arms import pair_columns
from ablation.analysis.pairing import PairedData, shown_categories
from ablation.analysis.sequential import counted_pairs
from ablation.columns import TrialColumns
from ablation.config import CampaignConfig
from ablation.render._format import printable

__all__ = [
    "DEFAULT_CATEGORY", "EXCLUDED", "FILTERS", "KEYED", "OUTCOMES", "SORTS", "Page", "TaskTable", "shown", "task_key",
    "task_query", "task_table",
]

#: Outcome labels, by code: the report's classification of a paired task, or left out.
OUTCOMES = ("regression", "improvement", "both pass", "both fail", "excluded")
#: The outcome code of a task the pairing left out.
EXCLUDED = 4
#: The category of a task no trial gives one: the report's name for it (the pairing's
#: ``c or "default"``, :func:`ablation.analysis.pair_arms.pair_columns`), for left-out tasks too
#: when the store keeps no suite category of theirs.
DEFAULT_CATEGORY = "default"
#: The ``show`` filter values.
FILTERS = ("all", "paired", "regressions", "improvements", "errors", "excluded", "flaky", "critical")
#: Sortable columns: ``sort`` value -> attribute of :class:`TaskTable`.
SORTS = {
    "id": "ids", "category": "category", "outcome": "outcome", "baseline": "base_rate",
    "candidate": "cand_rate", "errors": "errors", "latency_b": "base_latency",
    "latency_c": "cand_latency",
}  # fmt: skip


_SPACE = re.compile(r"\s+")
#: Characters of a task id a link carries; a longer id (a task id may hold a million) is named in
#: links by its :func:`task_key` and shown cut in lists, so no URL or list outgrows what a server
#: and a browser take (a URL of 300,000 characters is a 400).
KEYED = 1000


def task_key(task_id: str) -> str:
    """A long task id's name in links: the hex of a 128-bit BLAKE2b digest of its UTF-8."""
    return hashlib.blake2b(task_id.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def task_query(task_id: str) -> dict[str, str]:
    """The query parameter that names ``task_id`` in a link: ``id``, or ``key``
    (:func:`task_key`) for an id longer than :data:`KEYED` characters."""
    return {"id": task_id} if len(task_id) <= KEYED else {"key": task_key(task_id)}


def shown(text: str) -> str:
    """``text`` as a page shows it: escaped by :func:`~ablation.render._format.printable` (the
    viewer's escaping), each run of white space one space, as a browser renders it (and copies
    it). Shown text is shown the same way again, so a form's escaped value keeps its match."""
    return _SPACE.sub(" ", printable(text))


@dataclasses.dataclass(frozen=True)
class Page:
    """One page of the filtered, sorted table: row positions and counts (``total`` rows match,
    ``left_out`` of them tasks the pairing left out as a whole)."""

    rows: np.ndarray
    total: int
    page: int
    pages: int
    left_out: int = 0


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
    cand_errors: np.ndarray
    base_latency: np.ndarray
    cand_latency: np.ndarray
    outcome: np.ndarray
    flaky: np.ndarray
    categories: tuple[str, ...]
    reasons: np.ndarray

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

    @functools.cached_property
    def shown_ids(self) -> np.ndarray:
        """Each id as a page shows it (:func:`shown`), computed once per table."""
        return np.asarray([shown(i) for i in self.ids.tolist()], dtype=object)

    def find(self, task_id: str) -> int | None:
        """The row of ``task_id``, or ``None`` when the table has none."""
        i = int(np.searchsorted(self.ids, task_id))
        return i if i < len(self.ids) and self.ids[i] == task_id else None

    @functools.cached_property
    def keyed(self) -> dict[str, str]:
        """:func:`task_key` -> id of each id longer than :data:`KEYED`, computed once per table."""
        return {task_key(i): i for i in self.ids.tolist() if len(i) > KEYED}

    def named(self, text: str, key: str = "") -> str:
        """The task id ``text`` names: itself when the table holds it, else the one id a page
        shows as ``text`` (:func:`shown`), else ``text`` unchanged (several ids shown alike name
        none of them); with ``key`` (a link's :func:`task_query`), the long id of that key, else
        ``""``, which names no task."""
        if key:
            return self.keyed.get(key, "")
        if self.find(text) is not None:
            return text
        rows = np.flatnonzero(self.shown_ids == shown(text))
        return str(self.ids[rows[0]]) if len(rows) == 1 else text

    def select(
        self, *, show: str = "all", category: str = "", query: str = "", sort: str = "id",
        descending: bool = False, page: int = 1, size: int = 50,
    ) -> Page:  # fmt: skip
        """The rows of one page: filter (``show``, ``category``, the raw or the shown name),
        search (``query``: a case-insensitive substring of the id as a page shows it, which the
        raw id's substrings are too, the white space around it ignored; none: every id), sort (a :data:`SORTS` key) and page (from 1).

        Unknown ``show`` or ``sort`` values are treated as ``"all"`` and ``"id"``.
        """
        mask = self._mask(show)
        if category:
            named = [c for c in self.categories if c == category or shown(c) == shown(category)]
            mask &= np.isin(self.category, np.asarray(named or [category], dtype=object))
        needle = shown(query).strip().casefold()  # a copy from a page may bring white space around it
        if needle:
            found = np.fromiter((needle in i.casefold() for i in self.shown_ids), bool, len(self.ids))
            mask &= found
        rows = np.flatnonzero(mask)
        left_out = int(np.count_nonzero(self.outcome[rows] == EXCLUDED))
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
        return Page(rows[(page - 1) * size : page * size], len(rows), page, pages, left_out)

    def category_counts(self) -> list[tuple[str, int]]:
        """``(category, tasks)`` for every category, the most tasks first (ties by name)."""
        names, counts = np.unique(self.category[self.category != ""].astype(str), return_counts=True)
        order = np.argsort(-counts, kind="stable")  # names come sorted
        return [(str(names[i]), int(counts[i])) for i in order]

    def _mask(self, show: str) -> np.ndarray:
        if show == "paired":
            return self.outcome != EXCLUDED
        if show == "excluded":
            return self.outcome == EXCLUDED
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
            "errors": int(self.errors[i]), "candidate_errors": int(self.cand_errors[i]),
            "flaky": bool(self.flaky[i]),
            "latency": (_number(self.base_latency[i]), _number(self.cand_latency[i])),
            "reason": str(self.reasons[i]),
        }  # fmt: skip


def _number(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def _rate(passes: np.ndarray, runs: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(runs > 0, passes / np.maximum(runs, 1), np.nan)


def _rank(values: np.ndarray) -> np.ndarray:
    _, inverse = np.unique(values, return_inverse=True)
    return np.asarray(inverse, dtype=np.int64)


def _positions(
    cols: TrialColumns, ids: np.ndarray, among: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The trials of one arm (of the rows ``among``, else all) whose task is in ``ids``
    (sorted): their rows and the positions of their tasks in ``ids``."""
    rows = np.arange(len(cols.task_id)) if among is None else among
    if not len(ids) or not len(rows):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    tasks = cols.task_id[rows]
    where = np.searchsorted(ids, tasks)
    inside = where < len(ids)
    inside[inside] = ids[where[inside]] == tasks[inside]
    return rows[inside], where[inside]


def _failed(cols: TrialColumns, ids: np.ndarray) -> np.ndarray:
    """Errors and timeouts per task of ``ids`` (sorted) in one arm's trials."""
    _, where = _positions(cols, ids, np.flatnonzero(cols.status != 0))
    return np.bincount(where, minlength=len(ids)).astype(np.int64)


def _stored(cols: TrialColumns, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Passes, trials and mean latency of the completed trials, per task of ``ids`` (sorted)."""
    rows, where = _positions(cols, ids)
    done = cols.status[rows] == 0
    passes = np.bincount(where[done & cols.passed[rows]], minlength=len(ids))
    timed = done & np.isfinite(cols.latency_s[rows])
    total = np.bincount(where[timed], weights=cols.latency_s[rows][timed], minlength=len(ids))
    count = np.bincount(where[timed], minlength=len(ids))
    with np.errstate(invalid="ignore", divide="ignore"):
        latency = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return passes.astype(np.int64), np.bincount(where, minlength=len(ids)).astype(np.int64), latency


def _reasons(data: PairedData) -> dict[str, list[str]]:
    """The report's reasons per task left out as a whole (``run N: ...`` for one run's)."""
    whole = {e.task_id for e in data.excluded if e.run is None}
    out: dict[str, list[str]] = {tid: [] for tid in sorted(whole)}
    for e in data.excluded:
        if e.task_id in out:
            out[e.task_id].append(e.reason if e.run is None else f"run {e.run}: {e.reason}")
    return out


def _left_out(
    data: PairedData, baseline: TrialColumns, candidate: TrialColumns, kept: Mapping[str, str]
) -> dict[str, np.ndarray]:
    """The columns of the tasks the pairing left out as a whole, from their stored trials (a
    task no trial labels takes its category from ``kept``, the suite's, else the default)."""
    reasons = _reasons(data)
    ids = np.asarray(list(reasons), dtype=object)
    (bp, br, bl), (cp, cr, cl) = _stored(baseline, ids), _stored(candidate, ids)
    category = np.full(len(ids), "", dtype=object)
    critical = np.zeros(len(ids), bool)
    for cols in (baseline, candidate):  # the first label given, the baseline's first, as the pairing
        rows, where = _positions(cols, ids)
        if cols.critical is not None:
            np.logical_or.at(critical, where, cols.critical[rows])
        if cols.category is not None:
            for r, w in zip(rows.tolist(), where.tolist(), strict=True):
                category[w] = category[w] or cols.category[r] or ""
    for w in np.flatnonzero(category == "").tolist():
        category[w] = kept.get(ids[w]) or DEFAULT_CATEGORY
    category = np.asarray(shown_categories(category), dtype=object)  # as the pairing names them
    return {
        "ids": ids, "category": category, "critical": critical, "base_passes": bp,
        "base_runs": br, "cand_passes": cp, "cand_runs": cr, "base_latency": bl,
        "cand_latency": cl, "outcome": np.full(len(ids), EXCLUDED, np.int8),
        "flaky": np.zeros(len(ids), bool),
        "reasons": np.asarray(["; ".join(r) for r in reasons.values()] or [], dtype=object),
    }  # fmt: skip


def task_table(
    baseline: TrialColumns,
    candidate: TrialColumns,
    *,
    config: CampaignConfig,
    expected_ids: Iterable[str] | None = None,
    stored_categories: Mapping[str, str] | None = None,
) -> TaskTable:
    """The table of the campaign's tasks, paired and classified as the report does.

    ``stored_categories``: the suite category of tasks the store holds no trial of (a sequential
    stop's tasks never run, :meth:`~ablation.store.run_store.RunStore.task_categories`).

    The arms go through the report's own pairing (:func:`pair_columns`, and the sequential
    replay when ``config`` is sequential) and classification (:func:`classify`), so the
    regressions and improvements are the report's; flaky tasks have mixed outcomes inside an arm
    (the report's flaky list). Tasks the pairing leaves out as a whole (the report's
    ``excluded`` entries without a run) are rows with the outcome ``excluded`` and the report's
    reasons, so the errors filter and the search find them too.
    """
    data = pair_columns(baseline, candidate, expected_ids=expected_ids, on_error=config.on_error)
    data, _ = counted_pairs(data, config)  # as the report does
    both_pass, regression, improvement, _ = classify(data)
    n = len(data.task_ids)
    outcome = np.full(n, 3, np.int8)
    outcome[both_pass], outcome[regression], outcome[improvement] = 2, 0, 1
    b, c = data.baseline, data.candidate
    flaky = ((b.passes > 0) & (b.passes < b.runs)) | ((c.passes > 0) & (c.passes < c.runs))
    columns: dict[str, np.ndarray] = {
        "ids": np.asarray(data.task_ids, dtype=object),
        "category": np.asarray(data.categories, dtype=object),
        "critical": np.asarray(data.critical, bool),
        "base_passes": np.asarray(b.passes, np.int64), "base_runs": np.asarray(b.runs, np.int64),
        "cand_passes": np.asarray(c.passes, np.int64), "cand_runs": np.asarray(c.runs, np.int64),
        "base_latency": np.asarray(b.latency, float), "cand_latency": np.asarray(c.latency, float),
        "outcome": outcome, "flaky": np.asarray(flaky, bool),
        "reasons": np.full(n, "", dtype=object),
    }  # fmt: skip
    left = _left_out(data, baseline, candidate, stored_categories or {})
    if len(left["ids"]):
        joined = {k: np.concatenate([v, left[k]]) for k, v in columns.items()}
        order = np.argsort(joined["ids"], kind="stable")
        columns = {k: v[order] for k, v in joined.items()}
    ids = columns["ids"]
    cand_errors = _failed(candidate, ids)
    errors = _failed(baseline, ids) + cand_errors
    categories = tuple(sorted({c for c in columns["category"].tolist() if c}))
    return TaskTable(**columns, errors=errors, cand_errors=cand_errors, categories=categories)
