"""An awaitable a sync verifier or scorer returns is awaited, whether or not it runs in a thread.

``run_verifier`` and ``run_scorer`` await what a sync callable returns; the engine runs a sync
verifier or scorer that is not ``inline`` in a daemon thread, and what came back from there was
not awaited: a verifier returning a coroutine that gives ``True`` was a ``VerifierError``
("returned coroutine"), a scorer's a ``ScorerError``, with "never awaited" warnings. The
reference is the ``async def`` form of the same callable: a sync callable returning the coroutine
must give the trial what the coroutine function gives it.
"""

from __future__ import annotations

from typing import Any

import pytest

from ablation import AblationEngine, AblationTask, CampaignConfig


async def _value(value: Any) -> Any:
    return value


def _make(is_async: bool, verdict: bool, score: float) -> tuple[Any, Any]:
    async def async_verifier(output: Any, task: AblationTask) -> Any:
        return verdict

    async def async_scorer(output: Any, task: AblationTask) -> Any:
        return score

    def verifier(output: Any, task: AblationTask) -> Any:
        return _value(verdict)

    def scorer(output: Any, task: AblationTask) -> Any:
        return _value(score)

    chosen = (async_verifier, async_scorer) if is_async else (verifier, scorer)
    chosen[1].name = "s"  # type: ignore[attr-defined]
    return chosen


def _trials(is_async: bool, verdict: bool, score: float) -> list[tuple[Any, ...]]:
    verifier, scorer = _make(is_async, verdict, score)
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=-1, verifier=verifier) for i in range(3)]
    results = AblationEngine(CampaignConfig(concurrency=2), quality_scorers=[scorer]).run(
        lambda x: x, lambda x: x, tasks
    )
    return sorted((r.task_id, r.arm, r.status, r.passed, r.error, r.quality, r.quality_errors) for r in results)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # a coroutine never awaited
@pytest.mark.parametrize(("verdict", "score"), [(True, 3.5), (False, 0.0)])
def test_sync_callables_agree_with_their_async_form(verdict: bool, score: float) -> None:
    reference = _trials(True, verdict, score)
    assert all(t[2:] == ("completed", verdict, None, {"s": score}, {}) for t in reference)
    assert _trials(False, verdict, score) == reference


def test_an_awaitable_that_never_ends_is_the_scorers_timeout() -> None:
    import asyncio

    def scorer(output: Any, task: AblationTask) -> Any:
        return asyncio.Event().wait()  # made in the scorer's thread, never set

    scorer.name = "stuck"  # type: ignore[attr-defined]
    tasks = [AblationTask(task_id="t", input_data=1, expected_output=1)]
    config = CampaignConfig(timeout_s=0.3)
    for r in AblationEngine(config, quality_scorers=[scorer]).run(lambda x: x, lambda x: x, tasks):
        assert (r.status, r.passed, r.quality) == ("completed", True, {})
        assert r.quality_errors["stuck"].startswith("Timeout: scorer 'stuck' exceeded timeout_s=0.3")
