"""The viewer answers only requests addressed to it by a name of the bound address: a page that
rebinds its own DNS name to 127.0.0.1 (DNS rebinding) makes the browser send that name as
``Host``, and gets a 400 instead of the store (docs/SECURITY.md, the viewer).

Real HTTP requests to ``ablation view`` (tests/view/view_browser.py), the Host header set by hand.
"""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

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
    """Bound to 0.0.0.0, ``ablation view`` prints a URL a browser opens (the loopback address)
    and warns on stderr that it listens beyond this machine; it answers its own addresses and
    names, never a foreign name."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ablation.cli import main_entry; main_entry()", "view",
         str(store), "--no-browser", "--host", "0.0.0.0", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, line  # a URL a browser opens: the loopback
        warning = proc.stderr.readline()
        assert "WARNING: listening on 0.0.0.0, not on this machine only" in warning, warning
        url = line.split()[2].rstrip("/")
        port = urlsplit(url).port
        for host in ("127.0.0.1", "localhost", "192.0.2.7", "[2001:db8::1]", socket.gethostname()):
            assert request(url, "/", f"{host}:{port}")[0] == 200, host
        for host in FOREIGN:
            assert request(url, "/", f"{host}:{port}" if host else host)[0] == 400, host
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_allowed_hosts() -> None:
    from ablation.view.server import allowed_hosts

    assert allowed_hosts("127.0.0.1") == (frozenset({"localhost", "127.0.0.1", "[::1]"}), False)
    hosts, any_address = allowed_hosts("::1")
    assert hosts >= {"[::1]", "localhost", "127.0.0.1"} and not any_address
    hosts, any_address = allowed_hosts("viewer.lan")
    assert "viewer.lan" in hosts and any_address
    assert "rebind.attacker.example" not in hosts
