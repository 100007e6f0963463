"""A trial's spans as steps say which tool and model each span used, so two trials that called
different tools under one span name (pydantic-ai's instrumentation names every tool span
``running tool`` and gives the tool in ``gen_ai.tool.name``) are not shown as identical.

The spans come from the real OpenTelemetry SDK through a real campaign and store; the task page
is read over HTTP (Starlette's test client).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.otel_provider import sdk_provider_for_one_test

pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("starlette")

from opentelemetry import trace
from starlette.testclient import TestClient

from ablation import AblationTask, CampaignConfig, RunStore
from ablation.run.campaign import run_ablation_campaign
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

TRACER = trace.get_tracer("tests.tool_names")
#: The tool each arm calls for each task: t0 and t1 differ in their tool, t2 in its model.
TOOLS = {"baseline": ("lookup_order", "lookup_order", "lookup_order"),
         "candidate": ("delete_account", "refund", "lookup_order")}  # fmt: skip
MODELS = {"baseline": ("m-1", "m-1", "m-1"), "candidate": ("m-1", "m-1", "m-2")}
#: The GenAI semantic conventions' attributes that say what a span did (not ids or timings).
IDENTIFYING = ("gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.tool.name", "gen_ai.request.model")


@pytest.fixture(autouse=True)
def sdk_provider() -> Iterator[None]:
    yield from sdk_provider_for_one_test()


def _agent(arm: str) -> Callable[[int], str]:
    def run(i: int) -> str:
        """An agent run as pydantic-ai's instrumentation (version 2) records it."""
        with TRACER.start_as_current_span("agent run", attributes={"gen_ai.agent.name": "support"}):
            with TRACER.start_as_current_span("chat", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": MODELS[arm][i],
            }):  # fmt: skip
                pass
            with TRACER.start_as_current_span("running tool", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": TOOLS[arm][i],
                "gen_ai.tool.call.id": f"call-{arm}-{i}",  # differs every call: not a step's
            }):  # fmt: skip
                pass
        return "ok"

    return run


def _campaign(path: Path, candidate_arm: str = "candidate") -> str:
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output="ok") for i in range(3)]
    ran = run_ablation_campaign(_agent("baseline"), _agent(candidate_arm), tasks,
                                config=CampaignConfig(n_resamples=100), store=path)  # fmt: skip
    assert ran.provenance.campaign_id
    return ran.provenance.campaign_id


def test_steps_carry_the_tool_and_model_so_different_calls_differ(tmp_path: Path) -> None:
    cid = _campaign(tmp_path / "runs.db")
    with RunStore(tmp_path / "runs.db", read_only=True) as store:
        trials = {(t.task_id, t.arm): t for t in store.results(cid)}
    for i in range(3):
        steps = {}
        for arm in ("baseline", "candidate"):
            spans = trials[(f"t{i}", arm)].spans
            assert spans is not None and spans.count == 3
            steps[arm] = spans.steps()
            records = sorted(spans.records(), key=lambda r: r["start_s"])
            for step, record in zip(steps[arm], records, strict=True):  # every identifying attribute kept
                assert {k: v for k, v in step.items() if k.startswith("gen_ai.")} == {
                    k: v for k, v in record["attributes"].items() if k in IDENTIFYING
                }
            assert steps[arm][2]["gen_ai.tool.name"] == TOOLS[arm][i]
            assert steps[arm][1]["gen_ai.request.model"] == MODELS[arm][i]
        assert (steps["baseline"] == steps["candidate"]) == (
            TOOLS["baseline"][i] == TOOLS["candidate"][i] and MODELS["baseline"][i] == MODELS["candidate"][i]
        )


def _spans_section(page: str) -> str:
    found = re.search(r"<h2>spans side by side.*?</table>", page, re.S)
    assert found is not None, page
    return found.group(0)


def test_the_task_page_shows_where_the_tools_differ(tmp_path: Path) -> None:
    cid = _campaign(tmp_path / "runs.db")
    same = _campaign(tmp_path / "runs.db", candidate_arm="baseline")
    with TestClient(create_app(Catalog(tmp_path / "runs.db"))) as client:
        for i in range(2):
            page = client.get(f"/campaign/{cid}/task", params={"id": f"t{i}"}).text
            section = _spans_section(page)
            assert "(identical)" not in section
            assert "spans side by side (first divergence at step 2)" in section
            row = re.search(r'<tr class="diverge" id="first-divergence">(.*?)</tr>', section, re.S)
            assert row is not None
            cells = [html.unescape(c) for c in re.findall(r"<pre>(.*?)</pre>", row.group(1), re.S)]
            assert TOOLS["baseline"][i] in cells[0] and TOOLS["candidate"][i] in cells[1]
        section = _spans_section(client.get(f"/campaign/{cid}/task", params={"id": "t2"}).text)
        assert "first divergence at step 1" in section and "m-2" in section
        for i in range(3):  # the same calls (other ids and timings): identical
            page = client.get(f"/campaign/{same}/task", params={"id": f"t{i}"}).text
            assert "spans side by side (identical)" in _spans_section(page)
