"""HTML renderer: one self-contained page, escaped user text, inline SVG plots, no scripts.

The tests marked ``slow`` load the page in headless Chromium (Debian's ``/usr/bin/chromium``,
installed by CI; one browser for the module, driven by Playwright, a fresh context a page). A
missing browser is a failure, not a skip: the promise "no script runs" is only shown by a browser.
A control page with an inline script proves that scripts do run in this browser set-up, so an
unchanged title on the report page means something.
"""

from __future__ import annotations

import html
import re
import shutil
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from report_fixtures import SNAPSHOT_POLICY, XSS, hostile_report, make_report, repeated_report

from ablation.analysis.gates import evaluate_gates
from ablation.render import plots, render
from ablation.render.html import CSP, page_title
from ablation.render.plots import clean_svg
from ablation.report import AblationReport

#: One worker renders the hostile report's page once (with its plots, ~1 s); the tests read it.
pytestmark = pytest.mark.xdist_group("render-html")

CHROMIUM = "/usr/bin/chromium"
ESCAPED = html.escape(XSS, quote=True)


@cache
def _hostile() -> AblationReport:
    return evaluate_gates(hostile_report(), SNAPSHOT_POLICY)


def _page(report: AblationReport | None = None) -> str:
    """The HTML page of ``report`` (default: the hostile report's, rendered once a process)."""
    return render(report, "html") if report is not None else _hostile_page()


@cache
def _hostile_page() -> str:
    return render(_hostile(), "html")


def test_untrusted_text_is_escaped_everywhere() -> None:
    page = _page()
    assert XSS not in page
    assert ESCAPED in page
    # as a task id (regressions table and drill-down), a category, an output, an error, an agent
    assert f"evil/{ESCAPED}" in page
    assert f'<td class="long">{ESCAPED}</td>' in page  # the category cell (a long word: may wrap)
    assert f"<pre>{ESCAPED}</pre>" in page  # an output
    assert f'<pre class="error">ValueError: {ESCAPED}</pre>' in page
    assert f"<title>{html.escape(page_title(_hostile()))}</title>" in page
    assert "bad row: " + ESCAPED in page  # exclusion reason


def test_no_script_no_event_handler_no_external_resource() -> None:
    page = _page()
    lower = page.lower()
    assert "<script" not in lower
    tags = re.findall(r"<[a-zA-Z][^>]*>", page)
    assert tags, "no tags parsed"
    for tag in tags:
        assert not re.search(r"\son\w+\s*=", tag), f"event handler in {tag[:80]}"
        assert not re.search(r"\s(src|action|formaction)\s*=", tag), tag[:80]
    names = {re.match(r"<([a-zA-Z0-9]+)", t).group(1).lower() for t in tags}  # type: ignore[union-attr]
    assert not names & {"script", "img", "iframe", "link", "object", "embed", "form", "base"}
    assert "@import" not in lower
    # the only URLs are XML namespace names inside the SVGs, which are never fetched
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", page))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    assert all(u.startswith("#") for u in re.findall(r'href="([^"]*)"', page))
    assert f'content="{CSP}"' in page and "default-src 'none'" in CSP


def test_svg_plots_are_inline_and_carry_no_text_nodes() -> None:
    page = _page()
    assert page.count("<svg") == 3  # outcomes, intervals, categories
    assert "<?xml" not in page and "<!DOCTYPE svg" not in page and "<!--" not in page
    for svg in re.findall(r"<svg.*?</svg>", page, re.S):
        # labels (the hostile category included) are glyph paths, never text
        assert "<text" not in svg
        assert "script" not in svg.lower() and "pwned" not in svg
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), "element ids repeat across plots"


def test_clean_svg_strips_prolog_comments_and_prefixes_ids() -> None:
    raw = (
        '<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "x" "y">\n<svg><metadata>m</metadata>'
        '<!-- a&lt;b --><defs><path id="g1"/></defs><use xlink:href="#g1"/>'
        '<path clip-path="url(#c2)"/></svg>'
    )
    out = clean_svg(raw, "p")
    assert out == (
        '<svg><defs><path id="p-g1"/></defs><use xlink:href="#p-g1"/>'
        '<path clip-path="url(#p-c2)"/></svg>'
    )


def test_page_sections_and_drilldown() -> None:
    page = _page()  # the snapshot report's sections, its text made hostile
    order = [
        'id="regressions"',
        'id="improvements"',
        'id="paired"',
        'id="arms"',
        'id="tests"',
        'id="metrics"',
        'id="noninferiority"',
        'id="excluded"',
        'id="categories"',
        'id="gates"',
        'id="drilldown"',
        "<footer>",
    ]
    positions = [page.index(s) for s in order]
    assert positions == sorted(positions)
    assert page.count('<article class="pair regression"') == 4
    assert page.count('<article class="pair improvement"') == 13
    assert page.count('<div class="sbs">') == 17
    assert "[truncated" not in page  # the HTML limit is generous
    assert 'href="#pair-1-r"' in page and 'id="pair-1-r"' in page


def test_repeated_report_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plots, "report_plots", lambda report: [])  # the sections are checked
    page = _page(repeated_report())
    assert 'id="repeated"' in page and 'id="flaky"' in page


def test_rendering_is_deterministic() -> None:
    assert render(_hostile(), "html") == _page()


def test_without_matplotlib_the_page_says_how_to_get_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # ``import matplotlib`` fails as if absent
    page = render(make_report(), "html")
    assert "<svg" not in page, "svg without matplotlib"
    assert "pip install ablation[html]" in page, "no hint"


# --------------------------------------------------------------------------- headless Chromium
def _chromium() -> str:
    if not Path(CHROMIUM).exists():
        found = shutil.which("chromium")
        if not found:
            pytest.fail(
                f"{CHROMIUM} is not installed: the HTML safety test needs a real browser "
                "(apt-get install -y chromium)"
            )
        return found
    return CHROMIUM


#: Chromium's flags for these pages (as the command line they were once opened with).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One headless system Chromium for the module (Playwright's sync API): each page opens in a
    context of its own, as fresh as a new browser profile."""
    from playwright.sync_api import sync_playwright

    path = _chromium()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=FLAGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def _open(chromium: Any, page: Path, **context: Any) -> tuple[Any, Any, list[str]]:
    """``page`` loaded in a fresh context whose timers then run 3 s (of the page's own clock, as
    Chromium's ``--virtual-time-budget=3000``): the context, the tab and the dialogs it opened."""
    ctx = chromium.new_context(**context)
    ctx.clock.install()
    tab = ctx.new_page()
    dialogs: list[str] = []
    tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    tab.goto(page.as_uri(), wait_until="load")
    tab.clock.run_for(3000)
    return ctx, tab, dialogs


def _dump_dom(chromium: Any, page: Path) -> str:
    """The DOM of ``page`` once loaded, serialised (as ``chromium --dump-dom``); no dialog opened."""
    ctx, tab, dialogs = _open(chromium, page)
    try:
        dom = str(tab.content())
    finally:
        ctx.close()
    assert dialogs == [], f"a script on {page.name} opened a dialog: {dialogs}"
    assert "<html" in dom, dom[:500]
    return dom


def _title(dom: str) -> str:
    match = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert match is not None, dom[:500]
    return html.unescape(match.group(1))


@pytest.mark.slow
def test_chromium_runs_no_script_and_keeps_the_escaped_text(tmp_path: Path, chromium: Any) -> None:
    # control: in this very set-up an inline script does run and does change the title
    control = tmp_path / "control.html"
    control.write_text(
        "<!DOCTYPE html><html><head><title>original</title></head>"
        "<body><script>document.title='pwned'</script></body></html>",
        encoding="utf-8",
    )
    assert _title(_dump_dom(chromium, control)) == "pwned"

    report = _hostile()
    text = _page()
    # test the escaping on its own: take the page's script-blocking policy out
    policy = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
    assert policy in text
    page = tmp_path / "report.html"
    page.write_text(text.replace(policy, ""), encoding="utf-8")
    dom = _dump_dom(chromium, page)
    assert _title(dom) == page_title(report)  # the payload's script did not run
    assert _title(dom) != "pwned"
    lowered = dom.lower()
    assert "<script" not in lowered and "<img" not in lowered
    # the payload survives as text: the serialised DOM escapes it again
    assert html.escape(XSS, quote=False) in dom
    assert dom.count("<svg") == 3
    assert dom.count('<article class="pair') == 17


@pytest.mark.slow
def test_chromium_page_policy_blocks_scripts_as_a_second_defence(tmp_path: Path, chromium: Any) -> None:
    page = tmp_path / "csp.html"
    page.write_text(
        "<!DOCTYPE html><html><head>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<title>original</title></head><body><script>document.title='pwned'</script>"
        "</body></html>",
        encoding="utf-8",
    )
    assert _title(_dump_dom(chromium, page)) == "original"


@pytest.mark.slow
def test_chromium_screenshot_of_the_report(tmp_path: Path, chromium: Any) -> None:
    page = tmp_path / "report.html"
    page.write_text(_page(), encoding="utf-8")
    shot = tmp_path / "report.png"
    ctx, tab, dialogs = _open(chromium, page, viewport={"width": 1280, "height": 2400})
    try:
        tab.screenshot(path=str(shot))
    finally:
        ctx.close()
    assert dialogs == []
    assert shot.exists(), "no screenshot written"
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


@pytest.mark.slow
def test_chromium_long_ids_wrap_inside_the_window(tmp_path: Path, chromium: Any) -> None:
    """A 400-character task id and a 200-character category, unbroken, once made the page of
    ``compare --format html --details`` about 3,300 px wide in a 900 px window (the regressions
    table and the drill-down's heading did not wrap them)."""
    import json

    from helpers.cli import run_here

    long_id, long_cat = "A" * 400, "c" * 200
    rows = [(long_id, long_cat, True, False), ("t2", "x", False, True), ("t3", long_cat, True, True)]
    a, b, out = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "r.html"
    for path, arm in ((a, 2), (b, 3)):
        path.write_text("".join(json.dumps({"id": r[0], "category": r[1], "passed": r[arm]}) + "\n" for r in rows))
    proc = run_here(["compare", str(a), str(b), "--format", "html", "--details", "--output", str(out)])
    assert proc.returncode in (0, 2), proc.stderr
    ctx, tab, dialogs = _open(chromium, out, viewport={"width": 900, "height": 800})
    try:
        width = tab.evaluate("window.innerWidth")
        wide = tab.evaluate(
            "w => [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > w + 1)"
            ".map(e => e.tagName + ' ' + (e.textContent || '').slice(0, 30))",
            width,
        )
        page_width = tab.evaluate("document.documentElement.scrollWidth")
        shown = tab.evaluate("document.body.innerText")
    finally:
        ctx.close()
    assert wide == [] and page_width <= width, (page_width, wide[:5])
    assert dialogs == []
    # the id and the category are still all there, only wrapped
    assert long_id in shown.replace("\n", "") and long_cat in shown.replace("\n", "")
