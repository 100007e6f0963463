"""The daemon executor reuses idle workers, never lets an overrunning call delay another, and
lets idle workers end (issue 13: a thread per call cost most of a no-op trial's time)."""

from __future__ import annotations

import threading
import time

from ablation.run.threads import DaemonExecutor


def test_sequential_calls_share_one_worker() -> None:
    pool = DaemonExecutor("t-reuse")
    idents = {pool.submit(threading.get_ident).result(timeout=5) for _ in range(50)}
    assert len(idents) == 1


def test_a_call_that_never_returns_does_not_delay_the_next() -> None:
    pool = DaemonExecutor("t-stuck")
    release = threading.Event()
    stuck = pool.submit(release.wait)
    try:
        assert pool.submit(lambda: 42).result(timeout=5) == 42
        assert not stuck.done()
        worker = next(t for t in threading.enumerate() if t.name == "t-stuck-1")
        assert worker.daemon  # never joined at exit
    finally:
        release.set()
    assert stuck.result(timeout=5) is True


def test_concurrent_calls_get_their_own_workers_and_errors_reach_the_future() -> None:
    pool = DaemonExecutor("t-many")
    barrier = threading.Barrier(4)
    futures = [pool.submit(barrier.wait, 5) for _ in range(4)]  # deadlocks unless 4 threads
    assert sorted(f.result(timeout=10) for f in futures) == [0, 1, 2, 3]
    failing = pool.submit(lambda: 1 / 0)
    assert isinstance(failing.exception(timeout=5), ZeroDivisionError)


def test_an_idle_worker_ends() -> None:
    pool = DaemonExecutor("t-idle", idle_s=0.05)
    pool.submit(time.sleep, 0).result(timeout=5)
    deadline = time.monotonic() + 5
    while any(t.name.startswith("t-idle-") for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the idle worker is still alive"
        time.sleep(0.01)
    assert pool.submit(lambda: "again").result(timeout=5) == "again"
