"""The viewer answers only requests addressed to it by a name of the bound address: a page that
rebinds its own DNS name to 127.0.0.1 (DNS rebinding) makes the browser send that name as
``Host``, and gets a 400 instead of the store (docs/SECURITY.md, the viewer).

Real HTTP requests to ``ablation view`` (tests/view/view_browser.py), the Host header set by hand
(tests/helpers/viewrender_hosts.py). A server bound beyond this machine:
test_view_security.py::test_non_loopback_host_is_announced.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

import pytest
from helpers.viewrender_hosts import FOREIGN, request

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]


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


def test_allowed_hosts() -> None:
    from ablation.view.server import allowed_hosts

    assert allowed_hosts("127.0.0.1") == (frozenset({"localhost", "127.0.0.1", "[::1]"}), False)
    hosts, any_address = allowed_hosts("::1")
    assert hosts >= {"[::1]", "localhost", "127.0.0.1"} and not any_address
    hosts, any_address = allowed_hosts("viewer.lan")
    assert "viewer.lan" in hosts and any_address
    assert "rebind.attacker.example" not in hosts
