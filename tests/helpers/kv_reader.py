"""A toy result format for the reader registry's tests: ``key=value`` pairs, one row per line.

``id=t1 passed=true latency_s=0.5``: pairs separated by spaces, no quoting. Blank lines and lines
starting with ``#`` are skipped. Importing this module registers the format as ``kv`` (the one
registration line at the bottom); detection asks it about any file that is not JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ablation import ResultReader, register_reader
from ablation.errors import InputError
from ablation.sources.readers import ReadOptions, Row
from ablation.sources.text import file_error

_PAIRS = re.compile(r"[A-Za-z_][\w.]*=\S*(?: +[A-Za-z_][\w.]*=\S*)*")


def detect(head: str) -> bool:
    """True when the first non-blank, non-comment line is only ``key=value`` pairs."""
    line = next((s.strip() for s in head.splitlines() if s.strip() and not s.startswith("#")), "")
    return _PAIRS.fullmatch(line) is not None


def rows(text: str, display: str, options: ReadOptions) -> Iterator[Row]:
    """One row per line: the id at ``--key``, the verdict at ``--field``, ``latency_s`` if given."""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _PAIRS.fullmatch(line) is None:
            raise file_error(InputError, display, f"not key=value pairs: {line[:40]!r}", line=number)
        pairs = dict(pair.split("=", 1) for pair in line.split())
        latency = pairs.get("latency_s")
        yield Row(
            line=number,
            task_id=pairs.get(options.key or "id"),
            verdict=pairs.get(options.field or "passed"),
            latency_s=None if latency is None else float(latency),
        )


register_reader(ResultReader("kv", ("text",), detect, rows))
