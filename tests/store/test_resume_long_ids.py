"""A resume or a reused baseline refused for changed tasks names long ids bounded and apart.

The refusal listed up to ten changed ids whole: tasks whose ids hold a million characters made an
error of megabytes (``store/format.py`` ``listing``, and a copy of it for ``reuse_baseline``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ablation import AblationTask, ResumeMismatchError, RunStore, run_ablation_campaign
from ablation.schema import NAME_SHOWN, TASK_ID_LIMIT

#: Ids sharing their first million characters: only the digest of the whole tells them apart.
IDS = ["x" * (TASK_ID_LIMIT - 2) + f"{i:02d}" for i in range(4)]


def _tasks(value: int) -> list[AblationTask]:
    return [AblationTask(task_id=tid, input_data=value, expected_output=value) for tid in IDS]


def _named_apart(text: str) -> None:
    assert len(text) < len(IDS) * 2 * NAME_SHOWN + 1000
    for tid in IDS:
        assert hashlib.sha256(tid.encode()).hexdigest()[:16] in text


def test_a_resume_of_changed_long_ids_names_them_bounded(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run_ablation_campaign(lambda x: x, lambda x: x, _tasks(1), store=store)
    with pytest.raises(ResumeMismatchError, match="changed") as raised:
        run_ablation_campaign(lambda x: x, lambda x: x, _tasks(2), store=store, resume=True)
    _named_apart(str(raised.value))


def test_a_reused_baseline_of_changed_long_ids_names_them_bounded(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run_ablation_campaign(lambda x: x, lambda x: x, _tasks(1), store=store)
    (source,) = [c.campaign_id for c in RunStore(store).list_campaigns()]
    with pytest.raises(ResumeMismatchError, match="cannot reuse the baseline") as raised:
        run_ablation_campaign(None, lambda x: x, _tasks(2), store=store, reuse_baseline=source)
    _named_apart(str(raised.value))
