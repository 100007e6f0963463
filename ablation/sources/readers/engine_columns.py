"""A pyarrow table of plain result rows turned into the row path's columns, or ``None``.

:func:`read_columns` parses the file (:func:`~ablation.sources.readers.engine_table.read_table`:
CSV cells all as text, so that ``"007"`` stays an id and a number is recognised as the row path
recognises it) and gives the :class:`~ablation.sources.readers.columnar.ColumnRead` that
:func:`~ablation.sources.readers.rows.checked_rows` would build, column by column, and ``None`` as
soon as one cell is something the row path would refuse or read otherwise (a missing, empty, blank or too long id,
a verdict that is not an unambiguous boolean, a number not finite or past ``VALUE_LIMIT``, both
``latency`` and ``latency_s`` in a row, negative latency, fractional tokens, a count or run past
``TaskResult``'s bounds, a duplicate ``(id, run)``...): the caller then reads row by row.

Each column means what it means to the row path (:mod:`~ablation.sources.readers.generic`):
``score`` → ``quality["score"]``; ``cost``, ``latency``/``latency_s``, ``tokens``; ``category``,
``critical``, ``output``; ``cost_currency`` and ``cost_source`` (their distinct pairs only:
:mod:`~ablation.sources.readers.engine_units`); any other numeric column (in CSV: each cell that
reads as a decimal number) → ``metrics``; other columns (text, objects, lists) are ignored;
``null`` or "" absent. A column named as the id, verdict or run means only that. In numeric mode
(``ReadOptions.numeric``) the verdict column is read as a number into ``quality[field]`` and
``passed`` is all ``False``: every row must hold a number there (a JSON number, or a CSV cell
spelling one), as the row path requires of a completed trial, and a plain row is one.

Assumes a file :func:`~ablation.sources.readers.engine.engine_columns` vetted: no blank line (row
``i`` is line ``i + 1`` of JSON lines, ``i + 2`` of CSV), CSV in ASCII without quotes or control
characters (so stripping is of spaces and tabs only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from ablation.columns import TrialColumns, constant_column, filled
from ablation.errors import AblationError
from ablation.outputs import VALUE_LIMIT
from ablation.process_hooks import large_read_finished
from ablation.schema import COUNT_LIMIT, RUN_LIMIT, TASK_ID_LIMIT
from ablation.sources.readers.columnar import ColumnRead
from ablation.sources.readers.engine_table import OWN, read_table
from ablation.sources.readers.engine_units import cost_units
from ablation.sources.readers.generic import CSV_NUMBER, RESULT_NUMBERS
from ablation.sources.readers.rows import READ_NOTES, ReadOptions

__all__ = ["read_columns", "read_table"]

#: The row path's :data:`~ablation.sources.readers.generic.CSV_NUMBER`, anchored for RE2.
_NUMBER = "^(?:" + CSV_NUMBER.pattern + ")$"
_TRUE = ("true", "1", "1.0", "pass", "passed", "yes")
_FALSE = ("false", "0", "0.0", "fail", "failed", "no")
_SLICE = 1 << 16  # ids converted or compared at a time (:func:`arrow_ids`)


class _Refused(AblationError):
    """A cell the row path reads otherwise (or refuses): read the file row by row."""


def read_columns(
    path: Path, kind: str, display: str, options: ReadOptions, lines: int,
    ids_like: NDArray[np.object_] | None = None,
) -> ColumnRead | None:
    """The row path's columns of the file (module docstring), or ``None`` to read it row by row;
    ``lines``: its number of lines; ``ids_like``: see :func:`arrow_ids`.

    The parsed table is held by its cells alone, which drop each column once it is converted:
    the text of the columns read first is freed while the later ones are converted, so the
    peak holds one whole table only at its start.
    """
    try:
        table = read_table(path, kind, options)
    except Exception:  # any parse error: the row path names it (file, line, id)
        return None
    large_read_finished()  # the parse's blocks: freed, but held by pyarrow's pool until released
    if table is None or table.num_rows != lines - (kind == "csv") or table.num_rows == 0:
        return None
    cells = _JsonCells(table, ids_like) if kind == "jsonl" else _CsvCells(table, ids_like)
    del table
    try:
        return _columns(cells, display, options)
    except (_Refused, pa.ArrowException, ValueError, OverflowError):
        return None


def _columns(cells: _JsonCells | _CsvCells, display: str, options: ReadOptions) -> ColumnRead:
    key, field, run_name = options.key or "id", options.field or "passed", options.run_field
    n, names = cells.n, cells.names
    ids = cells.ids(key)
    value = _numeric(cells, field) if options.numeric else None
    passed = filled(False, np.bool_, n) if value is not None else cells.verdicts(field, options.pass_values)
    runs = cells.runs(run_name) if run_name else filled(0, np.int64, n)
    _check_unique(ids, runs if run_name else None)
    names = tuple(name for name in names if name not in (key, field, run_name))  # each means only that
    numbers = {name: cells.number(name) for name in RESULT_NUMBERS if name in names
               and name not in (key, field, run_name) and cells.nulls[name] < n}  # fmt: skip
    latency = numbers.get("latency_s")
    if "latency" in numbers:
        if latency is not None and bool(np.any(~np.isnan(latency) & ~np.isnan(numbers["latency"]))):
            raise _Refused  # both in one row
        latency = numbers["latency"] if latency is None else np.where(np.isnan(latency), numbers["latency"], latency)
    nan = filled(np.nan, np.float64, n)  # the defaults of columns the file lacks take no memory
    latency = nan if latency is None else latency
    tokens, high_run = numbers.get("tokens", nan), len(runs) > 0 and int(runs.max()) >= RUN_LIMIT
    bad_tokens = (tokens < 0) | (tokens >= COUNT_LIMIT) | (tokens != np.floor(tokens))
    if high_run or bool(np.any(latency < 0)) or bool(np.any(bad_tokens & ~np.isnan(tokens))):
        raise _Refused  # (NaN compares False: absent latencies pass)
    special = {key, field, run_name, *OWN}
    metrics = {name: values for name in names if name not in special
               and (values := cells.metric(name)) is not None}  # fmt: skip
    columns = TrialColumns(
        arm=options.arm, task_id=ids, run=runs, passed=passed,
        status=filled(0, np.int8, n), latency_s=latency, tokens=tokens, cost=numbers.get("cost", nan),
        cost_units=cost_units(cells, numbers.get("cost", nan), csv=isinstance(cells, _CsvCells)),
        quality={**({"score": numbers["score"]} if "score" in numbers else {}),
                 **({field: value} if value is not None else {})},
        metrics=metrics,
        category=cells.category() if "category" in names else constant_column(None, n),
        critical=cells.critical() if "critical" in names else filled(False, np.bool_, n),
        error_type=constant_column("", n), source=display,
        line=np.arange(cells.first_line, n + cells.first_line, dtype=np.int64),
        attempts=filled(1, np.int64, n), error=constant_column("", n),
        error_stage=constant_column("", n),
    )  # fmt: skip
    return ColumnRead(columns, cells.outputs() if "output" in names else {})


def _numeric(cells: _JsonCells | _CsvCells, field: str) -> NDArray[np.float64]:
    """The verdict column read as numbers (numeric mode): a row without one is refused."""
    if field not in cells.names:
        raise _Refused
    value = cells.number(field)
    if bool(np.isnan(value).any()):
        raise _Refused  # null, "" (or a NaN the row path refuses)
    return value


def _note_verdicts(true: NDArray[np.bool_], texts: tuple[str, str]) -> None:
    """Note the texts (true's, false's) of the two-valued verdicts ``true`` holds, as the row
    path notes each verdict read with ``pass_values`` (:data:`~ablation.sources.readers.rows.READ_NOTES`)."""
    if (notes := READ_NOTES.get()) is not None:
        seen = notes.setdefault("verdicts", set())
        seen.update(text for text, there in zip(texts, (true.any(), not true.all()), strict=True) if there)


def _check_unique(ids: NDArray[np.object_], runs: NDArray[np.int64] | None) -> None:
    if runs is None:
        if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])) and len(set(ids.tolist())) != len(ids):
            raise _Refused
    elif len(set(zip(ids.tolist(), runs.tolist(), strict=True))) != len(ids):
        raise _Refused


def _floats(values: pa.Array) -> NDArray[np.float64]:
    """A numeric column as floats, NaN where absent; NaN, infinite or past ``VALUE_LIMIT``: refused."""
    out = pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False)
    given = values.is_valid().to_numpy(zero_copy_only=False)
    if not bool((np.abs(out[given]) < VALUE_LIMIT).all()):
        raise _Refused
    return np.where(given, out, np.nan) if values.null_count else out


def _cast_numbers(values: pa.Array) -> pa.Array:
    """Stripped CSV cells as floats (blank: absent); ``ArrowInvalid`` at a cell that is no number.

    pyarrow's cast reads the cells of the row path's syntax (:data:`_NUMBER`) and besides them only
    words of infinities and NaN, which come out non-finite: a caller refusing non-finite values
    reads what the row path reads without matching each cell (tests/sources/test_engine_reads.py)."""
    return pc.cast(pc.if_else(pc.equal(values, ""), None, values), pa.float64())


class _Cells:
    """The columns of a parsed table, each taken once: :meth:`take` drops it from the table, so
    that its buffers are freed as soon as its converted copy no longer needs them."""

    def __init__(self, table: pa.Table, ids_like: NDArray[np.object_] | None) -> None:
        self.table, self.ids_like = table, ids_like
        self.n, self.names = table.num_rows, tuple(table.column_names)
        self.nulls = {name: table.column(name).null_count for name in self.names}

    def take(self, name: str) -> pa.Array:
        """Column ``name`` as one array, dropped from the table (a second take raises)."""
        values = self.table.column(name).combine_chunks()
        self.table = self.table.drop_columns([name])
        return values


class _JsonCells(_Cells):
    """Columns of JSON values (pyarrow's types: a column holds one JSON type, or nulls)."""

    first_line = 1

    def ids(self, key: str) -> NDArray[np.object_]:
        if key not in self.names:
            raise _Refused
        values = self.take(key)
        if values.null_count or not (pa.types.is_string(values.type) or pa.types.is_int64(values.type)):
            raise _Refused
        if pa.types.is_string(values.type):  # an empty id, or one of only whitespace (str.strip's)
            lead = pc.utf8_slice_codeunits(values, 0, 1)
            suspect = pc.filter(values, pc.invert(pc.match_substring_regex(lead, "^[!-~]")))
            if any(not v.strip() for v in suspect.to_pylist()):
                raise _Refused
            _refuse_long(values)
        return arrow_ids(values, self.ids_like)

    def verdicts(self, field: str, pass_values: frozenset[str] | None) -> NDArray[np.bool_]:
        if field not in self.names:
            raise _Refused
        values = self.take(field)
        if values.null_count:
            raise _Refused
        if pa.types.is_boolean(values.type):
            passed = values.to_numpy(zero_copy_only=False)
            if pass_values is None:
                return passed
            _note_verdicts(passed, ("true", "false"))
            return np.where(passed, "true" in pass_values, "false" in pass_values)
        if pa.types.is_integer(values.type) or (pa.types.is_floating(values.type) and pass_values is None):
            numbers = values.to_numpy(zero_copy_only=False)
            if not bool(np.isin(numbers, (0, 1)).all()):
                raise _Refused  # the row path tells a numeric field from a verdict
            if pass_values is None:
                return numbers == 1
            _note_verdicts(numbers == 1, ("1", "0"))
            return np.where(numbers == 1, "1" in pass_values, "0" in pass_values)
        raise _Refused

    def runs(self, name: str) -> NDArray[np.int64]:
        if name not in self.names:
            return np.zeros(self.n, dtype=np.int64)
        values = self.take(name)
        if pa.types.is_null(values.type):
            return np.zeros(len(values), dtype=np.int64)
        if not pa.types.is_integer(values.type):
            raise _Refused
        runs = pc.fill_null(values, 0).to_numpy(zero_copy_only=False).astype(np.int64)
        if len(runs) and int(runs.min()) < 0:
            raise _Refused
        return runs

    def number(self, name: str) -> NDArray[np.float64]:
        values = self.take(name)
        if pa.types.is_null(values.type):
            return np.full(len(values), np.nan)
        if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type)):
            raise _Refused
        return _floats(values)

    def metric(self, name: str) -> NDArray[np.float64] | None:
        values = self.take(name)
        if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type)):
            return None  # text, booleans, objects, lists: not metrics
        return None if values.null_count == len(values) else _floats(values)

    def category(self) -> NDArray[np.object_]:
        values = self.take("category")
        if pa.types.is_null(values.type):
            return np.full(len(values), None, dtype=object)
        if not (pa.types.is_string(values.type) or pa.types.is_integer(values.type)):
            raise _Refused
        return labels(values)

    def critical(self) -> NDArray[np.bool_]:
        values = self.take("critical")
        if pa.types.is_null(values.type):
            return np.zeros(len(values), dtype=bool)
        if not pa.types.is_boolean(values.type):
            raise _Refused
        return pc.fill_null(values, False).to_numpy(zero_copy_only=False)

    def outputs(self) -> dict[int, dict[str, Any]]:
        values = self.take("output")
        if pa.types.is_floating(values.type) or pa.types.is_nested(values.type):
            raise _Refused  # 1 and 1.0 are one float here; an object's absent keys show as nulls
        return {i: {"output": v} for i, v in enumerate(values.to_pylist()) if v is not None}


class _CsvCells(_Cells):
    """Columns of CSV cells, all text (blank: absent), read as the row path reads them."""

    first_line = 2

    def stripped(self, name: str) -> pa.Array:
        return pc.utf8_trim(self.take(name), " \t")

    def ids(self, key: str) -> NDArray[np.object_]:
        values = self.stripped(key)
        if bool(pc.any(pc.equal(values, "")).as_py()):
            raise _Refused
        _refuse_long(values)
        return arrow_ids(values, self.ids_like)

    def verdicts(self, field: str, pass_values: frozenset[str] | None) -> NDArray[np.bool_]:
        values = self.stripped(field)
        if pass_values is not None:
            if (notes := READ_NOTES.get()) is not None:  # the distinct texts, as the row path notes them
                notes.setdefault("verdicts", set()).update(pc.unique(values).to_pylist())
            return pc.is_in(values, pa.array(sorted(pass_values))).to_numpy(zero_copy_only=False)
        return self._booleans(pc.utf8_lower(values))

    def _booleans(self, words: pa.Array) -> NDArray[np.bool_]:
        true = pc.is_in(words, pa.array(_TRUE)).to_numpy(zero_copy_only=False)
        if not bool((true | pc.is_in(words, pa.array(_FALSE)).to_numpy(zero_copy_only=False)).all()):
            raise _Refused
        return true

    def runs(self, name: str) -> NDArray[np.int64]:
        values = self.stripped(name)
        if not bool(pc.all(pc.match_substring_regex(values, r"^[0-9]+$")).as_py()):
            raise _Refused
        return pc.cast(values, pa.int64()).to_numpy(zero_copy_only=False)

    def number(self, name: str) -> NDArray[np.float64]:
        values = self.stripped(name)
        return _floats(_cast_numbers(values))  # a cell that is no number raises: the row path reads

    def metric(self, name: str) -> NDArray[np.float64] | None:
        values = self.stripped(name)
        try:  # every cell a number, or blank? (text in the head first: a failed cast costs ~0.3 s)
            _cast_numbers(values.slice(0, 64))
            numbers = _cast_numbers(values)
        except pa.ArrowInvalid:
            numbers = None  # some cell is text
        if numbers is not None and pc.all(pc.is_finite(numbers)).as_py() is not False:  # None: all blank
            return None if numbers.null_count == len(numbers) else _floats(numbers)
        numeric = pc.match_substring_regex(values, _NUMBER)  # the cells that are numbers
        if not bool(pc.any(numeric).as_py()):
            return None
        return _floats(pc.cast(pc.if_else(numeric, values, None), pa.float64()))

    def category(self) -> NDArray[np.object_]:
        values = self.stripped("category")
        return labels(pc.if_else(pc.equal(values, ""), None, values))

    def critical(self) -> NDArray[np.bool_]:
        values = self.stripped("critical")
        blank = pc.equal(values, "").to_numpy(zero_copy_only=False)
        words = pc.utf8_lower(pc.if_else(pc.equal(values, ""), "false", values))
        return self._booleans(words) & ~blank

    def outputs(self) -> dict[int, dict[str, Any]]:
        raw = self.take("output")
        blank = pc.match_substring_regex(raw, r"^[ \t]*$").to_numpy(zero_copy_only=False)
        return {i: {"output": v} for i, v in enumerate(raw.to_pylist()) if not blank[i]}


def _refuse_long(ids: pa.Array) -> None:
    """Leave to the row path a column holding an id of more than ``TASK_ID_LIMIT`` bytes (it may
    be more characters than the limit allows: the row path counts them, and names the line)."""
    if (pc.max(pc.binary_length(ids)).as_py() or 0) > TASK_ID_LIMIT:
        raise _Refused


def arrow_ids(values: Any, like: NDArray[np.object_] | None = None) -> Any:
    """A pyarrow string or integer column as a NumPy array of ``str`` objects: ``like`` itself
    when it holds the same ids in the same order (another arm's ids: one array of a million ids
    instead of two, ~70 MB, and never both alive at once).

    Both the conversion and the comparison go by slices of :data:`_SLICE` ids, so that their
    temporaries (a slice's conversion, ``like``'s slice as Arrow text) stay small beside the ids.
    """
    if not pa.types.is_string(values.type) and not pa.types.is_large_string(values.type):
        values = pc.cast(values, pa.string())
    if like is not None and len(like) == len(values) and _same_texts(values, like):
        return like
    out = np.empty(len(values), dtype=object)
    for start in range(0, len(values), _SLICE):
        out[start : start + _SLICE] = values.slice(start, _SLICE).to_numpy(zero_copy_only=False)
    return out


def _same_texts(values: Any, like: NDArray[np.object_]) -> bool:
    """Whether the string column ``values`` and the ``str`` objects of ``like`` are equal."""
    for start in range(0, len(values), _SLICE):
        try:
            given = pa.array(like[start : start + _SLICE], type=values.type)
        except (pa.ArrowException, TypeError, ValueError):
            return False  # not all text: not the same ids
        if not pc.all(pc.equal(values.slice(start, _SLICE), given)).as_py():
            return False
    return True


def labels(values: pa.Array) -> NDArray[np.object_]:
    """A column of few distinct texts (or integers) as ``str`` objects, one object per distinct
    value (``None`` where absent)."""
    if not pa.types.is_string(values.type):
        values = pc.cast(values, pa.string())
    encoded = pc.dictionary_encode(values)
    names = np.array([*encoded.dictionary.to_pylist(), None], dtype=object)
    codes = pc.fill_null(encoded.indices, len(encoded.dictionary)).to_numpy(zero_copy_only=False)
    return names[codes]
