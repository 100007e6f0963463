"""A stored campaign whose report cannot be built is an error on its own pages, never a 500, and
its suite's history page still shows every other campaign of the suite, naming it on one line.

Two ways a stored campaign cannot be reported: its config row holds a value the configuration now
refuses (alpha 0.6, written with sqlite3: the row no longer reads, a 404 naming the damage), or
its row reads and the analysis raises (``report_stored_campaign`` raising :class:`ValueError` or
an :class:`~ablation.errors.AblationError` for that campaign: a 422 naming the error). Three real
campaigns of one suite; pages are read over HTTP (Starlette's test client).
"""

from __future__ import annotations

import html
import json
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from ablation import AblationTask, CampaignConfig
from ablation.errors import AblationError
from ablation.run.campaign import run_ablation_campaign
from ablation.view import catalog as catalog_module
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

REFUSED = "the analysis refuses this <b>campaign</b>"


def _campaigns(store: Path) -> tuple[list[str], str]:
    """Three campaigns of one suite (oldest first) and the suite's fingerprint."""
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(6)]
    ids = [
        run_ablation_campaign(lambda x: x, lambda x: x, tasks, config=CampaignConfig(n_resamples=100),
                              store=store).provenance.campaign_id
        for _ in range(3)
    ]  # fmt: skip
    with sqlite3.connect(store) as db:
        (fingerprint,) = db.execute("SELECT DISTINCT suite_fingerprint FROM campaigns").fetchone()
    db.close()
    return [str(i) for i in ids], fingerprint


def _pages(cid: str, other: str) -> list[tuple[str, dict[str, str]]]:
    return [
        (f"/campaign/{quote(cid)}", {}),
        (f"/campaign/{quote(cid)}/task", {"id": "t1"}),
        ("/compare/task", {"baseline": f"{other}:baseline", "candidate": f"{cid}:candidate", "id": "t1"}),
    ]


def _history(client: TestClient, fingerprint: str, bad: str, good: list[str], why: str) -> None:
    response = client.get(f"/suite/{fingerprint}")
    assert response.status_code == 200, response.text
    text = html.unescape(response.text)
    assert text.count(f"campaign {bad!r}") == 1 and why in text  # one line names it
    assert f'href="/campaign/{quote(bad)}"' not in response.text
    assert response.text.count('class="point"') == len(good)
    for cid in good:
        assert f'href="/campaign/{quote(cid)}"' in response.text


def test_a_stored_alpha_the_config_refuses_is_an_error_line(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    ids, fingerprint = _campaigns(store)
    bad, good = ids[0], ids[1:]
    with sqlite3.connect(store) as db:
        config = json.loads(db.execute("SELECT config_json FROM campaigns WHERE id = ?", (bad,)).fetchone()[0])
        config["alpha"] = 0.6
        db.execute("UPDATE campaigns SET config_json = ? WHERE id = ?", (json.dumps(config), bad))
    db.close()
    with TestClient(create_app(Catalog(store)), raise_server_exceptions=False) as client:
        for path, params in _pages(bad, good[0]):
            response = client.get(path, params=params)
            # its own pages a 404; the comparison page too, its error line under its title
            assert response.status_code == 404, path
            text = html.unescape(response.text)
            assert f"campaign {bad!r}" in text and "cannot be read" in text and "alpha" in text, path
        _history(client, fingerprint, bad, good, "cannot be read")


@pytest.mark.parametrize("error", [ValueError, AblationError])
def test_a_campaign_the_analysis_refuses_is_an_error_on_its_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: type[Exception]
) -> None:
    store = tmp_path / "runs.db"
    ids, fingerprint = _campaigns(store)
    bad, good = ids[1], [ids[0], ids[2]]
    real = catalog_module.report_stored_campaign

    def report(run_store: Any, campaign_id: str, *args: Any, **kwargs: Any) -> Any:
        if campaign_id == bad:
            raise error(REFUSED)
        return real(run_store, campaign_id, *args, **kwargs)

    monkeypatch.setattr(catalog_module, "report_stored_campaign", report)
    real_history, real_figures = Catalog.history, catalog_module.headline_figures

    def history(self: Catalog, campaign_id: str) -> Any:  # the history's figures: the report's steps
        def figures(*args: Any, **kwargs: Any) -> Any:
            if campaign_id == bad:
                raise error(REFUSED)
            return real_figures(*args, **kwargs)

        monkeypatch.setattr(catalog_module, "headline_figures", figures)
        return real_history(self, campaign_id)

    monkeypatch.setattr(Catalog, "history", history)
    with TestClient(create_app(Catalog(store)), raise_server_exceptions=False) as client:
        for path, params in _pages(bad, good[0]):
            response = client.get(path, params=params)
            assert response.status_code == 422, (path, response.status_code, response.text[-300:])
            text = html.unescape(response.text)
            assert f"campaign {bad!r}: its report cannot be built: {REFUSED}" in text, path
            assert "<b>campaign</b>" not in response.text  # escaped
        _history(client, fingerprint, bad, good, "its report cannot be built")
        for cid in good:  # the others' own pages are untouched
            assert client.get(f"/campaign/{quote(cid)}").status_code == 200
