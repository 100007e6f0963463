"""An exception that cannot be rebuilt from its pickle keeps its class across process isolation.

The worker sends such an exception as its type name and message; the parent rebuilt it as a new
class of that name under ``Exception``, so a ``ConnectionError`` subclass whose ``__init__`` wants
other arguments than its message was no ``ConnectionError`` any more: not retried as a transient
error, nor by ``retry_on`` naming its own class, while the same agent without isolation was. The
parent now makes it as its own class (the agent's module is loaded there too) without calling
its ``__init__``. Reference: the same campaign under thread isolation.
"""

from __future__ import annotations

import pytest
from helpers.unrebuildable_errors import Unreachable, unreachable

from ablation import AblationEngine, AblationTask, CampaignConfig, RetryPolicy

TASKS = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(2)]
NO_WAIT = {"initial_wait_s": 0, "max_wait_s": 0, "jitter_s": 0}


def _trials(isolation: str, retry: RetryPolicy) -> list[tuple[str, str, int, str | None, str | None]]:
    config = CampaignConfig(isolation=isolation, concurrency=1, retry=retry)  # type: ignore[arg-type]
    results = AblationEngine(config).run(unreachable, unreachable, TASKS)
    return sorted((r.task_id, r.arm, r.attempts, r.error_type, r.error_message) for r in results)


@pytest.mark.parametrize(
    "retry",
    [
        RetryPolicy(max_attempts=2, **NO_WAIT),  # a transient error by its base, ConnectionError
        RetryPolicy(max_attempts=2, retry_on=(Unreachable,), retry_transient=False, **NO_WAIT),
    ],
    ids=["transient", "retry_on"],
)
def test_an_unpicklable_exception_is_retried_as_without_isolation(retry: RetryPolicy) -> None:
    reference = _trials("thread", retry)
    assert {attempts for _, _, attempts, _, _ in reference} == {2}
    assert _trials("process", retry) == reference
