"""The default executor of the loops ablation starts runs a bounded number of calls at once.

An async agent's ``asyncio.to_thread`` / ``loop.run_in_executor(None, fn)`` goes to the loop's
default executor, which ablation replaces by a daemon pool (so a call that never returns holds
no exit). asyncio's own executor runs at most ``min(32, cpu count + 4)`` calls at once and queues
the rest; the daemon pool once started a thread per call, so ``gather`` of many ``to_thread``
calls started as many threads. Reference: ``concurrent.futures.ThreadPoolExecutor()``'s own
``_max_workers``, the number asyncio's default executor uses.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ablation import AblationTask, CampaignConfig, run_ablation_campaign
from ablation.daemon_pool import DaemonExecutor, LoopExecutor
from ablation.eventloop import run_coroutine

STDLIB_CAP = ThreadPoolExecutor()._max_workers


class _Gauge:
    """How many calls run at once, and the most seen."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = 0

    def call(self, x: int) -> int:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.02)
        with self.lock:
            self.now -= 1
        return 2 * x


def test_an_async_agent_gathering_many_to_thread_calls_runs_as_many_at_once_as_asyncio() -> None:
    gauge = _Gauge()
    calls = 4 * STDLIB_CAP

    async def agent(x: Any) -> int:
        results = await asyncio.gather(*(asyncio.to_thread(gauge.call, i) for i in range(calls)))
        return sum(results)

    expected = sum(2 * i for i in range(calls))
    task = AblationTask(task_id="t", input_data=0, expected_output=expected)
    report = run_ablation_campaign(agent, agent, [task], config=CampaignConfig(concurrency=1, n_resamples=100))
    assert report.n_paired == report.table.both_pass == 1  # every call answered, in order
    assert gauge.most == STDLIB_CAP  # asyncio's default executor: the same cap, reached


def test_a_queued_call_cancelled_before_it_starts_never_runs() -> None:
    executor = LoopExecutor(DaemonExecutor("test-loop"), max_workers=1)
    release, ran = threading.Event(), []
    first = executor.submit(release.wait, 10)
    second = executor.submit(ran.append, "second")
    third = executor.submit(ran.append, "third")
    assert second.cancel()  # queued behind the first: not started
    release.set()
    assert first.result(timeout=10) is True
    third.result(timeout=10)
    assert ran == ["third"]


def test_a_call_running_a_loop_of_its_own_never_waits_for_its_callers_places() -> None:
    """Every call of the outer loop holds a place and runs an inner loop whose own call needs
    one: with one executor shared by all loops this would wait forever."""

    def inner() -> int:
        async def use_a_thread() -> int:
            return await asyncio.to_thread(lambda: 1)

        return run_coroutine(use_a_thread())

    async def outer() -> int:
        return sum(await asyncio.gather(*(asyncio.to_thread(inner) for _ in range(STDLIB_CAP))))

    done: list[int] = []
    runner = threading.Thread(target=lambda: done.append(run_coroutine(outer())), daemon=True)
    runner.start()
    runner.join(timeout=30)
    assert done == [STDLIB_CAP]
