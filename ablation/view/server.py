"""Serving the viewer: bind a socket, say where, open the browser, run uvicorn until stopped.

The viewer binds to ``127.0.0.1`` by default; any host that is not a loopback address serves the
store's outputs to whoever can reach it, so :func:`serve` says so on stderr before it starts.
Whatever the address, a request whose ``Host`` header is not a name of the bound address is a
400 (:func:`allowed_hosts`), so a web page cannot read the store by DNS rebinding.
Port 0 picks a free port; the socket is bound before the URL is printed, so the URL is right.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
import webbrowser
from collections.abc import Callable
from typing import TextIO

import uvicorn
from starlette.applications import Starlette

from ablation.view.app import TrustedHosts

__all__ = ["allowed_hosts", "bind", "is_loopback", "serve", "view_url"]

#: The names a browser on this machine uses for it; always accepted as ``Host``.
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost`` or a loopback address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str) -> tuple[frozenset[str], bool]:
    """The ``Host`` header values the viewer bound to ``host`` serves, and whether any IP
    address literal is accepted too.

    Bound to loopback: :data:`LOOPBACK_NAMES` and ``host`` itself, nothing else, so a page on
    another site that rebinds its own name to 127.0.0.1 gets a 400, never the store. Bound
    elsewhere: also any IP address (a rebinding page can only send its own name), and for a
    wildcard address (``0.0.0.0``, ``::``) this machine's host name and fully qualified name.
    """
    names = {*LOOPBACK_NAMES, host.lower()}
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None and address.version == 6:
        names |= {f"[{host.lower()}]", f"[{address.compressed}]"}
    if is_loopback(host):
        return frozenset(names), False
    if address is not None and address.is_unspecified:
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(names), True


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (0: a free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def view_url(sock: socket.socket) -> str:
    """``http://HOST:PORT/`` of a bound socket; for a wildcard address (``0.0.0.0``, ``::``),
    which no browser opens, its loopback address, which reaches the same socket (the warning
    of :func:`serve` says the viewer listens beyond this machine)."""
    host, port = sock.getsockname()[:2]
    if ipaddress.ip_address(host.split("%")[0]).is_unspecified:
        host = "::1" if ":" in host else "127.0.0.1"
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve(
    app: Starlette,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = True,
    out: TextIO | None = None,
    started: Callable[[str], None] | None = None,
    sock: socket.socket | None = None,
) -> None:
    """Serve ``app`` until interrupted.

    Args:
        app: The viewer (:func:`ablation.view.app.create_app`).
        host: Address to bind; a non-loopback one gets a warning on stderr. Requests are
            served only when their ``Host`` header is one :func:`allowed_hosts` gives (a 400
            otherwise: a DNS-rebinding page cannot read the store through the user's browser).
        port: Port to bind (0: a free one).
        open_browser: Open the URL in the default browser once the server is up.
        out: Where the URL is printed (default stdout).
        started: Called with the URL once the socket is bound (for tests and embedding).
        sock: A socket :func:`bind` already bound to ``host`` and ``port`` (so that a caller
            can report an address that cannot be bound in its own words); ``None`` binds one.
            It is closed when the server stops.
    """
    out = out or sys.stdout
    sock = bind(host, port) if sock is None else sock
    url = view_url(sock)
    if not is_loopback(host):
        print(
            f"ablation view: WARNING: listening on {host}, not on this machine only: anyone who "
            "can reach this address can read every agent output in the store (no login)",
            file=sys.stderr,
        )
    print(f"ablation view: {url} (Ctrl-C to stop)", file=out, flush=True)
    if started is not None:
        started(url)
    hosts, any_address = allowed_hosts(host)
    guarded = TrustedHosts(app, hosts, any_address=any_address)
    server = uvicorn.Server(uvicorn.Config(guarded, log_level="warning", access_log=False))
    if open_browser:
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
