"""The run store's column blocks: each arm's trials as columns, the form a report reads.

Reading a million trial rows through :mod:`sqlite3` costs seconds per arm (a Python tuple per
row, plus each row's result JSON), and a report needs only its columns. So every write of trials
also writes them as *blocks*: a row of ``trial_blocks`` (its SQL is in :mod:`ablation.store.format`) holds some trials of one arm of one
campaign column by column - the ids as a JSON array, the numbers as one packed little-endian
buffer (:data:`_NUMBERS`), and the rarer labels, error texts, quality scores and metrics as JSON
(``NULL`` when every trial of the block is plain). A block is written in the same transaction as
its trials' rows, so the blocks of a campaign hold exactly its stored trials. A campaign stored
before blocks existed has ``campaigns.blocks = 0`` until a writable open writes its blocks;
:func:`read_blocks` answers ``None`` for it, and the caller reads the rows.

Blocks are kept few by merging, as in a log-structured merge tree: a write adds blocks of level
0 (at most :data:`~ablation.store.format.CHUNK` trials each); when :data:`FANOUT` blocks of one
level have gathered for an arm, they are merged into one block of the next level, up to
:data:`TOP`. Each trial is rewritten at most :data:`TOP` times, and however the trials arrive (one
per transaction or thousands), an arm's trials are held in at most ``FANOUT - 1`` blocks per level
below :data:`TOP` plus the top-level ones (each of ``FANOUT ** TOP`` writes).

Every block is sorted by ``(task_id, run)``; a read decodes the blocks one after the other
straight into the arm's final columns (allocated once; a block's packed numbers are copied a
piece at a time, never held whole) and sorts only when the blocks overlap (one stable
``lexsort`` on fixed-width unicode ids, checked against Python's ``str`` order), so a report
sees an arm's trials in the same order as the rows' primary key. Memory first touched is time
on some machines, so the read's peak is the arm's columns plus one block's decoded ids.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np

from ablation.columns import TrialColumns, constant_column, constant_value, results_to_columns
from ablation.schema import TaskResult

__all__ = [
    "SharedIds", "concat_columns", "read_blocks", "sort_columns", "write_blocks", "write_top_block",
]  # fmt: skip

#: Blocks of one level merged into one block of the next.
FANOUT = 16
#: The highest level: its blocks are never merged again.
TOP = 3

_INSERT = (
    "INSERT INTO trial_blocks (campaign_id, arm, level, n, task_ids, numbers, extra)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)
#: The packed numeric columns, in buffer order: (field, little-endian dtype).
_NUMBERS: tuple[tuple[str, str], ...] = (
    ("run", "<i8"), ("attempts", "<i8"), ("latency_s", "<f8"), ("cost", "<f8"), ("tokens", "<f8"),
    ("status", "i1"), ("passed", "u1"), ("critical", "u1"),
)  # fmt: skip
_TEXTS = ("error_type", "error", "error_stage")
#: The fields of :class:`TrialColumns` a block holds in its ``extra`` JSON.
_EXTRA_FIELDS = ("category", *_TEXTS)


def _encode(c: TrialColumns) -> tuple[int, str, bytes, str | None]:
    """``(n, ids JSON, packed numbers, extra JSON or None)`` of one block."""
    n = len(c)
    defaults = {"attempts": np.ones(n, np.int64), "critical": np.zeros(n, bool)}
    numbers = b"".join(
        np.ascontiguousarray(
            defaults[name] if getattr(c, name) is None else getattr(c, name), dtype=dtype
        ).tobytes()
        for name, dtype in _NUMBERS
    )
    extra: dict[str, Any] = {}
    if c.category is not None and any(v is not None for v in c.category.tolist()):
        extra["category"] = c.category.tolist()
    for name in _TEXTS:
        values = getattr(c, name)
        if values is not None and any(values.tolist()):
            extra[name] = values.tolist()
    for group in ("quality", "metrics"):
        if getattr(c, group):
            extra[group] = {k: v.tolist() for k, v in getattr(c, group).items()}
    if c.quality_errors:
        extra["quality_errors"] = {
            k: np.flatnonzero(v).tolist() for k, v in c.quality_errors.items()
        }
    text = json.dumps(extra) if extra else None
    return n, json.dumps(c.task_id.tolist()), numbers, text


_FIELDS = ("task_id", "run", "passed", "status", "latency_s", "cost", "tokens", "category",
           "critical", "error_type", "attempts", "error", "error_stage")  # fmt: skip
#: The named column groups: (group, fill of a part that lacks the name, dtype).
_GROUPS: tuple[tuple[str, Any, Any], ...] = (
    ("quality", np.nan, float), ("metrics", np.nan, float), ("quality_errors", False, bool),
)  # fmt: skip


def _extra(n: int, extra: str | None) -> dict[str, Any]:
    """The columns of one stored block held in its ``extra`` JSON (:data:`_EXTRA_FIELDS` and the
    column groups), constant columns for the texts and categories it leaves out."""
    more: dict[str, Any] = json.loads(extra) if extra else {}
    out: dict[str, Any] = {}
    for name in _TEXTS:
        out[name] = np.array(more[name], dtype=object) if name in more else constant_column("", n)
    category = more.get("category")
    out["category"] = constant_column(None, n) if category is None else np.array(category, dtype=object)
    out["quality"] = {k: np.array(v, dtype=float) for k, v in more.get("quality", {}).items()}
    out["metrics"] = {k: np.array(v, dtype=float) for k, v in more.get("metrics", {}).items()}
    flags: dict[str, np.ndarray] = {}
    for name, rows in more.get("quality_errors", {}).items():
        flags[name] = np.zeros(n, bool)
        flags[name][rows] = True
    out["quality_errors"] = flags
    return out


#: Bytes of a block's packed numbers read at a time: the buffer (22 MB in a block of half a
#: million trials) is never held whole, only copied piece by piece into the final columns.
_PIECE = 1 << 20


def _read_numbers(blob: sqlite3.Blob, n: int, out: dict[str, np.ndarray], at: int) -> None:
    """Copy the packed numbers of a block of ``n`` trials (``blob``, read from its start) into
    ``out[name][at : at + n]`` for every field of :data:`_NUMBERS`.

    Raises:
        ValueError: when the buffer is shorter than ``n`` trials' numbers.
    """
    for name, dtype in _NUMBERS:
        step = _PIECE // np.dtype(dtype).itemsize
        target = out[name]
        for lo in range(at, at + n, step):
            size = min(step, at + n - lo)
            target[lo : lo + size] = np.frombuffer(blob.read(size * target.itemsize), dtype=dtype)


def _cat(arrays: Sequence[Any]) -> Any:
    """The parts of one column end to end: ``None`` when every part is ``None``, the part itself
    when there is one, a constant column when every part is the same constant."""
    if all(a is None for a in arrays):
        return None
    if len(arrays) == 1:
        return arrays[0]
    shared = [constant_value(a) for a in arrays]
    first = shared[0][1]
    if all(ok and (v is first or v == first) for ok, v in shared):
        return constant_column(first, sum(map(len, arrays)))
    return np.concatenate(arrays)


def _pick(values: Any, order: np.ndarray | None) -> Any:
    """``values[order]`` (a constant column stays constant; ``None`` stays ``None``)."""
    if values is None or order is None:
        return values
    constant, value = constant_value(values)
    return constant_column(value, len(order)) if constant else values[order]


def _in_order(ids: np.ndarray, run: np.ndarray) -> bool:
    """Whether the rows are sorted by ``(task_id, run)`` in Python's ``str`` order."""
    if len(ids) < 2:
        return True
    before, after = ids[:-1], ids[1:]
    rest = np.flatnonzero(~(before < after))  # usually none: then no equality pass at all
    return bool(np.all((before[rest] == after[rest]) & (run[rest] < run[rest + 1])))


def _blocks_in_order(ids: np.ndarray, run: np.ndarray, sizes: Sequence[int]) -> bool:
    """Whether rows made of consecutive blocks of ``sizes`` rows, each sorted by ``(task_id,
    run)`` (blocks are written sorted), are also in order end to end: only the boundaries
    between the blocks need checking."""
    ends = np.cumsum(sizes)
    edges = [
        (ids[i], run[i])
        for end, n in zip(ends.tolist(), sizes, strict=True) if n
        for i in (end - n, end - 1)
    ]  # fmt: skip
    return all(edges[i] < edges[i + 1] for i in range(1, len(edges) - 1, 2))


def _sort_order(ids: np.ndarray, run: np.ndarray) -> np.ndarray | None:
    """The order that sorts rows by ``(task_id, run)``, or ``None`` when they already are.

    A stable ``lexsort`` on fixed-width unicode ids does the work; numpy drops trailing NUL
    characters, so the result is checked and, for such ids, sorted by Python instead.
    """
    if _in_order(ids, run):
        return None
    order = np.lexsort((run, ids.astype(str)))
    if not _in_order(ids[order], run[order]):
        keys = list(zip(ids.tolist(), run.tolist(), strict=True))
        order = np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)
    return order


def _join(parts: list[dict[str, Any]], sizes: Sequence[int], names: Sequence[str]) -> dict[str, Any]:
    """The fields ``names`` and the column groups of the parts (of ``sizes`` rows) end to end,
    each popped from the parts once it is joined, so besides the parts at most one column is
    held twice (a million-trial arm is not copied whole). A named column a part lacks is its
    group's fill (NaN, or ``False`` for quality error flags) on its rows."""
    out: dict[str, Any] = {name: _cat([p.pop(name) for p in parts]) for name in names}
    for group, fill, dtype in _GROUPS:
        keys = sorted({k for p in parts for k in p[group]})
        out[group] = {
            k: _cat([
                p[group].get(k, np.full(m, fill, dtype=dtype))
                for p, m in zip(parts, sizes, strict=True)
            ])
            for k in keys
        }  # fmt: skip
    return out


def _finish(out: dict[str, Any], arm: str, order: np.ndarray | None) -> TrialColumns:
    """The joined columns ``out`` as :class:`TrialColumns`, rows taken in ``order`` (if not
    ``None``) one column at a time."""
    for name in _FIELDS:
        out[name] = _pick(out[name], order)
    for group, _, _ in _GROUPS:
        out[group] = {k: _pick(v, order) for k, v in out[group].items()}
    return TrialColumns(arm=arm, **out)


def _assemble(parts: list[dict[str, Any]], arm: str, *, sort: bool) -> TrialColumns:
    """One :class:`TrialColumns` of the parts' rows end to end, sorted by ``(task_id, run)`` if
    ``sort``."""
    out = _join(parts, [len(p["task_id"]) for p in parts], _FIELDS)
    return _finish(out, arm, _sort_order(out["task_id"], out["run"]) if sort else None)


def _fields(c: TrialColumns) -> dict[str, Any]:
    return {name: getattr(c, name) for name in (*_FIELDS, *(g for g, _, _ in _GROUPS))}


def concat_columns(parts: Sequence[TrialColumns], arm: str) -> TrialColumns:
    """One :class:`TrialColumns` of the parts' rows in order (a named column a part lacks is
    NaN, or ``False`` for quality error flags, on its rows)."""
    return _assemble([_fields(p) for p in parts], arm, sort=False)


def sort_columns(c: TrialColumns) -> TrialColumns:
    """``c`` sorted by ``(task_id, run)``; ``c`` itself when it already is."""
    if _in_order(c.task_id, c.run):
        return c
    return _assemble([_fields(c)], c.arm, sort=True)


def _merge(conn: sqlite3.Connection, campaign_id: str, arm: str) -> None:
    """Merge full levels of an arm's blocks, from level 0 up to :data:`TOP`."""
    for level in range(TOP):
        rows = conn.execute(
            "SELECT rowid, n, extra FROM trial_blocks"
            " WHERE campaign_id = ? AND arm = ? AND level = ? ORDER BY rowid",
            (campaign_id, arm, level),
        ).fetchall()
        if len(rows) < FANOUT:
            return
        merged = _read(conn, rows, arm, None)
        conn.executemany("DELETE FROM trial_blocks WHERE rowid = ?", [(r[0],) for r in rows])
        conn.execute(_INSERT, (campaign_id, arm, level + 1, *_encode(merged)))


def write_blocks(conn: sqlite3.Connection, campaign_id: str, results: Sequence[TaskResult]) -> None:
    """Write ``results`` (already inserted as rows, in the same transaction) as level-0 blocks.

    One block per arm met, sorted by ``(task_id, run)``; full levels are merged.
    """
    for arm in ("baseline", "candidate"):
        rows = [r for r in results if r.arm == arm]
        if rows:
            block = sort_columns(results_to_columns(rows, arm))
            conn.execute(_INSERT, (campaign_id, arm, 0, *_encode(block)))
            _merge(conn, campaign_id, arm)


def write_top_block(conn: sqlite3.Connection, campaign_id: str, columns: TrialColumns) -> None:
    """Write an arm's columns as one top-level block (the backfill of an older store)."""
    if len(columns):
        conn.execute(_INSERT, (campaign_id, columns.arm, TOP, *_encode(sort_columns(columns))))


def _blob(conn: sqlite3.Connection, rowid: int, column: str) -> bytes:
    """One block's ``column``, read whole by SQLite's incremental blob I/O (a SELECT of a
    block of millions of trials reads its overflow pages several times slower)."""
    with conn.blobopen("trial_blocks", column, rowid, readonly=True) as blob:
        return blob.read()


class SharedIds:
    """The ids one arm's block read decoded, for the other arm's read of the same campaign.

    The two arms of a campaign mostly store the same tasks in the same blocks, since each
    task's two trials are written close together. An arm whose ids blobs are, block by block,
    the blobs the first arm read takes the first arm's id column itself (no second column);
    otherwise each of its blobs found among the first arm's copies those strings instead of
    decoding again.
    """

    def __init__(self) -> None:
        self.blobs: list[bytes] = []  # the first arm's ids blobs, in its blocks' order
        self.by_blob: dict[bytes, np.ndarray] = {}  # blob -> its ids, a slice of ``column``
        self.column: np.ndarray | None = None  # the first arm's ids, its blocks end to end

    def same_column(
        self, conn: sqlite3.Connection, rows: Sequence[tuple[int, int, Any]]
    ) -> np.ndarray | None:
        """The first arm's id column when the blocks ``rows`` hold its ids blobs in the same
        order (read and compared one blob at a time), else ``None``."""
        if self.column is None or len(rows) != len(self.blobs):
            return None
        for row, raw in zip(rows, self.blobs, strict=True):
            if _blob(conn, row[0], "task_ids") != raw:
                return None
        return self.column


def _read_ids(
    conn: sqlite3.Connection, rows: Sequence[tuple[int, int, Any]], shared: SharedIds | None
) -> np.ndarray:
    """The ids of the blocks ``rows`` end to end, as one object array (see :class:`SharedIds`).

    A decoded list is assigned to its slice item by item (no fixed-width string array in
    between, which would drop trailing NULs).
    """
    same = None if shared is None else shared.same_column(conn, rows)
    if same is not None:
        return same
    ids = np.empty(sum(n for _, n, _ in rows), dtype=object)
    first = shared is not None and shared.column is None
    at = 0
    for rowid, n, _ in rows:
        raw = _blob(conn, rowid, "task_ids")
        known = None if shared is None else shared.by_blob.get(raw)
        ids[at : at + n] = json.loads(raw) if known is None else known
        if first and shared is not None:
            shared.blobs.append(raw)
            shared.by_blob[raw] = ids[at : at + n]
        at += n
    if first and shared is not None:
        shared.column = ids
    return ids


def _read(
    conn: sqlite3.Connection, rows: Sequence[tuple[int, int, str | None]], arm: str,
    shared: SharedIds | None,
) -> TrialColumns:
    """The trials of the blocks ``rows`` (``(rowid, n, extra)``), in ``(task_id, run)`` order.

    The ids and numbers are decoded straight into columns allocated once for all the blocks,
    one block (and a :data:`_PIECE` of its numbers) at a time: no per-block copy of a column
    is joined afterwards, the peak memory is the final columns plus one block's decoded ids.
    """
    sizes = [n for _, n, _ in rows]
    out: dict[str, Any] = {name: np.empty(sum(sizes), dtype) for name, dtype in _NUMBERS}
    out["task_id"] = _read_ids(conn, rows, shared)
    at = 0
    for rowid, n, _ in rows:
        with conn.blobopen("trial_blocks", "numbers", rowid, readonly=True) as blob:
            _read_numbers(blob, n, out, at)
        at += n
    for name in ("passed", "critical"):
        out[name] = out[name].view(bool)
    out.update(_join([_extra(n, extra) for _, n, extra in rows], sizes, _EXTRA_FIELDS))
    in_order = _blocks_in_order(out["task_id"], out["run"], sizes)
    return _finish(out, arm, None if in_order else _sort_order(out["task_id"], out["run"]))


def read_blocks(
    conn: sqlite3.Connection, campaign_id: str, arm: str,
    shared: SharedIds | None = None,
) -> TrialColumns | None:
    """One arm's trials from its blocks, in ``(task_id, run)`` order.

    ``None`` when the campaign's blocks do not hold its trials (``campaigns.blocks`` is 0: a
    campaign stored before blocks existed and not yet backfilled): the caller reads the rows.
    ``shared``: the ids the other arm's read decoded (:class:`SharedIds`), or to be filled
    with this arm's when it is the first.
    """
    row = conn.execute("SELECT blocks FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None or not row[0]:
        return None
    rows = conn.execute(
        "SELECT rowid, n, extra FROM trial_blocks"
        " WHERE campaign_id = ? AND arm = ? ORDER BY level DESC, rowid",
        (campaign_id, arm),
    ).fetchall()
    if not rows:
        return TrialColumns.verdicts(arm, np.zeros(0, dtype=object), np.zeros(0, dtype=bool))
    return _read(conn, rows, arm, shared)
