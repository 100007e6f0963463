"""The run store's arm snapshots: one arm's trials as columns in one blob, the form a report reads.

The ``trials`` rows are the store's only source of truth. Reading a million of them through
:mod:`sqlite3` costs seconds per arm (a Python tuple per row, plus each row's result JSON), and a
report needs only their columns, so the columns of each arm of a campaign are also kept as one
*snapshot*: a row of ``arm_snapshots`` (its SQL is in :mod:`ablation.store.format`) whose ``data``
is an uncompressed NumPy ``.npz`` archive (a zip of ``.npy`` arrays, written and read with
``allow_pickle=False``). Its members:

- ``manifest``: UTF-8 JSON (as ``uint8``) ``{"format": 3, "n": rows, "constants": {name: value},
  "texts": [names], "ids_joined": bool, "same": [names], "quality": [names], "metrics": [names],
  "quality_errors": [names], "cost_units": [[currency, source], ...]}`` (``cost_units``: the
  distinct pairs of the rows with a cost, ``null`` where not stated);
- ``run``, ``attempts`` (``int64``), ``passed``, ``critical`` (``bool``), ``status`` (``int8``),
  ``latency_s``, ``cost``, ``tokens`` (``float64``, NaN for unknown): a column whose rows all hold
  one value (NaN included) is listed in ``same`` and holds that one value (one element);
- ``task_id``: the ids as UTF-8 bytes (``uint8``), joined by NUL characters when ``ids_joined``
  (no id holds a NUL: one ``split`` reads a million ids, several times faster than JSON), else a
  JSON array;
- every name of ``texts`` (among ``category``, ``error_type``, ``error``, ``error_stage``): the
  column's distinct values as a JSON array (UTF-8, ``uint8``) and, as ``<name>.codes``
  (``int32``), each row's position in it; a text column whose rows all hold one value is in
  ``constants`` instead;
- ``quality.<i>``, ``metrics.<i>`` (``float64``) and ``quality_errors.<i>`` (``bool``): the
  named columns, ``<i>`` the position of the name in the manifest's list.

Rows are in ``(task_id, run)`` order, the rows' primary key order. A snapshot is written from
the rows when a campaign ends ``complete`` and by a columnar read of a writable store that finds
none current (see :class:`~ablation.store.columns.ColumnReader`), together with the rows'
fingerprint at that moment: their count and the sum of their ``rowid``, as the ``trial_counts``
triggers keep them. It is used only while the fingerprint is the same (any insert changes it),
and a ``DELETE`` or ``UPDATE`` of a trial row deletes its campaign's snapshots (triggers: a row
deleted and inserted again under its ``rowid`` keeps the fingerprint); a missing or stale
snapshot is never read.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ablation.columns import TrialColumns, constant_column, constant_value
from ablation.errors import TooManyNames
from ablation.outputs import named_cells_problem

__all__ = ["FORMAT", "concat_columns", "decode", "encode"]

#: The layout version written in each snapshot's manifest; another one is never read (a
#: snapshot of format 2, without the cost units, is written again from the rows).
FORMAT = 3
#: The numeric columns: (field, dtype, value of a trial that lacks the column).
_NUMBERS: tuple[tuple[str, Any, Any], ...] = (
    ("run", np.int64, 0), ("attempts", np.int64, 1), ("passed", np.bool_, False),
    ("critical", np.bool_, False), ("status", np.int8, 0), ("latency_s", np.float64, np.nan),
    ("cost", np.float64, np.nan), ("tokens", np.float64, np.nan),
)  # fmt: skip
_TEXTS = ("category", "error_type", "error", "error_stage")
#: The named column groups: (group, fill of a part that lacks the name, dtype).
_GROUPS: tuple[tuple[str, Any, Any], ...] = (
    ("quality", np.nan, np.float64), ("metrics", np.nan, np.float64),
    ("quality_errors", False, np.bool_),
)  # fmt: skip
_FIELDS = ("task_id", *(name for name, _, _ in _NUMBERS), *_TEXTS)
#: The sets of pairs held in the manifest, as JSON lists of ``[a, b]`` (not columns).
_SETS = ("cost_units",)


def _utf8(values: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(values).encode("utf-8"), dtype=np.uint8)


def _json(member: np.ndarray) -> Any:
    return json.loads(member.tobytes().decode("utf-8"))


def _ids(values: list[str], manifest: dict[str, Any]) -> np.ndarray:
    """The ids as UTF-8: NUL-joined (``manifest["ids_joined"]``) when no id holds a NUL."""
    text = "\x00".join(values)
    manifest["ids_joined"] = text.count("\x00") == len(values) - 1
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8) if manifest["ids_joined"] else _utf8(values)


def _distinct(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """A text column as (its distinct values as JSON, each row's position among them)."""
    index: dict[Any, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int32, count=len(values))
    return _utf8(list(index)), codes


def _one_value(values: np.ndarray) -> bool:
    """Whether every row of a numeric column holds its first row's value (NaN equal to NaN)."""
    if not len(values):
        return False
    first = values[:1]
    if values.dtype.kind == "f" and bool(np.isnan(first[0])):
        return bool(np.isnan(values).all())
    return bool((values == first).all())


def encode(c: TrialColumns) -> bytes:
    """The snapshot of ``c`` (rows already in ``(task_id, run)`` order) as ``.npz`` bytes."""
    n = len(c)
    manifest: dict[str, Any] = {"format": FORMAT, "n": n, "constants": {}, "texts": [], "same": []}
    arrays: dict[str, np.ndarray] = {"task_id": _ids(c.task_id.tolist(), manifest)}
    for name, dtype, default in _NUMBERS:
        values = getattr(c, name)
        column = np.full(min(n, 1), default, dtype) if values is None else np.asarray(values, dtype)
        if values is None or _one_value(column):
            manifest["same"].append(name)
            column = column[:1]
        arrays[name] = column
    for name in _TEXTS:
        values = getattr(c, name)
        default = None if name == "category" else ""
        same, value = (True, default) if values is None else constant_value(values)
        if same or n == 0:
            manifest["constants"][name] = default if n == 0 else value
        else:
            manifest["texts"].append(name)
            arrays[name], arrays[f"{name}.codes"] = _distinct(values.tolist())
    for group, _, dtype in _GROUPS:
        named = getattr(c, group)
        manifest[group] = sorted(named)
        for i, key in enumerate(manifest[group]):
            arrays[f"{group}.{i}"] = np.asarray(named[key], dtype)
    for name in _SETS:
        manifest[name] = sorted(getattr(c, name), key=repr)
    arrays["manifest"] = _utf8(manifest)
    out = io.BytesIO()
    np.savez(out, allow_pickle=False, **arrays)
    return out.getvalue()


def decode(
    data: bytes, arm: str, shared: dict[bytes, np.ndarray] | None = None
) -> TrialColumns | None:
    """The columns of a snapshot written by :func:`encode`; ``None`` for another format.

    ``shared``: id columns already decoded, by their encoded bytes (the two arms of a campaign
    usually hold the same ids: the second arm takes the first one's array, decoded once); this
    snapshot's ids are added to it.
    """
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        manifest = _json(archive["manifest"])
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            return None
        n = manifest["n"]
        out: dict[str, Any] = {name: archive[name] for name, _, _ in _NUMBERS}
        for name in manifest["same"]:
            out[name] = constant_column(out[name][0], n) if n else out[name]
        raw = archive["task_id"].tobytes()
        ids = None if shared is None else shared.get(raw)
        if ids is None:
            ids = np.empty(n, dtype=object)  # filled item by item: no fixed-width copy drops a NUL
            if n:
                text = raw.decode("utf-8")
                ids[:] = text.split("\x00") if manifest["ids_joined"] else json.loads(text)
            if shared is not None:
                shared[raw] = ids
        out["task_id"] = ids
        for name in _TEXTS:
            if name in manifest["texts"]:
                distinct = np.empty(len(names := _json(archive[name])), dtype=object)
                distinct[:] = names
                out[name] = distinct[archive[f"{name}.codes"]]
            else:
                out[name] = constant_column(manifest["constants"][name], n)
        for group, _, _ in _GROUPS:
            out[group] = {key: archive[f"{group}.{i}"] for i, key in enumerate(manifest[group])}
        for name in _SETS:
            out[name] = frozenset((a, b) for a, b in manifest[name])
    return TrialColumns(arm=arm, **out)


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


def concat_columns(parts: Sequence[TrialColumns], arm: str) -> TrialColumns:
    """One :class:`TrialColumns` of the parts' rows in order.

    Assumes every part has the same columns given (``None`` or not), as pages of one row read
    do; a named column a part lacks is NaN, or ``False`` for quality error flags, on its rows
    (past :func:`~ablation.outputs.named_cells_problem`'s bound: :class:`TooManyNames`).
    A set (:data:`_SETS`) is the union of the parts' sets.
    """
    sizes = [len(p) for p in parts]
    out: dict[str, Any] = {name: _cat([getattr(p, name) for p in parts]) for name in _FIELDS}
    for group, fill, dtype in _GROUPS:
        keys = sorted({k for p in parts for k in getattr(p, group)})
        if problem := named_cells_problem(len(keys), sum(sizes), group.replace("_", " ")):
            raise TooManyNames(problem)
        out[group] = {
            k: _cat([
                getattr(p, group).get(k, np.full(m, fill, dtype=dtype))
                for p, m in zip(parts, sizes, strict=True)
            ])
            for k in keys
        }  # fmt: skip
    for name in _SETS:
        out[name] = frozenset().union(*(getattr(p, name) for p in parts))
    return TrialColumns(arm=arm, **out)
