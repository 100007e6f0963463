"""A campaign id that cannot name a lock file (it holds a NUL, as an imported export's id may)
is no bare ``ValueError``: ``ablation list`` and ``report`` read the campaign as stored (whether
a process runs it cannot be told), and taking its run lock is one :class:`StoreError`."""

from __future__ import annotations

from pathlib import Path

import pytest

from ablation.cli.main import main
from ablation.config import CampaignConfig
from ablation.errors import StoreError
from ablation.store.locks import CampaignLock, campaign_running
from ablation.store.run_store import RunStore

_ID = "id\x00x"


def _store(path: Path) -> None:
    with RunStore(path) as store:
        store.create_campaign(
            config=CampaignConfig(), suite_fingerprint="f", task_digests={"t": "d"},
            baseline_agent="b", candidate_agent="c", campaign_id=_ID,
        )  # fmt: skip


def test_list_and_report_read_a_running_campaign_whose_id_holds_a_nul(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.db"
    _store(path)
    assert campaign_running(path, _ID)  # cannot be told: taken as stored
    assert main(["list", str(path), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert "ValueError" not in err
    assert '"campaign_id": "id\\u0000x"' in out and '"status": "running"' in out
    main(["report", "--store", str(path), "--quiet"])
    err = capsys.readouterr().err
    assert "ValueError" not in err and "is running: 0 trial(s) stored" in err


def test_the_run_lock_of_such_a_campaign_is_one_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="its id cannot name a lock file"):
        CampaignLock(tmp_path / "runs.db", _ID)
