"""A stored campaign keeps tokens and every ``AgentOutput.metrics`` (schema version 2).

The defect: ``TrialRow`` had no tokens or metrics, so the report rebuilt from a store listed
``metrics == []`` where the in-memory report of the same campaign listed ``['steps', 'tokens']``.
A version-1 store (created here with the version-1 DDL, as the old code wrote it) is migrated on
open and its trials' tokens and metrics are reported.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from helpers import slow_suite
from helpers.store_rows import V1_DDL

from ablation import CampaignConfig, CampaignRun, RunStore, run_ablation_campaign
from ablation.analysis.stored import report_stored_campaign
from ablation.schema import AgentOutput, TaskResult
from ablation.store.format import SCHEMA_VERSION

FAST = CampaignConfig(n_resamples=200, seed=3)


def _agent(scale: int) -> Any:
    def agent(task: dict[str, Any]) -> AgentOutput:
        return AgentOutput(output=3 * task["n"], tokens=10 + scale * task["n"],
                           metrics={"steps": float(scale + task["n"] % 3)})
    return agent


def test_stored_report_keeps_tokens_and_metrics(tmp_path: Path) -> None:
    tasks = slow_suite.make_tasks(8)
    memory = run_ablation_campaign(_agent(1), _agent(2), tasks, config=FAST)
    info = CampaignRun()
    run_ablation_campaign(_agent(1), _agent(2), tasks, config=FAST, store=tmp_path / "r.db", run_info=info)
    with RunStore(tmp_path / "r.db") as store:
        stored, _ = report_stored_campaign(store, info.campaign_id)
    assert sorted(memory.metrics) == ["steps", "tokens"]
    assert sorted(stored.metrics) == sorted(memory.metrics)
    for name in memory.metrics:
        assert stored.metrics[name].model_dump() == memory.metrics[name].model_dump()


def test_version_1_store_is_migrated_and_reports_tokens(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(V1_DDL)
    conn.execute(
        "INSERT INTO campaigns VALUES ('c1', 'complete', ?, 'fp', '{}', 'b', 'c', '{}', "
        "'2025-01-01T00:00:00+00:00', '2025-01-01T00:00:00+00:00')",
        (CampaignConfig().model_dump_json(),),
    )
    for i in range(4):
        for arm, tokens in (("baseline", 10 + i), ("candidate", 20 + i)):
            r = TaskResult(task_id=f"t{i}", arm=arm, passed=True, tokens=tokens, metrics={"steps": 1.0 + i})
            conn.execute(
                "INSERT INTO trials VALUES ('c1', ?, ?, 0, 'completed', 1, NULL, NULL, 1, NULL, NULL, 0,"
                " NULL, ?)", (r.task_id, arm, r.model_dump_json()),
            )
    conn.commit()
    conn.close()
    with RunStore(path) as store:
        report, _ = report_stored_campaign(store, "c1")
        assert [row.tokens for row in store.trial_rows("c1")][:2] == [10, 20]
    assert report.metrics["tokens"].mean_difference == 10.0
    assert report.metrics["steps"].mean_difference == 0.0
    check = sqlite3.connect(path)
    assert check.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
    assert json.loads(check.execute("SELECT result_json FROM trials LIMIT 1").fetchone()[0])["tokens"] == 10
    check.close()
