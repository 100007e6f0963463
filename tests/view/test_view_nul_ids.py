"""A task whose id holds U+0000 has a page in the viewer, showing its own trials (SQLite's
``json_each`` cuts a string at NUL, so the id must not go through it: ``a\\x00b`` would find
the trials of ``a``, or none)."""

from __future__ import annotations

import html
import re
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
import view_browser
import view_demo

from ablation import AblationTask, run_ablation_campaign
from ablation.store import RunStore

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]

IDS = ("a\x00b", "a", "a\x00c")


def echo(task: dict[str, object]) -> object:
    return task["say"]


def test_a_task_id_with_nul_has_its_page(tmp_path: Path) -> None:
    tasks = [AblationTask(task_id=t, input_data={"say": f"said {t!r}"}, expected_output="x") for t in IDS]
    path = tmp_path / "runs.db"
    run_ablation_campaign(echo, echo, tasks, config=view_demo.CONFIG, store=path)
    with RunStore(path, read_only=True) as s:
        [record] = s.list_campaigns()
    cid = record.campaign_id
    with view_browser.served(path) as url:
        with urllib.request.urlopen(f"{url}/campaign/{quote(cid)}/tasks") as r:
            listing = r.read().decode()
        links = [html.unescape(h).split("&back=")[0]  # the link back to this table aside
                 for h in re.findall(r'<a href="([^"]+)" class="task">', listing)]  # fmt: skip
        assert len(links) == 3
        for task_id in IDS:
            href = f"/campaign/{quote(cid)}/task?id={quote(task_id)}"
            assert href in links
            with urllib.request.urlopen(url + href) as r:
                assert r.status == 200
                page = html.unescape(r.read().decode())
            assert f"said {task_id!r}" in page, task_id  # its own output
            for other in set(IDS) - {task_id}:
                assert f"said {other!r}" not in page  # and no other task's
