"""``RunStore.iter_task_trials``: the trials of some tasks, one row per read, against
``RunStore.results`` (one query, every row at once) on a real SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from ablation import CampaignConfig, RunStore, TaskResult
from ablation.errors import StoreError


def test_the_stream_is_the_filtered_results_in_key_order(tmp_path: Path) -> None:
    ids = ["b", "a", "é", "c\x00d", "z"]
    with RunStore(tmp_path / "s.db") as store:
        cid = store.create_campaign(
            config=CampaignConfig(runs=3), suite_fingerprint="f", task_digests=dict.fromkeys(ids, "d"),
            baseline_agent="b", candidate_agent="c",
        )  # fmt: skip
        store.append_many(cid, [TaskResult(task_id=t, arm=arm, run=r, passed=r % 2 == 0, output=f"{t}{arm}{r}")
                                for t in ids for arm in ("candidate", "baseline") for r in (2, 0, 1)])  # fmt: skip
        wanted = ["é", "a", "c\x00d", "missing", "\ud800"]
        streamed = list(store.iter_task_trials(cid, wanted))
        assert streamed == store.results(cid, task_ids=wanted)
        assert [(r.task_id, r.arm, r.run) for r in streamed] == [
            (t, arm, r) for t in sorted(wanted[:3]) for arm in ("baseline", "candidate") for r in range(3)
        ]
        asked: list[tuple[str, str, int]] = []
        firsts = list(store.iter_task_trials(cid, ["z", "a"], keep=lambda *key: asked.append(key) or key[2] == 0))
        assert [(r.task_id, r.arm, r.run) for r in firsts] == [("a", "baseline", 0), ("a", "candidate", 0),
                                                              ("z", "baseline", 0), ("z", "candidate", 0)]  # fmt: skip
        assert len(asked) == 12  # every stored trial of the two tasks, each once
        assert list(store.iter_task_trials(cid, [])) == []
        with pytest.raises(StoreError, match="no campaign 'nope'"):
            list(store.iter_task_trials("nope", ["a"]))
