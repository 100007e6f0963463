"""A plain JSON-lines or CSV result file parsed by pyarrow into one table, or ``None``.

:func:`read_table` is the parse alone: pyarrow's readers, their options, and the columns kept.
What each cell means to the row path, and whether the engine can vouch for it, is decided by
:mod:`~ablation.sources.readers.engine_columns` on the table this returns.

Assumes a file :func:`~ablation.sources.readers.engine.engine_columns` vetted (in CSV: ASCII
without quotes or control characters, so that a header line is cut as the :mod:`csv` module
cuts it).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json

from ablation.sources.readers.generic import COST_UNITS, RESULT_NUMBERS
from ablation.sources.readers.rows import ReadOptions

__all__ = ["OWN", "csv_header", "read_table"]

#: Columns with a meaning of their own besides the id, verdict and run; any other numeric one is a metric.
OWN = (*RESULT_NUMBERS, *COST_UNITS, "category", "critical", "output")


def read_table(path: Path, kind: str, options: ReadOptions) -> pa.Table | None:
    """The file as a pyarrow table (CSV cells as text), or ``None`` when the header is not plain.

    In JSON lines the result's own numbers (and, in numeric mode, the field) are parsed as
    floats, as the row path turns them into floats: an integer or float there is one type.

    The file is read as a stream of record batches, and nested columns (objects, lists) that the
    row path ignores are dropped from each batch, so that only the columns a report reads are
    held. A batch whose columns differ from the first's (a field first met later) raises.
    """
    special = {options.key or "id", options.field or "passed", options.run_field, *OWN}
    if kind == "jsonl":
        given = [name for name in RESULT_NUMBERS if name not in (options.key, options.field, options.run_field)]
        numbers = pa.schema([(name, pa.float64()) for name in (*given, *([options.field] if options.numeric else []))])
        reader = pa_json.open_json(
            path, parse_options=pa_json.ParseOptions(explicit_schema=numbers, unexpected_field_behavior="infer")
        )
    else:
        header = csv_header(path)
        required = [options.key or "id", options.field or "passed", *([options.run_field] if options.run_field else [])]
        if header is None or not set(required) <= set(header):
            return None
        reader = pa_csv.open_csv(
            path,
            read_options=pa_csv.ReadOptions(column_names=header, skip_rows=1),
            parse_options=pa_csv.ParseOptions(quote_char=False, newlines_in_values=False),
            convert_options=pa_csv.ConvertOptions(
                column_types={name: pa.string() for name in header}, strings_can_be_null=False
            ),
        )
    kept = [i for i, f in enumerate(reader.schema) if f.name in special or not pa.types.is_nested(f.type)]
    batches = [batch.select(kept) for batch in reader]
    return pa.Table.from_batches(batches) if batches else None


def csv_header(path: Path) -> list[str] | None:
    """The header's cells (stripped) when the row path accepts it, else ``None``."""
    with path.open("r", encoding="ascii", newline="") as fh:
        line = fh.readline()
    cells = [cell.strip() for cell in next(csv.reader([line]), [])]
    if not cells or any(not cell for cell in cells) or len(set(cells)) != len(cells):
        return None
    return cells
