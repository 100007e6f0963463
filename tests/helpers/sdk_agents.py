"""Agents that fail the way the common LLM SDKs and HTTP clients fail, and agents with odd outputs.

The suite is ``tests/helpers/slow_suite.py`` (task ``tNNN`` expects ``3 * NNN``; its size is set by
``SLOW_SUITE_TASKS``). The SDK exception classes are defined here with the same hierarchy as the
real ones (so these agents need neither ``openai`` nor ``anthropic``; their classes are
generated alike):
``APIError(Exception)`` > ``APIConnectionError`` > ``APITimeoutError``, and ``APIError`` >
``APIStatusError`` (with ``status_code``) > ``RateLimitError`` / ``InternalServerError``. The
``*_down`` agents call a real closed port on localhost (``CLOSED_PORT`` in the environment) with a
real client.
"""

from __future__ import annotations

import os
import threading
import urllib.request
from typing import Any

__all__ = [
    "APIConnectionError", "APIStatusError", "aiohttp_down", "answer", "custom_output",
    "flaky_connection", "httpx_down", "internal_server_error", "lock_output", "not_found",
    "openai_connection_error", "requests_down", "urllib_down",
]  # fmt: skip


class APIError(Exception):
    """As ``openai.APIError``: the base of every SDK error (not a ConnectionError)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class APIConnectionError(APIError):
    """As ``openai.APIConnectionError`` / ``anthropic.APIConnectionError``."""

    def __init__(self) -> None:
        super().__init__("Connection error.")


class APIStatusError(APIError):
    """As ``openai.APIStatusError``: carries the response's ``status_code``."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class InternalServerError(APIStatusError):
    """As ``openai.InternalServerError``."""


def answer(task: dict) -> int:
    """The correct answer of the slow suite."""
    return 3 * task["n"]


def openai_connection_error(task: dict) -> int:
    raise APIConnectionError()


def internal_server_error(task: dict) -> int:
    raise InternalServerError("Error code: 503 - upstream overloaded", status_code=503)


def not_found(task: dict) -> int:
    raise APIStatusError("Error code: 404 - no such model", status_code=404)


_calls: dict[int, int] = {}
_lock = threading.Lock()


def flaky_connection(task: dict) -> int:
    """Fails with an SDK connection error on the first call of each task, then answers."""
    with _lock:
        _calls[task["n"]] = _calls.get(task["n"], 0) + 1
        first = _calls[task["n"]] == 1
    if first:
        raise APIConnectionError()
    return 3 * task["n"]


def _url() -> str:
    return f"http://127.0.0.1:{os.environ['CLOSED_PORT']}/v1/chat/completions"


def httpx_down(task: dict) -> Any:
    import httpx

    return httpx.post(_url(), json=task, timeout=5).json()


def requests_down(task: dict) -> Any:
    import requests

    return requests.post(_url(), json=task, timeout=5).json()


def urllib_down(task: dict) -> Any:
    with urllib.request.urlopen(_url(), timeout=5) as response:
        return response.read()


async def aiohttp_down(task: dict) -> Any:
    import aiohttp

    async with aiohttp.ClientSession() as session, session.post(_url(), json=task) as response:
        return await response.json()


def lock_output(task: dict) -> Any:
    """An output with a lock in it: no JSON form."""
    return {"answer": 3 * task["n"], "guard": threading.Lock()}


class Answer:
    """A custom class without a JSON form."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return other == self.value

    __hash__ = None  # type: ignore[assignment]


def custom_output(task: dict) -> Any:
    return Answer(3 * task["n"])
