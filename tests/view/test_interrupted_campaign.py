"""A campaign whose run was killed (``kill -9``) is shown as interrupted, not as running forever.

A killed run never sets its campaign's status: the store still says ``running``. What tells a
live run from a dead one is its run lock (``ablation/store/locks.py``), which the kernel drops
when the process dies. Here a real ``ablation run`` writes to a real store while the viewer's app
reads it over HTTP (Starlette's test client, in this process; the run is a process of its own):
while the run lives its campaign is running and its page follows it; after a
``kill -9`` the progress JSON, the campaign page and the campaign list say ``interrupted``, the
page stops following and names the command that resumes it, and ``ablation list`` says the same.
Neither list shows a verdict for a campaign that did not complete (DESIGN.md section 8: "the
verdict recorded when the campaign completed").
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from ablation.view.app import create_app
from ablation.view.catalog import Catalog
from tests.helpers import cli

pytestmark = pytest.mark.slow


def campaign_row(page: str, campaign_id: str) -> str:
    """The campaign list's table row of ``campaign_id``."""
    found = re.search(rf'<tr>(?:(?!</tr>).)*href="/campaign/{re.escape(quote(campaign_id))}"'
                      r"(?:(?!</tr>).)*</tr>", page)  # fmt: skip
    assert found is not None, page
    return found.group(0)


def test_a_killed_run_is_shown_interrupted_and_resumable(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    env = cli.cli_env(SLOW_AGENTS_SCALE="4")
    proc = cli.start(cli.run_args(store), env)
    try:
        cli.wait_until(lambda: cli.stored_trials(store) >= 16, timeout=60, proc=proc)
        [(cid, status, _)] = cli.campaigns(store)
        assert status == "running"
        with TestClient(create_app(Catalog(store))) as client:

            def get(path: str) -> str:
                answer = client.get(path)
                assert answer.status_code == 200, (path, answer.status_code)
                return answer.text

            progress = json.loads(get(f"/api/campaign/{quote(cid)}/progress"))
            assert progress["status"] == "running"  # the run lives: its lock is held
            page = get(f"/campaign/{quote(cid)}")
            assert 'data-progress="' in page and "This page follows the campaign." in page
            row = campaign_row(get("/"), cid)
            assert '<span class="status">running</span>' in row
            assert '<span class="badge">' in row  # no verdict while it runs

            cli.kill(proc)  # kill -9: the store still says "running"
            assert cli.campaigns(store)[0][1] == "running"

            progress = json.loads(get(f"/api/campaign/{quote(cid)}/progress"))
            assert progress["status"] == "interrupted"  # the page polling it reloads
            page = get(f"/campaign/{quote(cid)}")
            assert "data-progress" not in page and "follows the campaign" not in page
            assert '<b id="status">interrupted</b>' in page
            resume = re.search(r'<code id="resume">([^<]*)</code>', page)
            assert resume is not None, page
            command = html.unescape(resume.group(1))
            assert command.startswith("ablation run SUITE --baseline ")
            assert command.endswith(f"--store {store} --resume {cid}")
            row = campaign_row(get("/"), cid)
            assert '<span class="status">interrupted</span>' in row
            assert '<span class="badge">' in row
    finally:
        if proc.poll() is None:
            cli.kill(proc)
    listed = cli.run_here(["list", str(store), "--format", "json"])
    assert listed.returncode == 0, listed.stderr
    [row_json] = json.loads(listed.stdout)
    assert (row_json["status"], row_json["verdict"]) == ("interrupted", None)
