"""The viewer's test harness: a demo store served by ``ablation view`` and a headless Chromium.

The server is the real command (``python -m ablation.cli view STORE --no-browser --port 0``) in
a subprocess; its first stdout line names the URL. The browser is the system Chromium driven by
Playwright (never a downloaded one), one per test module.
"""

from __future__ import annotations

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
def chromium() -> Iterator[Any]:
    """A headless system Chromium (Playwright's sync API)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()
