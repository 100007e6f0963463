"""The viewer in a real headless Chromium: list -> campaign -> regressions -> task -> diff,
search, compare (against ``ablation report`` and ``ablation compare``) and history; the filter
lists with a real keyboard.

One demo store (tests/view/view_demo.py: four real campaigns), one ``ablation view`` server and
one browser connection (tests/view/conftest.py) for the whole module.

Keyboard: arrow keys move through a filter list without reloading the page (focus stays on the
list), Enter applies the choice, and a choice made with the pointer still applies at once.
"""

from __future__ import annotations

import html
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import view_browser
import view_demo
from helpers.cli import run_here

from ablation.store import RunStore
from ablation.view.tasks import FILTERS

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    p = context.new_page()
    p.dialogs = []
    p.on("dialog", lambda d: (p.dialogs.append(d.message), d.dismiss()))
    yield p
    assert p.dialogs == []
    context.close()


def cli_json(*args: str) -> dict[str, Any]:
    """What ``ablation ARGS --format json`` prints (the command line, run in this process)."""
    proc = run_here([*args, "--format", "json"])
    assert proc.returncode in (0, 2), proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def texts(page: Any, selector: str) -> list[str]:
    return [t.strip() for t in page.locator(selector).all_inner_texts()]


def test_list_campaign_regressions_task_and_diff(page: Any, url: str, store: Path,
                                                 campaigns: dict[str, str]) -> None:  # fmt: skip
    cid = campaigns["candidate_a"]
    page.goto(url + "/")
    assert sorted(texts(page, "#campaigns a.campaign")) == sorted(campaigns.values())
    page.select_option("select[name=suite]", index=1)  # filter by suite: the page reloads
    page.wait_for_url("**/?suite=*")
    assert 1 <= len(texts(page, "#campaigns a.campaign")) <= 3
    page.goto(url + "/")
    page.click(f"#campaigns a.campaign:text-is('{cid}')")
    expected = cli_json("report", cid, "--store", str(store))
    assert page.locator("#verdict .badge").inner_text() == expected["verdict"].upper()
    shown_p = float(page.locator("#mcnemar-p .num").get_attribute("data-value"))
    assert shown_p == expected["mcnemar"]["pvalue"]
    page.click("a.show-regressions")
    page.wait_for_url("**/tasks?show=regressions")
    assert texts(page, "#tasks a.task") == expected["regressions"]
    page.click("#tasks a.task:text-is('t05')")
    assert page.locator("#outcome").inner_text() == "regression"
    assert page.locator("#arm-baseline pre.output").inner_text() == "10"
    candidate = page.locator("#arm-candidate pre.output").inner_text()
    assert candidate.startswith("<img src=x onerror=alert(1)>")
    assert page.locator("#diff del").first.inner_text() == "10"
    assert "click me" in page.locator("#diff ins").first.inner_text()


def test_filter_errors_and_search_an_id(page: Any, url: str, campaigns: dict[str, str]) -> None:
    cid = campaigns["candidate_a"]
    page.goto(f"{url}/campaign/{cid}/tasks")
    assert len(texts(page, "#tasks a.task")) == 14
    page.select_option("select[name=show]", "errors")
    page.wait_for_url("**show=errors*")
    assert texts(page, "#tasks a.task") == ["t07"]
    page.select_option("select[name=show]", "all")
    page.wait_for_url("**show=all*")
    page.fill("input[name=q]", "T1")  # case-insensitive substring
    page.click("#task-filters button")
    page.wait_for_url("**q=T1*")
    assert texts(page, "#tasks a.task") == ["t10", "t11", "t12", "t13"]
    page.click("a.sort-id")  # the id column again: descending
    page.wait_for_url("**dir=desc*")
    assert texts(page, "#tasks a.task") == ["t13", "t12", "t11", "t10"]


def _compare(page: Any, url: str, baseline: str, candidate: str) -> tuple[list[str], float]:
    page.goto(url + "/compare")
    page.select_option("select[name=baseline]", baseline)
    page.select_option("select[name=candidate]", candidate)
    page.click("#compare-form button")
    page.wait_for_selector("#headline")
    p = float(page.locator("#mcnemar-p .num").get_attribute("data-value"))
    return texts(page, "#regressions a.task-id"), p


def test_compare_equals_report_and_compare(page: Any, url: str, store: Path,
                                           campaigns: dict[str, str], tmp_path: Path) -> None:  # fmt: skip
    a, b = campaigns["candidate_a"], campaigns["candidate_b"]
    ids, p = _compare(page, url, f"{a}:baseline", f"{a}:candidate")
    report = cli_json("report", a, "--store", str(store))
    assert (ids, p) == (report["regressions"], report["mcnemar"]["pvalue"])
    ids, p = _compare(page, url, f"{a}:candidate", f"{b}:candidate")
    files = []
    with RunStore(store, read_only=True) as s:
        for cid in (a, b):
            path = tmp_path / f"{cid}.jsonl"
            rows = [{"id": t.task_id, "passed": t.passed} for t in s.results(cid, arm="candidate")]
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
            files.append(str(path))
    compared = cli_json("compare", *files)
    assert ids == compared["regressions"] and ids  # candidate_b regresses where a was right
    assert p == compared["mcnemar"]["pvalue"]


def test_history_has_one_point_per_campaign(page: Any, url: str, campaigns: dict[str, str]) -> None:
    page.goto(f"{url}/campaign/{campaigns['candidate_a']}")
    page.click("table.meta a[href^='/suite/']")
    page.wait_for_selector("#history-plot")
    points = page.locator("#history-plot circle.point")
    assert points.count() == 3
    arith = sorted(v for k, v in campaigns.items() if k != "other")
    assert sorted(points.evaluate_all("els => els.map(e => e.dataset.campaign)")) == arith
    flips = dict(zip(texts(page, "#flips td:nth-child(1)"), texts(page, "#flips td:nth-child(2)"), strict=True))
    # candidates a, b, c fail {3,5,7}, {2,4}, {3,8}: t03 F P F flips twice, t02 P F P twice
    assert flips["t03"] == "2" and flips["t02"] == "2" and flips["t05"] == "1"
    assert "t01" not in flips


def test_suite_gives_input_and_expected_when_digests_match(store: Path, campaigns: dict[str, str],
                                                           tmp_path: Path) -> None:  # fmt: skip
    changed = tmp_path / "changed.py"  # t10's expected output differs from the campaign's
    changed.write_text(
        f"import sys\nsys.path.insert(0, {str(Path(view_demo.__file__).parent)!r})\n"
        "import view_demo\ntasks = [t.model_copy(update={'expected_output': 11}) "
        "if t.task_id in ('t05', 't10') else t for t in view_demo.suite()]\n"
    )
    cid = campaigns["candidate_a"]
    pages = {}
    with view_browser.served(store, "--suite", f"{changed}:tasks") as url:
        for tid in ("t05", "t06", "t10"):
            with urllib.request.urlopen(f"{url}/campaign/{cid}/task?id={tid}") as r:
                pages[tid] = html.unescape(r.read().decode())
    assert '<pre class="input">{\n  "n": 6\n}</pre>' in pages["t06"]
    assert '<pre class="expected">12</pre>' in pages["t06"] and "the given suite" in pages["t06"]
    assert '<pre class="expected">' not in pages["t10"] and '<pre class="input">' not in pages["t10"]
    assert "not the one this campaign ran" in pages["t10"]
    # t05 regressed: the store keeps its input and expected output, shown whatever the suite says
    assert '<pre class="expected">10</pre>' in pages["t05"] and "from the store" in pages["t05"]


def test_compare_refuses_two_suites(page: Any, url: str, store: Path, campaigns: dict[str, str]) -> None:
    page.goto(f"{url}/compare?baseline={campaigns['other']}:candidate&candidate={campaigns['candidate_a']}:candidate")
    assert "ran different suites" in page.locator("#compare-error").inner_text()
    assert page.locator("#headline").count() == 0


# --------------------------------------------------------------------------- keyboard
@pytest.fixture
def counted_page(browser: Any) -> Iterator[Any]:
    """A page that counts its loads."""
    context = browser.new_context()
    p = context.new_page()
    p.loads = 0
    p.on("load", lambda _: setattr(p, "loads", p.loads + 1))
    yield p
    context.close()


def _focused(page: Any) -> str:
    return str(page.evaluate("() => document.activeElement.tagName + ':' + (document.activeElement.name || '')"))


def _query(page: Any) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def test_arrow_keys_move_through_the_list_and_enter_applies(counted_page: Any, url: str,
                                                            campaigns: dict[str, str]) -> None:  # fmt: skip
    page = counted_page
    tasks = f"{url}/campaign/{campaigns['candidate_a']}/tasks"
    page.goto(tasks)
    assert page.loads == 1
    page.focus("select[name=show]")
    for k in (1, 2):
        page.keyboard.press("ArrowDown")
        page.wait_for_timeout(400)  # a reload, had one started, would have begun by now
        assert page.loads == 1 and page.url == tasks
        assert _focused(page) == "SELECT:show"
        assert page.eval_on_selector("select[name=show]", "s => s.value") == FILTERS[k]
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert _query(page)["show"] == [FILTERS[2]]
    assert page.eval_on_selector("select[name=show]", "s => s.value") == FILTERS[2]

    page.focus("select[name=show]")  # typing a letter moves too, and waits as well
    page.keyboard.press("i")
    page.wait_for_timeout(400)
    assert page.loads == 2 and _query(page)["show"] == [FILTERS[2]]
    assert page.eval_on_selector("select[name=show]", "s => s.value") == "improvements"


def test_a_pointer_choice_applies_at_once_even_after_keys(counted_page: Any, url: str,
                                                          campaigns: dict[str, str]) -> None:  # fmt: skip
    page = counted_page
    page.goto(f"{url}/campaign/{campaigns['candidate_a']}/tasks")
    page.focus("select[name=show]")
    page.keyboard.press("ArrowDown")
    page.wait_for_timeout(300)
    assert page.loads == 1
    page.click("select[name=show]")  # the pointer opens the list
    with page.expect_navigation():
        page.select_option("select[name=show]", "errors")
    assert _query(page)["show"] == ["errors"]

    page.goto(f"{url}/")  # the campaign list's filters too
    with page.expect_navigation():
        page.select_option("select[name=suite]", index=1)
    assert "suite" in _query(page)

