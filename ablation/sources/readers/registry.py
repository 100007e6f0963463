"""The result-format registry: one :class:`ResultReader` per format, tried in order on the content.

A result file's content has one of four shapes, told apart without knowing the format:

- ``"document"``: one JSON object (possibly over many lines);
- ``"lines"``: JSON lines, one object per non-blank line (a one-line file is both a document and
  lines: a reader of documents sees it as its document, any other reader as one line);
- ``"array"``: a JSON array of objects;
- ``"text"``: anything else (CSV, TSV, ``key=value`` lines...).

Each reader declares the shapes it reads, a detector and a row source. Detection walks the
registry in order and takes the first reader that reads the content's shape and whose detector
says yes; the built-in ``jsonl`` (documents, lines, arrays) and ``csv`` (text) readers accept
everything of their shapes, so they come last and a registered reader goes before them.
:data:`FORMATS` is a live view of the registered names, in registry order.

Assumption: readers are registered at import time of the program that reads (the registry is a
module-level list, not guarded against concurrent registration).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from ablation.errors import ConfigError
from ablation.sources.readers.rows import ReadOptions, Row

__all__ = ["FORMATS", "SHAPES", "ResultReader", "find_reader", "readers_for", "register_reader"]

Shape = Literal["document", "lines", "array", "text"]
#: The content shapes, in the order a one-line object tries them (``document`` before ``lines``).
SHAPES: tuple[Shape, ...] = ("document", "lines", "array", "text")
#: How many characters of a text a ``"text"`` detector sees (the start of the file).
TEXT_HEAD = 1 << 16


@dataclass(frozen=True)
class ResultReader:
    """One result format: its name, the shapes it reads, a detector and a row source.

    Attributes:
        name: The format's name (``compare --from NAME``), lower case.
        shapes: The content shapes it reads (module docstring), a non-empty subset of
            :data:`SHAPES`.
        detect: ``detect(sample) -> bool``, where ``sample`` is the document, the first line's or
            item's object, or the first :data:`TEXT_HEAD` characters of a text. It must not raise
            on a sample of another format (return ``False``).
        rows: ``rows(payload, display, options)`` yields :class:`~ablation.sources.readers.rows.Row`
            objects; ``payload`` is the document, an iterator of ``(line, object)`` for lines
            and arrays, or the whole text. Errors are one line naming ``display`` (see
            :func:`~ablation.sources.text.file_error`).
        unit: What a row number counts in messages: ``"line"`` or ``"sample"``.
    """

    name: str
    shapes: tuple[Shape, ...]
    detect: Callable[[Any], bool]
    rows: Callable[[Any, str, ReadOptions], Iterator[Row]]
    unit: Literal["line", "sample"] = "line"

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.lower():
            raise ConfigError(f"a reader's name must be non-empty and lower case, got {self.name!r}")
        if not self.shapes or not set(self.shapes) <= set(SHAPES):
            raise ConfigError(f"reader {self.name!r}: shapes must be some of {SHAPES}, got {self.shapes!r}")


_READERS: list[ResultReader] = []
#: The readers that accept everything of their shapes: registered readers go before them.
_CATCH_ALL = ("jsonl", "csv")


def register_reader(reader: ResultReader) -> ResultReader:
    """Add ``reader`` to the registry (replacing a reader of the same name in place).

    A new reader goes before the catch-all ``jsonl`` and ``csv`` readers, so that its detector
    is asked first. Returns ``reader`` (usable as a one-line registration).
    """
    names = [r.name for r in _READERS]
    if reader.name in names:
        _READERS[names.index(reader.name)] = reader
        return reader
    at = next((i for i, name in enumerate(names) if name in _CATCH_ALL), len(names))
    _READERS.insert(at if reader.name not in _CATCH_ALL else len(names), reader)
    return reader


def find_reader(name: str) -> ResultReader | None:
    """The registered reader called ``name``, or ``None``."""
    return next((r for r in _READERS if r.name == name), None)


def readers_for(shapes: Sequence[Shape]) -> Iterator[ResultReader]:
    """The registered readers that read one of ``shapes``, in registry order."""
    return (r for r in _READERS if any(shape in r.shapes for shape in shapes))


class _Names(Sequence[str]):
    """The registered format names, read live (a reader registered later is listed)."""

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        names = tuple(r.name for r in _READERS)
        return names[index]

    def __len__(self) -> int:
        return len(_READERS)

    def __repr__(self) -> str:
        return repr(tuple(self))


#: The result formats ``compare --from`` accepts: the registered readers' names, in order.
FORMATS: Sequence[str] = _Names()
