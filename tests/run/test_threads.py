"""The daemon executor reuses idle workers, never lets an overrunning call delay another, and
lets idle workers end (issue 13: a thread per call cost most of a no-op trial's time)."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from typing import Any

import pytest

from ablation.run.threads import DaemonExecutor, LoopCaller


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


def _on_loop(pool: DaemonExecutor, body: Any) -> Any:
    """Run ``body(caller)`` (a coroutine function) on a fresh loop with a LoopCaller on ``pool``."""

    async def main() -> Any:
        return await body(LoopCaller(pool, asyncio.get_running_loop()))

    return asyncio.run(main())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_loop_caller_gives_what_run_in_executor_gives(seed: int) -> None:
    rng = random.Random(seed)
    values = [rng.choice([rng.randint(-9, 9), rng.random(), "x" * rng.randint(0, 3), None])
              for _ in range(60)]  # fmt: skip

    def work(v: Any) -> Any:
        if isinstance(v, int) and v < 0:
            raise ValueError(v)
        return [v, threading.current_thread().daemon]

    async def both(caller: LoopCaller) -> tuple[list[Any], list[Any]]:
        loop = asyncio.get_running_loop()
        ref = DaemonExecutor("t-ref")
        ours = await asyncio.gather(*(caller.call(work, v) for v in values), return_exceptions=True)
        theirs = await asyncio.gather(
            *(loop.run_in_executor(ref, work, v) for v in values), return_exceptions=True
        )
        return list(ours), list(theirs)

    ours, theirs = _on_loop(DaemonExecutor("t-caller"), both)
    assert [repr(x) for x in ours] == [repr(x) for x in theirs]
    assert any(isinstance(x, ValueError) for x in ours) and any(isinstance(x, list) for x in ours)


def test_loop_caller_turns_stop_iteration_into_an_error_instead_of_hanging() -> None:
    def stop() -> None:
        raise StopIteration("done")

    async def body(caller: LoopCaller) -> BaseException:
        try:
            await asyncio.wait_for(caller.call(stop), 5)
        except BaseException as exc:
            return exc
        raise AssertionError("no exception")

    exc = _on_loop(DaemonExecutor("t-stop"), body)
    assert isinstance(exc, RuntimeError) and isinstance(exc.__cause__, StopIteration)


def test_loop_caller_drops_an_abandoned_call_even_after_the_loop_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    crashes: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", crashes.append)
    release = threading.Event()
    pool = DaemonExecutor("t-abandon", idle_s=60)  # no worker ends on its own during the test

    async def body(caller: LoopCaller) -> Any:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(caller.call(release.wait, 5), 0.05)
        return await caller.call(lambda: 42)  # the loop still turns; a new call goes through

    assert _on_loop(pool, body) == 42
    release.set()  # the abandoned call finishes now that its loop is closed
    assert pool.submit(lambda: "next").result(timeout=5) == "next"
    deadline = time.monotonic() + 5
    while pool._idle < pool._count and time.monotonic() < deadline:  # every worker back, idle
        time.sleep(0.01)
    assert pool._idle == pool._count and crashes == []
