"""A new campaign's run lock is held before its row exists.

The viewer and ``ablation list`` show a campaign stored as ``running`` whose lock nobody holds as
interrupted (a killed run). A campaign created before its lock was taken was, for that moment,
shown interrupted to any reader, and the viewer stopped following it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ablation import AblationTask, run_ablation_campaign
from ablation.store.locks import campaign_running
from ablation.store.run_store import RunStore


def test_the_campaign_row_appears_with_its_lock_already_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "runs.db"
    seen: list[bool] = []
    create = RunStore.create_campaign

    def watched(self: RunStore, *args: object, **kwargs: object) -> str:
        cid = create(self, *args, **kwargs)  # type: ignore[arg-type]
        seen.append(campaign_running(path, cid))  # what a reader sees once the row is there
        return cid

    monkeypatch.setattr(RunStore, "create_campaign", watched)
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(3)]
    run_ablation_campaign(lambda x: x, lambda x: x, tasks, store=path)
    assert seen == [True]
