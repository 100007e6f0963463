"""A task whose id holds U+0000 has a page in the viewer, showing its own trials (SQLite's
``json_each`` cuts a string at NUL, so the id must not go through it: ``a\\x00b`` would find
the trials of ``a``, or none). Read over HTTP from the viewer's app (Starlette's test client)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import quote

import view_demo
from starlette.testclient import TestClient

from ablation import AblationTask, run_ablation_campaign
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

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
    with TestClient(create_app(Catalog(path))) as client:
        listing = client.get(f"/campaign/{quote(cid)}/tasks").text
        links = [html.unescape(h).split("&back=")[0]  # the link back to this table aside
                 for h in re.findall(r'<a href="([^"]+)" class="task">', listing)]  # fmt: skip
        assert len(links) == 3
        for task_id in IDS:
            href = f"/campaign/{quote(cid)}/task?id={quote(task_id)}"
            assert href in links
            answer = client.get(href)
            assert answer.status_code == 200
            page = html.unescape(answer.text)
            assert f"said {task_id!r}" in page, task_id  # its own output
            for other in set(IDS) - {task_id}:
                assert f"said {other!r}" not in page  # and no other task's
