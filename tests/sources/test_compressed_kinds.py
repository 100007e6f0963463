"""A result file compressed by another tool than gzip, or gzip twice, is named as such in one line.

Only one layer of gzip is decompressed. bzip2, xz and zstd files (what ``bzip2``, ``xz`` and
``zstd`` write; the zstd frame below is the real output of ``zstd -c`` for two rows, as the
standard library of Python 3.11 has no zstd writer) and a gzip stream inside a gzip stream were
decoded as text and refused as "not UTF-8 text (invalid start byte)" at line 1, which names
neither the cause nor the remedy. The references are the standard library's own compressors and
the real command line; a text whose first characters look like a magic number is still text.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.cli import run_here

from ablation.errors import InputError
from ablation.sources.result_files import load_results

_ROWS = b'{"id":"a","passed":true}\n{"id":"b","passed":false}\n'
#: ``printf '{"id":"a","passed":true}\n{"id":"b","passed":false}\n' | zstd -c`` (zstd 1.5).
_ZSTD = bytes.fromhex(
    "28b52ffd243355010014027b226964223a2261222c22706173736564223a747275657d0a"
    "6266616c73657d0a0200c088389b63f23e24dd"
)

_PACKED: dict[str, Callable[[bytes], bytes]] = {
    "bzip2": bz2.compress,
    "xz": lzma.compress,
    "zstd": lambda data: _ZSTD,
}


def _message(path: Path) -> str:
    with pytest.raises(InputError) as info:
        load_results(path)
    message = str(info.value)
    assert "\n" not in message, message
    return message


@pytest.mark.parametrize("kind", sorted(_PACKED))
def test_other_compressors_are_named(tmp_path: Path, kind: str) -> None:
    path = tmp_path / f"results.jsonl.{kind}"
    path.write_bytes(_PACKED[kind](_ROWS))
    message = _message(path)
    assert message.startswith(f"{path}: holds {kind}-compressed data: only gzip is decompressed"), message
    assert "UTF-8" not in message


def test_gzip_inside_gzip_is_named(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl.gz"
    path.write_bytes(gzip.compress(gzip.compress(_ROWS)))
    message = _message(path)
    assert message.startswith(f"{path}: holds gzip-compressed data inside its gzip data"), message


def test_xz_inside_gzip_is_named(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl.gz"
    path.write_bytes(gzip.compress(lzma.compress(_ROWS)))
    assert _message(path).startswith(f"{path}: holds xz-compressed data inside its gzip data")


def test_command_line_exits_1_with_one_line(tmp_path: Path) -> None:
    plain = tmp_path / "before.jsonl"
    plain.write_bytes(_ROWS)
    packed = tmp_path / "after.jsonl.bz2"
    packed.write_bytes(bz2.compress(_ROWS))
    proc = run_here(["compare", str(plain), str(packed), "--quiet"])
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"{packed}: holds bzip2-compressed data" in lines[0], lines[0]


def test_text_that_starts_like_a_magic_number_is_text(tmp_path: Path) -> None:
    """``BZh`` opens a CSV header here: without bzip2's block magic after it, it is text."""
    path = tmp_path / "results.csv"
    path.write_bytes(b"BZh,id,passed\nx,a,true\ny,b,false\n")
    assert [r.task_id for r in load_results(path)] == ["a", "b"]
