"""Read one arm's result files and expected-id lists strictly.

Owns :func:`load_results` (JSONL, JSON array or CSV rows into :class:`~ablation.schema.TaskResult`),
:func:`load_result_columns` (the same rows as :class:`~ablation.columns.TrialColumns`),
:func:`parse_verdict` (what counts as an unambiguous boolean) and :func:`load_expected_ids`. Every
error is one line: ``FILE:LINE: problem (task id 'X')`` (the line and the id when known), built
with the helpers of :mod:`ablation.sources.text`. Files are read as UTF-8 (a byte-order mark is
allowed); line numbers count from 1.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ablation.errors import ConfigError, InputError
from ablation.schema import ARMS, TaskResult
from ablation.sources.readers.rows import ReadOptions, checked_task_id, parse_verdict
from ablation.sources.text import (
    MAX_BYTES,
    file_error,
    json_array_items,
    nonblank_lines,
    read_text,
    short_repr,
    starts_json_array,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ablation.sources.readers.columnar import ColumnRead

__all__ = ["load_expected_ids", "load_result_columns", "load_results", "parse_verdict"]


# --------------------------------------------------------------------------- results


def load_results(
    path: str | os.PathLike[str],
    key: str | None = None,
    field: str | None = None,
    *,
    arm: str = "baseline",
    format: str | None = None,
    run_field: str | None = None,
    where: Mapping[str, str] | None = None,
    pass_values: Iterable[str] | None = None,
    numeric: bool = False,
    max_bytes: int | None = None,
    display: str | None = None,
) -> list[TaskResult]:
    """Load one arm's per-task verdicts from a result file of any supported format.

    Plain rows (JSONL, a JSON array, one JSON object, CSV) become ``TaskResult(task_id=str(row[key]),
    arm=arm, run=row[run_field] or 0, status="completed", passed=<verdict>)``; the optional columns
    are described in :mod:`ablation.sources.readers.generic`. Tool outputs (Inspect logs,
    pydantic-evals reports, lm-eval samples, promptfoo results, OpenAI evals records) are detected
    from the content and mapped as their reader modules document. ``path`` may be ``-`` (standard
    input) and may be gzip-compressed.

    A verdict must be unambiguous: a JSON boolean, a number equal to 1 or 0 (a JSON number, or a
    text spelling one: ``1``, ``0.00``, ``1e0``), or one of the strings true/false, pass/fail,
    passed/failed, yes/no (any case, surrounding spaces ignored), unless ``pass_values`` lists the
    values that pass. Another number makes ``compare`` read the field as a number; anything else
    is an error, never a guess.

    Args:
        path: The file, or ``-`` for standard input.
        key: Dotted path of the task id (default ``id``, or the tool's own id).
        field: Dotted path of the verdict, or the scorer/evaluator/metric of a tool format
            (default ``passed``, or the tool's default).
        arm: ``"baseline"`` or ``"candidate"``, recorded on every result.
        format: One of :data:`~ablation.sources.readers.FORMATS` (``json`` means ``jsonl``) to
            skip detection.
        run_field: Dotted path of the run index (repeated runs); Inspect epochs and pydantic-evals
            repeats are runs without it.
        where: ``{dotted path: text}``: keep only the rows whose values read as these texts.
        pass_values: Verdict values (as text) that count as a pass.
        numeric: Read ``field`` as a number into ``quality[field]`` (see
            :mod:`ablation.analysis.numeric`); ``passed`` is then ``False``.
        max_bytes: Largest file read, after gzip decompression (default
            :data:`~ablation.sources.text.MAX_BYTES`, 256 MiB); a gzip stream that expands more
            than :data:`~ablation.sources.text.MAX_RATIO` times is refused as a bomb.
        display: The name errors give the source (default ``path``): the source the user named
            when ``path`` is a copy of it (standard input or a pipe, kept to be read again).

    Returns:
        The results in file order.

    Raises:
        InputError: missing, empty or malformed file, a row without the id or verdict (or an
            empty id, or one longer than :data:`~ablation.schema.TASK_ID_LIMIT` characters), a
            verdict that is not a boolean, a bad number, or a duplicate ``(id, run)`` (naming both lines).
        ConfigError: ``arm`` is not an arm, ``key`` equals ``field``, or ``where`` is not a
            mapping of texts.
    """
    from ablation.sources.readers import read_results

    options = _options(key, field, arm, run_field, where, pass_values, numeric, max_bytes)
    return read_results(os.fspath(path), options, format=format, display=display)


def load_result_columns(
    path: str | os.PathLike[str],
    key: str | None = None,
    field: str | None = None,
    *,
    arm: str = "baseline",
    format: str | None = None,
    run_field: str | None = None,
    where: Mapping[str, str] | None = None,
    pass_values: Iterable[str] | None = None,
    numeric: bool = False,
    max_bytes: int | None = None,
    ids_like: NDArray[np.object_] | None = None,
    display: str | None = None,
) -> ColumnRead:
    """Load one arm's results as columns: what :func:`load_results` reads, without the objects.

    Same arguments, formats, checks and errors as :func:`load_results` (which see); the rows'
    :class:`~ablation.schema.TaskResult` objects are built only when asked for
    (:meth:`~ablation.sources.readers.columnar.ColumnRead.result`). A large plain JSON-lines or
    CSV file is read column-wise by pyarrow when it is installed (the ``fast`` extra;
    :mod:`ablation.sources.readers.engine`), other plain verdict JSON lines take a fast path
    (:mod:`ablation.sources.readers.columnar`), and anything else is read row by row. With
    ``numeric`` the field's numbers are the column ``quality[field]`` (NaN where a trial has
    none) and ``passed`` is all ``False``, by either path.

    ``ids_like`` (another arm's ``task_id`` column): when a file the engine reads lists the same
    ids in the same order, its columns hold that array instead of a second copy. ``display``: as
    for :func:`load_results`.

    Returns:
        The columns (in file order) and the rows' other fields.
    """
    from ablation.sources.readers.columnar import read_columns
    from ablation.sources.readers.engine import engine_columns

    source = os.fspath(path)
    display = display or source
    options = _options(key, field, arm, run_field, where, pass_values, numeric, max_bytes)
    fast = engine_columns(source, options, format, display, ids_like)
    return fast if fast is not None else read_columns(source, options, format=format, display=display)


def _options(
    key: str | None,
    field: str | None,
    arm: str,
    run_field: str | None,
    where: Mapping[str, str] | None,
    pass_values: Iterable[str] | None,
    numeric: bool,
    max_bytes: int | None = None,
) -> ReadOptions:
    """The reader options, after the checks every loader makes (arm, key differs from field)."""
    if arm not in ARMS:
        raise ConfigError(f"arm must be 'baseline' or 'candidate', got {arm!r}")
    if key is not None and key == field:
        raise ConfigError(f"key and field must be different columns, both are {key!r}")
    if isinstance(pass_values, str):
        pass_values = pass_values.split(",")
    return ReadOptions(
        key=key,
        field=field,
        run_field=run_field,
        where=_where(where),
        pass_values=None if pass_values is None else frozenset(v.strip() for v in pass_values),
        arm=arm,
        numeric=numeric,
        **({} if max_bytes is None else {"max_bytes": max_bytes}),
    )


def _where(where: Mapping[str, str] | None) -> dict[str, str]:
    """``where`` checked: a mapping of dotted paths to texts (a row's value is compared as text,
    so ``{"run": 1}`` would match no row, silently; ``"run=1"`` is the command line's form).

    Raises:
        ConfigError: naming what was given instead.
    """
    if where is None:
        return {}
    try:
        if isinstance(where, str | bytes):
            raise TypeError
        given = dict(where)  # a mapping, or (path, text) pairs
    except (TypeError, ValueError):
        raise ConfigError(
            f"where must be a mapping of dotted paths to texts, e.g. {{'arm': 'baseline'}}, got "
            f"{type(where).__name__} {short_repr(where)}"
        ) from None
    bad = [f"{short_repr(k)}: {short_repr(v)}" for k, v in given.items() if not isinstance(k, str) or not isinstance(v, str)]
    if bad:
        raise ConfigError(
            f"where maps dotted paths to texts (a value is compared as its text, e.g. {{'run': '1'}}), "
            f"got {', '.join(bad[:5])}"
        )
    return given


# --------------------------------------------------------------------------- expected ids


def load_expected_ids(path: str | os.PathLike[str], *, max_bytes: int | None = None) -> list[str]:
    """Load the inventory of task ids a results file is expected to cover.

    Args:
        path: A text file with one id per line (surrounding spaces stripped; blank lines and lines
            starting with ``#`` ignored), or a file holding one JSON array of strings/integers.
        max_bytes: Largest file read (default :data:`~ablation.sources.text.MAX_BYTES`, 256 MiB,
            the bound of result files); a larger or endless file (``/dev/zero``) is an error.

    Returns:
        The ids in file order.

    Raises:
        InputError: missing or too large file, malformed JSON array, an item that is not a string
            or integer, an id a result file's row could not hold (only whitespace, longer than
            :data:`~ablation.schema.TASK_ID_LIMIT` characters; the same check,
            :func:`~ablation.sources.readers.rows.checked_task_id`, naming the line), a duplicate
            id (naming both lines), or no ids at all.
    """
    display = os.fspath(path)
    text = read_text(Path(path), display, max_bytes=max_bytes or MAX_BYTES)
    entries: list[tuple[int, str]] = []
    if starts_json_array(text):
        for line, item in json_array_items(text, display):
            if isinstance(item, bool) or not isinstance(item, str | int) or item == "":
                raise file_error(
                    InputError,
                    display,
                    f"an id must be a non-empty string or an integer, got {short_repr(item)}",
                    line=line,
                )
            entries.append((line, checked_task_id(item, display, line, "id", what="the id")))
    else:
        for line, raw in nonblank_lines(text):
            stripped = raw.strip()
            if not stripped.startswith("#"):
                entries.append((line, checked_task_id(stripped, display, line, "id", what="the id")))
    first_line: dict[str, int] = {}
    for line, task_id in entries:
        if task_id in first_line:
            raise file_error(
                InputError,
                display,
                f"duplicate id {short_repr(task_id)}: first on line "
                f"{first_line[task_id]}, again on line {line}",
                line=line,
                task_id=task_id,
            )
        first_line[task_id] = line
    if not entries:
        raise file_error(InputError, display, "no ids (the file is empty or holds only comments)")
    return [task_id for _, task_id in entries]
