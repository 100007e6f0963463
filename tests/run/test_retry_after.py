"""A retried call waits as long as the failed response's ``Retry-After`` asks, within the policy.

A 429 or 503 usually says when to come back (RFC 9110 section 10.2.3: delay-seconds or an
HTTP-date; openai's responses also send ``retry-after-ms``). The retries waited their own backoff
only, so ``Retry-After: 100`` and ``Retry-After: 1`` got the same ~2 s of attempts, and a
rate-limited service was asked again before it said it would answer. Each exception here is
built the way its library builds it (urllib, httpx, openai's ``RateLimitError``, ablation's own
``HttpAgent`` against a real local server).
"""

from __future__ import annotations

import asyncio
import email.utils
import time
import urllib.error
from collections.abc import Iterator
from email.message import Message
from typing import Any

import httpx
import openai
import pytest
from helpers.json_server import Reply, json_server
from tenacity import RetryCallState

from ablation.agents.http import HttpAgent
from ablation.config import RetryPolicy
from ablation.run.attempts import _wait, call_with_retries
from ablation.run.transient import retry_after


def _urllib(headers: dict[str, str], status: int = 429) -> urllib.error.HTTPError:
    message = Message()
    for name, value in headers.items():
        message[name] = value
    return urllib.error.HTTPError("http://x/", status, "Too Many Requests", message, None)


def _httpx(headers: dict[str, str], status: int = 429) -> httpx.HTTPStatusError:
    request = httpx.Request("POST", "http://x/")
    response = httpx.Response(status, headers=headers, request=request)
    return httpx.HTTPStatusError("rate limited", request=request, response=response)


def _openai(headers: dict[str, str]) -> openai.RateLimitError:
    response = httpx.Response(429, headers=headers, request=httpx.Request("POST", "http://x/"))
    return openai.RateLimitError("rate limited", response=response, body=None)


@pytest.mark.parametrize("build", [_urllib, _httpx, _openai])
def test_delay_seconds_and_milliseconds(build: Any) -> None:
    assert retry_after(build({"Retry-After": "7"})) == 7.0
    assert retry_after(build({"retry-after-ms": "1500", "Retry-After": "7"})) == 1.5
    assert retry_after(build({})) is None
    for bad in ("soon", "-3", "nan", "inf"):
        assert retry_after(build({"Retry-After": bad})) is None


def test_an_http_date() -> None:
    later = email.utils.formatdate(time.time() + 20, usegmt=True)
    asked = retry_after(_httpx({"Retry-After": later}))
    assert asked is not None and 17 <= asked <= 20
    assert retry_after(_httpx({"Retry-After": email.utils.formatdate(time.time() - 60, usegmt=True)})) == 0.0


def _state(exc: BaseException, attempt: int) -> RetryCallState:
    state = RetryCallState(retry_object=None, fn=None, args=(), kwargs={})  # type: ignore[arg-type]
    state.attempt_number = attempt
    state.set_exception((type(exc), exc, None))
    return state


def test_the_wait_is_the_longer_of_backoff_and_retry_after_within_max_wait() -> None:
    policy = RetryPolicy(max_attempts=5, initial_wait_s=0.5, max_wait_s=30, jitter_s=0)
    wait = _wait(policy)
    assert wait(_state(_httpx({}), 1)) == 0.5  # the backoff alone: 0.5 * 2**0
    assert wait(_state(_httpx({"Retry-After": "3"}), 1)) == 3.0
    assert wait(_state(_httpx({"Retry-After": "3"}), 4)) == 4.0  # the backoff is longer already
    assert wait(_state(_httpx({"Retry-After": "100000"}), 1)) == 30.0  # at most max_wait_s


@pytest.fixture
def rate_limited() -> Iterator[tuple[str, list[float]]]:
    """A server answering its first request 429 with ``Retry-After: 1``, then ``"ok"``; and the
    times the requests came."""
    seen: list[float] = []

    def answer(body: Any) -> Any:
        seen.append(time.monotonic())
        return Reply(429, {"error": "slow down"}, (("Retry-After", "1"),)) if len(seen) == 1 else "ok"

    with json_server(answer) as url:
        yield url + "/", seen


def test_an_http_agent_waits_for_the_servers_retry_after(rate_limited: tuple[str, list[float]]) -> None:
    url, seen = rate_limited
    agent = HttpAgent(url, timeout_s=10)
    policy = RetryPolicy(max_attempts=2, initial_wait_s=0, jitter_s=0)
    record: dict[str, Any] = {}
    out = asyncio.run(call_with_retries(lambda: asyncio.to_thread(agent.run, "task"), policy, time.perf_counter, record))
    assert out == "ok" and record["attempts"] == 2
    assert seen[1] - seen[0] >= 0.95  # asked for 1 s; the policy's own wait is 0
