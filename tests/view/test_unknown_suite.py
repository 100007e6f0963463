"""The viewer answers a suite no campaign ran with a 404, and ``ablation view`` names the flag of an
address it cannot listen on.

The store comes from a real ``ablation run``; the pages are asked over HTTP from the viewer's app
(Starlette's test client), the addresses from the ``ablation view`` command line.
"""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers.cli import run_here
from starlette.testclient import TestClient

from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

SUITE = """\
from ablation import AblationTask

tasks = [AblationTask(task_id=f"t{i}", input_data={"n": i}, expected_output=2 * i) for i in range(4)]
"""
AGENTS = "def doubles(task):\n    return 2 * task['n']\n"

pytestmark = pytest.mark.xdist_group("unknown-suite")  # one worker runs the campaign once


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding one campaign of a four-task suite."""
    folder = tmp_path_factory.mktemp("unknown-suite")
    (folder / "suite.py").write_text(SUITE)
    (folder / "agents.py").write_text(AGENTS)
    spec = f"{folder / 'agents.py'}:doubles"
    path = folder / "runs.db"
    done = run_here(["run", str(folder / "suite.py"), "--baseline", spec, "--candidate", spec, "--store", str(path),
                     "--no-progress", "--quiet"], cwd=folder)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return path


def test_an_unknown_suite_is_a_404_and_a_known_one_is_shown(store: Path) -> None:
    with RunStore(store, read_only=True) as s:
        [record] = s.list_campaigns()
    with TestClient(create_app(Catalog(store))) as client:
        answer = client.get("/suite/zzz")
        assert answer.status_code == 404
        assert "no campaign of suite &#x27;zzz&#x27; in this store" in answer.text
        answer = client.get(f"/suite/{quote(record.suite_fingerprint)}")
        assert answer.status_code == 200 and record.campaign_id in answer.text


def _refused(store: Path, *flags: str) -> str:
    done = run_here(["view", str(store), "--no-browser", *flags])
    assert (done.returncode, done.stdout) == (1, ""), done
    [line] = done.stderr.strip().splitlines()
    return line


def test_an_address_that_cannot_be_bound_names_the_flag(store: Path) -> None:
    # 192.0.2.1 (TEST-NET-1, RFC 5737) is never an address of this machine
    assert _refused(store, "--host", "192.0.2.1").startswith(
        "ablation: error: argument --host: cannot listen on '192.0.2.1': "
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        line = _refused(store, "--port", str(port))
    assert line.startswith(f"ablation: error: argument --port: cannot listen on port {port} of '127.0.0.1': ")
