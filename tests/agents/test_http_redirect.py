"""A redirect answered to an HTTP agent names where it pointed.

The agent does not follow redirects (urllib would turn the POST into a GET and drop the input);
its error said only "HTTP 307 Temporary Redirect", so a user moving a service behind a new path
had to find the target elsewhere. The error now names the ``Location`` and why it was not
followed. A real socket server answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from helpers.raw_server import raw_servers, replying

from ablation.agents import AgentHttpError, HttpAgent


def _moved(status: bytes) -> bytes:
    return (b"HTTP/1.1 " + status + b"\r\nLocation: https://new.example/agent\r\n"
            b"Content-Length: 0\r\nConnection: close\r\n\r\n")  # fmt: skip


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], str]]:
    with raw_servers(monkeypatch) as start:
        yield lambda status: start(replying(_moved(status)))


@pytest.mark.parametrize("status", [b"301 Moved Permanently", b"307 Temporary Redirect", b"308 Permanent Redirect"])
def test_the_error_names_the_location(serve: Callable[[bytes], str], status: bytes) -> None:
    with pytest.raises(AgentHttpError) as caught:
        HttpAgent(serve(status), name="svc", timeout_s=10).run("task")
    assert str(caught.value) == (
        f"svc: HTTP {status.decode()} to 'https://new.example/agent' (redirects are not followed: "
        "a POST would lose its input)"
    )
    assert caught.value.status == int(status[:3])
