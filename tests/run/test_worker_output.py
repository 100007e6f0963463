"""A process-isolation worker's printed output reaches stderr up to a limit, the rest counted.

An agent that flooded its output used to pass all of it to the command's stderr (4.7 GB in the
3 s before its trial's timeout, in the fault matrix); output under the limit must still be shown
whole.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers.cli import LAUNCH, cli_env

from ablation.run.worker_output import WORKER_OUTPUT_LIMIT, forward_output


def _forward(data: bytes, limit: int) -> tuple[bytes, int]:
    """``data`` written to a pipe in pieces, forwarded into another pipe; what arrived, dropped."""
    src_r, src_w = os.pipe()
    dst_r, dst_w = os.pipe()
    arrived = bytearray()

    def write() -> None:
        for at in range(0, len(data), 7000):
            os.write(src_w, data[at : at + 7000])
        os.close(src_w)

    def read() -> None:
        while chunk := os.read(dst_r, 1 << 16):
            arrived.extend(chunk)

    threads = [threading.Thread(target=write), threading.Thread(target=read)]
    for t in threads:
        t.start()
    with os.fdopen(src_r, "rb") as pipe:
        dropped = forward_output(pipe, "worker 1", limit=limit, sink=dst_w)
    os.close(dst_w)
    for t in threads:
        t.join()
    os.close(dst_r)
    return bytes(arrived), dropped


def test_output_under_the_limit_is_passed_on_whole() -> None:
    data = bytes(range(256)) * 40
    assert _forward(data, limit=len(data)) == (data, 0)


def test_output_past_the_limit_is_dropped_and_counted() -> None:
    data = os.urandom(300_000)
    arrived, dropped = _forward(data, limit=100_000)
    assert dropped == 200_000
    notice = b"\nablation: worker 1: a call's output past 100000 bytes is not shown\n"
    count = b"ablation: worker 1: 200000 bytes of output not shown\n"
    assert arrived == data[:100_000] + notice + count


class _Calls:
    """A pipe whose chunks each arrive during a given agent call."""

    def __init__(self, chunks: list[tuple[int, bytes]]) -> None:
        self.chunks, self.call = list(chunks), 0

    def read1(self, size: int) -> bytes:
        if not self.chunks:
            return b""
        self.call, chunk = self.chunks.pop(0)
        return chunk

    def close(self) -> None:
        pass


def test_each_agent_call_has_a_limit_of_its_own(tmp_path: Path) -> None:
    """A chatty agent is shown whole call after call; a call past the limit is cut and its
    count given when the next call's output arrives."""
    calls = _Calls([(1, b"a" * 60), (1, b"b" * 60), (2, b"c" * 90), (3, b"d" * 30)])
    with (tmp_path / "sink").open("w+b") as sink:
        dropped = forward_output(
            calls, "w", limit=100, sink=sink.fileno(), call=lambda: calls.call  # type: ignore[arg-type]
        )
        sink.seek(0)
        arrived = sink.read()
    notice = b"\nablation: w: a call's output past 100 bytes is not shown\n"
    assert dropped == 20
    assert arrived == (
        b"a" * 60 + b"b" * 40 + notice + b"ablation: w: 20 bytes of output not shown\n"
        + b"c" * 90 + b"d" * 30
    )


AGENTS = """\
import sys


def quiet(x):
    return x


def chatty(x):
    print("hello from", x)
    sys.stdout.write("z" * 1_500_000)
    return x
"""

SUITE = """\
from ablation import AblationTask

tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(2)]
"""


@pytest.mark.slow
def test_a_flooding_agents_output_is_cut_at_the_limit_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / "agents.py").write_text(AGENTS, encoding="utf-8")
    (tmp_path / "suite.py").write_text(SUITE, encoding="utf-8")
    args = ["run", "suite.py", "--baseline", "agents.py:quiet", "--candidate", "agents.py:chatty",
            "--isolation", "process", "--concurrency", "1", "--format", "json", "--no-progress",
            "--no-store"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, *args], cwd=tmp_path, env=cli_env(), capture_output=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    # two calls of 1.5 MB each: the old code passed all 3 MB on. The last bytes of a call still
    # in the pipe when the worker's next call starts (the baseline's, printing nothing) are shown
    # under that call's limit: at most a pipe's worth (64 KiB) plus one read (64 KiB) each.
    leftovers = 2 * (2 * (1 << 16))
    assert 2 * WORKER_OUTPUT_LIMIT < len(done.stderr) < 2 * WORKER_OUTPUT_LIMIT + leftovers + 1000
    assert done.stderr.count(b"hello from") == 2  # each call's first output is shown
    assert done.stderr.count(b"a call's output past 1048576 bytes is not shown") == 2
    assert done.stderr.count(b"bytes of output not shown\n") == 2
