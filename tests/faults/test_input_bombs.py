"""``compare`` reads compressed inputs with bounded memory and names damaged archives.

End to end through the command line, with the peak RSS of the ``ablation`` process
(``helpers/rss.py``): a gzip bomb is refused by its ratio after 32 MiB of output, an ``.eval``
archive by the sizes its entries declare before inspect-ai reads them. In process (no memory
measured): a large file is refused by the size cap (``--max-input-bytes`` raises it); a truncated
``.eval`` and a gzipped ``.eval.gz`` are named as what they are.
"""

from __future__ import annotations

import gzip
import io
import json
import random
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
from helpers.cli import REPO, cli_env, run_here
from helpers.rss import run_measured

from ablation.errors import InputError

#: One worker runs the module, so the small comparison of ``small`` is measured once.
pytestmark = pytest.mark.xdist_group("faults-input-bombs")

TOOLS = REPO / "tests" / "data" / "tools"
MIB = 1024 * 1024


def _rows(n: int, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    return b"".join(
        json.dumps({"id": f"t{i}", "passed": rng.random() < 0.5, "note": f"{rng.random():.12f}"}).encode()
        + b"\n"
        for i in range(n)
    )


def _bomb(path: Path, size: int) -> None:
    """One JSONL row whose ``pad`` string is ``size`` bytes of ``a``, gzip-compressed (one member).

    Each MiB of ``a`` is deflated once and its bytes repeated: every piece ends with a full flush
    (no reference to earlier data, byte-aligned), so each MiB deflates to the same bytes, and
    the stream is the one a compressor flushing every MiB writes (seconds of compression saved).
    """
    start, block, end = b'{"id": "t0", "passed": true, "pad": "', b"a" * MIB, b'"}\n'
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: the gzip frame is ours
    head = packer.compress(start) + packer.flush(zlib.Z_FULL_FLUSH)
    piece, again = (packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH) for _ in range(2))
    assert again == piece, "a full flush did not make the pieces the same"
    tail = packer.compress(end) + packer.flush()
    crc = zlib.crc32(start)
    for _ in range(size // MIB):
        crc = zlib.crc32(block, crc)
    crc, total = zlib.crc32(end, crc), len(start) + size // MIB * MIB + len(end)
    with path.open("wb") as fh:
        fh.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + head)  # gzip header, no name
        fh.write(piece * (size // MIB))
        fh.write(tail + struct.pack("<II", crc, total & 0xFFFFFFFF))


def _compare(before: Path, after: Path, *extra: str):
    return run_measured(
        ["compare", str(before), str(after), "--format", "json", *extra], cli_env()
    )


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    """A small valid result file, and the peak RSS in MiB of comparing it with itself."""
    path = tmp_path_factory.mktemp("small") / "small.jsonl"
    path.write_bytes(_rows(50))
    measured = _compare(path, path)
    assert measured.returncode == 0, measured.stderr
    return path, measured.peak_mib


@pytest.mark.slow
def test_a_gzip_bomb_is_refused_by_its_ratio(tmp_path: Path, small: tuple[Path, float]) -> None:
    bomb = tmp_path / "bomb.jsonl.gz"
    _bomb(bomb, 300 * MIB)
    assert bomb.stat().st_size < 2 * MIB
    measured = _compare(small[0], bomb)
    assert measured.returncode == 1
    assert measured.stdout == ""
    [line] = measured.stderr.strip().splitlines()
    assert "bomb.jsonl.gz" in line and "decompression bomb" in line
    # At most the 32 MiB decompressed before the ratio is judged, and its copy.
    assert measured.peak_mib < small[1] + 80, (measured.peak_mib, small[1])


@pytest.mark.slow
def test_the_size_cap_names_its_flag_and_the_flag_raises_it(
    tmp_path: Path, small: tuple[Path, float]
) -> None:
    data = _rows(20_000)  # about 1.4 MiB that compresses about 3 times: no bomb
    path = tmp_path / "large.jsonl.gz"
    path.write_bytes(gzip.compress(data))
    args = ["compare", str(small[0]), str(path), "--format", "json", "--max-input-bytes"]
    capped = run_here([*args, str(len(data) // 2)])
    assert capped.returncode == 1
    [line] = capped.stderr.strip().splitlines()
    assert "large.jsonl.gz" in line and "--max-input-bytes" in line
    raised = run_here([*args, str(2 * len(data))])
    assert raised.returncode in (0, 2), raised.stderr
    assert json.loads(raised.stdout)["n_paired"] == 50


def _eval_with(
    entry: str, body: bytes, declared: int | None = None, crc: int | None = None, level: int = 6
) -> bytes:
    """The fixture ``.eval`` with one more entry, deflated at ``level``; ``declared`` patches its
    stated size (and ``crc`` its checksum)."""
    out = io.BytesIO((TOOLS / "inspect_candidate.eval").read_bytes())  # a copy of a real archive
    with zipfile.ZipFile(out, "a", zipfile.ZIP_DEFLATED, compresslevel=level) as archive:
        archive.writestr(entry, body)
    data = bytearray(out.getvalue())
    if declared is not None:  # the local header (size at +22) and the central record (+24)
        name = entry.encode()
        for sig, name_at, offset in ((b"PK\x03\x04", 30, 22), (b"PK\x01\x02", 46, 24)):
            start = data.find(sig)
            while start != -1:
                if data[start + name_at : start + name_at + len(name)] == name:
                    data[start + offset : start + offset + 4] = struct.pack("<I", declared)
                    if crc is not None:  # 4 bytes before the compressed size's field
                        data[start + offset - 8 : start + offset - 4] = struct.pack("<I", crc)
                start = data.find(sig, start + 4)
    return bytes(data)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["declared", "ratio"])
def test_eval_entries_are_checked_before_inspect_reads_them(
    tmp_path: Path, small: tuple[Path, float], kind: str
) -> None:
    path = tmp_path / "bomb.eval"
    if kind == "declared":  # a 1 KiB entry that says it holds 1.5 GiB
        path.write_bytes(_eval_with("samples/huge.json", b"{}" * 512, declared=3 * 512 * MIB))
        expected = "declare more than"
    else:  # an honest 64 MiB entry of one repeated byte (about 64 KiB compressed)
        path.write_bytes(_eval_with("samples/huge.json", b" " * (64 * MIB)))
        expected = "decompression bomb"
    measured = _compare(small[0], path)
    assert measured.returncode == 1
    [line] = measured.stderr.strip().splitlines()
    assert "bomb.eval" in line and expected in line, line
    assert measured.peak_mib < small[1] + 40, (measured.peak_mib, small[1])


@pytest.mark.slow
def test_an_eval_entry_holding_more_than_it_declares_is_refused_unread(
    tmp_path: Path, small: tuple[Path, float]
) -> None:
    """A 128 MiB entry (about 0.5 MB compressed, at deflate's fastest level) that declares its
    2-byte head, checksum and all: a reader asked for the whole entry (inspect-ai's json.load)
    inflated all of it (at least its 128 MiB of peak memory, three times the bound below; about
    2 GiB per MB of file at deflate's best level) before the zip reader cut it to the declared
    size."""
    head = b"{}"
    path = tmp_path / "liar.eval"
    body = head + b" " * (128 * MIB)
    path.write_bytes(_eval_with(
        "samples/liar_epoch_1.json", body, declared=len(head), crc=zlib.crc32(head), level=1
    ))  # fmt: skip
    measured = _compare(small[0], path)
    assert measured.returncode == 1
    [line] = measured.stderr.strip().splitlines()
    assert "liar.eval" in line and "holds more than the 2 bytes it declares" in line, line
    assert measured.peak_mib < small[1] + 40, (measured.peak_mib, small[1])


@pytest.mark.parametrize("keep", [3000, 2])
def test_a_truncated_eval_is_named(tmp_path: Path, keep: int) -> None:
    path = tmp_path / "cut.eval"
    path.write_bytes((TOOLS / "inspect_candidate.eval").read_bytes()[:keep])
    before = tmp_path / "before.jsonl"
    before.write_bytes(_rows(5))
    proc = run_here(["compare", str(before), str(path)])
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert "cut.eval" in line and "truncated or damaged Inspect .eval archive" in line, line


@pytest.mark.slow
def test_an_eval_gz_is_read_as_its_archive(tmp_path: Path) -> None:
    archive = TOOLS / "inspect_baseline.eval"  # (the candidate's has a sample error: exit 2)
    packed = tmp_path / "baseline.eval.gz"
    packed.write_bytes(gzip.compress(archive.read_bytes()))
    proc = run_here(["compare", str(archive), str(packed), "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["n_paired"] > 0
    assert report["regressions"] == report["improvements"] == []  # the same log on both sides


def test_truncated_gzip_is_named_as_such() -> None:
    from ablation.sources.text import gunzip

    data = gzip.compress(_rows(2000))
    with pytest.raises(InputError, match=r"x\.gz: truncated gzip data"):
        gunzip(data[: len(data) // 2], "x.gz")
    assert gunzip(data + gzip.compress(b"more\n") + b"\0\0", "x.gz") == _rows(2000) + b"more\n"


def _two_directories(hidden: bytes) -> bytes:
    """The fixture ``.eval`` behind a second directory that :mod:`zipfile` does not read.

    Its end record still says the directory starts at offset ``e`` (where the fixture's own
    starts), but the fixture now begins after a prefix: :mod:`zipfile` takes the prefix as data
    before the archive and reads the fixture's directory, while a reader that takes the offset
    as written (inspect-ai's) finds, at ``e``, a directory of one entry, ``header.json``,
    declaring 2 bytes and holding ``hidden``'s zstd frame.
    """
    import zstandard

    archive = (TOOLS / "inspect_candidate.eval").read_bytes()
    end = archive.rfind(b"PK\x05\x06")
    _, _, count, total, size, offset, _ = struct.unpack_from("<HHHHIIH", archive, end + 4)
    frame, name, crc = zstandard.ZstdCompressor().compress(hidden), b"header.json", zlib.crc32(b"{}")
    head = struct.pack("<4s5H3I2H", b"PK\x03\x04", 63, 0, 93, 0, 0, crc, len(frame), 2, len(name), 0)
    record = struct.pack(
        "<4s6H3I5H2I", b"PK\x01\x02", 63, 63, 0, 93, 0, 0, crc, len(frame), 2, len(name),
        0, 0, 0, 0, 0, offset + size,
    ) + name  # fmt: skip
    prefix = b"\0" * offset + record.ljust(size, b"\0") + head + name + frame
    return prefix + archive[:end] + struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, count, total, size, offset, 0)


def test_inspect_ai_reads_the_entries_that_were_checked(tmp_path: Path) -> None:
    # The hidden entry is 1 MiB of spaces here (4 GiB in 131 KB took 12.7 GB of peak memory
    # once inspect-ai parsed it): never checked, since zipfile lists the fixture's entries.
    hidden = b'{"a": "' + b" " * MIB + b'"}'
    path = tmp_path / "split.eval"
    path.write_bytes(_two_directories(hidden))
    baseline = TOOLS / "inspect_baseline.eval"
    args = ["compare", str(baseline), "--format", "json"]
    read = run_here([*args, str(path)])
    honest = run_here([*args, str(TOOLS / "inspect_candidate.eval")])
    assert (read.returncode, read.stderr) == (honest.returncode, honest.stderr)
    assert json.loads(read.stdout)["n_paired"] == json.loads(honest.stdout)["n_paired"] > 0


def test_an_eval_entry_whose_deflate_data_is_damaged_is_named(tmp_path: Path) -> None:
    data = bytearray(_eval_with("samples/zz_epoch_1.json", b'{"a": 1}' * 100))
    name = b"samples/zz_epoch_1.json"
    at = data.find(name) + len(name)  # the entry's data follows its local header's name
    data[at : at + 8] = b"\xff" * 8  # an invalid deflate block type
    path = tmp_path / "damaged.eval"
    path.write_bytes(bytes(data))
    proc = run_here(["compare", str(TOOLS / "inspect_baseline.eval"), str(path)])
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert "damaged.eval: is a truncated or damaged Inspect .eval archive" in line, line
    assert "samples/zz_epoch_1.json" in line and "deflate" in line, line
