"""Every read of ``ablation.sources`` is bounded, chunked, and says in one short line what it refused.

Through the real command line (in this process, or in a subprocess whose address space is capped
at 3 GiB where an unbounded read would otherwise take the machine's memory): bytes after a gzip
stream, an endless ``--expected-ids`` file or JSONL suite (``/dev/zero``), the largest
``--max-input-bytes`` (which must reserve nothing), and task ids of a megabyte in error lines.
"""

from __future__ import annotations

import gzip
import io
import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import AGENTS, LAUNCH, REPO, cli_env, run_here
from hypothesis import given
from hypothesis import strategies as st

from ablation.errors import InputError
from ablation.sources import text
from ablation.sources.result_files import load_expected_ids
from ablation.sources.text import MAX_BYTES, file_error, gunzip

#: Address space of a command that must not read without bound (the interpreter and its imports
#: take well under 1 GiB; the 256 MiB default limit fits).
_ADDRESS_SPACE = 3 << 30
_BIG_ID = "i" * 1_000_000


def _rows(prefix: str, n: int = 50) -> bytes:
    return b"".join(
        json.dumps({"id": f"t{i}", "passed": (i * 7 + len(prefix)) % 3 == 0}).encode() + b"\n"
        for i in range(n)
    )


def _capped(args: list[str], cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``ablation ARGS`` in a subprocess whose address space is capped (a runaway read fails fast
    with ``MemoryError`` instead of taking the machine's memory)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (_ADDRESS_SPACE, _ADDRESS_SPACE))

    return subprocess.run(
        [sys.executable, "-c", LAUNCH, *args], cwd=cwd, env=cli_env(), input=stdin,
        capture_output=True, timeout=120, preexec_fn=limit, check=False,
    )  # fmt: skip


def _one_line(stderr: str) -> str:
    [line] = stderr.strip().splitlines()
    return line


# --------------------------------------------------------------------------- gzip trailing bytes


@pytest.mark.parametrize("tail", ["plain result lines", "garbage"])
def test_bytes_after_the_gzip_data_are_refused_not_dropped(tmp_path: Path, tail: str) -> None:
    rows = _rows("a")
    lines = rows.splitlines(keepends=True)
    after = b"".join(lines[25:]) if tail == "plain result lines" else b"garbage-not-zero"
    packed = tmp_path / "a.jsonl.gz"
    packed.write_bytes(gzip.compress(b"".join(lines[:25])) + after)
    other = tmp_path / "b.jsonl"
    other.write_bytes(_rows("b"))
    proc = run_here(["compare", str(packed), str(other), "--quiet"])
    assert proc.returncode == 1, proc.stderr
    line = _one_line(proc.stderr)
    assert f"{packed}: {len(after)} bytes after the gzip data" in line, line
    assert "neither gzip data nor zero padding" in line


def test_zero_padding_after_the_gzip_data_is_read_as_gzip_does(tmp_path: Path) -> None:
    rows = _rows("a")
    packed = tmp_path / "a.jsonl.gz"
    packed.write_bytes(gzip.compress(rows) + gzip.compress(b"") + b"\0" * 4096)
    assert gzip.decompress(packed.read_bytes()[: -4096]) == rows  # what gzip -d gives, padding aside
    assert gunzip(packed.read_bytes(), "a.jsonl.gz") == rows
    proc = run_here(["compare", str(packed), str(packed), "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["n_tasks"] == 50


# --------------------------------------------------------------------------- endless sources


def test_an_endless_expected_ids_file_is_refused_at_the_limit(tmp_path: Path) -> None:
    rows = tmp_path / "a.jsonl"
    rows.write_bytes(_rows("a"))
    proc = _capped(["compare", str(rows), str(rows), "--expected-ids", "/dev/zero", "--quiet"], tmp_path)
    assert proc.returncode == 1, proc.stderr[-500:]
    line = _one_line(proc.stderr.decode())
    assert line == f"ablation: error: /dev/zero: larger than {MAX_BYTES} bytes: not read", line
    with pytest.raises(InputError, match=r"^/dev/zero: larger than 4096 bytes: not read$"):
        load_expected_ids("/dev/zero", max_bytes=4096)


def test_an_endless_jsonl_suite_is_refused_at_its_first_line(tmp_path: Path) -> None:
    suite = tmp_path / "zero.jsonl"
    suite.symlink_to("/dev/zero")
    args = ["run", str(suite), "--baseline", f"{REPO / AGENTS}:baseline",
            "--candidate", f"{REPO / AGENTS}:candidate", "--store", str(tmp_path / "runs.db"), "--quiet"]
    proc = _capped(args, tmp_path)
    assert proc.returncode == 1, proc.stderr[-500:]
    line = _one_line(proc.stderr.decode())
    assert line == f"ablation: error: {suite}:1: line longer than {MAX_BYTES} bytes: not read", line


# --------------------------------------------------------------------------- the largest limit


def test_the_largest_max_input_bytes_reserves_no_memory(tmp_path: Path) -> None:
    before, after = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    before.write_bytes(_rows("a"))
    after.write_bytes(_rows("b"))
    largest = str(2**40)  # the top of the flag's range
    expected = run_here(["compare", str(before), str(after), "--format", "json"])
    assert expected.returncode in (0, 2), expected.stderr
    from_file = run_here(["compare", str(before), str(after), "--format", "json", "--max-input-bytes", largest])
    assert (from_file.returncode, from_file.stdout) == (expected.returncode, expected.stdout), from_file.stderr
    piped = _capped(["compare", "-", str(after), "--format", "json", "--max-input-bytes", largest],
                    tmp_path, stdin=before.read_bytes())
    assert piped.returncode == expected.returncode, piped.stderr[-500:]
    assert json.loads(piped.stdout)["n_paired"] == json.loads(expected.stdout)["n_paired"] == 50


# --------------------------------------------------------------------------- lines read in chunks


@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=12),
    st.booleans(),
    st.integers(min_value=1, max_value=50),
)
def test_bounded_lines_are_the_lines_of_the_file_within_the_limit(
    parts: list[bytes], last_has_break: bool, limit: int
) -> None:
    data = b"\n".join(parts) + (b"\n" if parts and last_has_break else b"")
    expected = list(enumerate(io.BytesIO(data), start=1))  # the file's own line iteration
    too_long = [number for number, line in expected if len(line) > limit]
    if too_long:
        with pytest.raises(InputError, match=rf"^f\.jsonl:{too_long[0]}: line longer than {limit} bytes"):
            list(text.bounded_lines(io.BytesIO(data), "f.jsonl", max_bytes=limit))
    else:
        assert list(text.bounded_lines(io.BytesIO(data), "f.jsonl", max_bytes=limit)) == expected


def test_a_line_longer_than_a_chunk_is_read_whole(tmp_path: Path) -> None:
    long = b"x" * (20 << 20) + b"\n"  # more than two chunks of 8 MiB
    path = tmp_path / "long.txt"
    path.write_bytes(b"a\n" + long + b"b")
    with path.open("rb") as handle:
        assert list(text.bounded_lines(handle, "long.txt")) == [(1, b"a\n"), (2, long), (3, b"b")]
    with path.open("rb") as handle, pytest.raises(InputError, match=r"^long\.txt:2: line longer"):
        list(text.bounded_lines(handle, "long.txt", max_bytes=len(long) - 1))


# --------------------------------------------------------------------------- long ids in errors


def test_ids_in_common_id_errors_are_cut(tmp_path: Path) -> None:
    huge = tmp_path / "huge.jsonl"
    huge.write_text(json.dumps({"id": _BIG_ID, "passed": True}) + "\n")
    other = tmp_path / "b.jsonl"
    other.write_bytes(_rows("b"))
    proc = run_here(["compare", str(huge), str(other), "--quiet"])
    assert proc.returncode == 1
    line = _one_line(proc.stderr)
    assert len(line) < 400, len(line)
    assert "have no task id in common" in line, line
    assert "'" + "i" * 76 + "..." in line


def test_ids_in_duplicate_id_errors_are_cut(tmp_path: Path) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_text(f"{_BIG_ID}\nt1\n{_BIG_ID}\n")
    with pytest.raises(InputError) as caught:
        load_expected_ids(ids)
    assert len(str(caught.value)) < 400, len(str(caught.value))
    assert str(caught.value).startswith(f"{ids}:3: duplicate id 'iii"), caught.value
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"task_id": _BIG_ID, "input_data": n}) + "\n" for n in (1, 2)))
    proc = run_here(["run", str(suite), "--baseline", f"{AGENTS}:baseline", "--candidate",
                     f"{AGENTS}:candidate", "--store", str(tmp_path / "runs.db"), "--quiet"])
    assert proc.returncode == 1
    line = _one_line(proc.stderr)
    assert len(line) < 400, len(line)
    assert f"{suite}:2: duplicate task id, first on line 1, again on line 2" in line, line


def test_file_error_cuts_the_task_id_as_short_repr_does() -> None:
    error = file_error(InputError, "f.jsonl", "bad", line=3, task_id=_BIG_ID)
    assert len(str(error)) < 200, len(str(error))
    assert str(error) == "f.jsonl:3: bad (task id '" + "i" * 76 + "...)"
    assert str(file_error(InputError, "f", "bad", task_id="t1")) == "f: bad (task id 't1')"

