"""A campaign over a generator, a callable or a streamed JSONL suite keeps neither the tasks nor
the trials in memory, and stores and reports exactly what the same campaign over a list does."""

from __future__ import annotations

import gc
import json
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import stable
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation import schema
from ablation.config import CampaignConfig
from ablation.errors import ConfigError, InputError
from ablation.render import render
from ablation.run.campaign import CampaignRun, run_ablation_campaign
from ablation.run.progress import NullProgress
from ablation.run.sinks import StoreSink
from ablation.run.suite_scan import encode_entry, scan_suite
from ablation.schema import (
    AblationTask,
    TaskResult,
    suite_fingerprint,
    task_digests,
    task_entry,
    to_jsonable,
)
from ablation.sources.suites import JsonlSuite, load_suite, open_suite


def _make(i: int) -> AblationTask:
    return AblationTask(
        task_id=f"t{i}",  # not in sorted order: t0, t1, t10, ...
        input_data={"x": i},
        expected_output=i % 7,
        category=("math", "code", "text")[i % 3],
        family=f"f{i // 4}",
        critical=i % 11 == 0,
    )


def _agent(salt: int) -> Callable[[Any], int]:
    def agent(x: dict[str, int]) -> int:
        i = x["x"]
        return i % 7 if (i * 31 + salt) % 5 else -1  # a different fifth of the tasks fails per arm

    return agent


def _report(tasks: Any, store: Path | None, **config: Any) -> dict[str, Any]:
    report = run_ablation_campaign(
        _agent(1), _agent(2), tasks, config=CampaignConfig(n_resamples=200, seed=3, **config),
        store=store,
    )  # fmt: skip
    data = stable(json.loads(render(report, "json")))
    assert isinstance(data, dict)
    return data


def _gen(n: int) -> Iterator[AblationTask]:
    return (_make(i) for i in range(n))


@pytest.mark.parametrize("runs", [1, 2])
def test_generator_callable_and_list_suites_give_the_same_report(tmp_path: Path, runs: int) -> None:
    n = 60
    expected = _report([_make(i) for i in range(n)], tmp_path / "list.db", runs=runs)
    assert expected["details"], "the suite must produce drill-downs showing expected outputs"
    assert any(d["expected_output"] is not None for d in expected["details"])
    assert _report(_gen(n), tmp_path / "gen.db", runs=runs) == expected
    assert _report(lambda: _gen(n), tmp_path / "call.db", runs=runs) == expected
    assert _report(_gen(n), None, runs=runs) == expected  # no store: same report in memory


def test_a_streamed_jsonl_suite_reports_like_the_loaded_one(tmp_path: Path) -> None:
    path = tmp_path / "suite.jsonl"
    rows = [
        {"task_id": t.task_id, "input_data": t.input_data, "expected_output": t.expected_output,
         "category": t.category, "family": t.family, "critical": t.critical}
        for t in _gen(40)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert isinstance(open_suite(str(path)), JsonlSuite)
    expected = _report(load_suite(str(path)), tmp_path / "a.db")
    assert _report(open_suite(str(path)), tmp_path / "b.db") == expected


def _live() -> dict[str, int]:
    gc.collect()
    objects = gc.get_objects()
    return {
        "tasks": sum(1 for o in objects if type(o) is AblationTask),
        "results": sum(1 for o in objects if type(o) is TaskResult),
    }


class _Census(NullProgress):
    """Counts tasks and trial results made live by the campaign, every ``every`` trials.

    Objects alive before it starts (other tests' suites) are not counted.
    """

    def __init__(self, every: int) -> None:
        self.every, self.seen, self.peak = every, 0, {"tasks": 0, "results": 0}
        self.before = _live()

    def advance(self, result: TaskResult) -> None:
        self.seen += 1
        if self.seen % self.every == 0:
            live = _live()
            self.peak = {k: max(v, live[k] - self.before[k]) for k, v in self.peak.items()}


@pytest.mark.parametrize("form", ["generator", "callable"])
def test_a_stored_campaign_holds_neither_the_suite_nor_the_trials(tmp_path: Path, form: str) -> None:
    n = 3000
    # What the worker holds from earlier tests is frozen (kept out of the collector's walks and of
    # gc.get_objects), so the census and the collections during the campaign look only at what
    # it makes: on a worker's grown heap they cost seconds. The campaign itself (the library,
    # not the command line) never looks at the freeze.
    gc.freeze()
    try:
        census = _Census(every=1000)
        source: Any = _gen(n) if form == "generator" else (lambda: _gen(n))
        info = CampaignRun()
        report = run_ablation_campaign(
            _agent(1), _agent(2), source, config=CampaignConfig(n_resamples=100, concurrency=4),
            store=tmp_path / "runs.db", progress=census, run_info=info,
        )  # fmt: skip
    finally:
        gc.unfreeze()
    assert report.n_paired == n and info.executed == {"baseline": n, "candidate": n}
    assert census.seen == 2 * n
    # Bounded by the concurrency and the store writer (a batch of 1000 being committed, at most
    # 2000 waiting), not by the 3000 tasks / 6000 trials.
    assert census.peak["tasks"] < 100, census.peak
    assert census.peak["results"] < 3100, census.peak


def test_a_store_sink_that_falls_behind_holds_back_the_campaign() -> None:
    class SlowStore:
        stored = 0

        def append_many(self, campaign_id: str, batch: list[TaskResult]) -> None:
            time.sleep(0.01)
            self.stored += len(batch)

    store = SlowStore()
    sink = StoreSink(store, "c", max_batch=10, max_pending=20, linger_s=0)  # type: ignore[arg-type]
    result = TaskResult(task_id="t", arm="baseline", passed=True)
    behind = []
    for handed in range(1, 301):
        sink(result)
        behind.append(handed - store.stored)
    sink.close()
    assert store.stored == 300
    assert max(behind) <= 20 + 10 + 1  # waiting + the batch being written + the one handed over


def test_a_generator_suite_resumes_against_its_stored_fingerprint(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    first = _report(_gen(30), store)
    info = CampaignRun()
    again = run_ablation_campaign(
        _agent(1), _agent(2), _gen(30), config=CampaignConfig(n_resamples=200, seed=3),
        store=store, resume=True, run_info=info,
    )  # fmt: skip
    assert info.executed == {"baseline": 0, "candidate": 0}
    assert info.reused == {"baseline": 30, "candidate": 30}
    assert stable(json.loads(render(again, "json"))) == first
    with pytest.raises(Exception, match="t29"):  # a changed task is named on resume
        changed = (_make(i) if i < 29 else _make(i).model_copy(update={"expected_output": 99})
                   for i in range(30))  # fmt: skip
        run_ablation_campaign(_agent(1), _agent(2), changed, store=store, resume=True)


def test_a_callable_that_yields_other_tasks_on_the_second_pass_is_refused() -> None:
    calls: list[int] = []

    def suite() -> Iterator[AblationTask]:
        calls.append(1)
        return (_make(i + len(calls) - 1) for i in range(5))

    with pytest.raises(ConfigError, match="the suite changed between two passes at position 0"):
        run_ablation_campaign(_agent(1), _agent(2), suite)


def test_a_generator_of_unpicklable_tasks_runs_from_memory() -> None:
    tasks = (
        AblationTask(task_id=f"u{i}", input_data=i, expected_output=i, verifier=lambda o, t: o == t.input_data % 2)
        for i in range(6)
    )
    report = run_ablation_campaign(lambda x: x % 2, lambda x: x % 2, tasks)
    assert report.n_paired == 6 and report.baseline.passes == report.candidate.passes


def test_errors_of_a_generator_suite_match_validate_suite() -> None:
    with pytest.raises(ConfigError, match="the suite is empty"):
        run_ablation_campaign(_agent(1), _agent(2), iter(()))
    with pytest.raises(ConfigError, match=r"not AblationTask: #1 \(int\), #3 \(str\)"):
        run_ablation_campaign(_agent(1), _agent(2), iter([_make(0), 5, _make(1), "x"]))


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=6), _values, _values), min_size=1, max_size=12,
                unique_by=lambda t: t[0]),
       st.lists(st.text(max_size=4), max_size=3))  # fmt: skip
def test_the_scan_fingerprints_like_suite_fingerprint(rows: list[Any], scorers: list[str]) -> None:
    tasks = [AblationTask(task_id=tid, input_data=x, expected_output=y) for tid, x, y in rows]
    random.Random(len(rows)).shuffle(tasks)
    scan = scan_suite(iter(tasks), scorers)
    try:
        assert scan.fingerprint == suite_fingerprint(tasks, scorers)
        assert scan.digests == task_digests(tasks)
        assert scan.ids == [t.task_id for t in tasks]
    finally:
        scan.close()


_awkward = st.sampled_from(['"', "\\", "\x00", "\n", "\u00e9", "\u2028", "\ud800", "\U0001f600", "/"])


@given(st.lists(st.text(st.characters(blacklist_categories=())) | _awkward, min_size=1, max_size=5))
def test_encode_entry_writes_what_json_dumps_writes(entry: list[str]) -> None:
    assert encode_entry(tuple(entry)) == json.dumps(tuple(entry))


@given(_values, st.dictionaries(st.text(st.characters(blacklist_categories=())), _values, max_size=4))
def test_task_entry_encodes_as_json_dumps_with_sorted_keys(value: Any, mapping: Any) -> None:
    entry = task_entry(AblationTask(task_id="t", input_data=value, expected_output=mapping))
    expected = tuple(json.dumps(to_jsonable(v), sort_keys=True) for v in (value, mapping))
    assert entry[1:3] == expected
    c_encoder, schema._SORTED_C = schema._SORTED_C, None  # a Python without the C accelerator
    try:
        assert task_entry(AblationTask(task_id="t", input_data=value, expected_output=mapping)) == entry
    finally:
        schema._SORTED_C = c_encoder


def test_a_jsonl_suite_is_read_lazily(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps({"task_id": f"j{i}", "input_data": i}) + "\n" for i in range(3000)))
    gc.freeze()  # the census looks only at what the reading makes (as in the test above)
    try:
        before, live = _live()["tasks"], []
        for i, task in enumerate(JsonlSuite(path)):
            assert task.task_id == f"j{i}"
            if i == 2500:
                live.append(_live()["tasks"] - before)
    finally:
        gc.unfreeze()
    assert live and live[0] < 10  # one task at a time, not 3000


def test_a_bad_last_jsonl_line_stops_the_campaign_before_any_trial(tmp_path: Path) -> None:
    path = tmp_path / "suite.jsonl"
    good = "".join(json.dumps({"task_id": f"j{i}", "input_data": i}) + "\n" for i in range(50))
    path.write_text(good + '{"task_id": "bad", "input_data": 1, "expected": 2}\n')
    calls: list[int] = []

    def agent(x: int) -> int:
        calls.append(x)
        return x

    with pytest.raises(InputError, match=r"suite\.jsonl:51: unknown field 'expected' .*\(task id 'bad'\)"):
        run_ablation_campaign(agent, agent, open_suite(str(path)))
    assert calls == []
