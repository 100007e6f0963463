"""Issue 11's fault matrix: every fault an agent can commit, in one campaign.

One ``ablation run --isolation process`` campaign whose candidate raises, calls ``sys.exit`` and
``os._exit``, segfaults, hangs (a blocking sleep, an HTTP server trickling one byte every 2 s, an
async busy loop), floods stdout, returns a lone surrogate or an object whose ``repr`` raises, and
answers code tasks with code that kills its parent, escapes with ``setsid``, or forges its verdict
by walking frames or with an always-equal object. The campaign completes, every trial is stored
with the right reason, no process is left behind (checked in ``/proc``), and the command exits
within 30 s of its last trial with one of ablation's own exit codes.
"""

from __future__ import annotations

import json
import os
import socketserver
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from helpers.cli import LAUNCH, REPO, cli_env
from helpers.matrix_agents import escape_sleep_arg
from helpers.procs import processes_with_arg

EXPECTED = {  # kind -> (status, passed, error type or None when any)
    "ok": ("completed", 1, None),
    "raise": ("error", 0, "ValueError"),
    "sys_exit": ("error", 0, "SystemExit"),
    "os_exit": ("error", 0, None),
    "segfault": ("error", 0, None),
    "hang": ("timeout", 0, None),
    "http_hang": ("timeout", 0, None),
    "busy": ("timeout", 0, None),
    "flood": ("timeout", 0, None),
    "surrogate": ("completed", 0, None),
    "unrepresentable": ("error", 0, "UnrepresentableOutput"),
    "sb_kill_parent": ("completed", 0, None),
    "sb_escape": ("completed", 0, None),
    "sb_frames": ("completed", 0, None),
    "sb_eq": ("completed", 0, None),
}


class _Trickle(socketserver.BaseRequestHandler):
    """Answers an HTTP request one byte every 2 s, forever."""

    def handle(self) -> None:
        self.request.recv(65536)
        try:
            for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 10**6:
                self.request.sendall(bytes([byte]))
                time.sleep(2)
        except OSError:
            return


def _with_marker(marker: bytes) -> list[int]:
    """Pids of live processes whose environment or command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                if fh.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X"):
                    continue
            for part in ("environ", "cmdline"):
                with open(f"/proc/{entry}/{part}", "rb") as fh:
                    if marker in fh.read():
                        found.append(int(entry))
                        break
        except (OSError, IndexError):
            continue
    return found


def _stored(store: Path) -> int:
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1) as db:
            return int(db.execute("select count(*) from trials").fetchone()[0])
    except sqlite3.Error:
        return 0


@pytest.mark.first
@pytest.mark.slow
def test_fault_matrix(tmp_path: Path) -> None:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    marker = f"matrix-{uuid.uuid4().hex}"
    store = tmp_path / "runs.db"
    sleep_arg = escape_sleep_arg()
    env = cli_env(
        MATRIX_HTTP_PORT=str(server.server_address[1]), MATRIX_MARKER=marker,
        MATRIX_ESCAPE_SLEEP=sleep_arg,
    )  # fmt: skip
    args = [
        "run", "tests/helpers/matrix_suite.py", "--baseline", "tests/helpers/matrix_agents.py:honest",
        "--candidate", "tests/helpers/matrix_agents.py:hostile", "--isolation", "process",
        "--timeout", "3", "--concurrency", "4", "--format", "json", "--no-progress",
        "--store", str(store),
    ]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, *args], cwd=REPO, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = _watch(proc, store, 2 * len(EXPECTED))
    finally:
        proc.kill()
        server.shutdown()
    assert proc.returncode in (0, 2), err
    report = json.loads(out)
    assert report["n_paired"] == len(EXPECTED)
    with sqlite3.connect(store) as db:
        rows = db.execute("select task_id, arm, status, passed, error_type from trials").fetchall()
        assert db.execute("select status from campaigns").fetchall() == [("complete",)]
    trials = {(t, a): (s, p, e) for t, a, s, p, e in rows}
    for kind, (status, passed, error_type) in EXPECTED.items():
        assert trials[kind, "baseline"][:2] == ("completed", 1), kind
        got = trials[kind, "candidate"]
        assert got[:2] == (status, passed), (kind, got)
        if error_type is not None:
            assert got[2] == error_type, (kind, got)
    assert _with_marker(marker.encode()) == []
    assert processes_with_arg(sleep_arg.encode()) == []


_TAIL = 1 << 16  # bytes of the command's stderr kept for the assertion messages


def _watch(proc: subprocess.Popen[bytes], store: Path, total: int) -> tuple[str, str]:
    """Wait for the run; assert it exits within 30 s of storing its last trial.

    Returns stdout and the last 64 KiB of stderr: the flooding agent writes gigabytes there
    (the worker's stdout goes to the command's stderr), which are read and dropped as they come.
    """
    assert proc.stdout is not None and proc.stderr is not None
    streams = {"out": proc.stdout, "err": proc.stderr}
    kept: dict[str, bytearray] = {name: bytearray() for name in streams}

    def drain(name: str) -> None:
        buffer = kept[name]
        while chunk := streams[name].read1(1 << 20):
            buffer += chunk
            if name == "err" and len(buffer) > 2 * _TAIL:
                del buffer[:-_TAIL]

    readers = [threading.Thread(target=drain, args=(name,)) for name in streams]
    for reader in readers:
        reader.start()
    deadline, last = time.monotonic() + 240, None
    while proc.poll() is None and time.monotonic() < deadline:
        if last is None and _stored(store) >= total:
            last = time.monotonic()
        if last is not None and time.monotonic() - last > 30:
            break
        time.sleep(0.2)
    assert proc.poll() is not None, "the command did not exit within 30 s of its last trial"
    for reader in readers:
        reader.join()
    err = kept["err"][-_TAIL:]
    return kept["out"].decode("utf-8"), err.decode("utf-8", errors="replace")
