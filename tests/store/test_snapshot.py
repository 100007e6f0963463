"""The run store's arm snapshots hold exactly the stored trials, or are not read at all.

The reference is the row read (``_row_columns``: the ``trials`` table, page by page), the
store's source of truth. Every way of writing trials (``append``, ``append_many``,
``import_jsonl``, a resume that adds rows after a snapshot was written, a row edited or replaced
behind the store's back) must leave reads equal to the rows, and a report from the snapshots must
equal the report of the per-trial object path to the byte.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.random_trials import campaign, columns_equal, trial
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation.analysis.build import report_from_results
from ablation.analysis.stored import StoredTrials, report_from_store, report_stored_campaign
from ablation.columns import TrialColumns, results_to_columns
from ablation.config import CampaignConfig, Provenance
from ablation.errors import StoreError
from ablation.schema import TaskResult
from ablation.store import snapshot
from ablation.store.run_store import RunStore

ARMS = ("baseline", "candidate")


def _new(store: RunStore, tasks: list[str] | None = None) -> str:
    return store.create_campaign(
        config=CampaignConfig(n_resamples=200), suite_fingerprint="f",
        task_digests={t: "d" for t in tasks or []}, baseline_agent="b", candidate_agent="c",
    )  # fmt: skip


def _snapshots(store: RunStore, cid: str) -> list[tuple[str, int]]:
    with store._op("test") as conn:
        sql = "SELECT arm, n FROM arm_snapshots WHERE campaign_id = ? ORDER BY arm"
        return conn.execute(sql, (cid,)).fetchall()


def _same_as_rows(store: RunStore, cid: str) -> None:
    for arm in ARMS:
        held = store.trial_columns(cid, arm)
        columns_equal(held, store._row_columns(cid, arm))
        keys = list(zip(held.task_id.tolist(), held.run.tolist(), strict=True))
        assert keys == sorted(keys)


def test_trials_are_written_once_and_the_snapshot_on_the_first_read(tmp_path: Path) -> None:
    baseline, candidate = campaign(3, 250)
    with RunStore(tmp_path / "runs.db") as store:
        cid = _new(store)
        for r in baseline[:20] + candidate[:20]:
            store.append(cid, r)
        store.append_many(cid, baseline[20:] + candidate[20:])
        with store._op("test") as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables == {
            "meta", "campaigns", "trials", "arm_snapshots", "trial_counts", "task_details",
            "task_categories",
        }
        assert _snapshots(store, cid) == []  # no second copy of the trials while they are written
        _same_as_rows(store, cid)
        assert _snapshots(store, cid) == [("baseline", len(baseline)), ("candidate", len(candidate))]
        _same_as_rows(store, cid)  # now read from the snapshots


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    sizes=st.lists(st.integers(1, 60), min_size=1, max_size=8),
)
def test_reads_between_any_batches_equal_the_rows(seed: int, sizes: list[int]) -> None:
    """Property: a snapshot written between two writes is never read after the second."""
    baseline, candidate = campaign(seed, 40)
    trials = baseline + candidate
    random.Random(seed).shuffle(trials)
    with RunStore(":memory:") as store:
        cid = _new(store)
        at = 0
        for size in sizes:
            store.append_many(cid, trials[at : at + size])
            at += size
            _same_as_rows(store, cid)
        store.append_many(cid, trials[at:])
        _same_as_rows(store, cid)


@settings(max_examples=30, deadline=None)
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(["insert", "delete", "update", "move"]), st.integers(0, 59)),
        max_size=40,
    )
)
def test_trial_counts_are_the_rows_count_and_rowid_sum(ops: list[tuple[str, int]]) -> None:
    """Property: whatever rows are inserted, deleted or edited (even moved to another arm or
    campaign, as another tool could), ``trial_counts`` equals a count of the rows."""
    rng = random.Random(len(ops))
    with RunStore(":memory:") as store:
        cids = [_new(store), _new(store)]
        for op, i in ops:
            cid, arm = cids[i % 2], ARMS[i // 2 % 2]
            if op == "insert":
                with contextlib.suppress(StoreError):  # a duplicate key: nothing written
                    store.append(cid, trial(rng, f"t{i % 7}", arm, i // 28))
                continue
            with store._op("test") as conn:
                if op == "delete":
                    conn.execute("DELETE FROM trials WHERE rowid = (SELECT MIN(rowid) FROM trials)")
                elif op == "update":
                    conn.execute("UPDATE trials SET passed = 1 - passed WHERE task_id = ?", (f"t{i % 7}",))
                else:
                    conn.execute(
                        "UPDATE OR IGNORE trials SET arm = ?, campaign_id = ? WHERE rowid ="
                        " (SELECT MAX(rowid) FROM trials)", (arm, cid),
                    )  # fmt: skip
        with store._op("test") as conn:
            counted = conn.execute(
                "SELECT campaign_id, arm, COUNT(*), SUM(rowid) FROM trials GROUP BY 1, 2"
            ).fetchall()
            kept = conn.execute("SELECT * FROM trial_counts WHERE n > 0 ORDER BY 1, 2").fetchall()
        assert kept == counted
        for cid in cids:
            _same_as_rows(store, cid)


def test_a_replaced_or_edited_row_makes_the_snapshot_stale(tmp_path: Path) -> None:
    """Same count after a delete and an insert, or an UPDATE in place: the rows win."""
    baseline, candidate = campaign(7, 30)
    with RunStore(tmp_path / "runs.db") as store:
        cid = _new(store)
        store.append_many(cid, baseline + candidate)
        _same_as_rows(store, cid)
        first = min(baseline, key=lambda r: (r.task_id, r.run))
        with store._op("test") as conn:
            sql = "DELETE FROM trials WHERE task_id = ? AND arm = 'baseline' AND run = ?"
            conn.execute(sql, (first.task_id, first.run))
        store.append(cid, first.model_copy(update={"passed": not first.passed}))
        assert store.trial_columns(cid, "baseline").passed[0] == (not first.passed)
        _same_as_rows(store, cid)
        with store._op("test") as conn:  # another tool edits a row in place
            conn.execute("UPDATE trials SET passed = 1 - passed WHERE arm = 'candidate'")
        in_order = sorted(candidate, key=lambda r: (r.task_id, r.run))
        assert store.trial_columns(cid, "candidate").passed.tolist() == [
            not r.passed for r in in_order
        ]


def test_ids_keep_python_order_with_unicode_and_trailing_nul(tmp_path: Path) -> None:
    ids = ["b", "a\x00", "a", "é", "Z", "a\x00\x00", "😀", "ab", ""]
    rng = random.Random(5)
    rows = [trial(rng, tid, arm, run) for tid in ids for arm in ARMS for run in (1, 0)]
    rng.shuffle(rows)
    with RunStore(tmp_path / "runs.db") as store:
        cid = _new(store)
        store.append_many(cid, rows)
        _same_as_rows(store, cid)
        _same_as_rows(store, cid)
        assert store.trial_columns(cid, "baseline").task_id.tolist()[:6] == ["", "", "Z", "Z", "a", "a"]


def test_imported_campaigns_read_back(tmp_path: Path) -> None:
    baseline, candidate = campaign(11, 300)
    with RunStore(tmp_path / "a.db") as store:
        cid = _new(store)
        store.append_many(cid, baseline + candidate)
        store.export_jsonl(cid, tmp_path / "a.jsonl")
    with RunStore(tmp_path / "b.db") as other:
        new = other.import_jsonl(tmp_path / "a.jsonl")
        _same_as_rows(other, new)
        _same_as_rows(other, new)
        assert other.get_campaign(new).n_trials == len(baseline) + len(candidate)


def _downgrade_to_v4(path: Path) -> None:
    """Make ``path`` a schema-4 store: column blocks beside the rows, no snapshots."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "DROP TRIGGER trials_inserted; DROP TRIGGER trials_deleted; DROP TRIGGER trials_updated;"
        " DROP TRIGGER campaign_tasks_updated;"
        " DROP TABLE arm_snapshots; DROP TABLE trial_counts;"
        " CREATE TABLE trial_blocks (campaign_id TEXT NOT NULL, arm TEXT NOT NULL,"
        " level INTEGER NOT NULL, n INTEGER NOT NULL, task_ids TEXT NOT NULL,"
        " numbers BLOB NOT NULL, extra TEXT);"
        " CREATE INDEX trial_blocks_by_arm ON trial_blocks (campaign_id, arm, level);"
        " ALTER TABLE campaigns ADD COLUMN blocks INTEGER NOT NULL DEFAULT 1;"
        " UPDATE meta SET value = '4' WHERE key = 'schema_version';"
    )
    conn.close()


def _report_json(store: RunStore, cid: str | None = None) -> dict[str, Any]:
    report, _ = report_stored_campaign(store, cid)
    data = report.model_dump(mode="json")
    data["provenance"].pop("finished_at")
    return data


def test_a_schema_4_store_is_read_from_rows_then_migrated(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    baseline, candidate = campaign(21, 120)
    with RunStore(path) as store:
        cid = _new(store)
        store.append_many(cid, baseline + candidate)
        expected = _report_json(store, cid)
    _downgrade_to_v4(path)
    with RunStore(path, read_only=True) as old:  # read-only: no migration, the rows are read
        assert old.schema_version == 4
        assert old.get_campaign(cid).n_trials == len(baseline) + len(candidate)
        assert _report_json(old, cid) == expected
    with RunStore(path) as store:  # writable: the blocks are dropped, snapshots written on read
        assert store.migrated_from == 4
        with store._op("test") as conn:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            columns = {r[1] for r in conn.execute("PRAGMA table_info(campaigns)")}
        assert "trial_blocks" not in names and "blocks" not in columns
        assert _report_json(store, cid) == expected
        assert len(_snapshots(store, cid)) == 2
        assert _report_json(store, cid) == expected


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_report_from_snapshots_equals_the_object_path(tmp_path: Path, seed: int) -> None:
    baseline, candidate = campaign(seed, 400)  # ~1250 trials: 13 batches
    trials: list[TaskResult] = baseline + candidate
    random.Random(seed).shuffle(trials)
    config = CampaignConfig(n_resamples=300, seed=seed)
    prov = Provenance(baseline_agent="b", candidate_agent="c", finished_at="then")
    with RunStore(tmp_path / "runs.db") as store:
        cid = _new(store)
        for i in range(0, len(trials), 97):  # batches of the engine's size, out of task order
            store.append_many(cid, trials[i : i + 97])
        from_rows = report_from_store(store, cid, config=config, provenance=prov)
        assert len(_snapshots(store, cid)) == 2
        fast = report_from_store(store, cid, config=config, provenance=prov)
        old = report_from_results(
            store.trial_rows(cid), config=config, provenance=prov,
            trial_lookup=StoredTrials(store, cid),
        )  # fmt: skip
    assert fast.model_dump_json() == old.model_dump_json() == from_rows.model_dump_json()


def test_expected_ids_skip_the_digests_only_when_the_arms_hold_every_task(tmp_path: Path) -> None:
    rng = random.Random(3)
    with RunStore(tmp_path / "runs.db") as store:
        full = _new(store, ["t0", "t1"])
        store.append_many(full, [trial(rng, t, arm, 0) for t in ("t0", "t1") for arm in ARMS])
        partial = _new(store, ["t0", "t1", "t2"])  # t2 never ran: it must stay expected
        store.append_many(partial, [trial(rng, t, arm, 0) for t in ("t0", "t1") for arm in ARMS])
        for cid in (full, partial):
            assert store.expected_ids(cid) == sorted(store.get_campaign(cid).task_digests)
            store.campaign_columns(cid)  # writes the snapshots
        assert store.expected_ids(full) is None
        assert store.expected_ids(partial) == ["t0", "t1", "t2"]
        report, _ = report_stored_campaign(store, partial)
        assert [(e.task_id, e.reason) for e in report.excluded] == [
            ("t2", "missing: no result in either arm")
        ]


def test_finding_campaigns_does_not_decode_their_task_digests(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.db") as store:
        cid = _new(store, ["t0"])
        with store._op("test") as conn:  # digests no parser could read: only their use fails
            conn.execute("UPDATE campaigns SET task_digests_json = '{not json'")
        latest = store.latest_campaign()
        assert latest is not None and latest.campaign_id == cid
        assert [c.campaign_id for c in store.list_campaigns()] == [cid]
        with pytest.raises(StoreError, match=f"campaign {cid!r}: its task digests cannot be read"):
            len(latest.task_digests)


def test_decoded_numbers_are_writable_copies() -> None:
    rng = random.Random(2)
    rows = [trial(rng, f"t{i}", "baseline", 0) for i in range(20)]
    with RunStore(":memory:") as store:
        cid = _new(store)
        store.append_many(cid, rows)
        store.trial_columns(cid, "baseline")
        cols = store.trial_columns(cid, "baseline")
        assert _snapshots(store, cid) == [("baseline", 20)]
        cols.latency_s[0] = 1.0  # the analysis may work in place: no read-only views of the blob
        assert np.isfinite(cols.latency_s[0])


def test_snapshots_store_every_column_of_trial_columns() -> None:
    """A column added to TrialColumns must be stored by snapshots too (else reports drop it)."""
    held = {*snapshot._FIELDS, *(group for group, _, _ in snapshot._GROUPS), *snapshot._SETS}
    per_source = {"arm", "source", "line"}  # not trial data: the arm is the read's, no file rows
    assert {f.name for f in dataclasses.fields(TrialColumns)} - per_source == held


def test_a_snapshot_of_another_format_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline, candidate = campaign(9, 20)
    with RunStore(tmp_path / "runs.db") as store:
        cid = _new(store)
        store.append_many(cid, baseline + candidate)
        store.campaign_columns(cid)
        with monkeypatch.context() as patch:
            patch.setattr(snapshot, "FORMAT", snapshot.FORMAT + 1)
            other = snapshot.encode(store._row_columns(cid, "baseline"))
        with store._op("test") as conn:
            conn.execute("UPDATE arm_snapshots SET data = ? WHERE arm = 'baseline'", (other,))
        assert snapshot.decode(other, "baseline") is None
        _same_as_rows(store, cid)


def test_campaign_columns_share_equal_ids(tmp_path: Path) -> None:
    rng = random.Random(0)
    with RunStore(tmp_path / "runs.db") as store:
        cid = _new(store)
        store.append_many(cid, [trial(rng, f"t{i:03d}", arm, 0) for i in range(30) for arm in ARMS])
        for _ in range(2):  # from the rows, then from the snapshots
            baseline, candidate = store.campaign_columns(cid)
            assert candidate.task_id is baseline.task_id
            columns_equal(candidate, store.trial_columns(cid, "candidate"))
        lone = _new(store)
        store.append_many(lone, [trial(rng, "x", "candidate", 0)])
        baseline, candidate = store.campaign_columns(lone)
        assert len(baseline) == 0 and candidate.task_id.tolist() == ["x"]


def test_a_read_only_store_writes_no_snapshot(tmp_path: Path) -> None:
    baseline, candidate = campaign(5, 20)
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        cid = _new(store)
        store.append_many(cid, baseline + candidate)
    with RunStore(path, read_only=True) as store:
        _same_as_rows(store, cid)
        assert _snapshots(store, cid) == []
        with pytest.raises(StoreError):
            store.append(cid, baseline[0])


def test_a_completed_campaign_gets_its_snapshots_an_interrupted_one_none(tmp_path: Path) -> None:
    baseline, candidate = campaign(6, 40)
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        done, stopped = _new(store), _new(store)
        for cid in (done, stopped):
            store.append_many(cid, baseline + candidate)
        store.set_status(stopped, "interrupted")
        store.set_status(done, "complete")
        assert _snapshots(store, stopped) == []
        assert _snapshots(store, done) == [("baseline", len(baseline)), ("candidate", len(candidate))]
    with RunStore(path, read_only=True) as store:  # what ``ablation report`` opens
        _same_as_rows(store, done)


@settings(max_examples=40, deadline=None)
@given(
    ids=st.lists(st.text(alphabet="ab\x00é", max_size=3), min_size=0, max_size=12, unique=True),
    labels=st.lists(st.sampled_from([None, "", "x\x00y", "math"]), min_size=12, max_size=12),
    latency=st.sampled_from(["varied", "same", "nan", "mixed"]),
)
def test_a_snapshot_decodes_to_its_columns(ids: list[str], labels: list[str | None], latency: str) -> None:
    """Encode then decode equals the columns, whichever text layout (NUL-joined or JSON) and
    numeric layout (one value for a constant column, NaN included) each column takes."""
    values = {"varied": lambda i: 0.5 + i, "same": lambda i: 2.0, "nan": lambda i: None,
              "mixed": lambda i: None if i % 2 else 1.0}[latency]  # fmt: skip
    rows = [
        TaskResult(task_id=tid, arm="baseline", passed=i % 2 == 0, latency_s=values(i), category=labels[i],
                   status="error" if labels[i] == "math" else "completed",
                   error_message="a\x00b" if labels[i] == "math" else None)
        for i, tid in enumerate(sorted(ids))
    ]  # fmt: skip
    columns = results_to_columns(rows, "baseline")
    got = snapshot.decode(snapshot.encode(columns), "baseline")
    assert got is not None
    columns_equal(got, columns)
    for name in ("task_id", "category", "error"):
        if (want := getattr(columns, name)) is not None:  # None: no row gave it (a constant read back)
            assert getattr(got, name).tolist() == want.tolist(), name
