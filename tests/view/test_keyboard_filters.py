"""The filter lists with a real keyboard in a headless Chromium: arrow keys move through a list
without reloading the page (focus stays on the list), Enter applies the choice, and a choice
made with the pointer still applies at once.

The demo store (tests/view/view_demo.py) served by ``ablation view`` (tests/view/conftest.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from ablation.view.tasks import FILTERS

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
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


def test_arrow_keys_move_through_the_list_and_enter_applies(page: Any, url: str,
                                                            campaigns: dict[str, str]) -> None:  # fmt: skip
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


def test_a_pointer_choice_applies_at_once_even_after_keys(page: Any, url: str,
                                                          campaigns: dict[str, str]) -> None:  # fmt: skip
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
