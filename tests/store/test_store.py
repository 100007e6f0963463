"""Tests of the SQLite run store (``ablation.store``)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ablation.config import CampaignConfig
from ablation.errors import InputError, ResumeMismatchError, StoreError
from ablation.schema import AblationTask, TaskResult, TrialUsage, suite_fingerprint, task_digests
from ablation.spans import TrialSpans
from ablation.store.run_store import SCHEMA_VERSION, RunStore, TrialRow


def _tasks(**changes: object) -> list[AblationTask]:
    tasks = {f"arith-{i:02d}": AblationTask(task_id=f"arith-{i:02d}", input_data=f"{i}+{i}",
                                            expected_output=2 * i) for i in range(1, 11)}  # fmt: skip
    for task_id, value in changes.items():
        if value is None:
            del tasks[task_id]
        else:
            tasks[task_id] = AblationTask(task_id=task_id, input_data="x", expected_output=value)
    return list(tasks.values())


def _new(store: RunStore, tasks: list[AblationTask] | None = None, **kw: object) -> str:
    tasks = _tasks() if tasks is None else tasks
    args: dict[str, object] = {
        "config": CampaignConfig(),
        "suite_fingerprint": suite_fingerprint(tasks),
        "task_digests": task_digests(tasks),
        "baseline_agent": "agents/arith.py:v1",
        "candidate_agent": "agents/arith.py:v2",
    }
    args.update(kw)
    return store.create_campaign(**args)  # type: ignore[arg-type]


def _trial(task_id: str = "t1", arm: str = "baseline", run: int = 0, **kw: object) -> TaskResult:
    return TaskResult(task_id=task_id, arm=arm, run=run, **kw)  # type: ignore[arg-type]


def _full_trial() -> TaskResult:
    return TaskResult(
        task_id="arith-07", arm="candidate", run=2, status="error", passed=False,
        output={"answer": [1, 2.5, {"nested": None, "s": "ünï \"quoted\"\n"}], "ok": True},
        latency_s=0.123456789, wall_s=1.5, attempts=3,
        attempt_errors=("ConnectionError: reset", "TimeoutError: slow"), error_stage="verifier",
        error_type="ValueError", error_message="bad verdict",
        error_traceback='Traceback (most recent call last):\n  File "x.py", line 1\nValueError\n',
        verifier_note="timeout: the code ran past 2 s",
        quality={"rubric": 1 / 3, "style": 0.1}, quality_errors={"judge": "RuntimeError: down"},
        cost=0.0042, tokens=1234, metrics={"steps": 7.0}, category="math", critical=True,
        started_at=1_764_000_000.25,
        usage=TrialUsage(input_tokens=900, output_tokens=334, cached_tokens=100, cache_write_tokens=50,
                         model_requests=3, tool_calls={"lookup": 2}, model="gpt-4o-mini"),
        cost_currency="EUR", cost_source="override",
        trace=[{"kind": "response", "parts": [{"kind": "tool-call", "tool": "lookup"}]}],
        input={"question": "double 7"}, expected_output=["14"],
        spans=TrialSpans.of([{"name": "execute_tool lookup", "attributes": {"gen_ai.tool.name": "lookup"}}], 2),
    )  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    with RunStore(tmp_path / "nested" / "runs.db") as s:
        yield s


def test_round_trip_of_every_field(store: RunStore) -> None:
    cid = _new(store)
    full = _full_trial()
    assert set(full.model_fields_set) == set(TaskResult.model_fields)  # every field is set
    store.append(cid, full)
    assert store.results(cid) == [full]
    assert list(store.iter_results(cid)) == [full]
    assert store.results(cid, arm="baseline") == []
    assert store.results(cid, task_ids=["arith-07", "other"]) == [full]
    assert store.results(cid, task_ids="arith-07") == [full]
    assert store.results(cid, arm="baseline", task_ids=["arith-07"]) == []


def test_store_creates_parent_dirs_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "runs.db"
    with RunStore(path) as s:
        assert s.path == path and path.exists()
        assert s._conn is not None
        assert s._conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert s._conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        assert version[0] == str(SCHEMA_VERSION)


def test_duplicate_append_refused_with_key_named(store: RunStore) -> None:
    cid = _new(store)
    store.append(cid, _trial("arith-03", "candidate", 2, passed=True))
    with pytest.raises(StoreError) as err:
        store.append(cid, _trial("arith-03", "candidate", 2, passed=False))
    assert "task_id='arith-03'" in str(err.value)
    assert "arm='candidate'" in str(err.value) and "run=2" in str(err.value)
    assert store.results(cid)[0].passed is True and store.count(cid) == 1
    # append_many is all or nothing.
    batch = [_trial("arith-01"), _trial("arith-02"), _trial("arith-03", "candidate", 2)]
    with pytest.raises(StoreError, match="arith-03"):
        store.append_many(cid, batch)
    assert store.count(cid) == 1
    assert store.append_many(cid, batch[:2]) == 2
    assert store.count(cid) == 3


def test_non_finite_quality_never_reaches_the_store(store: RunStore) -> None:
    cid = _new(store)
    # The model refuses NaN scores (a scorer's NaN is recorded as that scorer's error instead),
    # so no stored trial can hold a value that JSON would turn into null.
    with pytest.raises(ValueError, match="judge"):
        store.append(cid, _trial(quality={"judge": float("nan"), "ok": 1.0}))
    assert store.count(cid) == 0 and store.results(cid) == []


def test_unknown_campaign_is_named_with_known_ids(store: RunStore) -> None:
    with pytest.raises(StoreError, match=r"no-such.*empty"):
        store.get_campaign("no-such")
    cid = _new(store, campaign_id="camp-1")
    with pytest.raises(StoreError) as err:
        store.get_campaign("camp-2")
    assert "'camp-2'" in str(err.value) and "'camp-1'" in str(err.value)
    for call in (
        lambda: store.append("camp-2", _trial()),
        lambda: store.append_many("camp-2", [_trial()]),
        lambda: store.count("camp-2"),
        lambda: store.completed_keys("camp-2"),
        lambda: list(store.trial_rows("camp-2")),
        lambda: store.set_status("camp-2", "complete"),
    ):
        with pytest.raises(StoreError, match="camp-2"):
            call()
    with pytest.raises(StoreError, match="already exists"):
        _new(store, campaign_id=cid)


def test_commit_per_trial_survives_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as s:
        cid = _new(s)
    snippet = textwrap.dedent(
        f"""
        import os, signal
        from ablation.schema import TaskResult
        from ablation.store.run_store import RunStore
        store = RunStore({str(path)!r})
        for i in range(10):
            store.append({cid!r}, TaskResult(task_id=f"t{{i}}", arm="baseline", passed=True))
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, timeout=60, env=env, cwd=root
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    with RunStore(path) as s:
        assert s.count(cid) == 10
        assert s.completed_keys(cid) == {(f"t{i}", "baseline", 0) for i in range(10)}


def test_newer_schema_version_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    RunStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE meta SET value = '{SCHEMA_VERSION + 1}' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(StoreError) as err:
        RunStore(path)
    assert f"schema version {SCHEMA_VERSION + 1}" in str(err.value) and f"schema version {SCHEMA_VERSION}" in str(
        err.value
    )


def test_not_a_database_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    path.write_text("this is not sqlite " * 100)
    with pytest.raises(StoreError, match=r"runs\.db"):
        RunStore(path)


def _resume_args(tasks: list[AblationTask], **kw: object) -> dict[str, object]:
    args: dict[str, object] = {
        "suite_fingerprint": suite_fingerprint(tasks),
        "task_digests": task_digests(tasks),
        "baseline_agent": "agents/arith.py:v1",
        "candidate_agent": "agents/arith.py:v2",
        "config": CampaignConfig(),
    }
    args.update(kw)
    return args


def test_check_resume_accepts_same_suite_and_cosmetic_changes(store: RunStore) -> None:
    cid = _new(store)
    store.check_resume(cid, **_resume_args(_tasks()))  # type: ignore[arg-type]
    cosmetic = CampaignConfig(concurrency=64, labels={"model": "x"}, alpha=0.01)
    store.check_resume(cid, **_resume_args(_tasks(), config=cosmetic))  # type: ignore[arg-type]


def test_check_resume_names_changed_added_removed_tasks(store: RunStore) -> None:
    cid = _new(store)
    with pytest.raises(ResumeMismatchError) as err:
        store.check_resume(cid, **_resume_args(_tasks(**{"arith-07": 99})))  # type: ignore[arg-type]
    msg = str(err.value)
    assert "task 'arith-07' changed (input, expected output or verifier)" in msg
    assert "added" not in msg and "removed" not in msg
    changes = {"arith-03": None, "arith-11": 1, "arith-12": 2}
    with pytest.raises(ResumeMismatchError) as err:
        store.check_resume(cid, **_resume_args(_tasks(**changes)))  # type: ignore[arg-type]
    msg = str(err.value)
    assert "tasks 'arith-11', 'arith-12' added" in msg and "task 'arith-03' removed" in msg
    assert "changed" not in msg


def test_check_resume_names_agent_and_trial_config_changes(store: RunStore) -> None:
    cid = _new(store)
    args = _resume_args(_tasks(), candidate_agent="agents/arith.py:v3")
    with pytest.raises(ResumeMismatchError) as err:
        store.check_resume(cid, **args)  # type: ignore[arg-type]
    assert "candidate agent changed: 'agents/arith.py:v2' -> 'agents/arith.py:v3'" in str(err.value)
    assert "baseline" not in str(err.value)
    args = _resume_args(_tasks(), config=CampaignConfig(runs=3, seed=7, concurrency=2))
    with pytest.raises(ResumeMismatchError) as err:
        store.check_resume(cid, **args)  # type: ignore[arg-type]
    assert "config.runs changed: 1 -> 3" in str(err.value)
    assert "config.seed changed: 0 -> 7" in str(err.value)
    assert "concurrency" not in str(err.value)
    # settings that change a trial's outcome (once accepted: a resume under a smaller output cap
    # mixed OutputTooLarge errors into a report of passes)
    changed = CampaignConfig(
        max_output_bytes=1000, isolation="process", worker_memory_mb=512, sandbox="process"
    )
    with pytest.raises(ResumeMismatchError) as err:
        store.check_resume(cid, **_resume_args(_tasks(), config=changed))  # type: ignore[arg-type]
    for words in ("config.max_output_bytes changed: 8388608 -> 1000",
                  'config.isolation changed: "thread" -> "process"',
                  "config.worker_memory_mb changed: null -> 512",
                  'config.sandbox changed: "bubblewrap" -> "process"'):  # fmt: skip
        assert words in str(err.value)
    args = _resume_args(_tasks(), suite_fingerprint="f" * 64)
    with pytest.raises(ResumeMismatchError, match="quality scorers"):
        store.check_resume(cid, **args)  # type: ignore[arg-type]


def _filled(store: RunStore) -> tuple[str, list[TaskResult]]:
    cid = _new(store, provenance={"versions": {"ablation": "0.1.0"}, "labels": {"k": "v"}})
    trials = [_full_trial()] + [
        _trial(f"arith-{i:02d}", arm, run, passed=(i + run) % 3 != 0, latency_s=0.01 * i,
               quality={"q": i / 7} if i % 2 else {}, category="even" if i % 2 == 0 else None)
        for i in range(1, 11) for arm in ("baseline", "candidate") for run in range(2)
    ]  # fmt: skip
    store.append_many(cid, trials)
    store.set_status(cid, "complete")
    return cid, sorted(trials, key=lambda r: (r.task_id, r.arm, r.run))


def test_export_import_round_trip(store: RunStore, tmp_path: Path) -> None:
    cid, trials = _filled(store)
    out = tmp_path / "export.jsonl"
    assert store.export_jsonl(cid, out) == len(trials)
    lines = out.read_text().splitlines()
    assert json.loads(lines[0])["campaign"]["campaign_id"] == cid and len(lines) == len(trials) + 1
    with RunStore(tmp_path / "other.db") as other:
        new_id = other.import_jsonl(out)
        assert new_id == cid  # the id is kept when free
        assert other.results(new_id) == trials
        a, b = store.get_campaign(cid), other.get_campaign(new_id)
        assert a == b
    again = store.import_jsonl(out)  # same store: the id is taken, a new one is made
    assert again != cid and store.results(again) == trials
    assert store.get_campaign(again).task_digests == store.get_campaign(cid).task_digests


def test_import_malformed_line_names_file_and_line(store: RunStore, tmp_path: Path) -> None:
    cid, _ = _filled(store)
    out = tmp_path / "broken-export.jsonl"
    store.export_jsonl(cid, out)
    lines = out.read_text().splitlines()
    lines[2] = lines[2][:-5]  # line 3: truncated JSON
    out.write_text("\n".join(lines) + "\n")
    before = len(store.list_campaigns())
    with pytest.raises(InputError) as err:
        store.import_jsonl(out)
    assert "line 3" in str(err.value) and "broken-export.jsonl" in str(err.value)
    assert len(store.list_campaigns()) == before  # nothing half-imported
    lines[2] = json.dumps({"task_id": "arith-01", "arm": "sideways"})
    out.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"line 3.*'arith-01'"):
        store.import_jsonl(out)
    out.write_text("\n".join(lines[:2]) + "\n")  # header declares more trials than present
    with pytest.raises(InputError, match="declares"):
        store.import_jsonl(out)
    lines[2] = lines[3]
    out.write_bytes(("\n".join(lines[:3]) + "\n").encode() + b'{"task_id": "\xff\xfe"}\n')
    with pytest.raises(InputError, match="line 4: not UTF-8"):
        store.import_jsonl(out)
    header = json.loads(lines[0])
    del header["campaign"]["provenance"], header["campaign"]["n_trials"]
    out.write_text(json.dumps(header) + "\n" + lines[1] + "\n\n")  # optional keys, blank line
    assert store.results(store.import_jsonl(out)) == [TaskResult.model_validate_json(lines[1])]
    out.write_text('{"not": "a header"}\n')
    with pytest.raises(InputError, match="line 1"):
        store.import_jsonl(out)


def test_latest_and_find_campaigns_order(store: RunStore) -> None:
    assert store.latest_campaign() is None and store.list_campaigns() == []
    first = _new(store, suite_fingerprint="fp-a")
    second = _new(store, suite_fingerprint="fp-b", baseline_agent="other")
    third = _new(store, suite_fingerprint="fp-a")
    store.set_status(first, "complete")
    latest = store.latest_campaign()
    assert latest is not None and latest.campaign_id == third
    assert [c.campaign_id for c in store.list_campaigns()] == [third, second, first]
    found = store.find_campaigns(suite_fingerprint="fp-a")
    assert [c.campaign_id for c in found] == [third, first]
    assert [c.campaign_id for c in store.find_campaigns(baseline_agent="other")] == [second]
    done = store.find_campaigns(suite_fingerprint="fp-a", status="complete")
    assert [c.campaign_id for c in done] == [first]
    assert done[0].status == "complete" and done[0].updated_at >= done[0].created_at


def test_campaign_record_fields(store: RunStore) -> None:
    config = CampaignConfig(runs=2, seed=5, labels={"model": "m"})
    cid = _new(store, config=config, provenance={"started_at": "t0"})
    assert len(cid.split("-")) == 3 and cid[:8].isdigit()
    store.append(cid, _trial())
    store.update_provenance(cid, finished_at="t1", versions={"python": "3.11"})
    rec = store.get_campaign(cid)
    assert rec.config == config and rec.n_trials == 1 and rec.status == "running"
    assert rec.provenance == {
        "started_at": "t0",
        "finished_at": "t1",
        "versions": {"python": "3.11"},
    }
    assert rec.task_digests == task_digests(_tasks())
    assert rec.created_at.endswith("+00:00")
    with pytest.raises(ValueError, match="status"):
        store.set_status(cid, "done")


def test_completed_keys_and_count(store: RunStore) -> None:
    cid, trials = _filled(store)
    assert store.completed_keys(cid) == {(r.task_id, r.arm, r.run) for r in trials}
    assert store.count(cid) == len(trials)
    assert store.count(cid, arm="baseline") == sum(r.arm == "baseline" for r in trials)
    empty = _new(store)
    assert store.completed_keys(empty) == set() and store.count(empty) == 0


def test_trial_rows_match_results(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ablation.store.reads._PAGE", 7)  # several pages, not a multiple of the size
    cid, trials = _filled(store)
    rows = list(store.trial_rows(cid))
    assert all(isinstance(r, TrialRow) for r in rows)
    expected = [
        TrialRow(r.task_id, r.arm, r.run, r.status, r.passed, r.latency_s, r.wall_s, r.cost,
                 r.attempts, r.error_type, r.quality, r.quality_errors, r.category, r.critical,
                 r.error_stage, r.error_message, r.tokens, r.metrics or None)
        for r in store.results(cid)
    ]  # fmt: skip
    assert rows == expected and len(rows) == len(trials)
    assert list(store.iter_results(cid)) == trials
    assert list(store.iter_results(cid, arm="candidate")) == [
        t for t in trials if t.arm == "candidate"
    ]


def test_streaming_allows_appends_and_other_threads(store: RunStore) -> None:
    cid, trials = _filled(store)
    seen = 0
    for i, _ in enumerate(store.iter_results(cid)):  # appending while iterating must not deadlock
        store.append(cid, _trial(f"zz-{i}"))
        seen += 1
    assert seen >= len(trials)
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            for j in range(20):
                store.append(cid, _trial(f"thread-{k}", run=j))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and store.count(cid) == len(trials) + seen + 80


def test_closed_store_raises(tmp_path: Path) -> None:
    s = RunStore(tmp_path / "runs.db")
    s.close()
    s.close()
    with pytest.raises(StoreError, match="closed"):
        s.list_campaigns()


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(output=_json, quality=st.dictionaries(st.text(max_size=8), st.floats(0, 1), max_size=3))
def test_any_json_output_round_trips(output: object, quality: dict[str, float]) -> None:
    with RunStore(":memory:") as s:
        cid = _new(s)
        trial = _trial(output=output, quality=quality)
        s.append(cid, trial)
        assert s.results(cid) == [trial]
        assert next(iter(s.trial_rows(cid))).quality == quality


def test_append_many_streams_and_is_all_or_nothing(store: RunStore) -> None:
    cid = _new(store)
    store.append(cid, _trial("t4000", "baseline"))

    def trials() -> Iterator[TaskResult]:  # a generator spanning several internal chunks
        for i in range(5000):
            yield _trial(f"t{i:04d}", "candidate")
        yield _trial("t4000", "baseline")  # already stored: the whole call must roll back

    with pytest.raises(StoreError, match=r"task_id='t4000', arm='baseline', run=0"):
        store.append_many(cid, trials())
    assert store.count(cid) == 1
    assert store.append_many(cid, (_trial(f"t{i:04d}", "candidate") for i in range(5000))) == 5000
    assert store.count(cid, arm="candidate") == 5000
