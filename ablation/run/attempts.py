"""Retries around the agent call only (tenacity), recording every attempt.

``record`` receives ``attempts``, ``attempt_errors`` (each failed attempt's ``"Type: message"``)
and ``latency_s`` (the successful attempt's own duration, from after its ``turn``: the wait for a
rate-limit slot or a worker process is no part of it), so they are known even when the last attempt fails. Only the
exception types in :attr:`RetryPolicy.retry_on` are retried, and, when
:attr:`RetryPolicy.retry_transient` is on (the default), the transient errors of
:mod:`ablation.run.transient` (connection, time-out, 429 and 5xx errors of the common clients).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from ablation.config import RetryPolicy
from ablation.run.limits import Clock
from ablation.run.output_caps import exception_texts
from ablation.run.transient import is_transient, retry_after

__all__ = ["call_with_retries"]


async def call_with_retries(
    call: Callable[[], Awaitable[Any]],
    policy: RetryPolicy,
    clock: Clock,
    record: dict[str, Any],
    turn: Callable[[], Awaitable[None]] | None = None,
) -> Any:
    """Await ``call()`` up to ``policy.max_attempts`` times and return its raw output.

    Args:
        call: Makes one agent call.
        policy: Which exceptions are retried, how often and how long to wait.
        clock: Measures each attempt's latency.
        record: Receives ``attempts``, ``attempt_errors`` and ``latency_s``.
        turn: Awaited before each attempt, outside its latency (the wait for the arm's turn to
            call: a rate-limit slot, a worker process ready); ``None``: none.

    Raises:
        Exception: the last attempt's exception when every attempt failed (or a non-retryable one).
    """
    errors: list[str] = []
    record.update(attempts=0, attempt_errors=())

    async def once() -> Any:
        if turn is not None:
            await turn()
        record["attempts"] += 1
        start = clock()
        try:
            raw = await call()
        except BaseException as exc:
            if issubclass(type(exc), asyncio.CancelledError):  # type(): a user __class__ may raise
                raise
            errors.append(f"{type(exc).__name__}: {exception_texts(exc)[0]}")
            record["attempt_errors"] = tuple(errors)
            raise
        record["latency_s"] = clock() - start
        return raw

    if policy.max_attempts == 1:
        return await once()
    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts),
        wait=_wait(policy),
        retry=retry_if_exception(lambda exc: _retryable(exc, policy)),
        reraise=True,
    )
    return await retrying(once)


def _wait(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    """The wait before the next attempt: the exponential backoff with its jitter, or longer when
    the failed attempt's response asked for more with ``Retry-After``
    (:func:`~ablation.run.transient.retry_after`), at most ``policy.max_wait_s`` (the trial's
    time limit bounds every wait as it does the calls)."""
    backoff = wait_exponential(multiplier=policy.initial_wait_s, max=policy.max_wait_s) + wait_random(
        0, policy.jitter_s)  # fmt: skip

    def wait(state: RetryCallState) -> float:
        own = float(backoff(state))
        failed = state.outcome.exception() if state.outcome is not None else None
        asked = retry_after(failed) if failed is not None else None
        return own if asked is None else max(own, min(asked, policy.max_wait_s))

    return wait


def _retryable(exc: BaseException, policy: RetryPolicy) -> bool:
    """True when ``policy`` retries ``exc``: a listed type, or transient (module docstring)."""
    return issubclass(type(exc), policy.retry_on) or (policy.retry_transient and is_transient(exc))
