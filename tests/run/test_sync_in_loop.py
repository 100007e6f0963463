"""``run_ablation_campaign`` (blocking) called inside a running event loop.

It cannot start its own loop there: the call is a :class:`~ablation.ConfigError` that names the
coroutine function to await instead, raised before a coroutine exists, so no "coroutine was
never awaited" warning follows; awaiting the async twin there works.
"""

from __future__ import annotations

import asyncio
import gc
import warnings

import pytest

from ablation import (
    AblationEngine,
    AblationError,
    AblationTask,
    CampaignConfig,
    ConfigError,
    run_ablation_campaign,
)
from ablation.run.campaign import run_ablation_campaign_async

TASKS = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(4)]


def agent(i: int) -> int:
    return i


def test_the_blocking_call_inside_a_loop_names_the_async_twin() -> None:
    async def inside() -> None:
        run_ablation_campaign(agent, agent, TASKS, config=CampaignConfig(n_resamples=100))

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a "never awaited" RuntimeWarning fails the test
        with pytest.raises(ConfigError, match=r"await run_ablation_campaign_async\(\.\.\.\)") as raised:
            asyncio.run(inside())
    assert isinstance(raised.value, AblationError)


def test_the_async_twin_inside_a_loop_and_the_blocking_call_outside_agree() -> None:
    config = CampaignConfig(n_resamples=100)

    async def inside() -> object:
        return await run_ablation_campaign_async(agent, agent, TASKS, config=config)

    awaited, blocking = asyncio.run(inside()), run_ablation_campaign(agent, agent, TASKS, config=config)
    assert awaited.table == blocking.table and awaited.verdict == blocking.verdict == "pass"  # type: ignore[attr-defined]


def test_an_error_of_the_blocking_call_outside_a_loop_has_no_loop_error_as_its_context() -> None:
    """Outside a loop the call ran the campaign inside the handler of the "no running event loop"
    ``RuntimeError``, so every error it raised (an empty suite, an agent's) showed that error
    above its own: "During handling of the above exception, another exception occurred"."""
    with pytest.raises(ConfigError, match="the suite is empty") as raised:
        run_ablation_campaign(agent, agent, [])
    assert raised.value.__context__ is None


def test_the_engine_blocking_run_inside_a_loop_names_run_async() -> None:
    """``AblationEngine.run`` made its coroutine, then failed with a bare ``RuntimeError`` naming an
    internal function ("run_coroutine() cannot be called from a running event loop"), outside
    ablation's error tree, and the coroutine was reported never awaited."""
    async def inside() -> None:
        AblationEngine(CampaignConfig(n_resamples=100)).run(agent, agent, TASKS)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a "never awaited" RuntimeWarning fails the test
        with pytest.raises(ConfigError, match=r"await AblationEngine\.run_async\(\.\.\.\)"):
            asyncio.run(inside())
        gc.collect()  # an unawaited coroutine warns when collected
