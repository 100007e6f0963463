"""A result file larger than ``--max-input-bytes`` costs no more memory than the limit allows.

End to end through the command line, with the peak RSS of the ``ablation`` process
(``helpers/rss.py``): a regular file whose size is over the limit is refused by its size before
it is read (not after the limit's worth of it is held), and gzip data is decompressed as it is
read, so neither the compressed data nor the output is held twice on the way to the limit.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from helpers.cli import cli_env
from helpers.rss import run_measured

from ablation.sources.text import MAX_BYTES, gunzip

#: One worker runs the module, so the small comparison of ``small`` is measured once.
pytestmark = pytest.mark.xdist_group("faults-input-size-bounds")

MIB = 1024 * 1024


def _compare(before: Path, after: Path, *extra: str):
    return run_measured(["compare", str(before), str(after), "--format", "json", *extra], cli_env())


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    """A small valid result file, and the peak RSS in MiB of comparing it with itself."""
    path = tmp_path_factory.mktemp("small") / "small.jsonl"
    path.write_text("".join(json.dumps({"id": f"t{i}", "passed": i % 2 == 0}) + "\n" for i in range(20)))
    measured = _compare(path, path)
    assert measured.returncode == 0, measured.stderr
    return path, measured.peak_mib


@pytest.mark.slow
def test_a_regular_file_over_the_limit_is_refused_by_its_size(tmp_path: Path, small: tuple[Path, float]) -> None:
    big = tmp_path / "big.jsonl"
    with big.open("wb") as fh:  # sparse: 300 MiB that take no disk, over the default limit
        fh.write(b'{"id": "t0", "passed": true, "pad": "')
        fh.truncate(300 * MIB)
    measured = _compare(small[0], big)
    assert measured.returncode == 1
    assert measured.stdout == ""
    assert measured.stderr == (
        f"ablation: error: {big}: larger than {MAX_BYTES} bytes: not read (raise the limit with --max-input-bytes)\n"
    )
    assert measured.peak_mib < small[1] + 40, (measured.peak_mib, small[1])


def _stored_gzip(path: Path, size: int) -> None:
    """``size`` bytes of one JSON line in gzip's stored (uncompressed) blocks: gzip data as
    large as its output, so that a copy of the compressed data shows in the peak."""
    packer = zlib.compressobj(0, zlib.DEFLATED, 31)
    with path.open("wb") as fh:
        fh.write(packer.compress(b'{"id": "t0", "passed": true, "pad": "'))
        for _ in range(size // MIB):
            fh.write(packer.compress(b"a" * MIB))
        fh.write(packer.compress(b'"}\n') + packer.flush())


@pytest.mark.slow
def test_gzip_data_is_refused_at_the_limit_without_holding_it_twice(
    tmp_path: Path, small: tuple[Path, float]
) -> None:
    packed = tmp_path / "big.jsonl.gz"
    _stored_gzip(packed, 48 * MIB)
    limit = 32 * MIB
    measured = _compare(small[0], packed, "--max-input-bytes", str(limit))
    assert measured.returncode == 1
    # The limit's worth of output once, and a few one-MiB steps (not the gzip data again).
    assert measured.peak_mib < small[1] + 1.5 * limit / MIB, (measured.peak_mib, small[1])
    # Named as too large (the gzip data alone is), not as "truncated" at the limit.
    [line] = measured.stderr.strip().splitlines()
    assert str(packed) in line and f"larger than {limit} bytes" in line and "--max-input-bytes" in line, line


def test_gzip_read_as_a_stream_gives_every_member_and_refuses_what_follows() -> None:
    rows = b"".join(json.dumps({"id": f"t{i}", "passed": True}).encode() + b"\n" for i in range(50_000))
    first, second = zlib.compressobj(6, zlib.DEFLATED, 31), zlib.compressobj(1, zlib.DEFLATED, 31)
    data = first.compress(rows) + first.flush() + second.compress(b"more\n") + second.flush()
    assert gunzip(data + b"\0" * (3 * MIB), "x.gz") == rows + b"more\n"  # padding across steps
    from ablation.errors import InputError

    with pytest.raises(InputError, match=r"^x\.gz: 2097153 bytes after the gzip data are neither"):
        gunzip(data + b"\0" * (2 * MIB) + b"!", "x.gz")
    with pytest.raises(InputError, match=r"^x\.gz: larger than 1000 bytes: not read"):
        gunzip(data, "x.gz", max_bytes=1000)
