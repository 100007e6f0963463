"""Prompt-cache writes: counted in a trial's usage wherever the source reports them, and priced
at their own rate, never at the plain input rate.

References come from the libraries themselves, never from the code under test: genai-prices'
own extractor and calculator (``extract_usage`` on the raw Anthropic reply, ``calc_price`` on
pydantic-ai's ``RunUsage``), exact fractions for an override, the OpenAI reply's own
``prompt_tokens`` for Inspect's split of it (``model_output_from_openai``), and the JSON layout of
a price as a store written before the cache-write price existed holds it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import anthropic
import genai_prices
import openai
import pytest
from genai_prices import Usage, calc_price
from helpers.json_server import json_server
from helpers.otel_provider import sdk_provider_for_one_test
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from ablation import AblationEngine, AblationTask, AgentOutput, CampaignConfig, TrialUsage
from ablation.agents.pricing import database_price, override_price
from ablation.agents.sdk import sdk_output
from ablation.config import ModelPrice
from ablation.errors import ResumeMismatchError
from ablation.schema import TaskResult, suite_fingerprint, task_digests
from ablation.sources.result_files import load_results
from ablation.store.run_store import RunStore

MODEL = "claude-sonnet-4-20250514"  # as the Messages API names it; genai-prices knows it
TASKS = [AblationTask(task_id=f"q{i}", input_data=f"what is {i} plus {i}", expected_output=str(2 * i))
         for i in range(4)]  # fmt: skip
TOOLS = Path(__file__).resolve().parents[1] / "data" / "tools"


def _message(body: dict[str, Any], replies: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """``POST /v1/messages``: the sum, with a usage that wrote ``1000 * (n + 1)`` prompt tokens to
    the cache (five-minute entries, as the API reports them) and read ``50 * n``."""
    n = int(body["messages"][-1]["content"].split()[2])
    written = 1000 * (n + 1)
    reply = {
        "id": f"msg_{n}", "type": "message", "role": "assistant", "model": MODEL,
        "stop_reason": "end_turn", "stop_sequence": None,
        "content": [{"type": "text", "text": str(2 * n)}],
        "usage": {"input_tokens": 7 + n, "output_tokens": 3, "cache_read_input_tokens": 50 * n,
                  "cache_creation_input_tokens": written,
                  "cache_creation": {"ephemeral_5m_input_tokens": written, "ephemeral_1h_input_tokens": 0}},
    }  # fmt: skip
    replies[n] = reply
    return reply


@pytest.fixture
def anthropic_server() -> Iterator[tuple[str, dict[int, dict[str, Any]]]]:
    replies: dict[int, dict[str, Any]] = {}
    with json_server(lambda body: _message(body, replies)) as url:
        yield url, replies


def test_an_anthropic_message_costs_what_genai_prices_makes_of_its_reply(anthropic_server: Any) -> None:
    url, replies = anthropic_server
    client = anthropic.Anthropic(base_url=url, api_key="test", max_retries=0)

    def agent(question: str) -> Any:
        return client.messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": question}])

    results = AblationEngine().run(agent, agent, TASKS)
    assert len(results) == 2 * len(TASKS)
    for r in results:
        raw = replies[int(r.task_id[1:])]["usage"]
        assert r.usage is not None and r.passed
        assert r.usage.cache_write_tokens == raw["cache_creation_input_tokens"]
        assert r.usage.cached_tokens == raw["cache_read_input_tokens"]
        extracted = genai_prices.extract_usage(replies[int(r.task_id[1:])], provider_id="anthropic")
        assert r.usage.input_tokens == extracted.usage.input_tokens  # reads and writes within the input
        expected = extracted.calc_price().total_price
        assert (r.cost_source, r.cost_currency) == ("price-db", "USD")
        assert r.cost == pytest.approx(float(expected), rel=1e-12)


def test_an_override_prices_cache_writes_at_their_rate_else_at_the_input_rate() -> None:
    usage = TrialUsage(input_tokens=5000, cached_tokens=1200, cache_write_tokens=3000, output_tokens=40,
                       model="house-model")  # fmt: skip
    full = ModelPrice(input_per_mtok=3, output_per_mtok=15, cached_input_per_mtok=0.3, cache_write_per_mtok=3.75)
    exact = (Fraction(800) * 3 + 1200 * Fraction("0.3") + 3000 * Fraction("3.75") + 40 * 15) / 10**6
    assert override_price(usage, full) == pytest.approx(float(exact), rel=1e-12)
    unset = ModelPrice(input_per_mtok=3, output_per_mtok=15, cached_input_per_mtok=0.3)
    exact = (Fraction(800 + 3000) * 3 + 1200 * Fraction("0.3") + 40 * 15) / 10**6
    assert override_price(usage, unset) == pytest.approx(float(exact), rel=1e-12)

    engine = AblationEngine(CampaignConfig(prices={"house-model": full}))
    [trial] = [r for r in engine.run(lambda x: AgentOutput(output=x, usage=usage), lambda x: x, TASKS[:1])
               if r.arm == "baseline"]  # fmt: skip
    assert (trial.cost_source, trial.cost) == ("override", pytest.approx(override_price(usage, full)))


def test_cache_counts_beyond_the_input_are_cut_to_fit_for_both_prices() -> None:
    """A source whose input left the cache out: reads first, then writes, fill the input."""
    usage = TrialUsage(input_tokens=10, cached_tokens=6, cache_write_tokens=8, output_tokens=2, model=MODEL)
    price = ModelPrice(input_per_mtok=3, output_per_mtok=15, cached_input_per_mtok=0.3, cache_write_per_mtok=3.75)
    exact = (6 * Fraction("0.3") + 4 * Fraction("3.75") + 2 * 15) / 10**6
    assert override_price(usage, price) == pytest.approx(float(exact), rel=1e-12)
    reference = calc_price(Usage(input_tokens=10, cache_read_tokens=6, cache_write_tokens=4, output_tokens=2),
                           model_ref=MODEL).total_price  # fmt: skip
    assert database_price(usage) == pytest.approx(float(reference), rel=1e-12)


@pytest.fixture
def sdk_provider() -> Iterator[None]:
    yield from sdk_provider_for_one_test()


def test_a_pydantic_ai_run_and_its_spans_carry_cache_writes_to_the_cost(sdk_provider: None) -> None:
    """The baseline is the instrumented agent itself (its ``RunUsage``); the candidate returns
    only the text, so its usage comes from pydantic-ai's spans alone."""
    sent: list[RequestUsage] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage(input_tokens=4000 + len(sent), cache_read_tokens=500, cache_write_tokens=2500,
                             output_tokens=9)  # fmt: skip
        sent.append(usage)
        return ModelResponse(parts=[TextPart("ok")], usage=usage)

    stand_in = FunctionModel(model, model_name="claude-sonnet-4-0")
    try:  # the argument of the installed version: ``instrument=True``, or its capability
        agent: Any = Agent(stand_in, instrument=True)  # type: ignore[call-arg]
    except TypeError:
        from pydantic_ai.capabilities import Instrumentation

        agent = Agent(stand_in, capabilities=[Instrumentation()])

    async def text_only(prompt: str) -> str:
        return str((await agent.run(prompt)).output)

    tasks = [AblationTask(task_id=f"t{i}", input_data=f"task {i}", expected_output="ok") for i in range(3)]
    results = AblationEngine(CampaignConfig(concurrency=1)).run(agent, text_only, tasks)
    assert len(sent) == len(results) == 6
    for r in results:
        assert r.usage is not None and r.usage.model == "claude-sonnet-4-0"
        assert (r.usage.cache_write_tokens, r.usage.cached_tokens) == (2500, 500)
        [request] = [u for u in sent if u.input_tokens == r.usage.input_tokens]
        expected = calc_price(request, model_ref="claude-sonnet-4-0").total_price  # pydantic-ai's own object
        assert r.cost_source == "price-db" and r.cost == pytest.approx(float(expected), rel=1e-12)
        if r.arm == "candidate":
            assert r.spans is not None and r.spans.summary().cache_write_tokens == 2500


def test_openai_results_carry_their_cache_writes() -> None:
    chat = openai.types.chat.ChatCompletion.model_validate({
        "id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "4"}}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 2, "total_tokens": 902,
                  "prompt_tokens_details": {"cached_tokens": 100, "cache_write_tokens": 700}},
    })  # fmt: skip
    usage = sdk_output(chat).usage
    assert (usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens) == (900, 100, 700)
    response = openai.types.responses.Response.model_validate({
        "id": "r1", "object": "response", "created_at": 0, "model": "gpt-4o-mini", "status": "completed",
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "output": [],
        "usage": {"input_tokens": 40, "output_tokens": 5, "total_tokens": 45,
                  "input_tokens_details": {"cached_tokens": 8, "cache_write_tokens": 30},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    })  # fmt: skip
    usage = sdk_output(response).usage
    assert (usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens) == (40, 8, 30)


def test_inspect_usage_puts_cache_reads_and_writes_back_into_the_input(tmp_path: Path) -> None:
    """Inspect splits OpenAI's ``prompt_tokens`` into input, cache reads and cache writes
    (``model_output_from_openai``); the trial's input is the reply's ``prompt_tokens`` again. A
    ``model_usage`` entry whose ``total_tokens`` is input plus output holds the cache already."""
    from inspect_ai.model import ModelUsage
    from inspect_ai.model._openai import model_output_from_openai

    log = json.loads((TOOLS / "inspect_baseline.json").read_text())
    expected: dict[str, tuple[int, int, int]] = {}
    for i, sample in enumerate(log["samples"]):
        prompt, read, written = 1000 + i, 10 * i, 100 + i
        [model] = sample["model_usage"]
        if i % 2:  # a provider that counted the cache within input_tokens
            usage = ModelUsage(input_tokens=prompt, output_tokens=3, total_tokens=prompt + 3,
                               input_tokens_cache_read=read, input_tokens_cache_write=written)  # fmt: skip
        else:
            chat = openai.types.chat.ChatCompletion.model_validate({
                "id": "c", "object": "chat.completion", "created": 0, "model": model, "choices": [],
                "usage": {"prompt_tokens": prompt, "completion_tokens": 3, "total_tokens": prompt + 3,
                          "prompt_tokens_details": {"cached_tokens": read, "cache_write_tokens": written}},
            })  # fmt: skip
            usage = model_output_from_openai(chat, []).usage
            assert usage is not None and usage.input_tokens == prompt - read - written
        sample["model_usage"] = {model: usage.model_dump()}
        expected[f"{sample['id']}/{sample['epoch']}"] = (prompt, read, written)
    path = tmp_path / "inspect.json"
    path.write_text(json.dumps(log))
    results = load_results(path)
    assert len(results) == len(expected)
    for r in results:
        assert r.usage is not None
        got = (r.usage.input_tokens, r.usage.cached_tokens, r.usage.cache_write_tokens)
        assert got == expected[f"{r.task_id}/{r.run + 1}"]


def test_pydantic_evals_cache_write_metric_is_usage_and_stays_a_metric(tmp_path: Path) -> None:
    report = json.loads((TOOLS / "pe_baseline.json").read_text())
    for i, case in enumerate(report["cases"]):
        case["metrics"]["cache_write_tokens"] = 20 + i
    path = tmp_path / "pe.json"
    path.write_text(json.dumps(report))
    cases = {(c["source_case_name"], int(c["name"].rsplit("[", 1)[1].split("/")[0]) - 1): c for c in report["cases"]}
    results = load_results(path)
    assert len(results) == len(cases)
    for r in results:
        written = cases[(r.task_id, r.run)]["metrics"]["cache_write_tokens"]
        assert r.usage is not None and r.usage.cache_write_tokens == written
        assert r.metrics["cache_write_tokens"] == written


#: A price as a store written before ``cache_write_per_mtok`` existed holds it: these four keys.
EARLIER_PRICE = {"input_per_mtok": 3.0, "output_per_mtok": 15.0, "cached_input_per_mtok": 0.3, "currency": "USD"}


def test_a_stored_campaign_without_a_cache_write_price_resumes(tmp_path: Path) -> None:
    price = ModelPrice(input_per_mtok=3, output_per_mtok=15, cached_input_per_mtok=0.3)
    assert json.loads(price.model_dump_json()) == EARLIER_PRICE
    tasks = TASKS
    ids: dict[str, Any] = {"suite_fingerprint": suite_fingerprint(tasks), "task_digests": task_digests(tasks),
                           "baseline_agent": "a:v1", "candidate_agent": "a:v2"}  # fmt: skip
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        cid = store.create_campaign(config=CampaignConfig(), **ids)
    earlier = {**json.loads(CampaignConfig().model_dump_json()), "prices": {MODEL: EARLIER_PRICE}}
    with sqlite3.connect(path) as conn:  # the configuration as the earlier layout stored it
        conn.execute("UPDATE campaigns SET config_json = ? WHERE id = ?", (json.dumps(earlier), cid))
    with RunStore(path) as store:
        store.check_resume(cid, config=CampaignConfig(prices={MODEL: price}), **ids)
        dearer = price.model_copy(update={"cache_write_per_mtok": 3.75})
        with pytest.raises(ResumeMismatchError, match=r"config\.prices changed"):
            store.check_resume(cid, config=CampaignConfig(prices={MODEL: dearer}), **ids)


def test_a_stored_usage_without_cache_writes_reads_as_none_written(tmp_path: Path) -> None:
    usage = TrialUsage(input_tokens=900, output_tokens=3, cached_tokens=100, model_requests=1, model=MODEL)
    trial = TaskResult(task_id="q0", arm="baseline", run=0, usage=usage)
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        cid = store.create_campaign(config=CampaignConfig(), suite_fingerprint=suite_fingerprint(TASKS),
                                    task_digests=task_digests(TASKS), baseline_agent="a", candidate_agent="b")
        store.append(cid, trial)
    with sqlite3.connect(path) as conn:  # a row written before the field existed
        conn.execute("UPDATE trials SET result_json = json_remove(result_json, '$.usage.cache_write_tokens')")
        [row] = conn.execute("SELECT result_json FROM trials").fetchall()
    assert set(json.loads(row[0])["usage"]) == {"input_tokens", "output_tokens", "cached_tokens",
                                                "model_requests", "tool_calls", "model"}  # fmt: skip
    with RunStore(path) as store:
        [read] = store.results(cid)
    assert read == trial and read.usage is not None and read.usage.cache_write_tokens == 0
