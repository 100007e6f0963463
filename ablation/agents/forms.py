"""Agents that live outside the Python process: a command line and an HTTP endpoint.

Both speak JSON. A :class:`CommandAgent` writes the task input as one JSON document on the
child's stdin and reads one JSON document from its stdout; an :class:`HttpAgent` POSTs
``{"input": <task input>}`` and reads a JSON response body. In both cases a JSON object whose keys
are ``"output"`` plus any of ``"cost"``, ``"tokens"``, ``"metrics"``, ``"usage"`` (the fields of
:class:`~ablation.outputs.TrialUsage`) and ``"trace"`` (a list), the fields of
:class:`~ablation.schema.AgentOutput`, is returned as one (so the engine records cost, usage and
the trace); any other JSON value is the output itself.

Errors are typed so that the engine's :class:`~ablation.config.RetryPolicy` can tell transient
failures from permanent ones: :class:`AgentConnectionError` is a :class:`ConnectionError` and
:class:`AgentTimeoutError` a :class:`TimeoutError` (both retried by the default policy), while
:class:`AgentProcessError` and :class:`AgentHttpError` are :class:`RuntimeError` s (not retried).

This module holds what both share (the error types and the JSON reply protocol);
:mod:`ablation.agents.command` and :mod:`ablation.agents.http` hold the two agents, and
:mod:`ablation.agents` re-exports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ablation.errors import AblationError, validation_line
from ablation.schema import AgentOutput, safe_text

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "AgentConnectionError",
    "AgentHttpError",
    "AgentProcessError",
    "AgentTimeoutError",
    "interpret_agent_json",
]

#: Default cap on an agent's output (a command's stdout, an HTTP body, a Python agent's output),
#: in bytes.
DEFAULT_MAX_OUTPUT_BYTES = 8 * 1024 * 1024
#: The fields of :class:`AgentOutput`: a reply object with these keys alone is read as one.
_OUTPUT_KEYS = frozenset(AgentOutput.model_fields)
_EXCERPT_CHARS = 200
_STDERR_TAIL_CHARS = 2000
#: Bytes of a command's stderr kept while it runs: the most :func:`_tail` reads, and one more so
#: that it can tell a longer stream was cut. Nothing else of stderr is used.
STDERR_KEPT_BYTES = 4 * _STDERR_TAIL_CHARS + 1


class AgentProcessError(AblationError, RuntimeError):
    """An external agent ran but did not produce a usable answer (not retried by default).

    Raised for a command that exits with a non-zero code, cannot be started, or prints something
    other than one JSON document on stdout (:mod:`ablation.strict_json`), and for an SDK result
    whose usage count is no whole number from 0 (:mod:`ablation.agents.sdk`).

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

    Not retried by the default policy, since sending the same request again would fail the same
    way, except for 408 (request timeout) and 429 (too many requests), which are transient
    (:mod:`ablation.run.transient`).

    Attributes:
        status: The HTTP status code, when there was a response.
        headers: The response's headers, names in lower case (``retry-after`` asks the retry
            to wait: :func:`ablation.run.transient.retry_after`).
    """

    def __init__(self, message: str, *, status: int | None = None, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = _lower(headers)


class AgentConnectionError(AblationError, ConnectionError):
    """An HTTP agent could not be reached, dropped the connection, or answered 5xx.

    A :class:`ConnectionError`, so the default :class:`~ablation.config.RetryPolicy` retries it.

    Attributes:
        status: The HTTP status code for a 5xx response, ``None`` for a network failure.
        headers: The 5xx response's headers, names in lower case (as :class:`AgentHttpError`'s).
    """

    def __init__(self, message: str, *, status: int | None = None, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = _lower(headers)


def _lower(headers: Mapping[str, str] | None) -> dict[str, str]:
    """``headers`` as a plain dict with lower-case names."""
    out: dict[str, str] = {}
    for name, value in (headers or {}).items():
        out.setdefault(str(name).lower(), str(value))
    return out


class AgentTimeoutError(AblationError, TimeoutError):
    """An external agent exceeded its own ``timeout_s`` (the process group was killed)."""


def _excerpt(text: str | bytes, limit: int = _EXCERPT_CHARS) -> str:
    """``repr`` of the start of ``text``, marked when cut (only that start is decoded)."""
    longer = len(text) > limit
    if isinstance(text, bytes):
        longer = len(text) > 4 * limit or len(text[: 4 * limit].decode("utf-8", "replace")) > limit
        text = text[: 4 * limit].decode("utf-8", errors="replace")
    return repr(text[:limit]) + ("..." if longer else "")


def _tail(data: bytes, limit: int = _STDERR_TAIL_CHARS) -> str:
    """The last ``limit`` characters of a byte stream, decoded leniently and stripped."""
    text = data[-4 * limit :].decode("utf-8", errors="replace").strip()
    return text if len(text) <= limit and len(data) <= 4 * limit else "..." + text[-limit:]


def interpret_agent_json(value: Any, source: str) -> Any:
    """Apply the ``"output"`` object convention to a decoded JSON value.

    The fields are read as :class:`AgentOutput` reads a Python agent's (one rule, in
    :mod:`ablation.outputs`): a number given as JSON text (``"cost": "0.5"``) or as a boolean
    (``"tokens": true``) is refused as any other wrong type is, never converted; a whole number
    written with a fraction (``"tokens": 12.0``) is the count 12.

    Args:
        value: The decoded JSON document an external agent produced.
        source: The agent's name, used in error messages.

    Returns:
        An :class:`AgentOutput` when ``value`` is an object with an ``"output"`` key and no keys
        besides ``"cost"``, ``"tokens"``, ``"metrics"``, ``"usage"`` and ``"trace"``; otherwise ``value`` unchanged (so an
        object with further keys is the output itself).

    Raises:
        AgentProcessError: if the object follows the convention but a field has the wrong type
            (e.g. ``"cost": "cheap"`` or ``"cost": "0.5"``), naming the field and the value.
    """
    if not (isinstance(value, dict) and "output" in value and value.keys() <= _OUTPUT_KEYS):
        return value
    try:
        return AgentOutput.model_validate(_safe_texts(value))
    except ValidationError as exc:
        raise _invalid(source, exc) from None


def _safe_texts(reply: dict[str, Any]) -> dict[str, Any]:
    """``reply`` with the texts of its fields (a model, currency, metric or tool name, and the
    keys beside them) made encodable (:func:`~ablation.schema.safe_text`: a lone surrogate, which
    JSON's ``\\ud800`` escape gives, becomes the visible escape), which could not be stored.
    Only the places that hold text are read: anything nested deeper is no valid field anyway."""
    out = dict(reply)
    for key in ("cost", "usage", "metrics"):
        if isinstance(reply.get(key), dict):
            out[key] = _safe_items(reply[key])
    usage = out.get("usage")
    if isinstance(usage, dict) and isinstance(usage.get("tool_calls"), dict):
        usage["tool_calls"] = _safe_items(usage["tool_calls"])
    return out


def _safe_items(fields: dict[str, Any]) -> dict[str, Any]:
    return {safe_text(k): safe_text(v) if isinstance(v, str) else v for k, v in fields.items()}


def _invalid(source: str, exc: BaseException) -> AgentProcessError:
    return AgentProcessError(f"{source} returned an 'output' object with invalid fields: {validation_line(exc)}")
