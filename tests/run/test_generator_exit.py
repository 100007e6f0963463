"""``GeneratorExit`` from user code run in a thread is that trial's error, never the campaign's.

docs/SECURITY.md: anything user code raises, ``BaseException`` included, is the trial's recorded
error. A sync verifier or scorer (run in a daemon thread) and a sync agent on a user-supplied
executor hand their outcome back through a concurrent future; the exception must be raised in
the awaiting coroutine's frame, not thrown into it (a thrown ``GeneratorExit`` closes the
coroutine chain: "coroutine ignored GeneratorExit").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any

import pytest

from ablation import AblationTask, CampaignConfig
from ablation.run.engine import AblationEngine
from ablation.run.threads import run_in_daemon_thread

CONFIG = CampaignConfig(n_resamples=200, timeout_s=30)


def _tasks(n: int = 3, **extra: Any) -> list[AblationTask]:
    return [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i, **extra) for i in range(n)]


def _same(x: Any) -> Any:
    return x


def _exit_on_1(x: int) -> int:
    if x == 1:
        raise GeneratorExit("agent gave up")
    return x


def test_sync_verifier_raising_generator_exit_is_the_trials_verifier_error() -> None:
    def verifier(output: Any, task: AblationTask) -> bool:
        if task.task_id == "t1":
            raise GeneratorExit("verifier gave up")
        return bool(output == task.expected_output)

    results = AblationEngine(CONFIG).run(_same, _same, _tasks(verifier=verifier))
    assert len(results) == 6
    broken = sorted((r.arm, r.status, r.error_stage, r.error_type) for r in results if r.task_id == "t1")
    assert broken == [
        ("baseline", "error", "verifier", "GeneratorExit"),
        ("candidate", "error", "verifier", "GeneratorExit"),
    ]
    assert all(r.status == "completed" for r in results if r.task_id != "t1")


def test_sync_scorer_raising_generator_exit_is_a_quality_error() -> None:
    class Scorer:
        name = "s"

        def __call__(self, output: Any, task: AblationTask) -> float:
            if task.task_id == "t1":
                raise GeneratorExit("scorer gave up")
            return 1.0

    results = AblationEngine(CONFIG, quality_scorers=[Scorer()]).run(_same, _same, _tasks())
    assert len(results) == 6 and all(r.status == "completed" for r in results)
    for r in results:
        if r.task_id == "t1":
            assert r.quality_errors["s"].startswith("GeneratorExit"), r.quality_errors
        else:
            assert r.quality == {"s": 1.0} and not r.quality_errors


def test_sync_agent_raising_generator_exit_on_a_user_executor_is_the_agents_error() -> None:
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = AblationEngine(CONFIG, executor=pool).run(_same, _exit_on_1, _tasks())
    broken = [(r.arm, r.status, r.error_stage, r.error_type) for r in results if r.status != "completed"]
    assert broken == [("candidate", "error", "agent", "GeneratorExit")]
    assert len(results) == 6


def test_run_in_daemon_thread_raises_generator_exit_in_the_awaiting_frame() -> None:
    def boom() -> None:
        raise GeneratorExit("from the thread")

    async def main() -> str:
        try:
            await run_in_daemon_thread(boom)
        except GeneratorExit as exc:
            return f"caught {exc}"
        return "not raised"

    assert asyncio.run(main()) == "caught from the thread"


def test_await_future_returns_results_and_cancelling_the_await_cancels_the_future() -> None:
    from ablation.run.threads import await_future

    release = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        blocker = pool.submit(release.wait, 10)
        queued = pool.submit(lambda: 7)  # waits behind the blocker: cancellable

        async def main() -> tuple[bool, int]:
            waiting = asyncio.ensure_future(await_future(queued))
            await asyncio.sleep(0.01)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            release.set()
            return await await_future(blocker), await await_future(pool.submit(lambda: 42))

        assert asyncio.run(main()) == (True, 42)
        assert queued.cancelled()
