"""The viewer's ASGI application (Starlette): routes, security headers and errors.

Pages are server-rendered HTML (:mod:`ablation.view.pages`, :mod:`ablation.view.task_page`,
:mod:`ablation.view.suite_pages`); ``/static/`` serves one stylesheet, one script and the icon;
the only JSON endpoint is a campaign's progress, which a running campaign's page polls; any other
path is the viewer's own 404 page (the layout, a link back), as is every page about a campaign,
arm or task the store does not hold or cannot read (the compare pages keep their form and error
line, with that status); a page about a campaign whose report cannot be built (the analysis
refuses its stored settings), or about two arms that cannot be paired, is a 422 page naming the
error. The store raises one :class:`~ablation.errors.StoreError` for an unknown campaign and for
a damaged row alike, and both are a 404 naming it. Every response carries a
Content-Security-Policy that allows scripts, styles and fetches from the viewer itself
only (no inline script, style or event handler, no plugin, no frame, no form to elsewhere), so an
escape missed somewhere could still not run anything. Handlers are plain functions: Starlette
runs them in its thread pool, and :class:`~ablation.view.catalog.Catalog` serialises the store.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ablation.errors import StoreError
from ablation.view import markup
from ablation.view.catalog import Catalog, ReportError
from ablation.view.pages import campaign_page, campaigns_page, progress, tasks_page
from ablation.view.steps import steps_page
from ablation.view.suite_pages import COMPARE_TASK, compare_page, compare_task_page, history_page
from ablation.view.task_page import task_page

__all__ = ["CSP", "TrustedHosts", "create_app"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
STATIC = Path(__file__).resolve().parent / "static"


def _not_found(
    catalog: Catalog, what: str, title: str = "Not found", status: int = 404
) -> HTMLResponse:
    body = f'<p class="error">{markup.esc(what)}</p><p>{markup.link("/", "All campaigns")}</p>'
    return HTMLResponse(markup.layout(title, body, store=str(catalog.path)), status_code=status)


def create_app(catalog: Catalog) -> Starlette:
    """The viewer of ``catalog``'s store as an ASGI app."""

    def page(build: Callable[[Request], str | markup.Answer]) -> Callable[[Request], Response]:
        def handler(request: Request) -> Response:
            try:
                built = build(request)
                if isinstance(built, markup.Answer):
                    return HTMLResponse(built.html, status_code=built.status)
                return HTMLResponse(built)
            except StoreError as exc:
                return _not_found(catalog, str(exc))
            except ReportError as exc:  # the stored campaign reads, the analysis refuses it
                return _not_found(catalog, str(exc), "Report failed", 422)
            except KeyError as exc:
                return _not_found(catalog, f"no trial of task {exc.args[0]!r} in this campaign")

        return handler

    def params(request: Request) -> dict[str, str]:
        return dict(request.query_params)

    def campaign_id(request: Request) -> str:
        return str(request.path_params["campaign_id"])

    def progress_json(request: Request) -> Response:
        try:
            return JSONResponse(progress(catalog.record(campaign_id(request))))
        except StoreError as exc:
            return JSONResponse({"error": str(exc)}, status_code=404)

    routes = [
        Route("/", page(lambda r: campaigns_page(catalog, **_pick(params(r), "suite", "agent", "page")))),
        Route("/campaign/{campaign_id}", page(lambda r: campaign_page(catalog, campaign_id(r)))),
        Route("/campaign/{campaign_id}/tasks",
              page(lambda r: tasks_page(catalog, campaign_id(r), params(r)))),
        Route("/campaign/{campaign_id}/task",
              page(lambda r: task_page(catalog, campaign_id(r), params(r).get("id", ""),
                                       params(r).get("back", ""), _row(params(r)), params(r).get("key", "")))),
        Route("/campaign/{campaign_id}/steps",
              page(lambda r: steps_page(catalog, campaign_id(r), params(r)))),
        Route("/compare", page(lambda r: compare_page(catalog, params(r)))),
        Route(COMPARE_TASK, page(lambda r: compare_task_page(catalog, params(r)))),
        Route("/suite/{fingerprint}",
              page(lambda r: history_page(catalog, str(r.path_params["fingerprint"]),
                                          params(r).get("limit", "")))),
        Route("/api/campaign/{campaign_id}/progress", progress_json),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]  # fmt: skip

    async def unknown(request: Request, exc: Exception) -> Response:
        return _not_found(catalog, f"No page at {request.url.path}")

    return Starlette(
        routes=routes, middleware=[Middleware(SecurityHeaders)], exception_handlers={404: unknown}
    )


class SecurityHeaders:
    """ASGI middleware: every HTTP response gets :data:`HEADERS` (the CSP among them)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, with_headers)


#: A Host header: a name or IPv4 address, or an IPv6 address in brackets, then maybe a port.
_HOST_HEADER = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[^\[\]:/@\s]+)(?::[0-9]{1,5})?")


class TrustedHosts:
    """ASGI middleware: a request whose ``Host`` header names no allowed host is a 400.

    A page on another site can make the user's browser send requests to the viewer under a
    name it controls (DNS rebinding); the browser then sends that name as ``Host``, which is
    how the viewer tells them apart. Like Starlette's ``TrustedHostMiddleware``, without its
    wildcards, the same in every Starlette version, and with the security headers on the 400.

    Args:
        app: The viewer.
        hosts: Host names or addresses, lower case, IPv6 addresses in brackets (``[::1]``).
        any_address: Accept any IP address literal too (a rebinding page cannot send one).
    """

    def __init__(self, app: ASGIApp, hosts: Collection[str], *, any_address: bool = False) -> None:
        self.app = app
        self.hosts = frozenset(h.lower() for h in hosts)
        self.any_address = any_address

    def allowed(self, header: str | None) -> bool:
        """Whether a request with this ``Host`` header is served."""
        found = _HOST_HEADER.fullmatch(header or "")
        if found is None:
            return False
        host = found.group(1).lower()
        if host in self.hosts:
            return True
        if not self.any_address:
            return False
        try:
            ipaddress.ip_address(host[1:-1] if host.startswith("[") else host)
        except ValueError:
            return False
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = Headers(scope=scope)
            if len(headers.getlist("host")) != 1 or not self.allowed(headers.get("host")):
                response = PlainTextResponse("Invalid host header", status_code=400, headers=HEADERS)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _pick(params: dict[str, str], *names: str) -> dict[str, Any]:
    return {k: params.get(k, "") for k in names}


def _row(params: dict[str, str]) -> int | None:
    """The ``from`` parameter: the first row of a task page's step lists, else ``None``."""
    return markup.count(params.get("from", ""))
