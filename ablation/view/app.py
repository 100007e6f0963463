"""The viewer's ASGI application (Starlette): routes, security headers and errors.

Pages are server-rendered HTML (:mod:`ablation.view.pages`, :mod:`ablation.view.task_page`,
:mod:`ablation.view.suite_pages`); ``/static/`` serves one stylesheet and one script; the only
JSON endpoint is a campaign's progress, which a running campaign's page polls. Every response
carries a Content-Security-Policy that allows scripts, styles and fetches from the viewer itself
only (no inline script, style or event handler, no plugin, no frame, no form to elsewhere), so an
escape missed somewhere could still not run anything. Handlers are plain functions: Starlette
runs them in its thread pool, and :class:`~ablation.view.catalog.Catalog` serialises the store.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ablation.errors import StoreError
from ablation.view import markup
from ablation.view.catalog import Catalog
from ablation.view.pages import campaign_page, campaigns_page, progress, tasks_page
from ablation.view.suite_pages import compare_page, history_page
from ablation.view.task_page import task_page

__all__ = ["CSP", "create_app"]

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


def _not_found(catalog: Catalog, what: str) -> HTMLResponse:
    body = f'<p class="error">{markup.esc(what)}</p><p>{markup.link("/", "All campaigns")}</p>'
    return HTMLResponse(markup.layout("Not found", body, store=str(catalog.path)), status_code=404)


def create_app(catalog: Catalog) -> Starlette:
    """The viewer of ``catalog``'s store as an ASGI app."""

    def page(build: Callable[[Request], str]) -> Callable[[Request], Response]:
        def handler(request: Request) -> Response:
            try:
                return HTMLResponse(build(request))
            except StoreError as exc:
                return _not_found(catalog, str(exc))
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
        Route("/", page(lambda r: campaigns_page(catalog, **_pick(params(r), "suite", "agent")))),
        Route("/campaign/{campaign_id}", page(lambda r: campaign_page(catalog, campaign_id(r)))),
        Route("/campaign/{campaign_id}/tasks",
              page(lambda r: tasks_page(catalog, campaign_id(r), params(r)))),
        Route("/campaign/{campaign_id}/task",
              page(lambda r: task_page(catalog, campaign_id(r), params(r).get("id", "")))),
        Route("/compare", page(lambda r: compare_page(catalog, params(r)))),
        Route("/suite/{fingerprint}",
              page(lambda r: history_page(catalog, str(r.path_params["fingerprint"])))),
        Route("/api/campaign/{campaign_id}/progress", progress_json),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]  # fmt: skip
    return Starlette(routes=routes, middleware=[Middleware(SecurityHeaders)])


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


def _pick(params: dict[str, str], *names: str) -> dict[str, Any]:
    return {k: params.get(k, "") for k in names}
