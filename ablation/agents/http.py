"""An HTTP agent: POST ``{"input": ...}`` and read a JSON response body (urllib, no redirects)."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from ablation.agents.forms import (
    AgentConnectionError,
    AgentHttpError,
    AgentTimeoutError,
    _excerpt,
    interpret_agent_json,
)
from ablation.errors import AgentSpecError, ConfigError
from ablation.schema import to_jsonable

__all__ = ["HttpAgent"]


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
