"""Usage and cost of trials: TrialUsage and TrialCost through a campaign, the store and compare.

The references are computed here from the trials the agents produced (exact fractions for the
per-task means of tool calls, counted by hand), never read back from the code under test.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from helpers.cli import run_here
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation import (
    AblationTask,
    AgentOutput,
    CampaignConfig,
    TaskResult,
    TrialCost,
    TrialUsage,
    compare_results,
    report_from_results,
    run_ablation_campaign,
)
from ablation.config import ModelPrice
from ablation.report import REPORT_SCHEMA_VERSION

FAST = CampaignConfig(n_resamples=200, seed=3, runs=2)
TASKS = [AblationTask(task_id=f"t{i:02d}", input_data=i, expected_output=i) for i in range(10)]


def _usage(tokens_in: int, tools: dict[str, int], model: str | None = None) -> TrialUsage:
    return TrialUsage(
        input_tokens=tokens_in, output_tokens=7, cached_tokens=2, cache_write_tokens=3,
        model_requests=1 + sum(tools.values()),
        tool_calls=tools, model=model,
    )


def test_usage_is_kept_on_the_trial_and_mirrored_in_tokens_and_metrics() -> None:
    result = TaskResult(task_id="a", usage=_usage(30, {"lookup": 2}), metrics={"input_tokens": 5.0})
    assert result.tokens == 37  # input + output
    assert result.metrics["input_tokens"] == 5.0  # the caller's value wins
    assert result.metrics["tool_calls.lookup"] == 2.0 and result.metrics["model_requests"] == 3.0
    assert TaskResult.model_validate_json(result.model_dump_json()) == result
    with pytest.raises(ValueError, match="tool_calls"):
        TrialUsage(tool_calls={"lookup": -1})


def test_campaign_reports_usage_per_arm_with_tool_calls_of_zero_counted() -> None:
    """The candidate calls ``lookup`` on odd inputs' second run only: a trial with usage but no
    call counts 0, so its per-task mean is 1/2 there and 0 elsewhere (not a missing value)."""
    calls: list[tuple[str, int, dict[str, int]]] = []

    def base(x: int) -> AgentOutput:
        return AgentOutput(output=x, usage=_usage(100 + x, {"lookup": 1, "search": 1}))

    def cand_factory() -> object:
        seen: dict[int, int] = {}

        def cand(x: int) -> AgentOutput:
            seen[x] = seen.get(x, 0) + 1
            tools = {"lookup": 1} if x % 2 and seen[x] == 2 else {}
            calls.append(("candidate", x, tools))
            return AgentOutput(output=x if tools or x % 2 == 0 else -1, usage=_usage(40, tools))

        return cand

    report = run_ablation_campaign(base, cand_factory(), TASKS, config=FAST)
    lookup = report.metrics["tool_calls.lookup"]
    search = report.metrics["tool_calls.search"]
    per_task = [Fraction(1, 2) if i % 2 else Fraction(0) for i in range(10)]
    assert lookup.n_pairs == 10 and search.n_pairs == 10  # no pair lost to a missing key
    assert lookup.baseline_mean == 1.0
    assert lookup.candidate_mean == pytest.approx(float(sum(per_task) / 10), abs=1e-15)
    assert search.candidate_mean == 0.0  # a tool the candidate never called
    assert report.metrics["input_tokens"].baseline_mean == pytest.approx(104.5)
    assert report.metrics["input_tokens"].candidate_mean == 40.0
    assert report.metrics["tokens"].baseline_mean == pytest.approx(111.5)
    notes = " | ".join(report.notes)
    assert "tool 'search' calls per task fell" in notes and "uses this tool less" in notes


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=3), min_size=2, max_size=8))
def test_tool_call_means_count_absent_tools_as_zero_on_both_paths(counts: list[list[int]]) -> None:
    """Columnar (compare_results) and per-trial (report_from_results) paths agree with exact
    per-task means of the tool's counts, a count of 0 being a trial without the tool's key."""
    runs = min(len(c) for c in counts)
    trials = []
    for i, per_run in enumerate(counts):
        for r in range(runs):
            n = per_run[r]
            for arm in ("baseline", "candidate"):
                tools = {"t": n} if (n and arm == "candidate") else {}
                if arm == "baseline":
                    tools = {"t": 1}
                trials.append(TaskResult(task_id=f"k{i}", arm=arm, run=r, passed=True, usage=_usage(1, tools)))
    expected = sum(Fraction(sum(c[:runs]), runs) for c in counts) / len(counts)
    for report in (
        compare_results([t for t in trials if t.arm == "baseline"], [t for t in trials if t.arm == "candidate"]),
        report_from_results(trials),
    ):
        got = report.metrics["tool_calls.t"]
        assert got.n_pairs == len(counts)
        assert got.candidate_mean == pytest.approx(float(expected), rel=1e-12, abs=1e-15)


def test_cost_currency_and_source_from_agent_override_and_price_database() -> None:
    genai_prices = pytest.importorskip("genai_prices")
    from genai_prices import Usage, calc_price

    def agent_cost(x: int) -> AgentOutput:
        return AgentOutput(output=x, cost=TrialCost(amount=0.25, currency="EUR"))

    def priced(x: int) -> AgentOutput:
        return AgentOutput(output=x, usage=_usage(1000 + x, {}, model="gpt-4o-mini"))

    def overridden(x: int) -> AgentOutput:
        return AgentOutput(output=x, usage=_usage(1000 + x, {}, model="house-model"))

    price = ModelPrice(input_per_mtok=3, output_per_mtok=15, cached_input_per_mtok=1, cache_write_per_mtok=4,
                       currency="GBP")  # fmt: skip
    config = FAST.model_copy(update={"runs": 1, "prices": {"house-model": price}})
    report = run_ablation_campaign(agent_cost, priced, TASKS, config=config)
    assert (report.baseline.cost_currency, report.baseline.cost_source) == ("EUR", "agent")
    assert report.baseline.cost_total == pytest.approx(2.5)
    assert (report.candidate.cost_currency, report.candidate.cost_source) == ("USD", "price-db")
    reference = sum(
        float(calc_price(Usage(input_tokens=1000 + i, cache_read_tokens=2, cache_write_tokens=3, output_tokens=7),
                         model_ref="gpt-4o-mini").total_price)
        for i in range(10)
    )  # fmt: skip
    assert genai_prices.__version__ and report.candidate.cost_total == pytest.approx(reference, rel=1e-12)

    report = run_ablation_campaign(agent_cost, overridden, TASKS, config=config)
    exact = sum(Fraction(1000 + i - 2 - 3) * 3 + 2 * 1 + 3 * 4 + 7 * 15 for i in range(10)) / 10**6
    assert (report.candidate.cost_currency, report.candidate.cost_source) == ("GBP", "override")
    assert report.candidate.cost_total == pytest.approx(float(exact), rel=1e-12)


def test_a_bare_cost_is_the_agents_with_an_unstated_currency_and_prints_in_decimals() -> None:
    from ablation.render import render

    def cheap(x: int) -> AgentOutput:
        return AgentOutput(output=x, cost=0.0000158)

    report = run_ablation_campaign(cheap, cheap, TASKS, config=FAST.model_copy(update={"runs": 1}))
    assert (report.baseline.cost_currency, report.baseline.cost_source) == (None, "agent")
    row = next(line for line in render(report, "terminal").splitlines() if "cost total" in line)
    assert "0.000158 (0.0000158) [agent]" in row and "e-05" not in row


def test_store_keeps_usage_and_the_report_from_the_store_equals_the_runs(tmp_path: Path) -> None:
    from ablation import RunStore
    from ablation.analysis.stored import report_stored_campaign

    def base(x: int) -> AgentOutput:
        return AgentOutput(output=x, usage=_usage(10, {"lookup": 1}, model="gpt-4o-mini"))

    def cand(x: int) -> AgentOutput:
        return AgentOutput(output=x, usage=_usage(10, {}, model="gpt-4o-mini"))

    report = run_ablation_campaign(base, cand, TASKS, config=FAST, store=tmp_path / "s.db")
    with RunStore(tmp_path / "s.db") as store:
        again, _ = report_stored_campaign(store)
    assert again.metrics == report.metrics and again.notes == report.notes
    assert again.candidate.cost_source == report.candidate.cost_source == "price-db"


def test_schema_version_and_the_json_schema_name_the_new_fields() -> None:
    assert REPORT_SCHEMA_VERSION == 3
    schema = json.loads(run_here(["schema"]).stdout)
    uplift = schema["$defs"]["Uplift"]["properties"]
    assert {"ci", "headline", "intervals"} <= set(uplift) and "tango_ci" not in uplift
    assert {"name", "method", "low", "high"} <= set(schema["$defs"]["NamedInterval"]["properties"])
    arm = schema["$defs"]["ArmSummary"]["properties"]
    assert "currency" in arm["cost_currency"]["description"]
    assert "price-db" in arm["cost_source"]["description"]
    assert "tool" in schema["$defs"]["AblationReport"]["properties"]["notes"]["description"]


def test_a_command_agent_reports_usage_in_its_json_reply() -> None:
    from ablation.agents import CommandAgent

    script = (
        "import json, sys; n = json.load(sys.stdin); print(json.dumps({'output': n, 'usage': "
        "{'input_tokens': 10 * n, 'output_tokens': 1, 'model_requests': 1, 'tool_calls': {'calc': n % 2}}}))"
    )
    agent = CommandAgent([sys.executable, "-c", script])
    report = run_ablation_campaign(agent, agent, TASKS[:4], config=FAST.model_copy(update={"runs": 1}))
    assert report.metrics["input_tokens"].baseline_mean == sum(10 * i for i in range(4)) / 4
    assert report.metrics["tool_calls.calc"].candidate_mean == 0.5
