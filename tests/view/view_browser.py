"""The viewer's test harness: a demo store served by ``ablation view`` and a headless Chromium.

The server is the real command (``python -m ablation.cli view STORE --no-browser --port 0``) in
a subprocess; its first stdout line names the URL. The browser is the system Chromium driven by
Playwright (never a downloaded one), one per test module.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@contextmanager
def served(store: Path, *extra: str) -> Iterator[str]:
    """Run ``ablation view STORE`` on 127.0.0.1 and a free port; yield its URL."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ablation.cli import main_entry; main_entry()", "view",
         str(store), "--no-browser", "--port", "0", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://\S+/", line)
        if found is None:
            proc.kill()
            raise AssertionError(f"no URL from ablation view: {line!r} {proc.stderr.read()!r}")  # type: ignore[union-attr]
        yield found.group(0).rstrip("/")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


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
