"""A viewer bound to every interface prints (and opens) a URL a browser can open.

``ablation view --host 0.0.0.0`` printed ``http://0.0.0.0:PORT/``: an address to bind, not to
visit (Chromium refuses it). The URL is now the loopback address of the same socket, which the
viewer's host check accepts; the warning that it listens beyond this machine stays. A real socket
is bound and connected to through the printed URL.
"""

from __future__ import annotations

import socket
import urllib.parse

from ablation.view.server import allowed_hosts, bind, view_url


def test_the_url_of_a_wildcard_is_its_loopback() -> None:
    host, loopback = "0.0.0.0", "127.0.0.1"  # (``::`` gives ``[::1]`` alike, where IPv6 is)
    with bind(host, 0) as sock:
        url = urllib.parse.urlsplit(view_url(sock))
        assert url.hostname == loopback and url.port == sock.getsockname()[1]
        names, _ = allowed_hosts(host)
        assert url.netloc.rsplit(":", 1)[0] in names  # the Host header the browser sends
        with socket.create_connection((loopback, url.port), timeout=5):
            pass  # the socket the viewer serves is reached through it


def test_a_named_address_keeps_its_url() -> None:
    with bind("127.0.0.1", 0) as sock:
        assert view_url(sock) == f"http://127.0.0.1:{sock.getsockname()[1]}/"
