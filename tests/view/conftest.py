"""Fixtures shared by the viewer's browser tests: one demo store and one ``ablation view`` server
per test worker (the modules share the ``view`` xdist group, so one worker builds them once), the
same for the hunt store (tests/view/hunt_store.py) and for a headless Chromium process, which each
module connects to (a Playwright session per module).

The module's connection (its Playwright session) is closed at the end of each module: while
Playwright's sync API is open, its event loop is the thread's running loop, and every later test
of the worker that calls ``asyncio.run`` (a campaign) would fail. The Chromium process itself,
which holds no event loop of this process, lives until the worker ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hunt_store
import pytest
import view_browser
import view_demo

from ablation.store import RunStore


@pytest.fixture(scope="session")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo store (view_demo.py)."""
    return view_demo.build(tmp_path_factory.mktemp("view") / "runs.db")


@pytest.fixture(scope="session")
def campaigns(store: Path) -> dict[str, str]:
    """Candidate agent name -> campaign id; ``other``: the campaign of the second suite."""
    with RunStore(store, read_only=True) as s:
        return {
            "other" if len(r.task_digests) == 5 else r.candidate_agent.split(":")[-1]: r.campaign_id
            for r in s.list_campaigns()
        }


@pytest.fixture(scope="session")
def url(store: Path) -> Iterator[str]:
    """The URL of ``ablation view STORE``."""
    with view_browser.served(store) as address:
        yield address


@pytest.fixture(scope="session")
def hunt_built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The hunt store (hunt_store.py): ``path``, and ``ids`` (campaign ids by name)."""
    path = tmp_path_factory.mktemp("hunt") / "runs.db"
    return {"path": path, "ids": hunt_store.build(path)}


@pytest.fixture(scope="session")
def hunt_url(hunt_built: dict[str, Any]) -> Iterator[str]:
    """The URL of ``ablation view`` on the hunt store."""
    with view_browser.served(hunt_built["path"]) as address:
        yield address


@pytest.fixture(scope="session")
def chromium_endpoint() -> Iterator[str]:
    """The DevTools endpoint of the worker's one Chromium process (view_browser.py)."""
    with view_browser.chromium_process() as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def browser(store: Path, chromium_endpoint: str) -> Iterator[Any]:
    """Chromium, connected to for the module (after the store: Playwright's sync API holds an
    event loop in this thread while it is open)."""
    with view_browser.chromium(chromium_endpoint) as b:
        yield b
