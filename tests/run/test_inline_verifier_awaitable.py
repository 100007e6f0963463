"""An ``inline`` verifier that returns an awaitable is judged by what the awaitable gives.

``inline=True`` says a sync verifier is cheap enough to call on the event loop; when what it
returns is awaitable (a coroutine), it is awaited as ``run_verifier`` awaits what a sync
verifier returns on the other path, and its verdict is checked the same way. It used to be
refused as a verdict of type ``coroutine`` (and the coroutine was never awaited).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.evaluate.verifiers import run_verifier


def _inline(verdict: Any) -> Any:
    async def judged() -> Any:
        await asyncio.sleep(0)
        return verdict

    def verifier(output: Any, task: Any) -> Any:
        return judged()

    verifier.inline = True  # type: ignore[attr-defined]
    return verifier


def _not_inline(verdict: Any) -> Any:
    verifier = _inline(verdict)
    verifier.inline = False
    return verifier


def _trial(verifier: Any) -> Any:
    task = AblationTask(task_id="t", input_data={}, expected_output=1, verifier=verifier)
    (trial,) = AblationEngine(CampaignConfig(timeout_s=10)).run(
        lambda inp: 1, lambda inp: 1, [task], arms=("candidate",)
    )
    return trial


@pytest.mark.parametrize("verdict", [True, False])
def test_inline_verifiers_coroutine_is_awaited(verdict: bool) -> None:
    trial = _trial(_inline(verdict))
    assert (trial.status, trial.passed) == ("completed", verdict)
    # the same verdict as the threaded path and run_verifier itself
    assert _trial(_not_inline(verdict)).passed is verdict
    task = AblationTask(task_id="t", input_data={}, expected_output=1)
    assert asyncio.run(run_verifier(_inline(verdict), 1, task)) is verdict


def test_inline_verifiers_awaitable_with_no_verdict_is_its_error() -> None:
    trial = _trial(_inline("yes"))
    threaded = _trial(_not_inline("yes"))
    assert (trial.status, trial.error_stage, trial.error_type) == ("error", "verifier", "VerifierError")
    assert "returned str 'yes'" in trial.error_message
    assert (threaded.error_type, threaded.error_message) == (trial.error_type, trial.error_message)
