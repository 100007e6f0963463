"""The viewer with many categories, and a category holding a task the pairing left out, over
HTTP against the viewer's app (Starlette's test client) on a real store.

One campaign (``on_error="exclude"``): 1,000 one-task categories and a category ``multi`` of five
tasks, one of which (``multi-err``) errors in the baseline, so the pairing leaves it out and the
report's ``multi`` has n = 4. The campaign page lists at most :data:`LIST_CAP` categories with
"and N more", the task list's category filter is bounded and still filters by any category, and
the task count a category row shows is the one its link's page shows.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.analysis.stored import report_stored_campaign
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog
from ablation.view.pages import LIST_CAP

pytestmark = pytest.mark.xdist_group("view-category-caps")  # one worker builds the store once

SINGLES = 1000
MULTI = [f"multi-{i}" for i in range(4)] + ["multi-err"]


def build(path: Path) -> str:
    """Write the campaign of the module docstring; return its id."""
    singles = [(f"t{i:04d}", f"c-{i:04d}") for i in range(SINGLES)]
    tasks = singles + [(tid, "multi") for tid in MULTI]
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100, seed=5, on_error="exclude"),
            suite_fingerprint="2" * 64, task_digests={t: "d" for t, _ in tasks},
            baseline_agent="m:baseline", candidate_agent="m:candidate",
        )  # fmt: skip
        trials = []
        for i, (tid, cat) in enumerate(tasks):
            trials.append(TaskResult(task_id=tid, arm="candidate", passed=i % 3 != 0,
                                     category=cat, latency_s=0.1))  # fmt: skip
            if tid == "multi-err":
                trials.append(TaskResult(task_id=tid, arm="baseline", status="error",
                                         error_type="RuntimeError", error_message="down",
                                         category=cat, latency_s=0.1))  # fmt: skip
            else:
                trials.append(TaskResult(task_id=tid, arm="baseline", passed=i % 4 != 0,
                                         category=cat, latency_s=0.1))  # fmt: skip
        store.append_many(cid, trials)
        store.set_status(cid, "complete")
    return cid


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("caps") / "runs.db"
    cid = build(path)
    with RunStore(path, read_only=True) as store:
        report = report_stored_campaign(store, cid)[0]
    return {"path": path, "id": cid, "report": report}


@pytest.fixture(scope="module")
def client(campaign: dict[str, Any]) -> Iterator[TestClient]:
    with TestClient(create_app(Catalog(campaign["path"]))) as test_client:
        yield test_client


def get(client: TestClient, url: str) -> str:
    answer = client.get(url)
    assert answer.status_code == 200, (url, answer.status_code)
    return answer.text


def category_rows(page: str) -> list[tuple[str, str, int]]:
    """(category, link, count) of each row of the campaign page's category table."""
    i = page.index('<table id="categories">')
    table = page[i : page.index("</table>", i)]
    return [
        (html.unescape(name), html.unescape(href), int(n))
        for href, name, n in re.findall(r'<tr><td><a href="([^"]+)"[^>]*>([^<]*)</a></td><td>(\d+)</td>', table)
    ]


def count_line(page: str) -> str:
    found = re.search(r'id="count">([^<]*)<', page)
    assert found is not None
    return html.unescape(found.group(1))


def test_campaign_page_caps_the_categories(client: TestClient, campaign: dict[str, Any]) -> None:
    report = campaign["report"]
    total = len(report.categories)
    assert total == SINGLES + 1  # the report keeps them all
    page = get(client, f"/campaign/{campaign['id']}")
    rows = category_rows(page)
    assert len(rows) == LIST_CAP
    assert ("multi", 4) in [(name, n) for name, _, n in rows]  # the most tasks: shown
    assert f"<h2>Categories ({total})</h2>" in page
    assert f"and {total - LIST_CAP} more (ablation report --format json lists them all)" in page
    assert len(page) < 400_000


def test_task_filter_is_bounded_and_takes_any_category(
    client: TestClient, campaign: dict[str, Any]
) -> None:
    tasks = f"/campaign/{campaign['id']}/tasks"
    page = get(client, tasks)
    form = page[page.index('<form class="filters" id="task-filters"') :]
    form = form[: form.index("</form>")]
    assert form.count("<option") <= LIST_CAP + 10  # the show filter's options and the offered
    assert 'value="multi"' in form  # the category with the most tasks is offered
    last = f"c-{SINGLES - 1:04d}"  # not offered, still a filter
    page = get(client, f"{tasks}?category={last}")
    assert count_line(page).startswith(f"1 of {SINGLES + len(MULTI)} tasks")
    assert f">t{SINGLES - 1:04d}</a>" in page
    assert f'name="category" list="category-list" value="{last}"' in page


def test_category_count_agrees_with_its_task_list(client: TestClient, campaign: dict[str, Any]) -> None:
    page = get(client, f"/campaign/{campaign['id']}")
    rows = {name: (href, n) for name, href, n in category_rows(page)}
    href, n = rows["multi"]
    assert n == 4 == next(c.n for c in campaign["report"].categories if c.category == "multi")
    listed = get(client, href)
    assert count_line(listed).startswith(f"{n} of ")  # the link lists the row's tasks
    assert "multi-err" not in listed
    assert "Paired tasks: the tasks of the category the report pairs" in page
    every = get(client, f"/campaign/{campaign['id']}/tasks?category=multi")
    assert count_line(every).startswith(f"{len(MULTI)} of {SINGLES + len(MULTI)} tasks: "
                                        f"4 paired, 1 left out of the pairing")  # fmt: skip
    assert ">multi-err</a>" in every
