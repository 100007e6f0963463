"""Stored text stays text in the viewer: outputs, errors, task ids and categories that are
markup, ``javascript:`` links, ``</script>`` and ANSI escapes create no element, run nothing and
open no dialog; every response carries the Content-Security-Policy; ``ablation view`` warns when
bound beyond this machine, and then answers its own addresses and names, never a foreign name;
a missing store or view extra is one line. (That Ctrl-C stops the viewer with exit 0:
test_view_readonly.py, at the end of its session.)

The store holds real campaigns (tests/view/view_demo.py); the pages are opened in the system
Chromium, which would run an ``onerror`` or ``onload`` handler if one reached the DOM.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
import view_demo
from helpers.cli import run_here
from helpers.viewrender_hosts import FOREIGN, request

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]


def visit(browser: Any, address: str, page: Any = None) -> tuple[Any, list[str]]:
    """Open ``address`` in a new page, or in ``page``; the page and the list the dialogs it opens
    there are recorded in."""
    if page is None:
        page = browser.new_page()
        page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    page.dialogs = []
    response = page.goto(address)
    assert response.status == 200
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.wait_for_timeout(300)  # an onerror would fire once the broken image failed to load
    return page, page.dialogs


def assert_inert(page: Any, dialogs: list[str]) -> None:
    assert dialogs == []
    assert page.locator("img").count() == 0
    assert page.locator("svg").count() == 0
    assert page.locator("[onerror], [onload], [onclick]").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    scripts = page.locator("script").evaluate_all("els => els.map(e => e.getAttribute('src'))")
    assert scripts == ["/static/view.js"]


def test_hostile_output_and_error_are_text(browser: Any, url: str, campaigns: dict[str, str]) -> None:
    cid = campaigns["candidate_a"]
    page, dialogs = visit(browser, f"{url}/campaign/{cid}/task?id=t05")
    assert_inert(page, dialogs)
    shown = page.locator("#arm-candidate pre.output").inner_text()
    assert shown == view_demo.HOSTILE.replace("\x1b", "\\x1b")  # the escape is shown, not obeyed
    assert "javascript:alert(3)" in page.locator("#diff ins").inner_text()
    page, dialogs = visit(browser, f"{url}/campaign/{cid}/task?id=t07", page)
    assert_inert(page, dialogs)
    error = page.locator("#arm-candidate pre.error").first.inner_text()
    assert error.startswith("ValueError: <img src=x onerror=alert(1)>")
    page, dialogs = visit(browser, f"{url}/campaign/{cid}", page)  # the errors table's example
    assert page.locator("#errors pre").first.inner_text().startswith("ValueError: <img")
    assert_inert(page, dialogs)
    page.close()


def test_hostile_id_and_category(browser: Any, url: str, campaigns: dict[str, str]) -> None:
    cid = campaigns["other"]
    page, dialogs = visit(browser, f"{url}/campaign/{cid}/tasks")
    assert_inert(page, dialogs)
    assert view_demo.HOSTILE_ID in page.locator("#tasks a.task").all_inner_texts()
    assert page.locator(f"#tasks td:has-text('{view_demo.HOSTILE_CATEGORY}')").count() == 1
    page.click("#tasks a.task >> nth=0")  # the hostile id sorts first; its link round-trips
    page.wait_for_selector("#outcome")
    assert page.locator("h1").inner_text() == f"Task {view_demo.HOSTILE_ID}"
    assert_inert(page, dialogs)
    page.close()
    with urllib.request.urlopen(f"{url}/campaign/{cid}/task?id={quote(view_demo.HOSTILE_ID)}") as r:
        body = r.read().decode()
    assert "<svg" not in body and "&lt;svg onload=alert(4)&gt;" in body


def test_non_loopback_host_is_announced(tmp_path: Path, store: Path) -> None:
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
        # bound beyond this machine, it answers its addresses and names, never a foreign name
        url = line.split()[2].rstrip("/")
        port = urlsplit(url).port
        for host in ("127.0.0.1", "localhost", "192.0.2.7", "[2001:db8::1]", socket.gethostname()):
            assert request(url, "/", f"{host}:{port}")[0] == 200, host
        for host in FOREIGN:
            assert request(url, "/", f"{host}:{port}" if host else host)[0] == 400, host
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_missing_store_is_one_line(tmp_path: Path) -> None:
    proc = run_here(["view", str(tmp_path / "none.db"), "--no-browser"])
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"ablation: error: {tmp_path / 'none.db'}: no run store here (run a campaign first, or "
        "name the store)"
    ]


def test_missing_extra_is_one_line(store: Path) -> None:
    code = (
        "import sys; sys.modules['starlette'] = None; from ablation.cli import main_entry; "
        "sys.argv = ['ablation', 'view', sys.argv[1], '--no-browser']; main_entry()"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(store)], capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "ablation: error: ablation view needs the view extra (starlette is missing): "
        "pip install 'ablation[view]'"
    ]
