"""The viewer's pages over HTTP, against what ``ablation report`` builds from the same store.

One store of real campaigns (tests/view/hunt_store.py: ``on_error="exclude"`` with an error and a
timeout, a sequential campaign stopped early, labels, set latencies), one ``ablation view``
server. Each test reads pages as a browser gets them and compares them with the report the
library builds from the store (the one ``ablation report --format json`` prints).
"""

from __future__ import annotations

import html
import re
import urllib.error
import urllib.request
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote

import hunt_store
import pytest

from ablation.analysis.details import MAX_DETAILS
from ablation.analysis.stored import report_stored_campaign
from ablation.render._format import output_text
from ablation.render._sequential import SEQUENTIAL_TITLE, sequential_note, sequential_rows
from ablation.store import RunStore

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


@pytest.fixture(scope="module")
def hunt(hunt_built: dict[str, Any]) -> dict[str, Any]:
    """The worker's hunt store (tests/view/conftest.py), its reports and its trials."""
    path, ids = hunt_built["path"], hunt_built["ids"]
    with RunStore(path, read_only=True) as store:
        reports = {name: report_stored_campaign(store, ids[name])[0]
                   for name in ("exclude", "sequential", "latency")}  # fmt: skip
        trials = {name: store.results(ids[name]) for name in ("exclude", "sequential")}
    return {"path": path, "ids": ids, "reports": reports, "trials": trials}


@pytest.fixture(scope="module")
def base(hunt_url: str) -> str:
    """Its server (shared with test_viewer_layout_browser.py)."""
    return hunt_url


def get(url: str) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.urlopen(url) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


class Page(HTMLParser):
    """Text of elements by id, rows of tables by id, and every link (href, class, text)."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: dict[str, str] = {}
        self.tables: dict[str, list[list[str]]] = {}
        self.links: list[tuple[str, str, str]] = []
        self._open: list[tuple[str, str | None]] = []  # (tag, id)
        self._text: dict[int, list[str]] = {}
        self._table: list[str | None] = []
        self._cell: list[str] | None = None
        self._link: tuple[str, str, list[str]] | None = None
        self.feed(markup)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in ("meta", "link", "input", "br", "img"):
            return
        self._open.append((tag, a.get("id")))
        self._text[len(self._open)] = []
        if tag == "table":
            self._table.append(a.get("id") or a.get("class"))
            self.tables.setdefault(str(self._table[-1]), [])
        elif tag == "tr" and self._table:
            self.tables[str(self._table[-1])].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "a":
            self._link = (a.get("href") or "", a.get("class") or "", [])

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            open_tag, eid = self._open.pop()
            text = "".join(self._text.pop(len(self._open) + 1))
            if eid:
                self.ids[eid] = text
            if self._open:
                self._text[len(self._open)].append(text)
            if open_tag in ("td", "th") and self._cell is not None and self._table:
                self.tables[str(self._table[-1])][-1].append(text)
                self._cell = None
            if open_tag == "a" and self._link is not None:
                self.links.append((self._link[0], self._link[1], text))
                self._link = None
            if open_tag == "table" and self._table:
                self._table.pop()
            if open_tag == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._open:
            self._text[len(self._open)].append(data)


def page(url: str) -> Page:
    status, _, body = get(url)
    assert status == 200, (url, status, body[:300])
    return Page(body)


def task_url(base: str, cid: str, task_id: str, **extra: str) -> str:
    query = "".join(f"&{k}={quote(v, safe='')}" for k, v in extra.items())
    return f"{base}/campaign/{cid}/task?id={quote(task_id, safe='')}{query}"


def table_ids(base: str, cid: str, query: str) -> tuple[list[str], str]:
    """Task ids of every page of the task table for ``query``, and the count line."""
    ids, number, count = [], 1, ""
    while True:
        p = page(f"{base}/campaign/{cid}/tasks?{query}&page={number}")
        count = count or p.ids["count"]
        ids += [text for href, cls, text in p.links if "task" in cls.split()]
        if f"(page {number} of {number})" in p.ids["count"]:
            return ids, count
        number += 1


def test_excluded_tasks_are_rows_with_reasons_errors_and_links(
    hunt: dict[str, Any], base: str
) -> None:
    cid, report = hunt["ids"]["exclude"], hunt["reports"]["exclude"]
    left = sorted({e.task_id for e in report.excluded if e.run is None})
    assert left == ["err-task", "timeout-task"]  # the candidate's error and timeout
    failed = sorted({t.task_id for t in hunt["trials"]["exclude"] if t.status != "completed"})
    ids, count = table_ids(base, cid, "show=errors")
    assert sorted(ids) == failed and failed
    assert count.startswith(f"{len(failed)} of {report.n_tasks} tasks")
    assert table_ids(base, cid, "q=err-task")[0] == ["err-task"]
    assert table_ids(base, cid, "show=excluded")[0] == left
    campaign = page(f"{base}/campaign/{cid}")
    linked = {text: href for href, cls, text in campaign.links if "task" in cls.split()}
    assert sorted(linked) == left  # the "Left out of the pairing" table links every task
    for tid in left:
        task = page(base + linked[tid])
        assert task.ids["outcome"] == "excluded"
        for e in report.excluded:
            if e.task_id == tid:
                assert e.reason in task.ids["excluded-reason"]


def test_a_comparison_lists_what_its_pairing_left_out(hunt: dict[str, Any], base: str) -> None:
    """The compare page's paired outcomes note says the runs left out are "listed below", as the
    report's; the page listed none (the campaign page does). A campaign's own two arms compared
    give its report, whose excluded entries the page lists, each linked to its page in the
    comparison."""
    cid, report = hunt["ids"]["exclude"], hunt["reports"]["exclude"]
    arms = f"baseline={quote(cid + ':baseline')}&candidate={quote(cid + ':candidate')}"
    _, _, body = get(f"{base}/compare?{arms}")
    assert "(listed below)" in body
    compared = Page(body)
    rows = compared.tables["excluded"][1:]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (e.task_id, "" if e.run is None else str(e.run), e.reason) for e in report.excluded
    ]
    linked = {text: href for href, cls, text in compared.links if "task" in cls.split()}
    for tid in {e.task_id for e in report.excluded}:
        assert linked[tid].startswith("/compare/task?")
        assert page(base + linked[tid]).ids["outcome"] == "excluded"


def test_task_page_shows_the_input_the_store_keeps_and_says_so(
    hunt: dict[str, Any], base: str
) -> None:
    cid, report = hunt["ids"]["exclude"], hunt["reports"]["exclude"]
    kept = [d for d in report.details if d.input is not None]
    assert kept  # the report's drill-downs keep their tasks' inputs in the store
    for d in kept[:3]:
        p = page(task_url(base, cid, d.task_id))
        assert "the store" in p.ids["inputs-source"]
        _, _, body = get(task_url(base, cid, d.task_id))
        assert f'<pre class="input">{html.escape(output_text(d.input))}</pre>' in body
        assert f'<pre class="expected">{html.escape(output_text(d.expected_output))}</pre>' in body
    shown = {d.task_id for d in report.details}
    other = next(t.task_id for t in hunt["trials"]["exclude"] if t.task_id not in shown)
    note = page(task_url(base, cid, other)).ids["inputs-source"]
    assert "--suite PATH" in note and f"the first {MAX_DETAILS} regressed and the first {MAX_DETAILS} improved" in note


def test_campaign_page_shows_the_labels_escaped(hunt: dict[str, Any], base: str) -> None:
    cid = hunt["ids"]["exclude"]
    _, _, body = get(f"{base}/campaign/{cid}")
    meta = dict(row for row in Page(body).tables["meta"] if len(row) == 2)
    for key, value in hunt_store.LABELS.items():
        assert f"{key}={value}" in meta["labels"]
    assert "<b>core</b>" not in body and "team=&lt;b&gt;core&lt;/b&gt;" in body


def test_sequential_campaign_shows_the_reports_section_and_caveat(
    hunt: dict[str, Any], base: str
) -> None:
    cid, report = hunt["ids"]["sequential"], hunt["reports"]["sequential"]
    p = page(f"{base}/campaign/{cid}")
    _, _, body = get(f"{base}/campaign/{cid}")
    assert f"<h2>{html.escape(SEQUENTIAL_TITLE)}</h2>" in body
    assert p.tables["sequential"] == [[k, v] for k, v in sequential_rows(report)]
    assert report.sequential is not None and report.sequential.fixed_n_descriptive
    assert p.ids["descriptive"] == sequential_note(report)  # above the fixed-n p and CI
    late = hunt["ids"]["late"]
    task = page(task_url(base, cid, late))
    reasons = [e.reason for e in report.excluded if e.task_id == late]
    assert task.ids["outcome"] == "excluded" and reasons
    assert all(r in task.ids["excluded-reason"] for r in reasons)
    assert "stopped early" in task.ids["excluded-reason"]


#: A row of the task table: the task link's text, then (past the category cell) the outcome.
ROW = re.compile(
    r'<tr><td><a href="[^"]*" class="task[^"]*">(.*?)</a></td><td>(?:(?!</td>).)*</td>'
    r'<td><span class="outcome [^"]*">(.*?)</span>'
)


def test_task_page_outcome_is_the_task_tables(hunt: dict[str, Any], base: str) -> None:
    cid = hunt["ids"]["exclude"]
    outcomes: dict[str, str] = {}
    for number in (1, 2):
        _, _, body = get(f"{base}/campaign/{cid}/tasks?page={number}")
        outcomes.update((html.unescape(t), html.unescape(o)) for t, o in ROW.findall(body))
    firsts: dict[str, str] = {}
    for tid, outcome in sorted(outcomes.items()):
        firsts.setdefault(outcome, tid)
    assert {"both pass", "both fail", "regression", "improvement"} <= set(firsts)
    for outcome, tid in firsts.items():
        assert page(task_url(base, cid, tid)).ids["outcome"] == outcome


def test_latency_ratio_and_its_bounds_are_told_apart(hunt: dict[str, Any], base: str) -> None:
    cid, report = hunt["ids"]["latency"], hunt["reports"]["latency"]
    lat = report.latency
    assert lat is not None and lat.ratio_ci is not None and lat.geometric_mean_ratio is not None
    values = [lat.geometric_mean_ratio, lat.ratio_ci.low, lat.ratio_ci.high]
    assert len(set(values)) == 3
    rows = dict(r[:2] for r in page(f"{base}/campaign/{cid}").tables["headline"][1:])
    texts = re.findall(r"(\d+(?:\.\d+)?)x", rows["Latency ratio (geometric mean)"])
    assert len(texts) == 3 and len(set(texts)) == 3, texts
    for text, value in zip(texts, values, strict=True):
        digits = len(text.split(".")[1]) if "." in text else 0
        assert abs(float(text) - value) <= 0.5 * 10**-digits + 1e-12


def test_key_value_tables_have_no_empty_header_row(hunt: dict[str, Any], base: str) -> None:
    cid = hunt["ids"]["sequential"]
    for url in (f"{base}/campaign/{cid}", task_url(base, cid, hunt["ids"]["late"])):
        _, _, body = get(url)
        heads = re.findall(r"<thead>(.*?)</thead>", body, flags=re.S)
        assert all(re.sub(r"<[^>]+>", "", h).strip() for h in heads)
        assert body.count("<table") > len(heads)  # the key-value tables are there, headless


def test_back_link_returns_only_to_this_campaigns_task_table(
    hunt: dict[str, Any], base: str
) -> None:
    cid = hunt["ids"]["exclude"]
    tasks = f"/campaign/{cid}/tasks"
    came_from = f"{tasks}?show=errors&q=task&sort=outcome&dir=desc&page=1"
    back = [href for href, cls, _ in page(task_url(base, cid, "err-task", back=came_from)).links
            if "back" in cls.split()]  # fmt: skip
    assert back == [came_from]
    for hostile in ("//evil.example/x", "https://evil.example/campaign", "javascript:alert(1)",
                    "/campaign/other/tasks?show=errors", f"{tasks}/../../x", f"\t//evil.example{tasks}",
                    f"{tasks}?show=errors#frag", f"/\\evil.example{tasks}"):  # fmt: skip
        links = page(task_url(base, cid, "err-task", back=hostile)).links
        assert [h for h, cls, _ in links if "back" in cls.split()] == [tasks], hostile
    odd = page(
        task_url(base, cid, "err-task", back=f"{tasks}?show=errors&evil=%22%3E<b>&page=2")
    ).links
    assert [h for h, cls, _ in odd if "back" in cls.split()] == [f"{tasks}?show=errors&page=2"]


def test_unknown_paths_are_the_viewers_404_page(hunt: dict[str, Any], base: str) -> None:
    for path in ("/campaign/a/b", "/nonexistent", "/campaign/x/tasks/more", "/<b>x</b>"):
        status, headers, body = get(base + quote(path))
        headers = {k.lower(): v for k, v in headers.items()}
        assert status == 404, path
        assert headers["content-type"].startswith("text/html")
        assert headers["content-security-policy"] == CSP
        assert '<link rel="stylesheet" href="/static/view.css">' in body
        assert '<a href="/">' in body and "<b>x</b>" not in body
