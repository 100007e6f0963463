"""Prices as users set them, on what real SDKs return.

- A ``[tool.ablation.prices."gpt-4o-mini"]`` override must price a reply whose model id carries
  the date the API appends (``gpt-4o-mini-2024-07-18``): before, the lookup missed and the cost
  came from the price database without a word, so two arms could be priced by different sources.
- An override's cost is the decimal arithmetic of its prices rounded once (as genai-prices
  computes in ``Decimal``), not a sum of binary floats.
- A completion without ``usage`` has unknown tokens (its one request, tool calls and model kept),
  not zero tokens and a zero cost.
"""

from __future__ import annotations

from fractions import Fraction

import openai
from hypothesis import given
from hypothesis import strategies as st

from ablation import AblationTask, CampaignConfig, TrialUsage, run_ablation_campaign
from ablation.agents.pricing import override_price
from ablation.agents.sdk import sdk_output
from ablation.config import ModelPrice

PRICE = {"input_per_mtok": "0.15", "output_per_mtok": "0.6", "cached_input_per_mtok": "0.075",
         "cache_write_per_mtok": "0.1875"}  # fmt: skip


def _chat(model: str, usage: dict[str, object] | None) -> openai.types.chat.ChatCompletion:
    body: dict[str, object] = {
        "id": "c1", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "4"}}],
    }  # fmt: skip
    if usage is not None:
        body["usage"] = usage
    return openai.types.chat.ChatCompletion.model_validate(body)


USAGE = {"prompt_tokens": 1500, "completion_tokens": 70, "total_tokens": 1570,
         "prompt_tokens_details": {"cached_tokens": 1024}}  # fmt: skip


def test_an_override_prices_the_dated_model_id_the_api_answers_with() -> None:
    prices = {"gpt-4o-mini": ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0, cached_input_per_mtok=0.5)}
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output="4") for i in range(3)]
    report = run_ablation_campaign(
        lambda _: _chat("gpt-4o-mini", USAGE), lambda _: _chat("gpt-4o-mini-2024-07-18", USAGE), tasks,
        config=CampaignConfig(prices=prices),
    )  # fmt: skip
    exact = float(Fraction(476 * 1 + 1024 * Fraction(1, 2) + 70 * 2, 10**6))
    for arm in (report.baseline, report.candidate):
        assert (arm.cost_source, arm.cost_currency) == ("override", "USD")
        assert arm.cost_mean == exact


@given(
    st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**7),
)
def test_an_override_is_the_exact_decimal_cost_rounded_once(inputs: int, outputs: int, cached: int, written: int) -> None:
    cached, written = min(cached, inputs), min(written, inputs - min(cached, inputs))
    usage = TrialUsage(input_tokens=inputs, output_tokens=outputs, cached_tokens=cached, cache_write_tokens=written)
    rate = {k: Fraction(v) for k, v in PRICE.items()}
    exact = (
        (inputs - cached - written) * rate["input_per_mtok"] + cached * rate["cached_input_per_mtok"]
        + written * rate["cache_write_per_mtok"] + outputs * rate["output_per_mtok"]
    ) / 10**6  # fmt: skip
    price = ModelPrice(**{k: float(v) for k, v in PRICE.items()})
    assert override_price(usage, price) == float(exact)


def test_the_float_sum_that_was_off_is_exact_now() -> None:
    usage = TrialUsage(input_tokens=4024766, output_tokens=751468, cached_tokens=1107378, cache_write_tokens=295750)
    price = ModelPrice(**{k: float(v) for k, v in PRICE.items()})
    assert override_price(usage, price) == 0.982632975


def test_a_completion_without_usage_has_unknown_tokens_and_no_cost() -> None:
    out = sdk_output(_chat("gpt-4o-mini", None))
    assert (out.output, out.cost) == ("4", None) and out.usage is not None
    assert (out.usage.input_tokens, out.usage.output_tokens, out.usage.cached_tokens) == (None, None, None)
    assert (out.usage.model_requests, out.usage.model, out.usage.tool_calls) == (1, "gpt-4o-mini", {})
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output="4") for i in range(3)]
    report = run_ablation_campaign(lambda _: _chat("gpt-4o-mini", USAGE), lambda _: _chat("gpt-4o-mini", None), tasks)
    assert report.candidate.cost_total is None
    tokens = report.metrics.get("input_tokens")  # no pair with tokens in both arms: no comparison
    assert tokens is None or tokens.n_pairs == 0


def test_a_currency_written_in_lower_case_is_the_same_currency() -> None:
    prices = {
        "gpt-4o-mini": ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0, currency="usd"),
        "gpt-4o": ModelPrice(input_per_mtok=2.5, output_per_mtok=10.0, currency="USD"),
    }
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output="4") for i in range(4)]
    report = run_ablation_campaign(
        lambda _: _chat("gpt-4o-mini", USAGE), lambda _: _chat("gpt-4o", USAGE), tasks,
        config=CampaignConfig(prices=prices),
    )  # fmt: skip
    assert (report.baseline.cost_currency, report.candidate.cost_currency) == ("USD", "USD")
    assert report.cost is not None  # compared, not dropped as in two currencies
    assert not any("different currencies" in note for note in report.notes)
