"""A read-only open (``ablation report``, ``list``, ``view``) of a store another process holds
with ``PRAGMA locking_mode=EXCLUSIVE``: it waits for the lock in short steps, reads the committed
data once the lock is released, fails with one :class:`StoreError` naming the lock when it is not,
and a Ctrl-C during the wait ends it at once. It never falls back to ``immutable=1`` for a lock
(which ignores the WAL: stale data for as long as the store stays open)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest
from helpers.cli import REPO, cli_env, run_here, wait_until

from ablation.config import CampaignConfig
from ablation.errors import StoreError
from ablation.schema import AblationTask, suite_fingerprint, task_digests
from ablation.store import connection
from ablation.store.run_store import RunStore

pytestmark = pytest.mark.slow

#: The other process: commits ``interrupted`` under an exclusive lock, keeps it for argv[2] s.
HOLDER = textwrap.dedent("""
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("PRAGMA locking_mode=EXCLUSIVE")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE campaigns SET status = 'interrupted'")
    conn.execute("COMMIT")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    conn.close()
""")


def _store(path: Path) -> str:
    """A store of one campaign, committed ``complete`` (what a stale read would show)."""
    tasks = [AblationTask(task_id="t1", input_data="x", expected_output="x")]
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(), suite_fingerprint=suite_fingerprint(tasks),
            task_digests=task_digests(tasks), baseline_agent="a", candidate_agent="b",
        )  # fmt: skip
        store.set_status(cid, "complete")
    return cid


@contextmanager
def _locked(path: Path, seconds: float) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``path`` exclusively for ``seconds`` (killed on the way out)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_released_within_the_wait_reads_the_committed_data(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    cid = _store(path)
    with _locked(path, 0.6):
        start = time.monotonic()
        with RunStore(path, read_only=True) as store:
            waited = time.monotonic() - start
            assert store.get_campaign(cid).status == "interrupted"  # not the stale "complete"
    assert 0.3 < waited < 10


def test_a_lock_held_past_the_wait_is_one_store_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "runs.db"
    _store(path)
    monkeypatch.setattr(connection, "READ_ONLY_LOCK_WAIT_S", 0.5, raising=False)
    with _locked(path, 8.0):
        start = time.monotonic()
        with pytest.raises(StoreError, match="locked by another process"):
            RunStore(path, read_only=True).close()
        assert time.monotonic() - start < 3


def test_the_cli_exits_1_with_one_line_on_a_lock_held_past_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command's answer, in this process (the lock is another process's)."""
    path = tmp_path / "runs.db"
    _store(path)
    monkeypatch.setattr(connection, "READ_ONLY_LOCK_WAIT_S", 0.5, raising=False)
    with _locked(path, 8.0):
        start = time.monotonic()
        proc = run_here(["list", str(path)])
        assert time.monotonic() - start < 5
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"ablation: error: run store {path} is locked by another process (waited 0.5 s): "
        "try again when it is released"
    ]


def test_a_keyboard_interrupt_ends_the_wait_at_once(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _store(path)

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with _locked(path, 8.0):
            start = time.monotonic()
            signal.setitimer(signal.ITIMER_REAL, 0.5)
            with pytest.raises(KeyboardInterrupt):
                RunStore(path, read_only=True).close()
            assert time.monotonic() - start < 1.5
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _has_open(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open (its ``/proc`` file descriptors)."""
    folder, target = Path(f"/proc/{pid}/fd"), str(path.resolve())
    with contextlib.suppress(OSError):
        for fd in os.listdir(folder):
            with contextlib.suppress(OSError):  # closed since the listing
                if os.readlink(folder / fd) == target:
                    return True
    return False


def test_ctrl_c_ends_ablation_list_waiting_for_a_lock(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _store(path)
    # SIGINT as an interactive shell leaves it (a background job inherits it ignored)
    launch = ("import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
              "from ablation.cli import main_entry; main_entry()")
    with _locked(path, 20.0):
        proc = subprocess.Popen(
            [sys.executable, "-c", launch, "list", str(path)], cwd=REPO, env=cli_env(),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            # started, and waiting for the lock: the store is open (one try), then a few tries
            wait_until(lambda: _has_open(proc.pid, path), timeout=60, proc=proc)
            time.sleep(0.3)
            assert proc.poll() is None
            proc.send_signal(signal.SIGINT)
            sent = time.monotonic()
            out, err = proc.communicate(timeout=30)
            assert time.monotonic() - sent < 2
        finally:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1
    assert "interrupted" in err
    assert out == ""
