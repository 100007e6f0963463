"""A result file given as a pipe reads as the file itself: ``<(gunzip -c a.gz)``, a named FIFO.

A pipe can be read once. The reader opened a source twice (two bytes to tell gzip, then the
whole), so a process substitution read as an empty file ("empty file: no results") and a named
FIFO hung on the second open, waiting for a writer that had gone. Real OS pipes here: a FIFO made
by ``os.mkfifo`` and an anonymous pipe opened by path (``/dev/fd/N``, what bash passes for
``<(...)``), each fed by a writer thread.
"""

from __future__ import annotations

import gzip
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ablation.sources.result_files import load_results

DATA = Path(__file__).resolve().parents[1] / "data"
SOURCES = [
    ("results_sample.jsonl", False),
    ("results_sample.jsonl", True),  # gzip, told by its magic bytes
    ("results_sample.csv", False),
    ("tools/inspect_candidate.eval", False),  # a zip archive: read from the bytes, not reopened
]


def _in_time(call: Callable[[], Any], seconds: float = 30) -> Any:
    """``call()`` on a daemon thread; a hang fails the test instead of holding the suite."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = call()
        except BaseException as exc:  # re-raised below
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the read hung"
    if "error" in out:
        raise out["error"]
    return out["value"]


def _feed(open_writer: Callable[[], int], data: bytes) -> threading.Thread:
    def write() -> None:
        fd = open_writer()
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(("name", "gzipped"), SOURCES)
def test_a_named_fifo_reads_as_its_file(tmp_path: Path, name: str, gzipped: bool) -> None:
    data = (DATA / name).read_bytes()
    fifo = tmp_path / Path(name).name
    os.mkfifo(fifo)
    writer = _feed(lambda: os.open(fifo, os.O_WRONLY), gzip.compress(data) if gzipped else data)
    got = _in_time(lambda: load_results(fifo))
    writer.join(5)
    assert got == load_results(DATA / name)


@pytest.mark.parametrize(("name", "gzipped"), SOURCES)
def test_an_anonymous_pipe_by_path_reads_as_its_file(name: str, gzipped: bool) -> None:
    data = (DATA / name).read_bytes()
    read_end, write_end = os.pipe()
    try:
        writer = _feed(lambda: write_end, gzip.compress(data) if gzipped else data)
        fmt = "inspect" if name.endswith(".eval") else "csv" if name.endswith(".csv") else None
        got = _in_time(lambda: load_results(f"/dev/fd/{read_end}", format=fmt))
        writer.join(5)
    finally:
        os.close(read_end)
    assert got == load_results(DATA / name)
