"""Raw HTTP requests to an ``ablation view`` server with the ``Host`` header set by hand (the
viewer's DNS-rebinding guard), shared by tests/view/test_view_hosts.py and test_view_security.py."""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

#: ``Host`` values no bound address answers: names of other sites (a rebinding page sends its own
#: name), a user-info trick and an empty value.
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
