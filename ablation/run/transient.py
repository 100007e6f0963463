"""Which exceptions mean "the agent's service cannot be reached right now": one rule for retries
and fail-fast.

An exception is **transient** when

1. it carries an HTTP status (an ``int`` attribute ``status_code`` or ``status``, on the exception
   or on its ``response``) and the status is 408, 429 or 5xx; an exception carrying any other
   status is not transient, whatever its class (a 404 is not retried); or, with no status,
2. it is a :class:`ConnectionError` or :class:`TimeoutError`, or a class in its MRO has one of the
   names in :data:`CONNECTION_CLASS_NAMES`: the connection and time-out bases of the common HTTP
   and SDK clients, matched by name so that none of them has to be installed or imported.

Names are matched anywhere in the MRO, so a subclass is recognised by its base:
``openai.APITimeoutError`` and ``anthropic.APIConnectionError`` by ``APIConnectionError``,
``httpx.ConnectError`` by ``NetworkError``, ``httpx.ReadTimeout`` by ``TimeoutException``,
``requests.exceptions.ConnectTimeout`` by ``ConnectionError``, ``aiohttp.ClientConnectorError`` and
``aiohttp.ServerDisconnectedError`` by ``ClientConnectionError``, ``urllib.error.URLError`` by its
name. Status errors of these clients carry their status (``openai.RateLimitError.status_code`` 429,
``httpx.HTTPStatusError.response.status_code``, ``aiohttp.ClientResponseError.status``,
``urllib.error.HTTPError.status``).

The default :class:`~ablation.config.RetryPolicy` retries transient exceptions (besides the types
it lists), and fail-fast counts them as infrastructure errors. Fail-fast sees stored trials, which
keep the error's class name only: :func:`note_error` is called where a trial's exception is
caught and remembers, for this process, the class names the rule recognised
(:func:`recognised_name`); fail-fast then counts every error of such a class.
"""

from __future__ import annotations

import datetime
import email.utils
import math
import time

__all__ = [
    "CONNECTION_CLASS_NAMES",
    "TRANSIENT_STATUSES",
    "http_status",
    "is_transient",
    "note_error",
    "recognised_name",
    "retry_after",
]

#: Class names (anywhere in an exception's MRO) that mean a connection failed or timed out.
CONNECTION_CLASS_NAMES = frozenset(
    {
        # standard library: builtins, socket, http.client, urllib
        "ConnectionError", "TimeoutError", "gaierror", "RemoteDisconnected", "URLError",
        # openai, anthropic (and other Stainless-generated SDKs)
        "APIConnectionError", "APITimeoutError",
        # httpx, httpcore
        "NetworkError", "TimeoutException", "RemoteProtocolError", "ProxyError",
        # requests, urllib3
        "Timeout", "NewConnectionError", "MaxRetryError",
        # aiohttp
        "ClientConnectionError", "ServerTimeoutError",
        # ablation's own agents
        "AgentConnectionError",
    }
)  # fmt: skip

#: HTTP statuses worth another attempt: request timeout, too many requests, any server error.
TRANSIENT_STATUSES = frozenset({408, 429, *range(500, 600)})

_recognised: set[str] = set()
_MAX_NAMES = 1024  # a bound on the memo: distinct exception class names are few


def http_status(exc: BaseException) -> int | None:
    """The HTTP status ``exc`` carries (see the module docstring), or ``None``."""
    for holder in (exc, _attribute(exc, "response")):
        if holder is None:
            continue
        for name in ("status_code", "status"):
            value = _attribute(holder, name)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
                return value
    return None


def retry_after(exc: BaseException) -> float | None:
    """The seconds the response of ``exc`` asks a client to wait before another attempt, or
    ``None`` when it asks nothing (RFC 9110 section 10.2.3).

    Read from the headers on the exception or on its ``response`` (``urllib.error.HTTPError``,
    ``aiohttp.ClientResponseError``, ablation's own agents' errors; ``httpx`` and ``requests``
    responses, which the openai and anthropic errors carry): ``retry-after-ms`` (openai's), else
    ``Retry-After`` as delay-seconds or an HTTP-date. A value that is neither, negative or not
    finite asks nothing.
    """
    for holder in (exc, _attribute(exc, "response")):
        headers = None if holder is None else _attribute(holder, "headers")
        get = _attribute(headers, "get") if headers is not None else None
        if not callable(get):
            continue
        for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
            try:
                raw = get(name)
            except Exception:
                raw = None
            seconds = _delay(raw, scale) if isinstance(raw, str) else None
            if seconds is not None:
                return seconds
    return None


def _delay(raw: str, scale: float) -> float | None:
    """Seconds from a delay (times ``scale``) or, for ``Retry-After``, an HTTP-date."""
    text = raw.strip()
    try:
        seconds = float(text) * scale
    except ValueError:
        if scale != 1.0:
            return None
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        when = when if when.tzinfo is not None else when.replace(tzinfo=datetime.UTC)  # HTTP-dates are GMT
        seconds = max(when.timestamp() - time.time(), 0.0)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _attribute(obj: object, name: str) -> object:
    """``getattr(obj, name, None)``, and ``None`` when the attribute raises (a lazy property)."""
    try:
        return getattr(obj, name, None)
    except Exception:
        return None


def is_transient(exc: BaseException) -> bool:
    """True when ``exc`` is a connection, time-out or transient-status error (module docstring)."""
    status = http_status(exc)
    if status is not None:
        return status in TRANSIENT_STATUSES
    if issubclass(type(exc), ConnectionError | TimeoutError):  # type(): __class__ may raise
        return True
    return any(klass.__name__ in CONNECTION_CLASS_NAMES for klass in type(exc).__mro__)


def note_error(exc: BaseException) -> None:
    """Remember the class name of ``exc`` when the rule recognises it (for fail-fast)."""
    name = type(exc).__name__
    if name not in _recognised and len(_recognised) < _MAX_NAMES and is_transient(exc):
        _recognised.add(name)


def recognised_name(name: str) -> bool:
    """True when an exception of class ``name`` was recognised as transient in this process."""
    return name in _recognised
