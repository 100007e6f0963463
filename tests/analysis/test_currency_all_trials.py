"""An arm's cost currency and source come from every trial with a cost, on every path to a report.

They were read from each paired task's first run, for the first 1000 tasks only (and result files
carried neither): a candidate in EUR on its second run, or on its 1001st task, was compared with a
baseline in USD as if both were one currency. Each test puts the EUR where only a read of every
trial finds it: a campaign's second run (in memory and stored), a stored campaign re-reported by
``ablation report`` (from its snapshots and from its rows), and the last of 1500 tasks of a result
file read by ``compare_results``, by ``ablation compare`` row by row and by pyarrow.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here

from ablation import (
    AblationTask,
    AgentOutput,
    CampaignConfig,
    RunStore,
    TaskResult,
    TrialCost,
    compare_results,
    run_ablation_campaign,
)
from ablation.errors import InputError
from ablation.sources.readers import engine
from ablation.sources.readers.rows import ReadOptions
from ablation.sources.result_files import load_result_columns

# concurrency 1: trials run in plan order, every task's run 0 before any run 1 (run/plan.py)
CONFIG = CampaignConfig(runs=2, concurrency=1, seed=5, n_resamples=200)
TASKS = [AblationTask(task_id=f"t{i:02d}", input_data=i, expected_output=i) for i in range(8)]
N_FILE = 1500


def agents() -> tuple[Callable[[int], AgentOutput], Callable[[int], AgentOutput]]:
    """A baseline in USD; a candidate in USD on its first call of a task, in EUR on its second."""
    calls: Counter[int] = Counter()

    def baseline(x: int) -> AgentOutput:
        return AgentOutput(output=x, cost=TrialCost(amount=0.5, currency="USD"))

    def candidate(x: int) -> AgentOutput:
        calls[x] += 1
        return AgentOutput(output=x, cost=TrialCost(amount=0.25, currency="USD" if calls[x] == 1 else "EUR"))

    return baseline, candidate


def assert_not_compared(report: dict[str, Any], source: str | None = "agent") -> None:
    """The candidate mixes EUR and USD: its costs are not compared with the baseline's USD."""
    assert (report["baseline"]["cost_currency"], report["baseline"]["cost_source"]) == ("USD", source)
    assert (report["candidate"]["cost_currency"], report["candidate"]["cost_source"]) == ("EUR+USD", source)
    assert report["cost"] is None and "cost" not in report["metrics"]
    assert any("Costs mix currencies within an arm, the candidate's (EUR+USD): not summed" in n for n in report["notes"])
    assert report["candidate"]["cost_total"] is None and report["candidate"]["cost_trials"] > 0  # no sum across


@pytest.mark.parametrize("stored", [False, True])
def test_a_currency_of_the_second_run_only_is_seen(tmp_path: Path, stored: bool) -> None:
    store = tmp_path / "runs.db" if stored else None
    report = run_ablation_campaign(*agents(), TASKS, config=CONFIG, store=store)
    assert_not_compared(json.loads(report.model_dump_json()))
    if store is not None:  # the EUR trials are exactly the candidate's second runs
        with RunStore(store) as opened:
            trials = opened.results(str(report.provenance.campaign_id), arm="candidate")
        assert sorted(t.run for t in trials if t.cost_currency == "EUR") == [1] * len(TASKS)
        assert {t.run for t in trials if t.cost_currency == "USD"} == {0}


def test_ablation_report_sees_it_from_the_snapshots_and_from_the_rows(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run_ablation_campaign(*agents(), TASKS, config=CONFIG, store=store)
    for read in ("snapshots", "rows"):
        with closing(sqlite3.connect(store)) as conn, conn:
            if read == "rows":  # this report reads the trial rows (and writes the snapshots again)
                conn.execute("DELETE FROM arm_snapshots")
            assert conn.execute("SELECT COUNT(*) FROM arm_snapshots").fetchone() == (2 if read == "snapshots" else 0,)
        proc = run_here(["report", "--store", str(store), "--format", "json"])
        assert proc.returncode in (0, 2), proc.stderr
        assert_not_compared(json.loads(proc.stdout))


def test_a_currency_after_the_first_1000_tasks_is_seen() -> None:
    def arm(last: str) -> list[TaskResult]:
        return [TaskResult(task_id=f"task-{i:04d}", passed=i % 3 != 0, cost=0.01, cost_source="agent",
                           cost_currency=last if i == N_FILE - 1 else "USD") for i in range(N_FILE)]  # fmt: skip

    report = compare_results(arm("USD"), arm("EUR"), config=CampaignConfig(n_resamples=200))
    assert_not_compared(json.loads(report.model_dump_json()))


def write_results(path: Path, last_currency: str) -> Path:
    """``N_FILE`` rows with a cost in USD, the last one in ``last_currency`` (JSON lines or CSV)."""
    rows = [
        {"id": f"task-{i:04d}", "passed": i % 3 != 0, "cost": 0.01 + i % 5 / 100, "latency_s": 1.5,
         "cost_currency": last_currency if i == N_FILE - 1 else "USD", "cost_source": "override"}
        for i in range(N_FILE)
    ]  # fmt: skip
    if path.suffix == ".csv":
        names = list(rows[0])
        lines = [",".join(names)] + [",".join(str(r[k]).lower() if k == "passed" else str(r[k]) for k in names) for r in rows]
        path.write_text("\n".join(lines) + "\n")
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("ext", ["jsonl", "csv"])
def test_a_currency_of_the_last_task_of_a_file_is_seen_on_every_read_path(
    tmp_path: Path, ext: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = write_results(tmp_path / f"before.{ext}", "USD")
    after = write_results(tmp_path / f"after.{ext}", "EUR")
    report = compare_results(str(before), str(after), config=CampaignConfig(n_resamples=200))
    assert_not_compared(json.loads(report.model_dump_json()), "override")

    assert after.stat().st_size < engine.MIN_BYTES  # ablation compare reads it row by row
    assert engine.engine_columns(str(after), ReadOptions(arm="candidate"), None, str(after)) is None
    proc = run_here(["compare", str(before), str(after), "--format", "json", "--resamples", "200"])
    assert proc.returncode in (0, 2), proc.stderr
    assert_not_compared(json.loads(proc.stdout), "override")

    monkeypatch.setattr(engine, "MIN_BYTES", 0)  # now pyarrow reads both files column-wise
    assert engine.engine_columns(str(after), ReadOptions(arm="candidate"), None, str(after)) is not None
    proc = run_here(["compare", str(before), str(after), "--format", "json", "--resamples", "200"])
    assert proc.returncode in (0, 2), proc.stderr
    assert_not_compared(json.loads(proc.stdout), "override")


@pytest.mark.parametrize("ext", ["jsonl", "csv"])
def test_pyarrow_and_the_row_path_read_the_same_units(tmp_path: Path, ext: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blank and absent cells, a row without a cost (its currency counts for nothing)."""
    cells = [("EUR", "agent", 1.0), ("", "", 2.0), ("JPY", "price-db", None), ("EUR", "", 3.0), ("", "override", 4.0)]
    path = tmp_path / f"r.{ext}"
    if ext == "csv":
        path.write_text("id,passed,cost,cost_currency,cost_source\n" + "".join(
            f"t{i},true,{'' if c is None else c}, {cur},{src}\t\n" for i, (cur, src, c) in enumerate(cells)))  # fmt: skip
    else:
        path.write_text("".join(json.dumps({"id": f"t{i}", "passed": True, "cost": c, "cost_currency": cur or None,
                                            **({"cost_source": src} if src else {})}) + "\n"
                                for i, (cur, src, c) in enumerate(cells)))  # fmt: skip
    want = {("EUR", "agent"), (None, None), ("EUR", None), (None, "override")}  # stripped, blank: absent
    slow = load_result_columns(path, arm="candidate")
    monkeypatch.setattr(engine, "MIN_BYTES", 0)
    fast = engine.engine_columns(str(path), ReadOptions(arm="candidate"), None, str(path))
    assert fast is not None
    assert slow.columns.cost_units == fast.columns.cost_units == want


@pytest.mark.parametrize("engine_reads", [False, True])
@pytest.mark.parametrize(("cell", "problem"), [
    ('"cost_source": "guess"', "'cost_source' must be one of agent, price-db, override"),
    ('"cost_currency": 978', "'cost_currency' must be a string"),
])  # fmt: skip
def test_a_unit_the_row_path_refuses_is_named_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine_reads: bool, cell: str, problem: str
) -> None:
    path = tmp_path / "r.jsonl"
    lines = [f'{{"id": "t{i}", "passed": true, "cost": 1, "cost_currency": "USD"}}' for i in range(4)]
    lines[2] = f'{{"id": "t2", "passed": true, "cost": 1, {cell}}}'
    path.write_text("\n".join(lines) + "\n")
    if engine_reads:
        monkeypatch.setattr(engine, "MIN_BYTES", 0)
    with pytest.raises(InputError, match=rf"r\.jsonl:3: {problem}.*\(task id 't2'\)"):
        load_result_columns(path, arm="candidate")
