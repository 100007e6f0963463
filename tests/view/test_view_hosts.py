"""The viewer answers only requests addressed to it by a name of the bound address: a page that
rebinds its own DNS name to 127.0.0.1 (DNS rebinding) makes the browser send that name as
``Host``, and gets a 400 instead of the store (docs/SECURITY.md, the viewer).

Real HTTP requests to ``ablation view`` (tests/view/view_browser.py), the Host header set by hand.
"""

from __future__ import annotations

import http.client
import socket
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
import view_browser

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]

FOREIGN = ("rebind.attacker.example", "localhost.attacker.example", "127.0.0.1.nip.io",
           "attacker.example@127.0.0.1", "")  # fmt: skip


def request(address: str, path: str, host: str | None) -> tuple[int, dict[str, str], str]:
    """GET ``path`` from the server at ``address`` with ``Host: host`` (``None``: no Host)."""
    port = urlsplit(address).port
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("GET", path, skip_host=True)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        conn.close()


def test_a_foreign_host_header_is_a_400(url: str, campaigns: dict[str, str]) -> None:
    port = urlsplit(url).port
    paths = ["/", f"/api/campaign/{quote(campaigns['candidate_a'])}/progress",
             f"/campaign/{quote(campaigns['candidate_a'])}", "/static/view.js"]  # fmt: skip
    for path in paths:
        for host in ("localhost", "127.0.0.1", "[::1]", "LOCALHOST"):
            status, _, _ = request(url, path, f"{host}:{port}")
            assert status == 200, (path, host)
        assert request(url, path, "127.0.0.1")[0] == 200  # no port: the default for the scheme
        for host in FOREIGN:
            status, headers, body = request(url, path, f"{host}:{port}" if host else host)
            assert status == 400, (path, host)
            assert body == "Invalid host header"
            assert "script-src 'self'" in headers["content-security-policy"]
        assert request(url, path, None)[0] == 400  # HTTP/1.1 without Host


def test_a_non_loopback_bind_accepts_its_addresses_not_foreign_names(store: Path) -> None:
    with view_browser.served(store, "--host", "0.0.0.0") as url:
        port = urlsplit(url).port
        for host in ("127.0.0.1", "localhost", "192.0.2.7", "[2001:db8::1]", socket.gethostname()):
            assert request(url, "/", f"{host}:{port}")[0] == 200, host
        for host in FOREIGN:
            assert request(url, "/", f"{host}:{port}" if host else host)[0] == 400, host


def test_allowed_hosts() -> None:
    from ablation.view.server import allowed_hosts

    assert allowed_hosts("127.0.0.1") == (frozenset({"localhost", "127.0.0.1", "[::1]"}), False)
    hosts, any_address = allowed_hosts("::1")
    assert hosts >= {"[::1]", "localhost", "127.0.0.1"} and not any_address
    hosts, any_address = allowed_hosts("viewer.lan")
    assert "viewer.lan" in hosts and any_address
    assert "rebind.attacker.example" not in hosts
