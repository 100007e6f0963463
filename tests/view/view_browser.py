"""The viewer's test harness: a demo store served by ``ablation view`` and a headless Chromium.

The server is the real command (``python -m ablation.cli view STORE --no-browser --port 0``) in
a subprocess; its first stdout line names the URL. The browser is the system Chromium driven by
Playwright (never a downloaded one): in the tests one Chromium process a test worker
(:func:`chromium_process`), which each test module connects to over the DevTools protocol, in
fresh contexts; launched by Playwright itself for the screenshots.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from helpers import view_server

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@contextmanager
def served(store: Path, *extra: str) -> Iterator[str]:
    """Run ``ablation view STORE`` on 127.0.0.1 and a free port; yield its URL."""
    with view_server.served(str(store), *extra) as url:
        yield url


@contextmanager
def chromium(endpoint: str | None = None) -> Iterator[Any]:
    """A headless system Chromium (Playwright's sync API): the one serving DevTools at
    ``endpoint`` (:func:`chromium_process`), else one Playwright launches. Closing it closes the
    contexts opened through it (and a launched browser)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        if endpoint is None:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        else:
            browser = pw.chromium.connect_over_cdp(endpoint)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def chromium_process() -> Iterator[str]:
    """A headless system Chromium in a process of its own, no Playwright in this one: yields its
    DevTools endpoint (``http://127.0.0.1:PORT``, read from the ``DevToolsActivePort`` file it
    writes in its profile); stopped with its helper processes (its own process group) at the end.
    A connection costs a Playwright start, not a browser's as well."""
    with tempfile.TemporaryDirectory(prefix="view-chromium-") as profile:
        proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        try:
            active, port, deadline = Path(profile) / "DevToolsActivePort", "", time.monotonic() + 60
            while not port.isdigit():
                assert proc.poll() is None, f"chromium exited with status {proc.returncode}"
                assert time.monotonic() < deadline, "chromium opened no DevTools port in 60 s"
                time.sleep(0.05)
                port = (active.read_text().split() or [""])[0] if active.exists() else ""
            yield f"http://127.0.0.1:{port}"
        finally:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
