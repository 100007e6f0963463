"""The currency and source of the costs in a pyarrow table: their distinct pairs, by pyarrow.

The engine (:mod:`~ablation.sources.readers.engine_columns`) reads the ``cost_currency`` and
``cost_source`` columns as the row path reads them (:mod:`~ablation.sources.readers.generic`: text
or null in JSON lines, CSV cells stripped with a blank one absent, a source one of
:data:`~ablation.sources.readers.generic.COST_SOURCES`), and keeps only the distinct ``(currency,
source)`` pairs of the rows with a cost (:attr:`~ablation.columns.TrialColumns.cost_units`): one
filter and one ``group_by`` in pyarrow's C++, no Python object per row. A cell the row path
refuses raises ``ValueError``, upon which the caller reads the file row by row (which names it).

Assumes the cells of :mod:`~ablation.sources.readers.engine_columns` (``table``, ``n``, ``take``
and, for CSV, ``stripped``) after the id, verdict and run were taken: a units column named as one
of them is no longer in the table, and means nothing more here, as in the row path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from ablation.columns import CostUnits, cost_units_of
from ablation.sources.readers.generic import COST_SOURCES, COST_UNITS

__all__ = ["cost_units"]


def cost_units(cells: Any, cost: NDArray[np.float64], *, csv: bool) -> CostUnits:
    """The distinct ``(currency, source)`` of the rows of ``cost`` that hold a cost (NaN: none).

    Every row of a units column is checked, with a cost or not, as the row path checks it;
    ``csv``: the cells are CSV text. Without either column each cost is ``(None, None)``.
    """
    if not any(name in cells.table.column_names for name in COST_UNITS):
        return cost_units_of(cost)
    currency, source = (_texts(cells, name, csv) for name in COST_UNITS)
    if not pc.all(pc.is_in(source.drop_null(), value_set=pa.array(COST_SOURCES))).as_py():
        raise ValueError("a cost source the row path refuses")
    return cost_units_of(cost, lambda rows: _distinct(currency, source, rows))


def _texts(cells: Any, name: str, csv: bool) -> pa.Array:
    """Column ``name`` as text, null where absent (a column the file lacks: all null)."""
    if name not in cells.table.column_names:
        return pa.nulls(cells.n, pa.string())
    if csv:
        values = cells.stripped(name)
        return pc.if_else(pc.equal(values, ""), pa.scalar(None, pa.string()), values)
    values = cells.take(name)
    if pa.types.is_null(values.type):
        return values.cast(pa.string())
    if not pa.types.is_string(values.type):
        raise ValueError(f"{name!r} is not text")  # a number, a boolean, an object...
    return values


def _distinct(currency: pa.Array, source: pa.Array, rows: NDArray[np.bool_]) -> list[tuple[Any, Any]]:
    """The distinct ``(currency, source)`` of the rows of the mask ``rows``."""
    kept = pa.table({"currency": currency, "source": source}).filter(pa.array(rows))
    pairs = kept.group_by(["currency", "source"]).aggregate([])
    return list(zip(pairs.column("currency").to_pylist(), pairs.column("source").to_pylist(), strict=True))
