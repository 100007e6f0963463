"""``eventloop.await_or_abandon``: a plain ``await`` in what it returns and raises, and in the
turns of the loop it takes; a call that swallows its caller's cancellation is abandoned after
its grace, its rest running on in a task of its own.

In-process checks on a real event loop; ``tests/faults/test_cancel_swallowing.py`` checks the
same through a whole campaign in a subprocess.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import subprocess
import sys
from typing import Any

import pytest
from helpers.cli import cli_env

from ablation.eventloop import await_or_abandon, run_coroutine

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="caller")


async def _value(x: Any) -> Any:
    await asyncio.sleep(0)
    return x


def test_no_turn_of_the_loop_beyond_the_calls_own() -> None:
    """A call that never suspends ends before a callback scheduled ahead of it runs: no task of
    its own, so no turn of the loop is added to each user call (a turn each wave of a campaign
    of a thousand concurrent async calls is tens of milliseconds)."""

    async def immediate() -> int:
        return 7

    async def main() -> list[str]:
        order: list[str] = []
        asyncio.get_running_loop().call_soon(order.append, "turn")
        order.append(str(await await_or_abandon(immediate())))
        await asyncio.sleep(0)
        return order

    assert run_coroutine(main()) == ["7", "turn"]


@pytest.mark.parametrize("exc", [ValueError("v"), KeyboardInterrupt(), SystemExit(3), GeneratorExit()])
def test_what_the_call_raises_is_raised_unchanged(exc: BaseException) -> None:
    async def raising() -> None:
        await asyncio.sleep(0)
        raise exc

    async def main() -> BaseException | None:
        try:
            await await_or_abandon(raising())
        except BaseException as caught:
            return caught
        return None

    assert run_coroutine(main()) is exc


def test_results_of_coroutines_futures_and_awaitables() -> None:
    class Awaitable:
        def __await__(self) -> Any:
            return _value("object").__await__()

    async def main() -> list[Any]:
        future = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_later(0.01, future.set_result, "future")
        return [await await_or_abandon(_value(1)), await await_or_abandon(future), await await_or_abandon(Awaitable())]

    assert run_coroutine(main()) == [1, "future", "object"]


def test_the_call_runs_in_a_copy_of_the_callers_context() -> None:
    async def sets() -> str:
        seen = VAR.get()
        VAR.set("call")
        await asyncio.sleep(0)
        return seen + "/" + VAR.get()

    async def main() -> tuple[str, str]:
        VAR.set("parent")
        inside = await await_or_abandon(sets())
        return inside, VAR.get()

    assert run_coroutine(main()) == ("parent/call", "parent")


def test_the_calls_own_timeout_is_its_own() -> None:
    """The call's own ``asyncio.timeout`` cancels the task it runs in (the caller's): the call
    turns it into its ``TimeoutError`` and goes on; that is no swallowed cancellation of the
    caller, nothing is abandoned and the call's value comes back."""
    abandoned: list[str] = []

    async def own_timeout() -> str:
        try:
            async with asyncio.timeout(0.01):
                await asyncio.sleep(10)
        except TimeoutError:
            await asyncio.sleep(0.01)
            return "fell back"
        return "slept"

    async def main() -> str:
        return await await_or_abandon(own_timeout(), lambda: abandoned.append("x"), grace_s=0.05)

    assert run_coroutine(main()) == "fell back"
    assert abandoned == []


def test_a_call_that_cleans_up_within_its_grace_is_waited_for() -> None:
    abandoned: list[str] = []
    steps: list[str] = []

    async def tidy() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.sleep(0.01)  # clean-up that awaits
            steps.append("cleaned")
            raise

    async def main() -> str:
        task = asyncio.ensure_future(await_or_abandon(tidy(), lambda: abandoned.append("x"), grace_s=5.0))
        await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "returned"

    assert run_coroutine(main()) == "cancelled"
    assert (steps, abandoned) == (["cleaned"], [])


def test_a_call_that_swallows_its_cancellation_is_abandoned_and_runs_on() -> None:
    abandoned: list[str] = []
    ticks: list[int] = []

    async def swallow() -> None:
        while True:
            try:
                await asyncio.sleep(0.01)
                ticks.append(1)
            except BaseException:
                pass

    async def main() -> tuple[str, int, int]:
        task = asyncio.ensure_future(await_or_abandon(swallow(), lambda: abandoned.append("x"), grace_s=0.05))
        await asyncio.sleep(0.03)
        task.cancel()
        try:
            await task
            ended = "returned"
        except asyncio.CancelledError:
            ended = "cancelled"
        before = len(ticks)
        await asyncio.sleep(0.1)  # the abandoned rest still runs on the loop
        return ended, before, len(ticks)

    ended, before, after = run_coroutine(main())
    assert (ended, abandoned) == ("cancelled", ["x"])
    assert after > before


def test_a_second_cancellation_abandons_at_once() -> None:
    abandoned: list[str] = []

    async def swallow() -> None:
        while True:
            with contextlib.suppress(BaseException):  # swallows its cancellation
                await asyncio.sleep(0.01)

    async def main() -> str:
        task = asyncio.ensure_future(await_or_abandon(swallow(), lambda: abandoned.append("x"), grace_s=60.0))
        await asyncio.sleep(0.02)
        task.cancel()
        await asyncio.sleep(0.02)  # within the 60 s grace
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "returned"

    assert run_coroutine(main()) == "cancelled"
    assert abandoned == ["x"]


def test_a_bare_yield_call_that_swallows_is_abandoned_too() -> None:
    """A call that asks for a turn of the loop with a bare ``yield`` (``asyncio.sleep(0)``) in
    its loop, never a future, still gets only its grace."""
    abandoned: list[str] = []

    async def spin() -> None:
        while True:
            with contextlib.suppress(BaseException):  # swallows its cancellation
                await asyncio.sleep(0)

    async def main() -> str:
        task = asyncio.ensure_future(await_or_abandon(spin(), lambda: abandoned.append("x"), grace_s=0.05))
        await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "returned"

    assert run_coroutine(main()) == "cancelled"
    assert abandoned == ["x"]


USER_LOOP = '''
import asyncio, contextlib
from ablation import AblationTask, CampaignConfig, run_ablation_campaign_async


async def swallow(x):
    while True:
        with contextlib.suppress(BaseException):
            await asyncio.sleep(0.05)


async def ok(x):
    return x


async def main():
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(3)]
    config = CampaignConfig(timeout_s=0.3, n_resamples=100)
    report = await run_ablation_campaign_async(ok, swallow, tasks, config=config)
    print(report.table.regressions, [(g.error_type, g.count) for g in report.errors.groups])


asyncio.run(main())
print("the loop closed")
'''


def test_a_call_abandoned_on_the_callers_own_loop_does_not_hold_its_close() -> None:
    """``run_ablation_campaign_async`` awaited in the user's own ``asyncio.run``: the calls
    abandoned there are left suspended, not run on as tasks, which that ``asyncio.run`` would
    cancel and wait for, for ever, when it ends (a subprocess with a bound: a hang fails)."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", USER_LOOP], capture_output=True, text=True, timeout=60, env=cli_env()
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the user's loop did not close within 60 s: {exc.stdout!r}") from None
    assert proc.stdout.splitlines()[-1] == "the loop closed", proc.stderr
    assert proc.stdout.splitlines()[0] == "3 [('Timeout', 3)]", proc.stderr
