"""The compare page's regressions and improvements link to the task's page in that comparison:
the two compared arms' trials side by side (not the candidate campaign's own pairing, whose
baseline is another agent), with the task's outcome in the comparison.

Two real campaigns of one suite, each with its own baseline; the candidate arm of the first is
compared with the candidate arm of the second. Which tasks regress or improve is known from the
agents below, not from the viewer. Pages are read over HTTP (Starlette's test client).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

from starlette.testclient import TestClient

from ablation import AblationTask, CampaignConfig
from ablation.run.campaign import run_ablation_campaign
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

N = 24
#: The tasks each agent answers right (every other answer is wrong).
RIGHT = {
    "first_baseline": set(range(N)),
    "first_candidate": {i for i in range(N) if i % 3 != 0},
    "second_baseline": {i for i in range(N) if i % 2 == 0},
    "second_candidate": {i for i in range(N) if i % 4 in (0, 3)},
}


def _agent(name: str) -> Callable[[int], str]:
    def agent(i: int) -> str:
        return "right" if i in RIGHT[name] else f"wrong from {name}"

    agent.__name__ = agent.__qualname__ = name
    return agent


def _links(page: str, section: str) -> dict[str, str]:
    found = re.search(rf'<ul class="ids" id="{section}">(.*?)</ul>', page, re.S)
    assert found is not None, page
    return {
        html.unescape(text): html.unescape(href)
        for href, text in re.findall(r'<a href="([^"]+)" class="task-id">([^<]+)</a>', found.group(1))
    }


def _column(page: str, arm: str) -> str:
    found = re.search(rf'<div class="arm" id="arm-{arm}">(.*?)</div></div>', page, re.S)
    assert found is not None, page
    return html.unescape(found.group(1))


def test_each_link_opens_the_task_in_the_compared_arms(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    tasks = [AblationTask(task_id=f"t{i:02d}", input_data=i, expected_output="right") for i in range(N)]
    config = CampaignConfig(n_resamples=100)
    first = run_ablation_campaign(_agent("first_baseline"), _agent("first_candidate"), tasks,
                                  config=config, store=store).provenance.campaign_id  # fmt: skip
    second = run_ablation_campaign(_agent("second_baseline"), _agent("second_candidate"), tasks,
                                   config=config, store=store).provenance.campaign_id  # fmt: skip
    assert first and second
    base, cand = f"{first}:candidate", f"{second}:candidate"
    old, new = RIGHT["first_candidate"], RIGHT["second_candidate"]
    expected = {"regressions": old - new, "improvements": new - old}
    own_baseline = RIGHT["second_baseline"]
    # the second campaign's own pairing calls some of these tasks something else
    assert any(i not in own_baseline for i in expected["regressions"])

    with TestClient(create_app(Catalog(store))) as client:
        compare = client.get("/compare", params={"baseline": base, "candidate": cand}).text
        for section, outcome in (("regressions", "regression"), ("improvements", "improvement")):
            links = _links(compare, section)
            assert set(links) == {f"t{i:02d}" for i in expected[section]}
            for task_id, href in links.items():
                i = int(task_id[1:])
                response = client.get(href)
                assert response.status_code == 200, href
                page = response.text
                found = re.search(r'id="outcome">([^<]*)<', page)
                assert found is not None and found.group(1) == outcome, (href, found)
                left, right = _column(page, "baseline"), _column(page, "candidate")
                assert base in left and "first_candidate" in left and "first_baseline" not in left
                assert cand in right and "second_candidate" in right and "second_baseline" not in right
                assert ("right" if i in old else "wrong from first_candidate") in left
                assert ("right" if i in new else "wrong from second_candidate") in right
                back = re.search(r'<a href="([^"]+)" class="back">', page)
                assert back is not None
                assert client.get(html.unescape(back.group(1))).text == compare


def test_a_task_of_neither_list_and_an_unknown_task(tmp_path: Path) -> None:
    """A task that neither regressed nor improved is named as the campaign page names it (both
    pass, both fail), with its category, not by what it is not."""
    store = tmp_path / "runs.db"
    tasks = [
        AblationTask(task_id=f"t{i:02d}", input_data=i, expected_output="right", category=f"c{i % 2}")
        for i in range(N)
    ]
    config = CampaignConfig(n_resamples=100)
    cid = run_ablation_campaign(_agent("first_baseline"), _agent("first_candidate"), tasks,
                                config=config, store=store).provenance.campaign_id  # fmt: skip
    other = run_ablation_campaign(_agent("second_baseline"), _agent("second_candidate"), tasks,
                                  config=config, store=store).provenance.campaign_id  # fmt: skip
    with TestClient(create_app(Catalog(store))) as client:
        params = {"baseline": f"{cid}:baseline", "candidate": f"{cid}:candidate"}
        page = client.get("/compare/task", params={**params, "id": "t01"}).text  # right in both arms
        assert 'id="outcome">both pass<' in page and "c1" in page
        # wrong in both of the second campaign's arms
        both_wrong = {"baseline": f"{other}:baseline", "candidate": f"{other}:candidate", "id": "t01"}
        assert 'id="outcome">both fail<' in client.get("/compare/task", params=both_wrong).text
        assert "first_baseline" in _column(page, "baseline") and "first_candidate" in _column(page, "candidate")
        assert client.get("/compare/task", params={**params, "id": "nope"}).status_code == 404
        bad = client.get("/compare/task", params={**params, "baseline": f"{cid}:third", "id": "t01"})
        assert bad.status_code == 404 and 'id="compare-error"' in bad.text
