"""A store of the first schema version is viewed as it is: read-only, not migrated, its pages the
ones the same trials give in a current store (docs/DESIGN.md: a store of an older schema "is
read: opened read-only (as ``ablation report``, ``list`` and ``view`` do) its campaigns are read
from their rows").

Schema 1 has no ``tokens`` column in ``trials`` (migration 1 -> 2 adds it, filled from the stored
results); every read of an arm's trials selects it. The store is the demo store's campaigns and
trials copied into the schema-1 tables (tests/helpers/store_rows.py's ``V1_DDL``), served by
the viewer's app (Starlette's test client, in this process) beside a copy that a writable open
migrated.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from helpers.store_rows import V1_DDL
from starlette.testclient import TestClient

from ablation.analysis.details import MAX_DETAILS
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]

_CAMPAIGN_COLUMNS = (
    "id, status, config_json, suite_fingerprint, task_digests_json, baseline_agent,"
    " candidate_agent, provenance_json, created_at, updated_at"
)
_TRIAL_COLUMNS = (
    "campaign_id, task_id, arm, run, status, passed, latency_s, wall_s, attempts, cost, category,"
    " critical, error_type, result_json"
)


def version_1_copy(store: Path, target: Path) -> None:
    """``store``'s campaigns and trials in a schema-1 file ``target`` (no ``tokens`` column),
    each trial's result given a token count (the candidate's larger), as the results of schema 1
    always held one."""
    db = sqlite3.connect(target)
    db.executescript(V1_DDL)
    db.execute("ATTACH DATABASE ? AS src", (f"{store.resolve().as_uri()}?mode=ro",))
    db.execute(f"INSERT INTO campaigns SELECT {_CAMPAIGN_COLUMNS} FROM src.campaigns")
    db.execute(f"INSERT INTO trials SELECT {_TRIAL_COLUMNS} FROM src.trials")
    db.execute(
        "UPDATE trials SET result_json = json_set(result_json, '$.tokens',"
        " 100 + length(task_id) + 7 * run + CASE arm WHEN 'candidate' THEN 20 + (rowid % 5) ELSE 0 END)"
    )
    db.commit()
    db.execute("DETACH DATABASE src")
    db.execute("PRAGMA journal_mode=WAL")
    db.close()


def _figures(catalog: Catalog, cid: str) -> dict[str, Any]:
    data = catalog.report(cid)[0].model_dump(mode="json")
    data.pop("details")  # drill-downs hold inputs, which the schema-1 copy does not keep
    data["provenance"].pop("finished_at")
    return data


def test_a_schema_1_store_shows_the_pages_of_its_trials(
    tmp_path: Path, store: Path, campaigns: dict[str, str]
) -> None:
    old = tmp_path / "v1.db"
    version_1_copy(store, old)
    migrated = tmp_path / "migrated.db"
    migrated.write_bytes(old.read_bytes())
    RunStore(migrated).close()  # a writable open migrates it, filling the tokens column
    before = old.read_bytes()
    current, legacy = Catalog(migrated), Catalog(old)
    try:
        assert legacy.store.schema_version == 1
        with TestClient(create_app(legacy), raise_server_exceptions=False) as client:
            for cid in campaigns.values():
                base = f"/campaign/{quote(cid, safe='')}"
                for path in (base, f"{base}/tasks", f"{base}/tasks?show=regressions&sort=latency_c"):
                    assert client.get(path).status_code == 200, path
                figures = _figures(legacy, cid)
                assert figures == _figures(current, cid)
                assert figures["metrics"]["tokens"]["mean_difference"] > 0
                new_table, old_table = current.table(cid)[0], legacy.table(cid)[0]
                assert [old_table.row(i) for i in range(len(old_table))] == [
                    new_table.row(i) for i in range(len(new_table))
                ]
                task = old_table.row(0)["task_id"]
                assert client.get(f"{base}/task", params={"id": task}).status_code == 200
                for regressed in figures["regressions"][:1]:  # a store of schema 1 kept no input:
                    note = client.get(f"{base}/task", params={"id": regressed}).text  # say which it keeps
                    assert f"the first {MAX_DETAILS} regressed and the first {MAX_DETAILS} improved" in note
    finally:
        current.close()
        legacy.close()
    with RunStore(old, read_only=True) as reread:  # still schema 1: nothing was migrated
        assert reread.schema_version == 1
    assert old.read_bytes() == before
