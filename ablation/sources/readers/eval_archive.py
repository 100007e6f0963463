"""The zip archive of an Inspect ``.eval`` log, checked and rewritten before inspect-ai reads it.

Owns :func:`vetted_copy`. inspect-ai reads an archive with a zip reader of its own, which need not
find the entries :mod:`zipfile` finds: behind data before the first entry, each reader takes
another directory. So an archive is never handed to
inspect-ai as it came: the entries :mod:`zipfile` lists are checked (their declared sizes in
total and by ratio), each is decompressed a megabyte at a time up to the size it declares
(deflate, zstd or stored; another method is refused, naming it), its checksum is compared, and
the last entry of each name (the one a reader by name finds) is written uncompressed to a fresh
archive in a folder of the caller's: the only file inspect-ai is given, so it reads exactly the
bytes checked here, however the original's directories disagree and whatever becomes of the
original file meanwhile. Every refusal is one line naming the file.
"""

from __future__ import annotations

import io
import os
import zipfile
import zlib

from ablation.errors import InputError
from ablation.sources.text import MAX_BYTES, MAX_RATIO, file_error

__all__ = ["vetted_copy"]

#: Bytes decompressed at a time.
_CHUNK = 1 << 20
#: The zip method number of zstd (what Inspect writes).
_ZSTD = 93


def vetted_copy(data: bytes, display: str, folder: str, max_bytes: int = MAX_BYTES) -> str:
    """Check the ``.eval`` archive ``data`` and write what it holds to ``folder/log.eval``.

    Args:
        data: The archive's bytes (at most ``max_bytes``, already read).
        display: The name errors give.
        folder: An existing, private folder; the copy is written there.
        max_bytes: The most its entries may declare in all.

    Returns:
        The copy's path: stored (uncompressed) entries, the last of each name, in their order.

    Raises:
        InputError: a truncated or damaged archive, entries that declare too much or more than
            :data:`~ablation.sources.text.MAX_RATIO` times their compressed size past 32 MiB,
            one that holds more than it declares or whose checksum differs, or one compressed
            by a method inspect-ai does not read.
    """
    try:
        entries = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise file_error(
            InputError, display, f"is a truncated or damaged Inspect .eval archive (zip: {exc})"
        ) from None
    _check_declared(entries, display, max_bytes)
    last = {entry.filename: entry for entry in entries}
    path = os.path.join(folder, "log.eval")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as copy:
        for entry in entries:
            if last[entry.filename] is entry:
                copy.writestr(entry.filename, _content(data, entry, display))
    return path


def _check_declared(entries: list[zipfile.ZipInfo], display: str, max_bytes: int) -> None:
    """Refuse entries whose declared sizes add up past ``max_bytes``, or expand like a bomb."""
    total = 0
    for entry in entries:
        total += entry.file_size
        if total > max_bytes:
            raise file_error(
                InputError, display,
                f"the .eval archive's entries declare more than {max_bytes} bytes: not read "
                "(raise the limit with --max-input-bytes)",
            )  # fmt: skip
        if entry.file_size > (32 << 20) and entry.file_size > MAX_RATIO * max(entry.compress_size, 1):
            raise file_error(
                InputError, display,
                f"the .eval entry {entry.filename!r} expands {entry.compress_size} bytes to "
                f"{entry.file_size}: refused as a decompression bomb",
            )  # fmt: skip


def _content(data: bytes, entry: zipfile.ZipInfo, display: str) -> bytes:
    """What ``entry`` holds, decompressed :data:`_CHUNK` bytes at a time and never past one
    chunk beyond the size it declares (a reader asked for a whole entry inflates all of it)."""
    start = entry.header_offset
    name_len, extra_len = (int.from_bytes(data[at : at + 2], "little") for at in (start + 26, start + 28))
    raw = data[start + 30 + name_len + extra_len :][: entry.compress_size]
    if entry.compress_type == zipfile.ZIP_STORED:
        held = raw
    elif entry.compress_type == zipfile.ZIP_DEFLATED:
        try:
            held = _inflated(raw, entry.file_size)
        except zlib.error as exc:
            raise file_error(InputError, display, f"is a truncated or damaged Inspect .eval archive (the entry {entry.filename!r}: deflate: {exc})") from None
    elif entry.compress_type == _ZSTD:
        held = _unzstd(raw, entry.file_size, display)
    else:
        raise file_error(
            InputError, display,
            f"the .eval entry {entry.filename!r} is compressed by zip method "
            f"{entry.compress_type}, which inspect-ai does not read (only stored, deflate, zstd)",
        )  # fmt: skip
    if len(held) > entry.file_size:
        raise file_error(
            InputError, display,
            f"the .eval entry {entry.filename!r} holds more than the {entry.file_size} bytes "
            "it declares: refused unread",
        )  # fmt: skip
    if zlib.crc32(held) != entry.CRC:
        raise file_error(
            InputError, display,
            f"is a truncated or damaged Inspect .eval archive (the entry {entry.filename!r} "
            "does not match its checksum)",
        )  # fmt: skip
    return held


def _inflated(raw: bytes, size: int) -> bytes:
    """Raw deflate ``raw`` decompressed up to a chunk past ``size`` bytes."""
    inflate, out, tail = zlib.decompressobj(-15), io.BytesIO(), raw
    while out.tell() <= size:
        piece = inflate.decompress(tail, _CHUNK)
        tail = inflate.unconsumed_tail
        if not piece and not tail:
            break
        out.write(piece)
    return out.getvalue()


def _unzstd(raw: bytes, size: int, display: str) -> bytes:
    """The first zstd frame of ``raw`` (what inspect-ai reads) up to a chunk past ``size``."""
    try:
        import zstandard
    except ImportError:  # a dependency of inspect-ai, which reads .eval archives
        raise file_error(InputError, display, "holds zstd-compressed entries: install inspect-ai (pip install inspect-ai)") from None
    out = io.BytesIO()
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)) as reader:
            while out.tell() <= size and (chunk := reader.read(_CHUNK)):
                out.write(chunk)
    except zstandard.ZstdError as exc:
        raise file_error(InputError, display, f"is a truncated or damaged Inspect .eval archive (zstd: {exc})") from None
    return out.getvalue()
