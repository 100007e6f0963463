"""Task ids and categories holding control characters are shown escaped (``\\x1b``, ``\\u200b``;
a tab or a newline as the white space a browser shows), and what a page shows finds its task
again: the id copied from the task list (its text, white space run together as a browser copies
it, with the white space a copy of its cell brings around it) and pasted into the search finds
that task alone, as the raw id does; a task URL built from
it, or from the raw id percent-encoded, opens that task's page; the category a filter list sends
back (its escaped value) lists that category's tasks; a trial's steps page, reached with the id
as shown or raw, shows that trial's steps. Read over HTTP from the viewer's app (Starlette's test
client)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
import view_demo
from starlette.testclient import TestClient

from ablation import AblationTask, CampaignConfig, run_ablation_campaign
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

#: Ids with control and format characters, an id whose text is another's escaped form, a plain one.
IDS = ("tab\there", "esc\x1b[31mred", "zw\u200bsp", "nl\nline", "lit\\x1b[31mred", "plain")
CATEGORY = "cat\x1bgory"
LINK = re.compile(r'<a href="([^"]+)" class="task[^"]*">([^<]*)</a>')


def echo(task: dict[str, object]) -> object:
    return task["say"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[TestClient, str]:
    tasks = [
        AblationTask(task_id=t, input_data={"say": f"said {t!r}"}, expected_output="x",
                     category=CATEGORY if i % 2 else "plain")
        for i, t in enumerate(IDS)
    ]  # fmt: skip
    path = tmp_path_factory.mktemp("control-ids") / "runs.db"
    run_ablation_campaign(echo, echo, tasks, config=view_demo.CONFIG, store=path)
    with RunStore(path, read_only=True) as s:
        [record] = s.list_campaigns()
    with TestClient(create_app(Catalog(path))) as client:
        yield client, f"/campaign/{quote(record.campaign_id)}"


def rows(client: TestClient, base: str, **params: str) -> list[tuple[str, str]]:
    """``(href, text)`` of the task links a task list shows, unescaped as a browser reads them."""
    page = client.get(f"{base}/tasks", params=params)
    assert page.status_code == 200
    return [(html.unescape(h), html.unescape(t)) for h, t in LINK.findall(page.text)]


def linked(href: str) -> str:
    """The task id a task link names."""
    [task_id] = parse_qs(urlsplit(href).query)["id"]
    return task_id


def own_page(client: TestClient, href: str, task_id: str) -> None:
    """``href`` opens the page of ``task_id``: its own output, no other task's."""
    answer = client.get(href)
    assert answer.status_code == 200, href
    page = html.unescape(answer.text)
    assert f"said {task_id!r}" in page, href
    assert not [t for t in IDS if t != task_id and f"said {t!r}" in page]


def test_the_id_as_shown_finds_and_opens_its_task(served: tuple[TestClient, str]) -> None:
    client, base = served
    listed = rows(client, base)
    assert len(listed) == len(IDS)
    by_id = {}
    for href, text in listed:
        task_id = linked(href)
        assert "\x1b" not in text and "\u200b" not in text  # never raw
        by_id[task_id] = (href, re.sub(r"\s+", " ", text))  # as a browser shows and copies it
    assert set(by_id) == set(IDS)
    for task_id, (href, copied) in by_id.items():
        own_page(client, href, task_id)  # the list's link opens its task
        own_page(client, f"{base}/task?id={quote(task_id, safe='')}", task_id)
        own_page(client, f"{base}/task?id={quote(copied, safe='')}", task_id)
        # a copy of the table's cell brings the white space around it (a triple click, a tab)
        for query in (copied, copied.upper(), task_id, f"{copied}\n", f"\t{copied} "):
            found = rows(client, base, q=query)
            assert [linked(h) for h, _ in found] == [task_id], query


def test_the_category_a_filter_sends_back_lists_its_tasks(served: tuple[TestClient, str]) -> None:
    client, base = served
    page = client.get(f"{base}/tasks").text
    values = [html.unescape(v) for v in re.findall(r'<option value="([^"]*)"', page)]
    [sent] = [v for v in values if v.startswith("cat")]
    assert "\x1b" not in sent
    expected = {t for i, t in enumerate(IDS) if i % 2}
    for category in (sent, CATEGORY):
        found = rows(client, base, category=category)
        assert sorted(linked(h) for h, _ in found) == sorted(expected)


def test_the_steps_page_opens_the_trial_of_the_id_as_shown(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100), suite_fingerprint="f" * 64,
            task_digests=dict.fromkeys(IDS, "d"), baseline_agent="a", candidate_agent="b",
        )  # fmt: skip
        store.append_many(cid, [
            TaskResult(task_id=t, arm=arm, passed=True, latency_s=0.01, trace=[{"step of": f"{arm} {i}"}])
            for i, t in enumerate(IDS) for arm in ("baseline", "candidate")
        ])  # fmt: skip
        store.set_status(cid, "complete")
    base = f"/campaign/{quote(cid)}"
    with TestClient(create_app(Catalog(path))) as client:
        listed = {linked(h): re.sub(r"\s+", " ", text) for h, text in rows(client, base)}
        assert set(listed) == set(IDS)
        for i, task_id in enumerate(IDS):
            for given in (task_id, listed[task_id]):  # raw, and as the task list shows it
                answer = client.get(f"{base}/steps", params={"id": given, "arm": "candidate", "run": "0", "field": "trace"})
                assert answer.status_code == 200, ascii(given)
                page = html.unescape(answer.text)
                assert f'"step of": "candidate {i}"' in page, ascii(given)
                assert not [j for j in range(len(IDS)) if j != i and f'"candidate {j}"' in page]
