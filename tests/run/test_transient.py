"""The transient-error rule on the real exception classes of httpx, requests, aiohttp and urllib.

Each exception is built the way its library builds it (or raised by a real call to a closed
localhost port); the expectation is the HTTP semantics (408, 429 and 5xx are worth retrying; 4xx
otherwise is not), not a copy of the rule's code.
"""

from __future__ import annotations

import asyncio
import socket
import time
import urllib.error
import urllib.request
from email.message import Message

import aiohttp
import httpx
import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from ablation.config import RetryPolicy
from ablation.run.attempts import call_with_retries
from ablation.run.transient import CONNECTION_CLASS_NAMES, is_transient


def _raised(call: object) -> BaseException:
    try:
        call()  # type: ignore[operator]
    except BaseException as exc:
        return exc
    raise AssertionError("the call to a closed port succeeded")


def test_real_connection_failures_are_transient() -> None:
    closed = socket.socket()  # bound, not listening: refuses connections, and no one can take it
    closed.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{closed.getsockname()[1]}/"
    with closed:
        errors = [
            _raised(lambda: httpx.get(url, timeout=5)),
            _raised(lambda: requests.get(url, timeout=5)),
            _raised(lambda: urllib.request.urlopen(url, timeout=5)),
            httpx.ReadTimeout("read timed out"),
        ]
    assert [type(e).__name__ for e in errors][:3] == ["ConnectError", "ConnectionError", "URLError"]
    assert not any(isinstance(e, ConnectionError) for e in errors[:2])  # no builtin base to rely on
    assert all(is_transient(e) for e in errors)


def test_aiohttp_connection_and_status_errors() -> None:
    info = aiohttp.RequestInfo(url=aiohttp.client.URL("http://x/"), method="GET", headers={}, real_url=aiohttp.client.URL("http://x/"))  # type: ignore[call-arg]
    assert is_transient(aiohttp.ServerDisconnectedError())
    assert is_transient(aiohttp.ClientResponseError(info, (), status=429))
    assert not is_transient(aiohttp.ClientResponseError(info, (), status=401))


@pytest.mark.parametrize(("status", "transient"), [(503, True), (500, True), (429, True), (408, True),
                                                    (404, False), (400, False), (401, False)])
def test_status_errors_are_judged_by_their_status(status: int, transient: bool) -> None:
    request = httpx.Request("POST", "http://x/v1")
    response = httpx.Response(status, request=request)
    exc = httpx.HTTPStatusError("status", request=request, response=response)
    assert is_transient(exc) is transient
    # urllib's HTTPError is a URLError, a connection-error name: its status decides, not the name
    http_error = urllib.error.HTTPError("http://x/v1", status, "status", Message(), None)
    assert is_transient(http_error) is transient


@given(st.text(min_size=1, max_size=20).filter(str.isidentifier))
def test_an_exception_without_status_is_transient_only_by_a_listed_base_name(name: str) -> None:
    kind = type(name, (ValueError,), {})
    assert is_transient(kind("bad answer")) is (name in CONNECTION_CLASS_NAMES)
    below = type("Specific", (kind,), {})  # recognised by its base, at any depth
    assert is_transient(below("x")) is (name in CONNECTION_CLASS_NAMES)


class APIError(Exception):
    pass


class APIConnectionError(APIError):
    pass


@pytest.mark.parametrize(("transient", "attempts"), [(True, 3), (False, 1)])
def test_retries_follow_the_policy(transient: bool, attempts: int) -> None:
    calls = 0

    async def call() -> int:
        nonlocal calls
        calls += 1
        raise APIConnectionError("Connection error.")

    policy = RetryPolicy(max_attempts=3, initial_wait_s=0, jitter_s=0, retry_transient=transient)
    record: dict = {}
    with pytest.raises(APIConnectionError):
        asyncio.run(call_with_retries(call, policy, time.perf_counter, record))
    assert calls == record["attempts"] == attempts
