"""An HTTP agent: POST ``{"input": ...}`` and read a JSON response body (urllib, no redirects)."""

from __future__ import annotations

import base64
import http.client
import io
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from ablation.agents.forms import (
    DEFAULT_MAX_OUTPUT_BYTES,
    AgentConnectionError,
    AgentHttpError,
    AgentTimeoutError,
    _excerpt,
    interpret_agent_json,
)
from ablation.errors import AblationError, AgentSpecError, ConfigError
from ablation.schema import to_jsonable
from ablation.strict_json import NotFiniteNumber, RepeatedMember, decode_finite, json_decoder_limit

__all__ = ["HttpAgent", "shown_url"]

_CHUNK = 64 * 1024
#: How much of an error response's body is read for the message's excerpt.
_ERROR_BODY_BYTES = 4096


class _TooLarge(AblationError):
    """Internal: the body passed ``max_output_bytes``."""


def _content_length(declared: str, name: str, status: int) -> int:
    """A Content-Length header's length: ASCII digits, or a list of one such value repeated, in one
    field line or several (RFC 9110 section 8.6); anything else (``"²"``, a digit to :meth:`str.isdigit` that
    :class:`int` refuses, too) frames the response wrongly and is the call's error.

    Raises:
        AgentHttpError: ``declared`` is not a length.
    """
    values = {v.strip(" \t") for v in declared.split(",")}
    value = values.pop() if len(values) == 1 else ""
    if not (value.isascii() and value.isdigit()):
        raise AgentHttpError(
            f"{name}: HTTP {status} response has a bad Content-Length: {declared!r:.80}", status=status
        )
    return int(value)


def _without_userinfo(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without its ``user:password@`` part, and that user and password (decoded)."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None, None
    host = parts.netloc.rpartition("@")[2]
    plain = urllib.parse.urlunsplit(parts._replace(netloc=host))
    password = None if parts.password is None else urllib.parse.unquote(parts.password)
    return plain, urllib.parse.unquote(parts.username or ""), password


def shown_url(url: str) -> str:
    """``url`` as it may be shown and stored: a password in it replaced by ``***`` (the user kept),
    or a user alone (a token, as in ``https://TOKEN@host/``) by ``***``, so that an agent's name
    never holds its credentials."""
    plain, user, password = _without_userinfo(url)
    if user is None:
        return url
    parts = urllib.parse.urlsplit(plain)
    userinfo = "***" if password is None else urllib.parse.quote(user, safe="") + ":***"
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{userinfo}@{parts.netloc}"))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuse redirects: urllib would turn a redirected POST into a GET and drop the input."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _DeadlineReader(io.RawIOBase):
    """A socket's reader whose every ``recv`` waits at most until the call's deadline."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._sock = sock
        self._raw: Any = sock.makefile("rb", buffering=0)
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the call's deadline passed")
        self._sock.settimeout(remaining)
        return int(self._raw.readinto(buffer))

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineResponse(http.client.HTTPResponse):
    """A response whose status line, headers and body are all read before the deadline."""

    _deadline: float = float("inf")

    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        self.fp.close()  # the plain makefile() reader, replaced before anything is read
        self.fp = io.BufferedReader(_DeadlineReader(sock, self._deadline))


class _DeadlineConnection:
    """Connect, send and read within one deadline (set on the subclass that mixes it in)."""

    sock: Any
    timeout: Any
    _deadline: float
    #: The server stopped reading the request; the rest of it is not sent.
    _cut_off: bool = False

    def connect(self) -> None:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the call's deadline passed")
        self.timeout = remaining
        super().connect()  # type: ignore[misc]
        # sendall's timeout bounds the whole send (Python >= 3.5).
        self.sock.settimeout(max(self._deadline - time.monotonic(), 0.001))

    def send(self, data: Any) -> None:
        """Send, unless the server stopped reading the request: a server that refuses a large
        input answers (413, say) and closes before reading it all, and that answer, still to be
        read, is the call's outcome. A server that closed without one fails the read that follows.
        """
        if self._cut_off:
            return
        try:
            super().send(data)  # type: ignore[misc]
        except (BrokenPipeError, ConnectionResetError):
            self._cut_off = True


class _DeadlineHandler(urllib.request.AbstractHTTPHandler):
    """Opens http(s) URLs through connections that end the whole exchange by ``deadline``:
    connect, send, status line, headers and body (not only each read, as urllib's timeout)."""

    def __init__(self, deadline: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._deadline = deadline

    def do_open(self, http_class: Any, req: Any, **http_conn_args: Any) -> Any:
        response = type("_Response", (_DeadlineResponse,), {"_deadline": self._deadline})
        connection: Any = type(
            "_Connection",
            (_DeadlineConnection, http_class),
            {"_deadline": self._deadline, "response_class": response},
        )
        return super().do_open(connection, req, **http_conn_args)


class _DeadlineHTTPHandler(_DeadlineHandler, urllib.request.HTTPHandler):
    """``http://`` within the call's deadline."""


class _DeadlineHTTPSHandler(_DeadlineHandler, urllib.request.HTTPSHandler):
    """``https://`` within the call's deadline."""


class HttpAgent:
    """An agent behind an HTTP endpoint: POST ``{"input": ...}`` as JSON, read JSON back.

    The call is synchronous (``urllib.request``); the engine runs sync agents in a thread, so
    many calls can be in flight at once. Redirects are not followed (the response is an
    :class:`AgentHttpError`). Proxies configured in the environment are honoured, as by urllib.

    The body is read as a stream, in chunks: a body past ``max_output_bytes`` (declared by
    ``Content-Length`` or counted as it arrives) is the call's :class:`AgentHttpError` and the
    connection is closed without reading the rest; an error status reads at most 4 KiB of its
    body for the message. The whole call (connection, request, status line, headers and body)
    ends within ``timeout_s``: every read waits at most until that deadline, so a download the
    engine abandoned after its own timeout (a server trickling bytes, even header lines) stops.
    A server that answers before reading the whole request (a 413 for a large input) and closes
    gets the rest of it unsent, and its answer is the call's outcome; a body cut before its
    ``Content-Length`` is a dropped response (:class:`AgentConnectionError`).

    Args:
        url: An ``http://`` or ``https://`` URL. A ``user:password@`` in it is sent as HTTP Basic
            credentials (unless ``headers`` has an ``Authorization``), never as part of the URL,
            and is kept out of ``url`` and of the default name (:func:`shown_url`).
        timeout_s: Time limit per call in seconds: the connection, each read, and the whole call.
        headers: Extra request headers (e.g. ``Authorization``); they override the defaults
            ``Content-Type: application/json`` and ``Accept: application/json``.
        name: Name recorded for the agent; defaults to the URL, credentials shown as ``***``.
        max_output_bytes: Cap on the response body. Default 8 MiB.

    Raises:
        AgentSpecError: if ``url`` is not an http(s) URL with a host.
        ConfigError: if ``timeout_s`` or ``max_output_bytes`` is not positive.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 30,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> None:
        if not isinstance(url, str):
            raise AgentSpecError(f"HttpAgent needs a URL string, got {type(url).__name__}")
        parts = urllib.parse.urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise AgentSpecError(f"HttpAgent needs an http:// or https:// URL, got {url!r:.120}")
        if not timeout_s > 0:
            raise ConfigError(f"HttpAgent timeout_s must be positive, got {timeout_s!r}")
        self.url, user, password = _without_userinfo(url)
        self.timeout_s = timeout_s
        self.headers: dict[str, str] = dict(headers or {})
        if user is not None and not any(h.lower() == "authorization" for h in self.headers):
            token = base64.b64encode(f"{user}:{password or ''}".encode()).decode("ascii")
            self.headers["Authorization"] = f"Basic {token}"
        self.name: str = name or shown_url(url)
        if not max_output_bytes > 0:
            raise ConfigError(f"HttpAgent max_output_bytes must be positive, got {max_output_bytes!r}")
        self.max_output_bytes = max_output_bytes

    def __repr__(self) -> str:
        return f"HttpAgent({self.url!r}, name={self.name!r})"

    def run(self, input_data: Any) -> Any:
        """POST ``{"input": input_data}`` and return the decoded JSON answer.

        Args:
            input_data: The task input; converted with :func:`~ablation.schema.to_jsonable`.

        Returns:
            The decoded response JSON, or an :class:`AgentOutput` (see the module docstring).

        Raises:
            AgentConnectionError: connection refused or reset, DNS failure, a dropped or truncated
                response, or an HTTP 5xx status (all retryable).
            AgentTimeoutError: the socket timed out (retryable).
            AgentHttpError: an HTTP 4xx (or unfollowed 3xx) status, a body that is not JSON, or
                a Content-Length header that is not a length.
        """
        body = json.dumps({"input": to_jsonable(input_data)}, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update(self.headers)
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        deadline = time.monotonic() + self.timeout_s
        opener = urllib.request.build_opener(
            _NoRedirect, _DeadlineHTTPHandler(deadline), _DeadlineHTTPSHandler(deadline)
        )
        try:
            with opener.open(request, timeout=self.timeout_s) as response:
                status = int(response.status)
                raw = self._body(response, deadline)
                charset = response.headers.get_content_charset() or "utf-8"
        except _TooLarge:
            raise AgentHttpError(
                f"{self.name}: response body larger than max_output_bytes={self.max_output_bytes}; "
                "the connection was closed"
            ) from None
        except urllib.error.HTTPError as exc:
            raise self._status_error(exc) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise self._timeout() from None
            raise AgentConnectionError(f"{self.name}: cannot connect: {exc.reason}") from None
        except TimeoutError:
            raise self._timeout() from None
        except (OSError, http.client.HTTPException) as exc:
            raise AgentConnectionError(
                f"{self.name}: connection failed: {type(exc).__name__}: {exc}"
            ) from None
        try:
            # a UTF-8 byte-order mark is ignored, as RFC 8259 section 8.1 allows a parser to
            value = decode_finite(raw.decode("utf-8-sig" if charset.lower().replace("_", "-") in ("utf-8", "utf8") else charset))
        # UnicodeError: a bad byte, or a codec that fails as such ("undefined", "punycode");
        # NotFiniteNumber, RepeatedMember: JSON that RFC 8259 does not define (decode_finite).
        except (UnicodeError, LookupError, json.JSONDecodeError, RecursionError, ValueError) as exc:
            reason = (
                exc.msg if isinstance(exc, json.JSONDecodeError)
                else exc.problem() if isinstance(exc, RepeatedMember)
                else str(exc) if isinstance(exc, UnicodeError | LookupError | NotFiniteNumber)
                else json_decoder_limit(exc)
            )  # fmt: skip
            raise AgentHttpError(
                f"{self.name}: HTTP {status} response is not JSON ({reason}): {_excerpt(raw)}",
                status=status,
            ) from None
        return interpret_agent_json(value, self.name)

    def _body(self, response: Any, deadline: float) -> bytes:
        """The body, read in chunks until its end, ``max_output_bytes`` or ``deadline``.

        Raises:
            _TooLarge: the body (declared or read) is longer than the cap.
            http.client.IncompleteRead: the connection closed before the declared Content-Length.
            TimeoutError: ``deadline`` passed before the body ended.
            AgentHttpError: the response declares a Content-Length that is not a length.
        """
        cap = self.max_output_bytes
        # Repeated field lines are one comma-separated list (RFC 9110 section 5.3); http.client
        # would frame the body by the first alone.
        lines = response.headers.get_all("Content-Length")
        declared = None if lines is None else ",".join(lines)
        if declared is not None and response.headers.get("Transfer-Encoding") is None:
            length = _content_length(declared, self.name, int(response.status))
            if length > cap:
                raise _TooLarge
        data = bytearray()
        # read1: what one read of the socket gives (read(n) would wait for all n bytes).
        while chunk := response.read1(min(_CHUNK, cap + 1 - len(data))):
            data += chunk
            if len(data) > cap:
                raise _TooLarge
            if time.monotonic() > deadline:
                raise TimeoutError
        # read1 ends quietly when the connection closes before the declared Content-Length;
        # http.client's ``length`` still counts the bytes that never came. The start of a body is
        # no answer (``12`` of ``12345`` is even valid JSON).
        missing = getattr(response, "length", None)
        if missing:
            raise http.client.IncompleteRead(bytes(data), missing)
        return bytes(data)

    def _timeout(self) -> AgentTimeoutError:
        return AgentTimeoutError(f"{self.name}: no response within timeout_s={self.timeout_s}")

    def _status_error(self, exc: urllib.error.HTTPError) -> Exception:
        try:
            detail = exc.read(_ERROR_BODY_BYTES)
        except Exception:  # the error body is only used for the message
            detail = b""
        finally:
            exc.close()
        moved = exc.headers.get("Location") if 300 <= exc.code < 400 else None
        text = f"{self.name}: HTTP {exc.code} {exc.reason}" + (
            f" to {_excerpt(moved)} (redirects are not followed: a POST would lose its input)" if moved else ""
        ) + (f": {_excerpt(detail)}" if detail.strip() else "")
        if exc.code >= 500:
            return AgentConnectionError(text, status=exc.code, headers=dict(exc.headers.items()))
        return AgentHttpError(text, status=exc.code, headers=dict(exc.headers.items()))
