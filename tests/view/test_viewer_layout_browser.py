"""The viewer's layout and navigation in a real headless Chromium, at 1300 and 800 px wide.

One store of real campaigns (tests/view/hunt_store.py: 58 tasks, one id 300 characters long, an
error and a timeout left out of the pairing), one ``ablation view`` server, one browser. Checked:
"Back to the tasks" returns to the filtered, sorted, searched page the user came from; no short
word or number in a table is broken across lines while long ids wrap inside the page; a first
load asks the server for nothing it does not have (no favicon 404).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import hunt_store
import pytest
import view_browser

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]

#: Words up to this long (split at white space and hyphens) must never break.
SHORT = 12

#: The words of table cells (outside ``<pre>``) of at most ``SHORT`` characters that the
#: browser laid out on more than one line.
BROKEN_WORDS = """(short) => {
  const broken = [];
  for (const cell of document.querySelectorAll("th, td")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest("pre")) continue;
      for (const m of node.data.matchAll(/[^\\s-]+/g)) {
        if (m[0].length > short) continue;
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""


@pytest.fixture(scope="module")
def hunt(hunt_built: dict[str, Any]) -> dict[str, Any]:
    """The hunt store of the worker (tests/view/conftest.py)."""
    return hunt_built


@pytest.fixture(scope="module")
def base(hunt_url: str) -> str:
    """Its server (shared with test_viewer_hunt_fixes.py)."""
    return hunt_url


@pytest.fixture(scope="module")
def chromium(base: str, chromium_endpoint: str) -> Iterator[Any]:
    """Connected to after the store is built (Playwright's sync API holds an event loop)."""
    with view_browser.chromium(chromium_endpoint) as b:
        yield b


@pytest.fixture
def context(chromium: Any) -> Iterator[Any]:
    ctx = chromium.new_context()
    yield ctx
    ctx.close()


def _path(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def test_back_to_the_tasks_keeps_filter_sort_search_and_page(context: Any, base: str,
                                                             hunt: dict[str, Any]) -> None:  # fmt: skip
    page = context.new_page()
    page.goto(f"{base}/campaign/{hunt['ids']['exclude']}/tasks?show=regressions")
    page.select_option("select[name=show]", "all")
    page.wait_for_url("**show=all*")
    page.fill("input[name=q]", "-")  # every id holds a dash: still two pages
    page.click("#task-filters button")
    page.wait_for_url("**q=-*")
    page.click("a.sort-outcome")
    page.wait_for_url("**sort=outcome*")
    page.click("a.sort-outcome")  # again: descending
    page.wait_for_url("**dir=desc*")
    page.click("a.next")
    page.wait_for_url("**page=2*")
    came_from, rows = page.url, page.locator("#tasks a.task").all_inner_texts()
    assert rows and page.locator("#count").inner_text().endswith("(page 2 of 2)")
    page.locator("#tasks a.task").first.click()
    page.wait_for_selector("#outcome")
    page.click("text=Back to the tasks")
    page.wait_for_selector("#tasks")
    assert _path(page.url) == _path(came_from)
    assert page.locator("#tasks a.task").all_inner_texts() == rows
    assert page.locator("select[name=show]").input_value() == "all"
    assert page.locator("input[name=q]").input_value() == "-"


@pytest.mark.parametrize("width", [1300, 800])
def test_short_words_never_break_and_long_ids_stay_inside(context: Any, base: str, width: int,
                                                          hunt: dict[str, Any]) -> None:  # fmt: skip
    cid = hunt["ids"]["exclude"]
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    for path in ("/", f"/campaign/{cid}/tasks", f"/campaign/{cid}",
                 f"/campaign/{cid}/task?id={hunt_store.LONG_ID}"):  # fmt: skip
        page.goto(base + path)
        assert page.evaluate(BROKEN_WORDS, SHORT) == [], (width, path)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, (width, path, overflow)
    page.goto(f"{base}/campaign/{cid}/tasks")
    box = page.locator(f"#tasks a.task:text-is('{hunt_store.LONG_ID}')").bounding_box()
    assert box is not None and box["x"] + box["width"] <= width


def test_a_first_load_asks_for_nothing_missing(
    context: Any, base: str, hunt: dict[str, Any]
) -> None:
    """The page declares its icon (so the browser does not ask for ``/favicon.ico``, which the
    viewer does not serve), the icon is served from the viewer itself as the CSP's ``img-src
    'self'`` allows, and nothing fails while the pages load (Chromium fetches icons after the
    load event: reported on the console, not as a page response)."""
    page = context.new_page()
    errors: list[str] = []
    ended: list[str] = []  # the URLs of the page's requests that finished or failed
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("requestfinished", lambda r: ended.append(r.url))
    page.on("requestfailed", lambda r: ended.append(r.url))
    for path in ("/", f"/campaign/{hunt['ids']['exclude']}"):
        ended.clear()
        page.goto(base + path, wait_until="networkidle")
        icons = page.locator("link[rel~=icon]")
        assert icons.count() == 1
        href = icons.get_attribute("href") or ""
        assert href.startswith("/") and not href.startswith("//")
        icon = page.request.get(base + href)
        assert icon.status == 200 and icon.headers["content-type"].startswith("image/")
        # The page's own icon request follows the load event: wait until it (or a request for
        # the undeclared /favicon.ico) has ended, up to the second the check used to wait.
        for _ in range(20):
            if any(u == base + href or u.endswith("/favicon.ico") for u in ended):
                break
            page.wait_for_timeout(50)
    assert errors == []
