"""Each trial's OpenTelemetry spans: collected under the trial's own trace whatever the
concurrency, a user's exporter still fed, bounded, stored with the trial and summarised.

The agents below emit spans through the OpenTelemetry API as instrumented code does; what each
trial must hold is known from the agents themselves (each span names its task and its step), and
what the user's exporter must receive is read from that exporter, not from ablation.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import fresh_json
from helpers.otel_provider import sdk_provider_for_one_test

pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

import ablation.run.spans as collection
from ablation import AblationEngine, AblationTask, AgentOutput, CampaignConfig, RunStore, TrialUsage
from ablation.analysis.stored import report_stored_campaign
from ablation.errors import ConfigError
from ablation.render import render
from ablation.run.campaign import run_ablation_campaign

TRACER = trace.get_tracer("tests.agent")
STEPS = 3


@pytest.fixture(autouse=True)
def sdk_provider() -> Iterator[None]:
    """The global SDK provider an instrumented application sets (a library call never sets it)."""
    yield from sdk_provider_for_one_test()


def _tasks(n: int) -> list[AblationTask]:
    return [AblationTask(task_id=f"t{i:02d}", input_data=f"t{i:02d}", expected_output=f"t{i:02d}") for i in range(n)]


async def async_agent(task: str) -> str:
    """Three sequential spans, interleaved with other trials' by random sleeps."""
    for step in range(STEPS):
        with TRACER.start_as_current_span("step", attributes={"task": task, "step": step}):
            await asyncio.sleep(random.random() / 500)
    return task


def sync_agent(task: str) -> str:
    """The same, run by the engine's threads."""
    for step in range(STEPS):
        with TRACER.start_as_current_span("step", attributes={"task": task, "step": step}):
            time.sleep(random.random() / 500)
    return task


@pytest.fixture
def user_exporter() -> Iterator[InMemorySpanExporter]:
    """An exporter of the user's, on the global SDK provider (set here when none is yet)."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())
    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.shutdown()  # the processor stays on the provider; a stopped exporter keeps nothing


def test_each_trial_holds_exactly_its_own_spans_and_the_users_exporter_gets_them_all(
    user_exporter: InMemorySpanExporter,
) -> None:
    tasks = _tasks(12)
    results = AblationEngine(CampaignConfig(concurrency=8)).run(async_agent, sync_agent, tasks)
    assert len(results) == 24
    for r in results:
        assert r.spans is not None and r.spans.dropped == 0
        records = r.spans.records()
        assert [(s["name"], s["attributes"]["task"], s["attributes"]["step"]) for s in records] == [
            ("step", r.task_id, step) for step in range(STEPS)
        ]
        assert all(s["status"] == "unset" and s["duration_s"] >= 0 for s in records)

    exported = user_exporter.get_finished_spans()
    trial_spans = {s.context.trace_id: s for s in exported if s.name == "ablation.trial"}
    steps = [s for s in exported if s.name == "step"]
    assert len(trial_spans) == 24 and len(steps) == 24 * STEPS
    for span in steps:  # each step is in the trace of the trial that ran its task
        root = trial_spans[span.context.trace_id]
        assert root.attributes is not None and span.attributes is not None
        assert root.attributes["ablation.task_id"] == span.attributes["task"]
        assert span.parent is not None
    arms = {(s.attributes or {}).get("ablation.arm") for s in trial_spans.values()}
    assert arms == {"baseline", "candidate"}


def _many_spans(task: str) -> str:
    """Eight spans of about a kilobyte each (their timings vary by a few characters)."""
    for step in range(8):
        with TRACER.start_as_current_span("step", attributes={"task": task, "step": step, "pad": "x" * 1000}):
            pass
    return task


def test_spans_over_the_cap_are_counted_as_dropped_and_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collection, "MAX_SPANS", 5)
    [kept] = AblationEngine().run(_many_spans, _many_spans, _tasks(1), arms=("baseline",))
    assert kept.spans is not None
    assert (kept.spans.count, kept.spans.dropped) == (5, 3)
    assert [s["attributes"]["step"] for s in kept.spans.records()] == [0, 1, 2, 3, 4]

    one = len(json.dumps(kept.spans.records()[0], separators=(",", ":")))
    monkeypatch.setattr(collection, "MAX_SPANS", 100)
    monkeypatch.setattr(collection, "MAX_BYTES", int(2.5 * one))  # the bytes cap: two spans fit
    [cut] = AblationEngine().run(_many_spans, _many_spans, _tasks(1), arms=("baseline",))
    assert cut.spans is not None and (cut.spans.count, cut.spans.dropped) == (2, 6)
    assert cut.spans.summary().dropped == 6


def _model_call(model: str, tokens_in: int, tokens_out: int) -> Any:
    attributes = {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": model,
        "gen_ai.usage.input_tokens": tokens_in, "gen_ai.usage.output_tokens": tokens_out,
    }  # fmt: skip
    return TRACER.start_as_current_span(f"chat {model}", attributes=attributes)


def _tool(name: str) -> Any:
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    return TRACER.start_as_current_span(f"execute_tool {name}", attributes=attributes)


def spans_only_agent(task: str) -> str:
    """Two model calls (the second wrapping a client's span of the same request) and two tools,
    the second failing."""
    with _model_call("m-1", 10, 2):
        pass
    with _tool("lookup"):
        pass
    with _model_call("m-2", 30, 4), _model_call("m-2", 30, 4):  # one request, two instrumentations
        pass
    with _tool("refund") as span:
        span.set_status(Status(StatusCode.ERROR, "no such order"))
    return task


def usage_reporting_agent(task: str) -> AgentOutput:
    spans_only_agent(task)
    return AgentOutput(output=task, usage=TrialUsage(input_tokens=7, output_tokens=1, model_requests=1))


def test_usage_comes_from_spans_only_when_the_agent_reports_none() -> None:
    from_spans, reported = AblationEngine().run(spans_only_agent, usage_reporting_agent, _tasks(1))
    if from_spans.arm != "baseline":
        from_spans, reported = reported, from_spans
    assert from_spans.usage == TrialUsage(
        input_tokens=10 + 30, output_tokens=2 + 4, model_requests=2,
        tool_calls={"lookup": 1}, model="m-1+m-2",  # the failed refund is no call, as in a RunUsage
    )  # fmt: skip
    assert from_spans.tokens == 46 and from_spans.metrics["tool_calls.lookup"] == 1.0
    assert reported.usage == TrialUsage(input_tokens=7, output_tokens=1, model_requests=1)
    summary = from_spans.spans.summary() if from_spans.spans else None
    assert summary is not None
    assert summary.tools == ["lookup", "refund"] and summary.models == ["m-1", "m-2"]
    assert summary.errors == ["execute_tool refund: no such order"]


def test_a_span_directly_under_the_trial_has_no_parent_and_a_nested_one_names_its_own() -> None:
    """As ``TrialSpans.data`` documents: the trial's own span is not kept, so no record names it."""
    [r] = AblationEngine().run(spans_only_agent, spans_only_agent, _tasks(1), arms=("baseline",))
    assert r.spans is not None
    records = sorted(r.spans.records(), key=lambda s: s["start_s"])
    # spans_only_agent: a model call, a tool, a model call holding a client's span of it, a tool
    assert [s["parent"] is None for s in records] == [True, True, True, False, True]
    assert records[3]["parent"] == records[2]["id"]


def test_traces_off_collects_nothing_and_on_without_the_sdk_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    [r] = AblationEngine(CampaignConfig(traces="off")).run(spans_only_agent, spans_only_agent, _tasks(1),
                                                           arms=("baseline",))  # fmt: skip
    assert r.spans is None and r.usage is None
    monkeypatch.setattr(collection, "sdk_available", lambda: False)
    with pytest.raises(ConfigError, match=r"ablation\[otel\]"):
        AblationEngine(CampaignConfig(traces="on"))
    assert AblationEngine(CampaignConfig(traces="auto"))._trials.spans is None


def _regressing(task: str) -> str:
    """The candidate: skips the lookup and answers wrong on odd tasks."""
    if int(task[1:]) % 2:
        with _model_call("m-2", 5, 1):
            return "wrong"
    return spans_only_agent(task)


def test_spans_survive_the_store_and_the_drill_down_shows_them(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    config = CampaignConfig(n_resamples=200)
    ran = run_ablation_campaign(spans_only_agent, _regressing, _tasks(6), config=config, store=store)
    assert ran.regressions == ["t01", "t03", "t05"]
    stored, _ = report_stored_campaign(RunStore(store))
    assert stored.details == ran.details
    detail = stored.details[0]
    assert detail.baseline is not None and detail.candidate is not None
    assert detail.baseline.tools == ["lookup", "refund"] and detail.candidate.tools == []
    assert detail.candidate.spans is not None and detail.candidate.spans.model_calls == 1
    text = render(stored, "terminal", details=True)
    assert "candidate tools: >> (none)" in text
    assert "baseline spans: 2 model calls (m-1, m-2), 2 tool calls, 40 in / 6 out tokens, 1 errors" in text

    pytest.importorskip("starlette")
    from ablation.view.catalog import Catalog
    from ablation.view.task_page import task_page

    page = task_page(Catalog(store), ran.provenance.campaign_id or "", "t01")
    assert "spans side by side (first divergence at step 0)" in page
    assert "execute_tool lookup" in page and "no such order" in page and ran.provenance.campaign_id


USER_PROVIDER = """
import json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from ablation import AblationEngine, AblationTask, CampaignConfig

provider = TracerProvider()
exporter = InMemorySpanExporter()
provider.add_span_processor(SimpleSpanProcessor(exporter))
if {user}:
    trace.set_tracer_provider(provider)

def agent(x):
    with trace.get_tracer("a").start_as_current_span("work"):
        return x

engine = AblationEngine(config=CampaignConfig(traces="{mode}"))
results = engine.run(agent, agent, [AblationTask(task_id="a", input_data=1, expected_output=1)])
print(json.dumps({{
    "same_provider": trace.get_tracer_provider() is provider,
    "proxy": isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider),
    "sdk_provider": isinstance(trace.get_tracer_provider(), TracerProvider),
    "kept": [r.spans.count if r.spans else None for r in results],
    "exported": sorted(s.name for s in exporter.get_finished_spans()),
}}))
"""


@pytest.mark.parametrize(("user", "mode"), [(True, "auto"), (False, "on"), (False, "auto")])
def test_the_users_provider_is_kept_and_one_is_installed_only_when_asked(user: bool, mode: str) -> None:
    found = fresh_json(USER_PROVIDER.format(user=user, mode=mode))
    if not user and mode == "auto":
        # a library call leaves an unset global provider unset: the application may set its own
        assert found["proxy"] and found["kept"] == [None, None] and found["exported"] == []
        return
    assert found["sdk_provider"] and found["same_provider"] == user
    assert found["kept"] == [1, 1]
    if user:
        assert found["exported"] == ["ablation.trial", "ablation.trial", "work", "work"]
    else:
        assert found["exported"] == []


def test_the_traces_flag_sets_the_config() -> None:
    from ablation.cli.options import campaign_config
    from ablation.cli.parser import build_parser

    args = build_parser().parse_args(["run", "suite.py", "--baseline", "a", "--candidate", "b", "--traces", "off"])
    assert campaign_config(vars(args)).traces == "off"
    assert campaign_config({}).traces == "auto"


def test_the_report_schema_documents_the_span_summary() -> None:
    from ablation.report import REPORT_SCHEMA_VERSION, AblationReport

    assert REPORT_SCHEMA_VERSION == 3  # the drill-down trials gained "spans"
    schema = AblationReport.model_json_schema()
    assert "OpenTelemetry" in schema["$defs"]["TrialView"]["properties"]["spans"]["description"]
    summary = schema["$defs"]["SpanSummary"]["properties"]
    assert {"model_calls", "tools", "errors", "input_tokens", "output_tokens", "dropped", "timeline"} <= summary.keys()
