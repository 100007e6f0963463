"""A task id holding a lone surrogate, given through the Python API, is escaped as every other
text a suite or an agent writes, so the store and the JSON report can hold it.

Python strings may hold lone surrogates (``"t\\udc80"``, e.g. from ``os.fsdecode`` of a file name
or JSON decoded by an agent); UTF-8, SQLite and JSON cannot. The readers escape ids
(:func:`ablation.schema.safe_text`), but ``TaskResult`` kept them as given, so the report's JSON
and ``RunStore.append`` failed with a bare ``PydanticSerializationError``, and ``AblationTask``
refused one with pydantic's own message. Both arms escape an id alike, so pairing is unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

from ablation import compare_results, run_ablation_campaign
from ablation.schema import AblationTask, TaskResult
from ablation.store.run_store import RunStore

ODD = "t\udc80"
SHOWN = "t\\udc80"


def test_results_with_such_an_id_are_reported(tmp_path: Path) -> None:
    baseline = [TaskResult(task_id=task, arm="baseline", passed=True) for task in (ODD, "u")]
    candidate = [TaskResult(task_id=task, arm="candidate", passed=task == "u") for task in (ODD, "u")]
    report = compare_results(baseline, candidate)
    assert json.loads(report.model_dump_json())["regressions"] == [SHOWN]
    assert report.regressions == [SHOWN] and [r.task_id for r in baseline] == [SHOWN, "u"]


def test_a_campaign_of_such_tasks_runs_with_a_store(tmp_path: Path) -> None:
    tasks = [AblationTask(task_id=ODD, input_data=1, expected_output=1),
             AblationTask(task_id="u", input_data=2, expected_output=2)]  # fmt: skip
    assert tasks[0].task_id == SHOWN
    report = run_ablation_campaign(lambda x: x, lambda x: x, tasks, store=tmp_path / "runs.db")
    assert report.n_paired == 2
    with RunStore(tmp_path / "runs.db") as store:
        [campaign] = store.list_campaigns()
        assert sorted(r.task_id for r in store.results(campaign.campaign_id)) == [SHOWN, SHOWN, "u", "u"]
