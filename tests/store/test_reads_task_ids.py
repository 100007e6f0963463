"""``RunStore.results(task_ids=...)`` finds exactly the trials of the ids given, whatever they
hold (U+0000, which SQLite's ``json_each`` cuts at), and keeps ``(task_id, arm, run)`` order
over lists longer than one query binds."""

from __future__ import annotations

from pathlib import Path

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore

ARMS = ("baseline", "candidate")


def store_of(path: Path, ids: list[str], runs: int = 1) -> tuple[RunStore, str]:
    store = RunStore(path)
    cid = store.create_campaign(
        config=CampaignConfig(n_resamples=100, runs=runs), suite_fingerprint="f",
        task_digests={t: "d" for t in ids}, baseline_agent="a", candidate_agent="b",
    )  # fmt: skip
    store.append_many(cid, [
        TaskResult(task_id=t, arm=arm, run=r, passed=True, output=f"out {t!r}")
        for t in ids for arm in ARMS for r in range(runs)
    ])  # fmt: skip
    return store, cid


def test_ids_holding_nul_find_their_own_trials(tmp_path: Path) -> None:
    ids = ["a\x00b", "a", "a\x00c", "\x00", "b"]
    store, cid = store_of(tmp_path / "runs.db", ids)
    for task_id in ids:
        found = store.results(cid, task_ids=[task_id])
        assert [(t.task_id, t.arm) for t in found] == [(task_id, arm) for arm in ARMS]
        assert [t.output for t in found] == [f"out {task_id!r}"] * 2
        assert [t.task_id for t in store.results(cid, task_ids=task_id)] == [task_id] * 2
    found = store.results(cid, arm="candidate", task_ids={"a\x00b", "\x00", "missing"})
    assert [(t.task_id, t.arm) for t in found] == [("\x00", "candidate"), ("a\x00b", "candidate")]
    with RunStore(tmp_path / "runs.db", read_only=True) as reader:
        assert [t.task_id for t in reader.results(cid, task_ids=["a\x00c"])] == ["a\x00c"] * 2
    assert store.results(cid, task_ids=["\ud800"]) == []  # never stored: the store escapes it
    assert store.results(cid, task_ids=[]) == []
    store.close()


def test_long_id_lists_keep_the_order(tmp_path: Path) -> None:
    ids = [f"t{i:05d}" for i in range(2007)]  # 1004 wanted: two queries' worth (900 ids each)
    store, cid = store_of(tmp_path / "runs.db", ids, runs=2)
    wanted = set(ids[::2]) | {"absent"}
    found = store.results(cid, task_ids=wanted)
    keys = [(t.task_id, t.arm, t.run) for t in found]
    assert keys == sorted((t, arm, r) for t in wanted - {"absent"} for arm in ARMS for r in range(2))
    assert keys == [tuple(k) for k in sorted(keys, key=lambda k: (k[0].encode(), k[1], k[2]))]
    store.close()
