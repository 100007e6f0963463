"""The viewer on a phone, 375 px wide, in a real headless Chromium: a wide table scrolls inside
its own box and a filter list fits the screen, so the page itself never scrolls sideways (its
header and text stopping at the screen's edge while the tables ran on past it), and every
table's cells stay reachable by scrolling that table.

The demo store (tests/view/view_demo.py) served by ``ablation view`` (tests/view/conftest.py).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from ablation.store import RunStore

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]

WIDTH = 375

#: How far the page, and each table's box, reach past the screen's right edge (px), and whether
#: every table's content is reachable (its scroll width reaches its last cell).
MEASURE = """() => {
  const screen = document.documentElement.clientWidth;
  const tables = [...document.querySelectorAll("main table")].map((t) => {
    const cells = [...t.querySelectorAll("th, td")];
    const right = Math.max(...cells.map((c) => c.getBoundingClientRect().right));
    const box = t.getBoundingClientRect();
    return { past: box.right - screen, reachable: box.left + t.scrollWidth >= right - 1 };
  });
  return { page: document.documentElement.scrollWidth - screen, tables };
}"""


def test_pages_fit_a_phone_screen(browser: Any, url: str, store: Any, campaigns: dict[str, str]) -> None:
    with RunStore(store, read_only=True) as s:
        suite = s.get_campaign(campaigns["candidate_a"]).suite_fingerprint
    cid = quote(campaigns["candidate_a"], safe="")
    paths = [
        f"/campaign/{cid}/tasks", f"/suite/{suite}",  # a wide table; a 64-character fingerprint
        "/compare",  # lists of long arm names
    ]  # fmt: skip
    context = browser.new_context(viewport={"width": WIDTH, "height": 800})
    try:
        page = context.new_page()
        for path in paths:
            assert page.goto(url.rstrip("/") + path).status == 200, path
            found = page.evaluate(MEASURE)
            assert found["page"] <= 0, (path, found)
            assert all(t["past"] <= 1 and t["reachable"] for t in found["tables"]), (path, found)
    finally:
        context.close()
