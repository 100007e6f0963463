"""The run store's column blocks hold exactly the stored trials, whichever way they were written.

The reference is the row read (``_row_columns``: the ``trials`` table, page by page), which was
the store's only columnar read before blocks existed. Every writer (``append``, ``append_many``,
``import_jsonl``, the backfill of a migrated store) must leave blocks that read back to the same
columns in the same ``(task_id, run)`` order, and a report from the blocks must equal the report
of the per-trial object path to the byte.
"""

from __future__ import annotations

import itertools
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
from ablation.config import CampaignConfig, Provenance
from ablation.schema import TaskResult
from ablation.store import blocks
from ablation.store.run_store import RunStore

ARMS = ("baseline", "candidate")


def _new(store: RunStore) -> str:
    return store.create_campaign(
        config=CampaignConfig(n_resamples=200), suite_fingerprint="f", task_digests={},
        baseline_agent="b", candidate_agent="c",
    )  # fmt: skip


def _block_levels(store: RunStore, cid: str) -> list[tuple[str, int, int]]:
    with store._op("test") as conn:
        return conn.execute(
            "SELECT arm, level, n FROM trial_blocks WHERE campaign_id = ? ORDER BY rowid", (cid,)
        ).fetchall()


def _same_as_rows(store: RunStore, cid: str) -> None:
    for arm in ARMS:
        held = store.trial_columns(cid, arm)
        columns_equal(held, store._row_columns(cid, arm))
        keys = list(zip(held.task_id.tolist(), held.run.tolist(), strict=True))
        assert keys == sorted(keys)


def test_one_trial_at_a_time_merges_levels_and_reads_back(tmp_path: Path) -> None:
    baseline, candidate = campaign(3, 250)
    trials = baseline + candidate
    random.Random(1).shuffle(trials)
    store = RunStore(tmp_path / "runs.db")
    cid = _new(store)
    for r in trials:
        store.append(cid, r)
    levels = _block_levels(store, cid)
    assert sum(n for _, _, n in levels) == len(trials)
    # FANOUT appends of an arm become one level-1 block, FANOUT of those one level-2 block
    assert {lvl for _, lvl, _ in levels} >= {1, 2}
    for arm in ARMS:
        assert sum(1 for a, lvl, _ in levels if a == arm and lvl < blocks.TOP) < blocks.TOP * blocks.FANOUT
    _same_as_rows(store, cid)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    sizes=st.lists(st.integers(1, 60), min_size=1, max_size=12),
)
def test_any_batching_reads_back_the_rows(seed: int, sizes: list[int]) -> None:
    """Property: however trials are batched and ordered, blocks read back as the rows do."""
    baseline, candidate = campaign(seed, 40)
    trials = baseline + candidate
    random.Random(seed).shuffle(trials)
    with RunStore(":memory:") as store:
        cid = _new(store)
        at = 0
        for size in sizes * 3:
            store.append_many(cid, trials[at : at + size])
            at += size
        store.append_many(cid, trials[at:])
        _same_as_rows(store, cid)


def test_ids_sort_in_python_order_with_unicode_and_trailing_nul(tmp_path: Path) -> None:
    """numpy's fixed-width strings drop trailing NULs: the read must still sort as ``str`` does."""
    ids = ["b", "a\x00", "a", "é", "Z", "a\x00\x00", "😀", "ab", ""]
    rng = random.Random(5)
    rows = [trial(rng, tid, arm, run) for tid in ids for arm in ARMS for run in (1, 0)]
    rng.shuffle(rows)
    with RunStore(tmp_path / "runs.db") as store:
        cid = _new(store)
        for i in range(0, len(rows), 7):
            store.append_many(cid, rows[i : i + 7])
        _same_as_rows(store, cid)
        assert store.trial_columns(cid, "baseline").task_id.tolist()[:6] == ["", "", "Z", "Z", "a", "a"]


def test_import_writes_blocks(tmp_path: Path) -> None:
    baseline, candidate = campaign(11, 1200)  # more trials than one CHUNK
    with RunStore(tmp_path / "a.db") as store:
        cid = _new(store)
        store.append_many(cid, baseline + candidate)
        store.export_jsonl(cid, tmp_path / "a.jsonl")
    with RunStore(tmp_path / "b.db") as other:
        new = other.import_jsonl(tmp_path / "a.jsonl")
        assert len(_block_levels(other, new)) > 2
        _same_as_rows(other, new)
        assert other.get_campaign(new).n_trials == len(baseline) + len(candidate)


def _downgrade_to_v3(path: Path) -> None:
    """Make ``path`` a schema-3 store: no blocks table, no ``campaigns.blocks`` column."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "DROP TABLE trial_blocks; ALTER TABLE campaigns DROP COLUMN blocks;"
        " UPDATE meta SET value = '3' WHERE key = 'schema_version';"
    )
    conn.close()


def _report_json(store: RunStore, cid: str | None = None) -> dict[str, Any]:
    report, _ = report_stored_campaign(store, cid)
    data = report.model_dump(mode="json")
    data["provenance"].pop("finished_at")
    return data


def test_a_schema_3_store_reads_from_rows_then_migrates_and_backfills(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    baseline, candidate = campaign(21, 300)
    with RunStore(path) as store:
        cid = _new(store)
        store.append_many(cid, baseline + candidate)
        expected = _report_json(store, cid)
    _downgrade_to_v3(path)
    with RunStore(path, read_only=True) as old:  # read-only: no migration, the rows are read
        assert old.schema_version == 3
        assert old.get_campaign(cid).n_trials == len(baseline) + len(candidate)
        assert _report_json(old, cid) == expected
    with RunStore(path) as store:  # writable: migrated, and the campaign's blocks written
        assert store.migrated_from == 3
        with store._op("test") as conn:
            assert conn.execute("SELECT blocks FROM campaigns").fetchall() == [(1,)]
        assert {lvl for _, lvl, _ in _block_levels(store, cid)} == {blocks.TOP}
        _same_as_rows(store, cid)
        assert _report_json(store, cid) == expected
        more = _new(store)  # campaigns created after the migration have blocks from the start
        store.append_many(more, baseline[:50])
        _same_as_rows(store, more)


def test_a_campaign_without_blocks_is_read_from_its_rows(tmp_path: Path) -> None:
    """A campaign marked as not backfilled (an interrupted backfill) is read from its rows."""
    baseline, candidate = campaign(4, 80)
    with RunStore(tmp_path / "runs.db") as store:
        cid = _new(store)
        store.append_many(cid, baseline + candidate)
        with store._op("test") as conn:
            conn.execute("DELETE FROM trial_blocks")
            conn.execute("UPDATE campaigns SET blocks = 0")
        assert len(store.trial_columns(cid, "baseline")) == len(baseline)
        columns_equal(store.trial_columns(cid, "candidate"), store._row_columns(cid, "candidate"))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_report_from_blocks_equals_the_object_path(tmp_path: Path, seed: int) -> None:
    baseline, candidate = campaign(seed, 2000)
    trials: list[TaskResult] = baseline + candidate
    random.Random(seed).shuffle(trials)
    config = CampaignConfig(n_resamples=300, seed=seed)
    prov = Provenance(baseline_agent="b", candidate_agent="c", finished_at="then")
    with RunStore(tmp_path / "runs.db") as store:
        cid = _new(store)
        for i in range(0, len(trials), 97):  # batches of the engine's size, out of task order
            store.append_many(cid, trials[i : i + 97])
        fast = report_from_store(store, cid, config=config, provenance=prov)
        old = report_from_results(
            store.trial_rows(cid), config=config, provenance=prov,
            trial_lookup=StoredTrials(store, cid),
        )  # fmt: skip
    assert fast.model_dump_json() == old.model_dump_json()


def test_decoded_numbers_are_writable_copies() -> None:
    rng = random.Random(2)
    rows = [trial(rng, f"t{i}", "baseline", 0) for i in range(20)]
    with RunStore(":memory:") as store:
        cid = _new(store)
        store.append_many(cid, rows)
        cols = store.trial_columns(cid, "baseline")
        cols.latency_s[0] = 1.0  # the analysis may work in place: no read-only views of SQLite's bytes
        assert np.isfinite(cols.latency_s[0])


def test_blocks_store_every_column_of_trial_columns() -> None:
    """A column added to TrialColumns must be stored by blocks too (else reports drop it)."""
    import dataclasses

    from ablation.columns import TrialColumns

    held = {*blocks._FIELDS, *(group for group, _, _ in blocks._GROUPS)}
    per_source = {"arm", "source", "line"}  # not trial data: the arm is the read's, no file rows
    assert {f.name for f in dataclasses.fields(TrialColumns)} - per_source == held


@pytest.mark.parametrize("seed", [0, 1])
def test_campaign_columns_share_ids_and_equal_each_arm_alone(tmp_path: Path, seed: int) -> None:
    # both arms read with one set of decoded ids must equal each arm read alone; blocks the arms
    # share (same tasks, same order) decode once, so their id strings are the very same objects
    rng = random.Random(seed)
    with RunStore(tmp_path / "runs.db") as store:
        cid = _new(store)
        for lo in range(0, 600, 50):  # each batch holds both arms of the same 50 tasks
            batch = [trial(rng, f"t{i:04d}", arm, 0) for i in range(lo, lo + 50) for arm in ARMS]
            store.append_many(cid, batch)
        store.append_many(cid, [trial(rng, "t9999", "candidate", 0)])  # one arm only
        baseline, candidate = store.campaign_columns(cid)
        columns_equal(baseline, store.trial_columns(cid, "baseline"))
        columns_equal(candidate, store.trial_columns(cid, "candidate"))
        shared = sum(a is b for a, b in zip(baseline.task_id, candidate.task_id, strict=False))
        assert shared == len(baseline) == 600
        lone = _new(store)
        same = [trial(rng, f"t{i:04d}", arm, 0) for i in range(30) for arm in ARMS]
        store.append_many(lone, same)
        b2, c2 = store.campaign_columns(lone)
        assert c2.task_id is b2.task_id  # same ids in the same order: one array


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "ab", ""]), st.integers(0, 2)),
                 max_size=6),
        min_size=1, max_size=4,
    )
)  # fmt: skip
def test_order_checks_agree_with_python_sorting(blocks_keys: list[list[tuple[str, int]]]) -> None:
    # the row check (any rows) and the boundary check (parts each sorted, as stored blocks are)
    # must say "in order" exactly when Python's sorted() of the (task_id, run) keys is strictly
    # increasing (a repeated key is not in order: the pairing reports it as a duplicate)
    def strictly(keys: list[tuple[str, int]]) -> bool:
        return all(a < b for a, b in itertools.pairwise(keys))

    rows = [k for block in blocks_keys for k in block]
    ids = np.array([k for k, _ in rows], dtype=object)
    run = np.array([r for _, r in rows], dtype=np.int64)
    assert blocks._in_order(ids, run) == strictly(rows)
    parts = [sorted(set(block)) for block in blocks_keys]
    flat = [k for part in parts for k in part]
    ids = np.array([k for k, _ in flat], dtype=object)
    run = np.array([r for _, r in flat], dtype=np.int64)
    assert blocks._blocks_in_order(ids, run, [len(p) for p in parts]) == strictly(flat)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_numbers_read_a_piece_at_a_time_equal_the_rows(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    # pieces of 24 bytes: three int64 or float64 values, 24 flags, so every column of every
    # block spans several pieces and most blocks end in a partial one
    monkeypatch.setattr(blocks, "_PIECE", 24)
    baseline, candidate = campaign(seed, 120)
    trials = baseline + candidate
    random.Random(seed).shuffle(trials)
    with RunStore(":memory:") as store:
        cid = _new(store)
        for i in range(0, len(trials), 37):
            store.append_many(cid, trials[i : i + 37])
        assert len(_block_levels(store, cid)) > 4
        both = store.campaign_columns(cid)
        for arm, held in zip(ARMS, both, strict=True):
            rows = store._row_columns(cid, arm)
            columns_equal(held, rows)
            for name in ("run", "passed", "status", "latency_s", "cost", "tokens", "critical",
                         "attempts"):  # fmt: skip
                assert getattr(held, name).dtype == getattr(rows, name).dtype, name


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_arm_shares_the_id_column_only_when_every_ids_block_matches(seed: int) -> None:
    # same number of blocks and trials per arm, but the candidate's second (or first) block
    # holds other tasks: its ids must be its own, and equal to the arm read alone
    rng = random.Random(seed)
    with RunStore(":memory:") as store:
        for differs in (None, 0, 1):
            cid = _new(store)
            for block in range(2):
                ids = [f"t{block}-{i:03d}" for i in range(40)]
                other = [f"u{block}-{i:03d}" for i in range(40)] if block == differs else ids
                store.append_many(cid, [trial(rng, tid, "baseline", 0) for tid in ids])
                store.append_many(cid, [trial(rng, tid, "candidate", 0) for tid in other])
            baseline, candidate = store.campaign_columns(cid)
            columns_equal(baseline, store.trial_columns(cid, "baseline"))
            columns_equal(candidate, store.trial_columns(cid, "candidate"))
            assert (candidate.task_id is baseline.task_id) == (differs is None)
