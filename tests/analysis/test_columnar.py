"""The array pairing path gives the same report as the object path, and names bad input.

The reference is the per-trial path (``pair_results`` + ``build_report``:
``report_by_objects`` of tests/helpers), which the fast paths (``compare_results`` on lists and dict records,
``report_from_store`` on a SQLite file) must reproduce to the byte of the report's JSON.
"""

from __future__ import annotations

import functools
import random
from typing import Any

import numpy as np
import pytest
from helpers.pairing_oracle import report_by_objects
from helpers.random_trials import campaign
from helpers.random_trials import columns_equal as _columns_equal
from helpers.random_trials import trial as _trial

from ablation.analysis.build import build_report, compare_results, report_from_results
from ablation.analysis.in_memory import records_to_columns, results_to_columns
from ablation.analysis.pair_arms import pair_columns
from ablation.analysis.stored import StoredTrials, report_from_store
from ablation.columns import TrialColumns, fields_given
from ablation.config import CampaignConfig, Provenance
from ablation.errors import InputError
from ablation.schema import TaskResult
from ablation.store.run_store import RunStore


def _json(report: Any) -> dict[str, Any]:
    data = report.model_dump(mode="json")
    data["provenance"].pop("finished_at")
    return data


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "on_error", "listed", "n"),
                         [(0, "fail", True, 3000), (1, "exclude", True, 500), (2, "fail", False, 500)])
def test_compare_results_equals_the_object_path_on_random_tasks(
    seed: int, on_error: str, listed: bool, n: int
) -> None:
    # 3,000 tasks: about 4,700 rows per arm, past a 4,096-row chunk of the column reads (the
    # other cases vary the pairing's settings, whose code does not depend on the chunks)
    baseline, candidate = campaign(seed, n)
    # the time limit named, so that compare_results counts timeouts at it as the object path does
    config = CampaignConfig(on_error=on_error, n_resamples=200, seed=seed, timeout_s=300.0)
    ids = sorted({r.task_id for r in baseline})
    expected = [*ids[5:], "never-ran-1", "never-ran-2"]  # some unknown, some missing
    for expected_ids in [expected] if listed else [None]:
        fast = compare_results(baseline, candidate, config=config, expected_ids=expected_ids)
        old = report_by_objects(
            [*baseline, *candidate], config=config, expected_ids=expected_ids,
            provenance=Provenance(baseline_agent="baseline", candidate_agent="candidate", source="compare"),
        )  # fmt: skip
        assert _json(fast) == _json(old)
        assert fast.details and fast.excluded and fast.quality and fast.latency is not None
        assert fast.cost is not None and fast.latency.hodges_lehmann is not None


@pytest.mark.parametrize("seed", [3])
def test_dict_records_give_the_report_of_their_task_results(seed: int) -> None:
    baseline, candidate = campaign(seed, 600)
    keys = ("task_id", "run", "status", "passed", "latency_s", "cost", "category", "critical")
    plain = [[{k: getattr(r, k) for k in keys} for r in side] for side in (baseline, candidate)]
    full = [[r.model_dump() for r in side] for side in (baseline, candidate)]
    config = CampaignConfig(n_resamples=200)
    as_models = [
        [TaskResult.model_validate({**d, "arm": arm}) for d in side]
        for side, arm in zip(plain, ("baseline", "candidate"), strict=True)
    ]
    assert _json(compare_results(*plain, config=config)) == _json(compare_results(*as_models, config=config))
    assert _json(compare_results(*full, config=config)) == _json(compare_results(baseline, candidate, config=config))


def test_a_bad_dict_record_is_named_by_number_and_id() -> None:
    rows = [{"task_id": "a", "passed": True}, {"task_id": "b", "passed": "often"}]
    with pytest.raises(InputError, match=r"record 2 \(task_id 'b'\)"):
        records_to_columns(rows, "baseline", source="baseline")


@pytest.mark.parametrize(("seed", "on_error"), [(5, "fail"), (6, "exclude")])
def test_stored_report_equals_the_streamed_row_path(tmp_path: Any, seed: int, on_error: str) -> None:
    # 700 tasks: about 2,200 trials, past a 2,000-row page of the rows the per-trial path streams
    baseline, candidate = campaign(seed, 700)
    config = CampaignConfig(on_error=on_error, n_resamples=200, timeout_s=300.0)
    store = RunStore(tmp_path / "runs.db")
    ids = sorted({r.task_id for r in baseline + candidate})
    cid = store.create_campaign(
        config=config, suite_fingerprint="f", task_digests={i: "d" for i in ids},
        baseline_agent="b", candidate_agent="c",
    )  # fmt: skip
    store.append_many(cid, baseline + candidate)
    prov = Provenance(baseline_agent="b", candidate_agent="c", finished_at="then")
    expected = [*ids[:-4], "never-ran"]
    fast = report_from_store(store, cid, config=config, provenance=prov, expected_ids=expected)
    old = report_by_objects(
        store.trial_rows(cid), config=config, provenance=prov, expected_ids=expected,
        trial_lookup=StoredTrials(store, cid),
    )  # fmt: skip
    assert fast.model_dump_json() == old.model_dump_json()


def _stored(tmp_path: Any, trials: list[TaskResult]) -> tuple[RunStore, str]:
    store = RunStore(tmp_path / "runs.db")
    cid = store.create_campaign(
        config=CampaignConfig(), suite_fingerprint="f", task_digests={}, baseline_agent="b",
        candidate_agent="c",
    )  # fmt: skip
    store.append_many(cid, trials)
    return store, cid


@pytest.mark.parametrize("seed", [3, 4])
def test_stored_trials_many_equals_one_lookup_at_a_time(tmp_path: Any, seed: int) -> None:
    # the drill-downs read their trials in one query; each must be the one a single lookup
    # gives (the lowest run of that task in that arm), and absent keys are left out
    baseline, candidate = campaign(seed, 400)
    store, cid = _stored(tmp_path, baseline + candidate)
    lookup = StoredTrials(store, cid)
    ids = sorted({r.task_id for r in baseline + candidate})
    keys = [(tid, arm) for tid in [*ids[::3], "never-ran"] for arm in ("baseline", "candidate")]
    one_by_one = {key: lookup[key] for key in keys if key in lookup}
    assert lookup.many(keys) == one_by_one
    assert len(one_by_one) < len(keys)  # some tasks ran in one arm only
    assert lookup.many([]) == {}


def test_store_columns_hold_every_trial_of_an_arm(tmp_path: Any) -> None:
    baseline, candidate = campaign(7, 300)
    store, cid = _stored(tmp_path, baseline + candidate)
    cols = store.trial_columns(cid, "baseline")
    order = sorted(baseline, key=lambda r: (r.task_id, r.run))
    assert cols.task_id.tolist() == [r.task_id for r in order]
    lat = np.array([np.nan if r.latency_s is None else r.latency_s for r in order])
    np.testing.assert_array_equal(cols.latency_s, lat)
    assert cols.passed.tolist() == [r.passed for r in order]


def test_a_duplicate_names_the_file_and_both_lines() -> None:
    ids = np.array(["a", "b", "a"], dtype=object)
    cols = TrialColumns.verdicts("baseline", ids, np.array([True, False, True]), source="b.jsonl")
    cols = TrialColumns(**{**cols.__dict__, "line": np.array([1, 2, 3])})
    other = TrialColumns.verdicts("candidate", ids[:2], np.array([True, True]))
    with pytest.raises(InputError, match=r"task 'a', arm baseline, run 0 \(b.jsonl, line 3; first at line 1\)"):
        pair_columns(cols, other)


@pytest.mark.parametrize(
    "keys",
    [
        (("a", 0), ("b", 0), ("b", 1), ("a", 0)),
        (("a", 0), ("b", 0), ("b", 0), ("b", 1), ("c", 1), ("c", 1)),  # in order: first repeat named
    ],
)
def test_duplicate_message_matches_the_object_path(keys: tuple[tuple[str, int], ...]) -> None:
    rows = [TaskResult(task_id=t, arm="baseline", run=r) for t, r in keys]
    with pytest.raises(InputError) as old:
        report_by_objects(rows)
    with pytest.raises(InputError) as fast:
        pair_columns(results_to_columns(rows, "baseline"), results_to_columns([], "candidate"))
    assert str(fast.value) == str(old.value)


def test_a_run_only_one_side_has_is_listed_in_excluded() -> None:
    """Issue 11 item 16: runs 0 and 1 in the baseline, only run 0 in the candidate."""
    baseline = [TaskResult(task_id="t", arm="baseline", run=r, passed=True) for r in (0, 1)]
    candidate = [TaskResult(task_id="t", arm="candidate", run=0, passed=False)]
    for report in (
        compare_results(baseline, candidate),
        report_by_objects([*baseline, *candidate]),
    ):
        unmatched = [e for e in report.excluded if e.run == 1]
        assert [(e.task_id, e.run) for e in unmatched] == [("t", 1)]
        assert "baseline run 1 has no candidate run 1" in unmatched[0].reason


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_columns_of_sparse_models_equal_a_full_attribute_read(seed: int) -> None:
    """Only fields some row set are read from models: the defaults elsewhere must be exact."""
    from types import SimpleNamespace

    rng = random.Random(seed)
    full = [_trial(rng, f"t{i}", "baseline", 0) for i in range(300)]
    names = ("run", "status", "passed", "latency_s", "cost", "tokens", "attempts", "error_type",
             "error_message", "error_stage", "quality", "quality_errors", "metrics", "category",
             "critical")  # fmt: skip
    # each model sets only a few fields (the rest stay defaults), some fields in no row at all
    chosen = rng.sample(names, 6)
    rows = []
    for r in full:
        given = {k: getattr(r, k) for k in chosen if rng.random() < 0.3}
        if given.get("status", "completed") == "completed":
            given.pop("error_type", None)
        rows.append(TaskResult(task_id=r.task_id, **given))
    plain = [SimpleNamespace(**r.model_dump()) for r in rows]
    _columns_equal(results_to_columns(rows, "baseline"), results_to_columns(plain, "baseline"))
    _columns_equal(results_to_columns(rows, "baseline", given=fields_given(rows)), results_to_columns(plain, "baseline"))


@pytest.mark.parametrize(
    "rows",
    [
        [{"task_id": "a"}, {"task_id": "b", "run": 2, "status": "error"}, {"task_id": "c", "passed": True}],
        [{"task_id": "a"}, {"task_id": "b"}],  # every optional column absent from every record
        [{"task_id": "a", "category": "x", "critical": True, "run": 1}, {"task_id": "b", "passed": True}],
    ],
)
def test_sparse_dict_records_read_their_defaults(rows: list[dict[str, Any]]) -> None:
    models = [TaskResult(**r) for r in rows]
    _columns_equal(records_to_columns(rows, "baseline"), results_to_columns(models, "baseline"))


def test_a_record_with_a_negative_run_or_unknown_field_is_validated() -> None:
    with pytest.raises(InputError, match=r"record 1 \(task_id 'a'\)"):
        records_to_columns([{"task_id": "a", "run": -1}], "baseline", source="baseline")
    with pytest.raises(InputError, match=r"record 2 \(task_id 'b'\)"):
        records_to_columns([{"task_id": "a"}, {"task_id": "b", "status": "odd"}], "baseline")


@pytest.mark.parametrize("seed", [10, 11])
def test_store_columns_equal_the_stored_results_whatever_the_outputs_hold(tmp_path: Any, seed: int) -> None:
    """The store skips parsing a row's JSON when a substring test proves its dictionaries empty;
    outputs that mimic those fields (objects, lists, quoted text) must not fool it."""
    rng = random.Random(seed)
    decoys: list[Any] = [
        None, 3, "plain", 'text with "quality":{} inside', {"quality": {}, "metrics": {}},
        {"quality_errors": {}, "error_stage": None}, [{"quality": {}}], {"nested": {"metrics": {}}},
    ]
    rows = []
    for i, r in enumerate(campaign(seed, 200)[0]):
        extra: dict[str, Any] = {"output": rng.choice(decoys)}
        if r.status == "completed" and rng.random() < 0.1:
            extra["error_stage"] = "verifier"  # a completed trial with a stage (imported rows)
        rows.append(r.model_copy(update={**extra, "task_id": f"{r.task_id}-{i}"}))
    store = RunStore(tmp_path / "runs.db")
    cid = store.create_campaign(
        config=CampaignConfig(), suite_fingerprint="f", task_digests={}, baseline_agent="b",
        candidate_agent="c",
    )  # fmt: skip
    store.append_many(cid, rows)
    order = sorted(rows, key=lambda r: (r.task_id, r.run))
    assert any(r.quality for r in order) and any(isinstance(r.output, dict) for r in order)
    _columns_equal(store.trial_columns(cid, "baseline"), results_to_columns(order, "baseline"))


@pytest.mark.parametrize(("seed", "on_error", "same_runs"), [(12, "fail", False), (13, "exclude", False), (14, "fail", True)])
def test_sides_in_task_and_run_order_equal_the_object_path(seed: int, on_error: str, same_runs: bool) -> None:
    """Rows listed in (task, run) order skip the sorts; ``same_runs``: both arms hold the same
    (task, run) pairs (nothing unmatched), run 0 only, so the ids of the arms are equal too."""
    baseline, candidate = campaign(seed, 400)
    if same_runs:
        both = {r.task_id for r in baseline if r.run == 0} & {r.task_id for r in candidate if r.run == 0}
        baseline, candidate = ([r for r in side if r.run == 0 and r.task_id in both] for side in (baseline, candidate))
    baseline, candidate = (sorted(side, key=lambda r: (r.task_id, r.run)) for side in (baseline, candidate))
    config = CampaignConfig(on_error=on_error, n_resamples=100, seed=seed, timeout_s=300.0)
    old = report_by_objects(
        [*baseline, *candidate], config=config,
        provenance=Provenance(baseline_agent="baseline", candidate_agent="candidate", source="compare"),
    )  # fmt: skip
    fast = compare_results(baseline, candidate, config=config)
    assert _json(fast) == _json(old)
    assert fast.details and fast.quality
    assert same_runs or any(e.reason.startswith("unmatched run") for e in fast.excluded)


@pytest.mark.parametrize(("seed", "listing"), [
    (5, "suite"), (6, "expected"), (6, "suite-one-unknown"), (5, "expected-one-unknown"),
])  # fmt: skip
def test_a_listing_equal_to_the_arms_ids_gives_the_object_paths_report(seed: int, listing: str) -> None:
    """A suite (or expected ids) holding exactly the arms' ids takes the inventory shortcut; one
    id swapped for an unknown one (same count) must not: both equal the per-trial path."""
    from ablation.schema import AblationTask

    baseline, candidate = campaign(seed, 300)
    ids = sorted({r.task_id for r in [*baseline, *candidate]})
    if listing.endswith("one-unknown"):
        ids = [*ids[1:], "never-ran"]
    rng = random.Random(seed)
    suite = [
        AblationTask(task_id=t, input_data=0, category=rng.choice(["", "a", "b"]), critical=rng.random() < 0.1)
        for t in reversed(ids)  # suite order is not id order
    ]
    config = CampaignConfig(n_resamples=200, seed=seed, timeout_s=300.0)
    given: dict[str, Any] = {"tasks": suite} if listing.startswith("suite") else {"expected_ids": ids}
    sides = {"baseline": results_to_columns(baseline, "baseline"), "candidate": results_to_columns(candidate, "candidate")}
    fast = pair_columns(sides["baseline"], sides["candidate"], **given)
    old = report_by_objects([*baseline, *candidate], config=config, **given)
    from ablation.analysis.build import build_report

    fast_report = build_report(fast, config=config, provenance=old.provenance)
    assert fast.n_tasks == len(ids)
    assert _json(fast_report)["excluded"] == _json(old)["excluded"]
    assert fast_report.categories == old.categories and fast_report.n_critical == old.n_critical
    assert fast_report.table == old.table


@pytest.mark.parametrize(("seed", "shape", "on_error"), [
    (15, "bench", "fail"), (16, "bench-errors", "exclude"), (17, "bench-errors", "fail"),
    (18, "records", "fail"), (19, "full", "exclude"),
])  # fmt: skip
def test_one_run_per_task_in_the_same_order_equals_the_object_path(seed: int, shape: str, on_error: str) -> None:
    """The shape of the scale benchmark: both arms list the same sorted ids, one run each, so
    codes are positions, counts are masks and numbers no row gives are constant columns.
    ``bench``: id, verdict and latency only (every trial counted); ``bench-errors``: some
    trials failed; ``records``: the same as dict records; ``full``: every field varied."""
    rng = random.Random(seed)
    ids = sorted(f"task-{rng.randrange(10**6):07d}" for _ in range(300))
    ids = sorted(set(ids))
    sides: list[list[TaskResult]] = []
    for arm in ("baseline", "candidate"):
        rows = []
        for tid in ids:
            if shape == "full":
                rows.append(_trial(rng, tid, arm, 0))
                continue
            given: dict[str, Any] = {"passed": rng.random() < 0.6, "latency_s": rng.random()}
            if shape == "bench-errors" and rng.random() < 0.1:
                given.update(status=rng.choice(["error", "timeout"]), passed=False, latency_s=None)
            rows.append(TaskResult(task_id=tid, arm=arm, **given))
        sides.append(rows)
    config = CampaignConfig(on_error=on_error, n_resamples=100, seed=seed, timeout_s=300.0)
    old = report_by_objects(
        [*sides[0], *sides[1]], config=config,
        provenance=Provenance(baseline_agent="baseline", candidate_agent="candidate", source="compare"),
    )  # fmt: skip
    given_sides: list[Any] = sides
    if shape == "records":
        given_sides = [[{"task_id": r.task_id, "passed": r.passed, "latency_s": r.latency_s} for r in side] for side in sides]
    fast = compare_results(*given_sides, config=config)
    assert _json(fast) == _json(old)
    assert fast.latency is not None and (fast.cost is None) == (shape != "full")
    assert (on_error == "exclude" and shape != "bench") == any("error" in e.reason for e in fast.excluded)


@pytest.mark.parametrize("on_error", ["fail", "exclude"])
def test_one_row_per_task_counts_are_signed_views_of_the_masks(on_error: str) -> None:
    """With one row per task the per-task counts are 0/1: an ``int8`` view of the pairing's
    masks, not an ``int64`` copy (8 MB per arm at a million tasks). They are signed, so the
    difference of two arms' counts is -1 for a regression (an unsigned view wraps to 255)."""
    rng = random.Random(21)
    ids = [f"t{i:04d}" for i in range(400)]
    sides = [
        [TaskResult(task_id=t, arm=arm, passed=rng.random() < 0.6,
                    status="error" if rng.random() < 0.05 else "completed") for t in ids]
        for arm in ("baseline", "candidate")
    ]  # fmt: skip
    cols = [results_to_columns(side, arm) for side, arm in zip(sides, ("baseline", "candidate"), strict=True)]
    data = pair_columns(*cols, on_error=on_error)
    base, cand = data.baseline, data.candidate
    for arm in (base, cand):
        assert arm.passes.dtype == np.int8 and arm.passes.base is not None  # a view, no copy
    expected = [
        (c.passed and c.status == "completed") - (b.passed and b.status == "completed")
        for b, c in zip(*sides, strict=True)
        if on_error == "fail" or (b.status == "completed" and c.status == "completed")
    ]
    assert (cand.passes - base.passes).tolist() == expected
    assert min(expected) == -1 and max(expected) == 1


def test_one_value_per_task_means_are_the_trials_own_column() -> None:
    """One completed row per task with every latency given: the per-task means are a read-only
    view of the trials' column (no 8 MB copy per arm at a million tasks), which the report
    leaves unchanged. A ``-0.0`` among them is summed as the object path sums it (to ``0.0``),
    so that column is copied."""
    rng = random.Random(22)
    ids = [f"t{i:04d}" for i in range(300)]
    sides = [
        [TaskResult(task_id=t, arm=arm, passed=rng.random() < 0.5, latency_s=rng.random()) for t in ids]
        for arm in ("baseline", "candidate")
    ]
    sides[1][7] = sides[1][7].model_copy(update={"latency_s": -0.0})
    cols = [results_to_columns(side, arm) for side, arm in zip(sides, ("baseline", "candidate"), strict=True)]
    kept = [c.latency_s.copy() for c in cols]
    data = pair_columns(*cols)
    base, cand = data.baseline.latency, data.candidate.latency
    assert np.shares_memory(base, cols[0].latency_s) and not base.flags.writeable
    assert not np.shares_memory(cand, cols[1].latency_s) and str(cand[7]) == "0.0"
    report = build_report(data, config=CampaignConfig(n_resamples=100))
    assert report.latency is not None
    for col, before in zip(cols, kept, strict=True):
        assert np.array_equal(col.latency_s, before)


def test_one_run_per_task_reports_without_float_copies_of_the_outcomes() -> None:
    """With one run per task the 0/1 counts are the pass fractions: the report reads them and
    never makes the ``float64`` fractions (8 MB per arm at a million tasks)."""
    rng = random.Random(23)
    sides = [
        [TaskResult(task_id=f"t{i:04d}", arm=arm, passed=rng.random() < 0.5) for i in range(300)]
        for arm in ("baseline", "candidate")
    ]
    cols = [results_to_columns(side, arm) for side, arm in zip(sides, ("baseline", "candidate"), strict=True)]
    data = pair_columns(*cols)
    report = build_report(data, config=CampaignConfig(n_resamples=100))
    assert report.categories[0].uplift == report.uplift.estimate
    assert "fraction" not in vars(data.baseline) and "fraction" not in vars(data.candidate)


def test_tasks_without_categories_share_one_label_and_no_list() -> None:
    """No task names a category: every paired task is in ``"default"``, held as a read-only
    constant column (a list held a million references: 8 MB at a million tasks)."""
    sides = [
        [TaskResult(task_id=f"t{i:03d}", arm=arm, passed=(i + k) % 3 == 0) for i in range(200)]
        for k, arm in enumerate(("baseline", "candidate"))
    ]
    cols = [results_to_columns(side, arm) for side, arm in zip(sides, ("baseline", "candidate"), strict=True)]
    data = pair_columns(*cols)
    assert isinstance(data.categories, np.ndarray) and data.categories.strides == (0,)
    assert list(data.categories[:2]) == ["default", "default"] and len(data.categories) == 200
    report = build_report(data, config=CampaignConfig(n_resamples=100))
    assert [c.category for c in report.categories] == ["default"] and report.categories[0].n == 200
    assert {d.category for d in report.details} == {"default"}


_SHARED_IDS = tuple(f"t{i:05d}" for i in range(8_200))  # two full chunks of 4,096 and a short one


@functools.cache
def _verdicts(passed: bool) -> tuple[TaskResult, ...]:
    """One trial per id of :data:`_SHARED_IDS` (built once: 8,200 validated models per arm)."""
    return tuple(TaskResult(task_id=t, passed=passed) for t in _SHARED_IDS)


@pytest.mark.parametrize("records", [False, True])
@pytest.mark.parametrize("change", [None, 0, 4096, 8199])
def test_an_arm_with_the_same_ids_in_order_shares_the_other_arms_column(records: bool, change: int | None) -> None:
    """The second arm's task ids are the first's array when they are the same ids in the same
    order (no new object array: 8 MB at a million rows), and its own otherwise; ``change``
    renames one id, at a chunk's first or last row among others."""
    from ablation.analysis.in_memory import side_columns

    ids = list(_SHARED_IDS)
    other = list(ids)
    if change is not None:
        other[change] = "renamed"
    passing = list(_verdicts(True))
    first = side_columns(passing, "baseline", {"task_id", "passed"})[1]
    rows: list[Any] = [{"task_id": t, "passed": False} for t in other]
    if not records:
        rows = list(_verdicts(False))
        if change is not None:
            rows[change] = TaskResult(task_id="renamed", passed=False)
    second = side_columns(rows, "candidate", None if records else {"task_id", "passed"}, first.task_id)[1]
    assert (second.task_id is first.task_id) == (change is None)
    assert second.task_id.tolist() == other and first.task_id.tolist() == ids
    report = compare_results(passing, rows, config=CampaignConfig(n_resamples=100))
    assert report.n_paired == (8_200 if change is None else 8_199)


@pytest.mark.parametrize("on_error", ["fail", "exclude"])
@pytest.mark.parametrize("sides", ["baseline only", "neither", "candidate errored only"])
def test_an_empty_arm_gives_the_object_paths_report(on_error: str, sides: str) -> None:
    from ablation.schema import AblationTask

    tasks = [AblationTask(task_id=t) for t in ("a", "b")]
    trials = {
        "baseline only": [TaskResult(task_id="a", arm="baseline", passed=True)],
        "neither": [],
        "candidate errored only": [TaskResult(task_id="a", arm="candidate", status="error")],
    }[sides]
    config = CampaignConfig(on_error=on_error, timeout_s=300.0)
    fast = report_from_results(trials, config=config, tasks=tasks)
    assert _json(fast) == _json(report_by_objects(trials, config=config, tasks=tasks))
    assert {e.task_id for e in fast.excluded} == {"a", "b"}
