"""End to end: ``ablation run --runs 3`` on a pydantic-ai agent with two tools (offline,
``FunctionModel``), from the command line as a user runs it.

The baseline looks every order up; the candidate answers ten of twelve from memory and is wrong
on the delayed and cancelled ones. Checked against the example's own data (which orders were
skipped, which statuses a guess gets wrong) and against the trials' counts, not the report's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import REPO
from helpers.cli_shared import run_here

pytest.importorskip("pydantic_ai")
sys.path.insert(0, str(REPO / "examples"))
import llm_agent

pytestmark = pytest.mark.slow
EXAMPLE = str(REPO / "examples" / "llm_agent.py")
ARGS = ["run", EXAMPLE, "--baseline", f"{EXAMPLE}:baseline", "--candidate", f"{EXAMPLE}:candidate",
        "--runs", "3", "--resamples", "200"]  # fmt: skip


def _run_in(folder: Path, args: list[str]) -> Any:
    """``ablation ARGS`` run in this process from ``folder`` (its pyproject.toml is the one read)."""
    return run_here(args, cwd=folder)


def _wrong_guesses() -> list[str]:
    return sorted(
        f"order-{o}" for o, status in llm_agent.ORDERS.items() if o in llm_agent._SURE and status != "shipped"
    )


def test_run_reports_usage_per_arm_names_the_dropped_tool_and_drills_down(tmp_path: Path) -> None:
    store = str(tmp_path / "runs.db")
    done = run_here([*ARGS, "--format", "json", "--store", store])
    assert done.returncode == 2, done.stderr
    report = json.loads(done.stdout)
    assert report["regressions"] == _wrong_guesses()
    metrics = report["metrics"]
    for name in ("input_tokens", "output_tokens", "model_requests", "tool_calls.lookup_order",
                 "tool_calls.refund_policy"):  # fmt: skip
        assert metrics[name]["baseline_mean"] is not None and metrics[name]["candidate_mean"] is not None
    looked_up = [o not in llm_agent._SURE for o in llm_agent.ORDERS]
    assert metrics["tool_calls.lookup_order"]["baseline_mean"] == 1.0
    assert metrics["tool_calls.lookup_order"]["candidate_mean"] == pytest.approx(sum(looked_up) / len(looked_up))
    cancelled = [s == "cancelled" for s in llm_agent.ORDERS.values()]
    assert metrics["tool_calls.refund_policy"]["baseline_mean"] == pytest.approx(sum(cancelled) / len(cancelled))
    # a lookup and a policy read are a model request each, beside the answering one
    assert metrics["model_requests"]["baseline_mean"] == pytest.approx(1 + 1 + sum(cancelled) / len(cancelled))
    assert any("tool 'lookup_order' calls per task fell" in n for n in report["notes"])
    assert report["candidate"]["cost_source"] == "price-db" and report["candidate"]["cost_currency"] == "USD"

    detail = next(d for d in report["details"] if d["task_id"] == "order-1005")
    assert detail["input"] == "Where is my order 1005?" and detail["expected_output"] == "cancelled"
    assert [r["passed"] for r in detail["candidate_runs"]] == [False, False, False]
    assert [r["run"] for r in detail["baseline_runs"]] == [0, 1, 2]
    assert detail["baseline"]["tools"] == ["lookup_order", "refund_policy"]
    assert detail["candidate"]["tools"] == []
    inserted = "".join(s["text"] for s in detail["diff"] if s["op"] == "insert")
    assert "shipped" in inserted

    # the same campaign's drill-downs in the terminal, rendered again from its store
    text = run_here(["report", "--store", store, "--details", "--resamples", "200"]).stdout
    assert "baseline tools: >> lookup_order -> refund_policy" in text
    assert "candidate tools: >> (none)" in text
    assert "first divergence at tool call 1" in text
    assert "candidate runs: run 0: FAIL, run 1: FAIL, run 2: FAIL" in text
    assert "input: Where is my order 1005?" in text


def test_prices_in_pyproject_override_the_price_database(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ablation.prices."gpt-4o-mini"]\ninput_per_mtok = 1000\noutput_per_mtok = 0\n'
        'currency = "EUR"\n'
    )
    done = _run_in(tmp_path, [*ARGS, "--runs", "1", "--no-store", "--format", "json"])
    report = json.loads(done.stdout)
    arm = report["baseline"]
    assert (arm["cost_currency"], arm["cost_source"]) == ("EUR", "override")
    tokens = report["metrics"]["input_tokens"]["baseline_mean"]  # 1000 per million: 1/1000 each
    assert arm["cost_mean"] == pytest.approx(tokens / 1000, rel=1e-9)
    (tmp_path / "pyproject.toml").write_text('[tool.ablation.prices."gpt-4o-mini"]\ninput_per_mtok = "x"\n')
    bad = _run_in(tmp_path, [*ARGS, "--runs", "1"])
    assert bad.returncode == 1 and "pyproject.toml [tool.ablation] prices" in bad.stderr and "Traceback" not in bad.stderr
