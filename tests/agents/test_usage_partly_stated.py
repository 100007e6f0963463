"""A pydantic-ai run some of whose responses state no usage, a run on two models, and the JSON
of a usage whose every count is known.

- A run whose second response stated no usage (``RequestUsage(unmeasured_requests=1)``, what
  pydantic-ai records for a provider that left usage out) had no usage at all: its model
  requests and tool calls, which pydantic-ai's own ``RunUsage`` counts, were lost, and the
  report's ``model_requests`` and ``tool_calls.*`` metrics read the trial as missing. Reference:
  the run's ``RunUsage`` (``requests``, ``tool_calls``, ``unmeasured_requests``); its tokens are
  unknown (``None``), never the first response's alone, and it has no cost.
- A run whose responses came from two models named only the last. Reference: the responses'
  ``model_name`` in order of first use; the cost stays ``genai_prices.calc_price`` of each
  response at its own model, summed.
- A usage naming several models joined is never priced whole: the database matches such an id by
  its first model's prefix (``calc_price`` itself shows it).
- A usage with every count known serializes byte for byte as before unknown counts existed (the
  literal JSON below was written by that version for the same usage), and reads back equal.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

pytest.importorskip("pydantic_ai")

from genai_prices import Usage, calc_price
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from ablation import AblationEngine, AblationTask, TaskResult, TrialUsage, compare_results
from ablation.agents.pricing import priced
from ablation.agents.sdk import sdk_output
from ablation.outputs import AgentOutput, usage_metrics
from ablation.render import render
from tests.agents.test_usage_per_call import _fallback, _rate_limited_first


def _agent(second: RequestUsage) -> Agent[None, str]:
    """Calls ``lookup`` (usage stated), then answers with ``second`` as its usage."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not any(isinstance(p, ToolReturnPart) for m in messages for p in m.parts):
            return ModelResponse(parts=[ToolCallPart("lookup", {"q": "x"})],
                                 usage=RequestUsage(input_tokens=1000, output_tokens=10))  # fmt: skip
        return ModelResponse(parts=[TextPart("ok")], usage=second)

    agent = Agent(FunctionModel(respond, model_name="gpt-4o-mini"))

    @agent.tool_plain
    def lookup(q: str) -> str:
        return q

    return agent


def stated() -> Agent[None, str]:
    return _agent(RequestUsage(input_tokens=1200, output_tokens=5))


def partly_stated() -> Agent[None, str]:
    return _agent(RequestUsage(unmeasured_requests=1))  # the provider left usage out


def test_a_run_with_an_unstated_response_keeps_its_requests_and_tool_calls() -> None:
    result = partly_stated().run_sync("q")
    reference = result.usage
    assert (reference.requests, reference.tool_calls, reference.unmeasured_requests) == (2, 1, 1)
    out = sdk_output(result)
    assert isinstance(out, AgentOutput) and out.usage is not None
    u = out.usage
    assert (u.model_requests, sum(u.tool_calls.values())) == (reference.requests, reference.tool_calls)
    assert (u.tool_calls, u.model) == ({"lookup": 1}, "gpt-4o-mini")
    assert (u.input_tokens, u.output_tokens, u.cached_tokens, u.cache_write_tokens) == (None,) * 4
    assert u.total_tokens is None and not u.tokens_known
    assert priced(out, {})["cost"] is None  # unknown tokens: no cost, as for no usage
    assert usage_metrics(u) == {"model_requests": 2.0, "tool_calls.lookup": 1.0}  # no token metric


def _tasks(n: int) -> list[AblationTask]:
    return [AblationTask(task_id=f"t{i}", input_data=f"q{i}", expected_output="ok") for i in range(n)]


def test_the_report_pairs_the_trial_on_requests_and_tool_calls_but_not_on_tokens() -> None:
    results = AblationEngine().run(stated(), partly_stated(), _tasks(3))
    base = [r for r in results if r.arm == "baseline"]
    cand = [r for r in results if r.arm == "candidate"]
    for r in cand:
        assert r.status == "completed" and r.passed is True, r.error_message
        assert r.usage is not None and r.usage.model_requests == 2 and r.usage.tool_calls == {"lookup": 1}
        assert (r.tokens, r.cost, r.cost_source) == (None, None, None)
        assert "input_tokens" not in r.metrics and r.metrics["model_requests"] == 2.0
    assert all(r.tokens == 1000 + 10 + 1200 + 5 and r.cost is not None for r in base)
    report = compare_results(base, cand)
    assert report.metrics["model_requests"].n_pairs == 3
    assert report.metrics["model_requests"].mean_difference == 0.0
    assert report.metrics["tool_calls.lookup"].n_pairs == 3
    assert report.metrics["input_tokens"].n_pairs == 0  # unknown, never 0
    # stored and read back (the JSON a store row or an export keeps) unchanged
    again = TaskResult.model_validate_json(cand[0].model_dump_json())
    assert again == cand[0] and again.usage is not None and again.usage.input_tokens is None


def test_a_run_on_two_models_names_both_and_is_priced_call_by_call() -> None:
    agent = Agent(FallbackModel(FunctionModel(_rate_limited_first, model_name="gpt-4o"),
                                FunctionModel(_fallback, model_name="gpt-4o-mini")))  # fmt: skip

    @agent.tool_plain
    def lookup(q: str) -> str:
        return q

    result = agent.run_sync("q")
    responses = [m for m in result.new_messages() if isinstance(m, ModelResponse)]
    names = list(dict.fromkeys(str(m.model_name) for m in responses))
    assert names == ["gpt-4o", "gpt-4o-mini"]
    reference = sum(Decimal(calc_price(m.usage, model_ref=str(m.model_name)).total_price) for m in responses)
    out = sdk_output(result)
    assert isinstance(out, AgentOutput) and out.usage is not None
    assert out.usage.model == "+".join(names)
    assert priced(out, {}) == {"cost": float(reference), "cost_currency": "USD", "cost_source": "price-db"}


def test_a_usage_naming_several_models_is_not_priced_whole() -> None:
    joined = "claude-3-5-sonnet+gpt-4o"
    hazard = calc_price(Usage(input_tokens=1000, output_tokens=10), model_ref=joined)
    assert hazard.model.id == "claude-3-5-sonnet"  # the database matches the first model's prefix
    usage = TrialUsage(input_tokens=1000, output_tokens=10, model_requests=2, model=joined)
    assert priced(AgentOutput(usage=usage), {})["cost"] is None


#: What the version before unknown token counts wrote for ``FULL`` (``model_dump_json``).
OLD_USAGE_JSON = (
    '{"input_tokens":1200,"output_tokens":34,"cached_tokens":200,"cache_write_tokens":0,'
    '"model_requests":2,"tool_calls":{"lookup":1},"model":"gpt-4o-mini"}'
)
#: And for a ``TaskResult(task_id="t0", usage=FULL, started_at=1.0)`` (a store row's result_json).
OLD_RESULT_JSON = (
    '{"task_id":"t0","arm":"baseline","run":0,"status":"completed","passed":false,"output":null,'
    '"latency_s":null,"wall_s":null,"attempts":1,"attempt_errors":[],"error_stage":null,'
    '"error_type":null,"error_message":null,"error_traceback":null,"verifier_note":null,'
    '"quality":{},"quality_errors":{},"cost":null,"tokens":1234,"metrics":{"input_tokens":1200.0,'
    '"output_tokens":34.0,"cached_tokens":200.0,"model_requests":2.0,"tool_calls.lookup":1.0},'
    '"category":null,"critical":false,"started_at":1.0,"usage":' + OLD_USAGE_JSON + ","
    '"cost_currency":null,"cost_source":null,"trace":null,"input":null,"expected_output":null,'
    '"spans":null}'
)


def test_a_fully_stated_usage_serializes_as_before() -> None:
    full = TrialUsage(input_tokens=1200, output_tokens=34, cached_tokens=200, cache_write_tokens=0,
                      model_requests=2, tool_calls={"lookup": 1}, model="gpt-4o-mini")  # fmt: skip
    assert full.model_dump_json() == OLD_USAGE_JSON
    assert TaskResult(task_id="t0", usage=full, started_at=1.0).model_dump_json() == OLD_RESULT_JSON
    assert TrialUsage.model_validate_json(OLD_USAGE_JSON) == full
    assert TaskResult.model_validate_json(OLD_RESULT_JSON).model_dump_json() == OLD_RESULT_JSON
    # a row stored without a cache-write count (older still) reads it as 0, not unknown
    assert TrialUsage.model_validate({"input_tokens": 5}).cache_write_tokens == 0


def test_the_drill_down_says_unknown_tokens() -> None:
    results = AblationEngine().run(stated(), partly_stated(), _tasks(1))
    base = [r for r in results if r.arm == "baseline"]
    cand = [r.model_copy(update={"passed": False}) for r in results if r.arm == "candidate"]
    report = compare_results(base, cand)
    assert report.regressions == ["t0"]
    text = render(report, "markdown", details=True)
    assert "tokens unknown, 2 model requests" in text
    assert "tokens 2200 in / 15 out, 2 model requests" in text  # the baseline's, stated
