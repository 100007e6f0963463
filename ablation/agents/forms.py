"""Agents that live outside the Python process: a command line and an HTTP endpoint.

Both speak JSON. A :class:`CommandAgent` writes the task input as one JSON document on the
child's stdin and reads one JSON document from its stdout; an :class:`HttpAgent` POSTs
``{"input": <task input>}`` and reads a JSON response body. In both cases a JSON object whose keys
are ``"output"`` plus any of ``"cost"``, ``"tokens"`` and ``"metrics"`` is returned as an
:class:`~ablation.schema.AgentOutput` (so the engine records cost and usage); any other JSON value
is the output itself.

Errors are typed so that the engine's :class:`~ablation.config.RetryPolicy` can tell transient
failures from permanent ones: :class:`AgentConnectionError` is a :class:`ConnectionError` and
:class:`AgentTimeoutError` a :class:`TimeoutError` (both retried by the default policy), while
:class:`AgentProcessError` and :class:`AgentHttpError` are :class:`RuntimeError` s (not retried).

These classes are re-exported by :mod:`ablation.agents`; import them from there.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import shlex
import signal
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from ablation.errors import AgentSpecError, ConfigError
from ablation.schema import AgentOutput, to_jsonable

__all__ = [
    "AgentConnectionError",
    "AgentHttpError",
    "AgentProcessError",
    "AgentTimeoutError",
    "CommandAgent",
    "HttpAgent",
]

_OUTPUT_KEYS = frozenset({"output", "cost", "tokens", "metrics"})
_EXCERPT_CHARS = 200
_STDERR_TAIL_CHARS = 2000


class AgentProcessError(RuntimeError):
    """An external agent ran but did not produce a usable answer (not retried by default).

    Raised for a command that exits with a non-zero code, cannot be started, or prints something
    other than one JSON document on stdout.

    Attributes:
        returncode: The exit code (negative: killed by that signal), or ``None`` when the process
            did not get that far.
        stderr: The tail of what the process wrote on stderr (may be empty).
    """

    def __init__(self, message: str, *, returncode: int | None = None, stderr: str = "") -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


class AgentHttpError(AgentProcessError):
    """An HTTP agent answered with a client error (4xx), a redirect, or a body that is not JSON.

    Not retried by the default policy: sending the same request again would fail the same way.

    Attributes:
        status: The HTTP status code, when there was a response.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class AgentConnectionError(ConnectionError):
    """An HTTP agent could not be reached, dropped the connection, or answered 5xx.

    A :class:`ConnectionError`, so the default :class:`~ablation.config.RetryPolicy` retries it.

    Attributes:
        status: The HTTP status code for a 5xx response, ``None`` for a network failure.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class AgentTimeoutError(TimeoutError):
    """An external agent exceeded its own ``timeout_s`` (the process group was killed)."""


def _excerpt(text: str | bytes, limit: int = _EXCERPT_CHARS) -> str:
    """``repr`` of the start of ``text``, marked when cut."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    cut = text[:limit]
    return repr(cut) + ("..." if len(text) > limit else "")


def _tail(data: bytes, limit: int = _STDERR_TAIL_CHARS) -> str:
    """The last ``limit`` characters of a byte stream, decoded leniently and stripped."""
    text = data.decode("utf-8", errors="replace").strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def interpret_agent_json(value: Any, source: str) -> Any:
    """Apply the ``"output"`` object convention to a decoded JSON value.

    Args:
        value: The decoded JSON document an external agent produced.
        source: The agent's name, used in error messages.

    Returns:
        An :class:`AgentOutput` when ``value`` is an object with an ``"output"`` key and no keys
        besides ``"cost"``, ``"tokens"`` and ``"metrics"``; otherwise ``value`` unchanged (so an
        object with further keys is the output itself).

    Raises:
        AgentProcessError: if the object follows the convention but a field has the wrong type
            (e.g. ``"cost": "cheap"``).
    """
    if isinstance(value, dict) and "output" in value and value.keys() <= _OUTPUT_KEYS:
        try:
            return AgentOutput(**value)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            errors = getattr(exc, "errors", None)
            problems = (
                "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors())
                if callable(errors)
                else str(exc)
            )
            raise AgentProcessError(
                f"{source} returned an 'output' object with invalid fields: {problems}"
            ) from None
    return value


def _killpg(pid: int) -> None:
    """SIGKILL the process group led by ``pid``; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class CommandAgent:
    """An agent that runs a command per task, speaking JSON over stdin and stdout.

    Each call starts ``argv`` in a new session (so the child leads its own process group), writes
    the task input as JSON on its stdin, closes stdin, and reads stdout to the end. stdout must hold
    exactly one JSON document (surrounding whitespace allowed); use stderr for logs.

    Whatever happens, no process is left behind: when the call is cancelled (the engine's
    per-trial timeout cancels it) or exceeds ``timeout_s``, the whole process group is killed with
    SIGKILL and the child is reaped before the call returns. Processes the command leaves running
    in its group after exiting are killed too. A grandchild that moves to another session or
    process group on purpose escapes this (POSIX offers no way to follow it).

    Assumes a POSIX system (``os.killpg``, ``start_new_session``).

    Args:
        argv: The program and its arguments (not a shell string; see ``shlex.split``).
        cwd: Working directory of the command (default: the current one).
        env: Variables added to (overriding) the current environment for the command.
        name: Name recorded for the agent; defaults to ``"cmd:" + shlex.join(argv)``.
        timeout_s: Own time limit per call in seconds (``None``: only the engine's limit).

    Raises:
        AgentSpecError: if ``argv`` is a string or empty.
        ConfigError: if ``timeout_s`` is not positive.
    """

    def __init__(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
        timeout_s: float | None = None,
    ) -> None:
        if isinstance(argv, str | bytes):
            raise AgentSpecError(
                f"CommandAgent needs argv as a list of strings, got the string {argv!r:.80}; "
                "split it with shlex.split or use load_agent('cmd:...')"
            )
        self.argv: tuple[str, ...] = tuple(os.fspath(a) for a in argv)
        if not self.argv:
            raise AgentSpecError("CommandAgent needs a non-empty argv")
        if timeout_s is not None and not timeout_s > 0:
            raise ConfigError(f"CommandAgent timeout_s must be positive, got {timeout_s!r}")
        self.cwd = cwd
        self.env: dict[str, str] | None = None if env is None else {**env}
        self.name: str = name or "cmd:" + shlex.join(self.argv)
        self.timeout_s = timeout_s

    def __repr__(self) -> str:
        return f"CommandAgent({list(self.argv)!r}, name={self.name!r})"

    async def run(self, input_data: Any) -> Any:
        """Run the command once on ``input_data``.

        Args:
            input_data: The task input; converted with :func:`~ablation.schema.to_jsonable`.

        Returns:
            The decoded stdout JSON, or an :class:`AgentOutput` (see the module docstring).

        Raises:
            AgentProcessError: if the command cannot be started, exits non-zero (with the exit code
                and the tail of stderr), or prints no valid JSON on stdout (with an excerpt).
            AgentTimeoutError: if ``timeout_s`` passed; the process group was killed first.
        """
        payload = json.dumps(to_jsonable(input_data), ensure_ascii=False).encode("utf-8")
        env = None if self.env is None else {**os.environ, **self.env}
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise AgentProcessError(
                f"{self.name}: cannot start the command: {type(exc).__name__}: {exc}"
            ) from None
        try:
            async with asyncio.timeout(self.timeout_s):
                stdout, stderr = await proc.communicate(payload)
        except TimeoutError:
            raise AgentTimeoutError(
                f"{self.name} exceeded timeout_s={self.timeout_s}; its process group was killed"
            ) from None
        finally:
            # Runs on success, error, own timeout and cancellation alike.
            _killpg(proc.pid)
            if proc.returncode is None:
                await asyncio.shield(proc.wait())
        return self._decode(proc.returncode, stdout, stderr)

    def _decode(self, returncode: int | None, stdout: bytes, stderr: bytes) -> Any:
        tail = _tail(stderr)
        if returncode != 0:
            how = (
                f"was killed by signal {_signal_name(-returncode)}"
                if returncode is not None and returncode < 0
                else f"exited with code {returncode}"
            )
            detail = f"; stderr: {tail}" if tail else "; stderr was empty"
            raise AgentProcessError(
                f"{self.name} {how}{detail}", returncode=returncode, stderr=tail
            )
        if not stdout.strip():
            detail = f"; stderr: {tail}" if tail else ""
            raise AgentProcessError(
                f"{self.name} printed nothing on stdout (expected one JSON document){detail}",
                returncode=returncode,
                stderr=tail,
            )
        try:
            value = json.loads(stdout.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise AgentProcessError(
                f"{self.name} printed invalid UTF-8 on stdout ({exc.reason} at byte {exc.start}): "
                f"{_excerpt(stdout)}",
                returncode=returncode,
                stderr=tail,
            ) from None
        except json.JSONDecodeError as exc:
            raise AgentProcessError(
                f"{self.name} printed invalid JSON on stdout ({exc.msg} at line {exc.lineno} "
                f"column {exc.colno}): {_excerpt(stdout)}",
                returncode=returncode,
                stderr=tail,
            ) from None
        return interpret_agent_json(value, self.name)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuse redirects: urllib would turn a redirected POST into a GET and drop the input."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class HttpAgent:
    """An agent behind an HTTP endpoint: POST ``{"input": ...}`` as JSON, read JSON back.

    The call is synchronous (``urllib.request``); the engine runs sync agents in a thread, so
    many calls can be in flight at once. Redirects are not followed (the response is an
    :class:`AgentHttpError`). Proxies configured in the environment are honoured, as by urllib.

    Args:
        url: An ``http://`` or ``https://`` URL.
        timeout_s: Socket timeout per call in seconds (connect and each read).
        headers: Extra request headers (e.g. ``Authorization``); they override the defaults
            ``Content-Type: application/json`` and ``Accept: application/json``.
        name: Name recorded for the agent; defaults to the URL itself.

    Raises:
        AgentSpecError: if ``url`` is not an http(s) URL with a host.
        ConfigError: if ``timeout_s`` is not positive.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 30,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(url, str):
            raise AgentSpecError(f"HttpAgent needs a URL string, got {type(url).__name__}")
        parts = urllib.parse.urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise AgentSpecError(f"HttpAgent needs an http:// or https:// URL, got {url!r:.120}")
        if not timeout_s > 0:
            raise ConfigError(f"HttpAgent timeout_s must be positive, got {timeout_s!r}")
        self.url = url
        self.timeout_s = timeout_s
        self.headers: dict[str, str] = dict(headers or {})
        self.name: str = name or url

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
            AgentHttpError: an HTTP 4xx (or unfollowed 3xx) status, or a body that is not JSON.
        """
        body = json.dumps({"input": to_jsonable(input_data)}, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update(self.headers)
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(request, timeout=self.timeout_s) as response:
                status = int(response.status)
                raw = response.read()
                charset = response.headers.get_content_charset() or "utf-8"
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
            value = json.loads(raw.decode(charset))
        except (UnicodeDecodeError, LookupError, json.JSONDecodeError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise AgentHttpError(
                f"{self.name}: HTTP {status} response is not JSON ({reason}): {_excerpt(raw)}",
                status=status,
            ) from None
        return interpret_agent_json(value, self.name)

    def _timeout(self) -> AgentTimeoutError:
        return AgentTimeoutError(f"{self.name}: no response within timeout_s={self.timeout_s}")

    def _status_error(self, exc: urllib.error.HTTPError) -> Exception:
        try:
            detail = exc.read()
        except Exception:  # the error body is only used for the message
            detail = b""
        finally:
            exc.close()
        text = f"{self.name}: HTTP {exc.code} {exc.reason}" + (
            f": {_excerpt(detail)}" if detail.strip() else ""
        )
        if exc.code >= 500:
            return AgentConnectionError(text, status=exc.code)
        return AgentHttpError(text, status=exc.code)
