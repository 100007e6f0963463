"""Every page that names a campaign, an arm or a task the store does not hold is a 404 with the
viewer's readable page (the compare pages keep their form and error line), on a real store read
through the ASGI app; and a task left out of the pairing without a category is in the category
the report (``ablation report --format json``, the command line run in this process) gives its
paired tasks.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers.cli import run_here
from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

IDS = [f"u{i}" for i in range(6)]
#: Stored in the candidate arm only: the pairing leaves it out.
SOLO = "solo"


def _campaign(store: RunStore, fingerprint: str) -> str:
    """A complete campaign of :data:`IDS` and :data:`SOLO`, no trial with a category."""
    cid = store.create_campaign(
        config=CampaignConfig(n_resamples=100, seed=5), suite_fingerprint=fingerprint,
        task_digests={t: "d" for t in [*IDS, SOLO]}, baseline_agent="m:b", candidate_agent="m:c",
    )  # fmt: skip
    trials = [TaskResult(task_id=SOLO, arm="candidate", passed=True, latency_s=0.1)]
    for i, tid in enumerate(IDS):
        trials.append(TaskResult(task_id=tid, arm="candidate", passed=i % 2 == 0, latency_s=0.1))
        trials.append(TaskResult(task_id=tid, arm="baseline", passed=i % 3 == 0, latency_s=0.1))
    store.append_many(cid, trials)
    store.set_status(cid, "complete")
    return cid


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The store, a campaign, and a campaign of another suite."""
    path = tmp_path_factory.mktemp("unknown") / "runs.db"
    with RunStore(path) as store:
        return path, _campaign(store, "5" * 64), _campaign(store, "6" * 64)


def _unknown_pages(cid: str) -> list[tuple[str, dict[str, str], str]]:
    """``(path, params, text the page names)`` of every page about something not stored."""
    arms = {"baseline": f"{cid}:baseline", "candidate": f"{cid}:candidate"}
    nope = {"baseline": "nope:baseline", "candidate": f"{cid}:candidate"}
    third = {"baseline": f"{cid}:third", "candidate": f"{cid}:candidate"}
    return [
        ("/campaign/nope", {}, "no campaign 'nope'"),
        ("/campaign/nope/tasks", {}, "no campaign 'nope'"),
        ("/campaign/nope/task", {"id": "u1"}, "no campaign 'nope'"),
        (f"/campaign/{quote(cid)}/task", {"id": "zzz"}, "'zzz'"),
        (f"/campaign/{quote(cid)}/task", {}, "no trial"),
        ("/compare", nope, "no campaign 'nope'"),
        ("/compare", third, "unknown arm 'third'"),
        ("/compare/task", {**nope, "id": "u1"}, "no campaign 'nope'"),
        ("/compare/task", {**third, "id": "u1"}, "unknown arm 'third'"),
        ("/compare/task", {"id": "u1"}, "no campaign ''"),
        ("/compare/task", {**arms, "id": "zzz"}, "'zzz'"),
        ("/suite/" + "7" * 64, {}, "no campaign of suite"),
    ]


def test_an_unknown_campaign_arm_or_task_is_a_404_on_every_page(stored: tuple[Path, str, str]) -> None:
    path, cid, _ = stored
    with TestClient(create_app(Catalog(path)), raise_server_exceptions=False) as client:
        for url, params, named in _unknown_pages(cid):
            response = client.get(url, params=params)
            assert response.status_code == 404, (url, params, response.status_code)
            text = html.unescape(response.text)
            assert 'class="error"' in response.text and named in text, (url, params)
            assert "<title>" in response.text and 'href="/"' in response.text  # the readable page
        progress = client.get("/api/campaign/nope/progress")
        assert progress.status_code == 404 and "no campaign 'nope'" in progress.json()["error"]
        for url in ("/compare", "/compare/task"):  # the form stays, with the error line under it
            page = client.get(url, params={"baseline": "nope:baseline", "candidate": f"{cid}:candidate", "id": "u1"})
            assert ('id="compare-form"' in page.text) == (url == "/compare")
            assert 'id="compare-error"' in page.text


def test_known_pages_stay_200_and_arms_of_two_suites_are_a_422(stored: tuple[Path, str, str]) -> None:
    path, cid, other = stored
    arms = {"baseline": f"{cid}:baseline", "candidate": f"{cid}:candidate"}
    with TestClient(create_app(Catalog(path)), raise_server_exceptions=False) as client:
        for url, params in [
            (f"/campaign/{quote(cid)}", {}), (f"/campaign/{quote(cid)}/tasks", {}),
            (f"/campaign/{quote(cid)}/task", {"id": "u1"}), ("/compare", arms), ("/compare", {}),
            ("/compare/task", {**arms, "id": "u1"}), ("/compare/task", {**arms, "id": SOLO}),
        ]:  # fmt: skip
            assert client.get(url, params=params).status_code == 200, (url, params)
        mixed = {"baseline": f"{other}:baseline", "candidate": f"{cid}:candidate"}
        for url in ("/compare", "/compare/task"):
            page = client.get(url, params={**mixed, "id": "u1"})
            assert page.status_code == 422 and "different suites" in page.text, url


def _report_categories(path: Path, cid: str) -> set[str]:
    """The category names of ``ablation report --format json`` (the command line, in this
    process)."""
    done = run_here(["report", cid, "--store", str(path), "--format", "json"])
    assert done.returncode in (0, 2), done.stderr
    report = json.loads(done.stdout)
    assert [e["task_id"] for e in report["excluded"]] == [SOLO]
    return {c["category"] for c in report["categories"]}


def test_a_left_out_task_without_a_category_is_in_the_reports_category(stored: tuple[Path, str, str]) -> None:
    path, cid, _ = stored
    (name,) = _report_categories(path, cid)
    cell = re.compile(r'id=(\w+)[^"]*" class="task">\w+</a></td><td>([^<]*)</td>')
    arms = {"baseline": f"{cid}:baseline", "candidate": f"{cid}:candidate"}
    with TestClient(create_app(Catalog(path))) as client:
        rows = dict(cell.findall(client.get(f"/campaign/{quote(cid)}/tasks").text))
        assert rows.keys() == {*IDS, SOLO} and set(rows.values()) == {name}
        for page in (client.get(f"/campaign/{quote(cid)}/task", params={"id": SOLO}),
                     client.get("/compare/task", params={**arms, "id": SOLO})):  # fmt: skip
            assert f"<td>category</td><td>{name}</td>" in page.text
        by_category = client.get(f"/campaign/{quote(cid)}/tasks", params={"category": name}).text
        assert f">{SOLO}</a>" in by_category and f"{len(IDS) + 1} of {len(IDS) + 1} tasks" in by_category
        excluded = client.get(f"/campaign/{quote(cid)}/tasks", params={"show": "excluded", "category": name}).text
        assert f">{SOLO}</a>" in excluded
