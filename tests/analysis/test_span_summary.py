"""The summary of a trial's spans, against a reference walk of the span tree.

The reference walks the tree from its roots carrying "inside a model call": a model call's tokens
count only outside another one (two instrumentations of one request, an agent span repeating its
run's totals). The summary computes it the other way (from each span up to its ancestors), in any
record order.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ablation.spans import SpanSummary, TrialSpans, summarize


@st.composite
def span_trees(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Records of a random forest: span ``i`` starts at ``i`` seconds, its parent is an earlier
    span or none; each is a model call (with tokens), a tool call, or neither, maybe an error."""
    n = draw(st.integers(0, 15))
    records = []
    for i in range(n):
        kind = draw(st.sampled_from(["model", "tool", "agent", "other"]))
        attrs: dict[str, Any] = {}
        if kind == "model":
            attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": draw(st.sampled_from("ab")),
                     "gen_ai.usage.input_tokens": draw(st.integers(0, 10**6)),
                     "gen_ai.usage.output_tokens": draw(st.integers(0, 10**6))}  # fmt: skip
        elif kind == "tool":
            attrs = {"gen_ai.tool.name": draw(st.sampled_from(["lookup", "refund", "search"]))}
        elif kind == "agent":  # an agent span repeating totals: never a model call
            attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.request.model": "a",
                     "gen_ai.usage.input_tokens": 999}  # fmt: skip
        parent = draw(st.one_of(st.none(), st.integers(0, i - 1))) if i else None
        records.append({
            "name": f"{kind}-{i}", "id": f"{i:016x}", "parent": None if parent is None else f"{parent:016x}",
            "start_s": float(i), "duration_s": 0.5, "status": draw(st.sampled_from(["unset", "ok", "error"])),
            "error": None, "attributes": attrs,
        })  # fmt: skip
    return records


def _reference(records: list[dict[str, Any]]) -> tuple[int, int, int]:
    """(model calls, input tokens, output tokens) of the outermost model calls, walking down."""
    children: dict[str | None, list[dict[str, Any]]] = {}
    for r in records:
        children.setdefault(r["parent"], []).append(r)
    calls = tokens_in = tokens_out = 0

    def walk(record: dict[str, Any], inside: bool) -> None:
        nonlocal calls, tokens_in, tokens_out
        is_call = record["attributes"].get("gen_ai.operation.name") == "chat"
        if is_call and not inside:
            calls += 1
            tokens_in += record["attributes"]["gen_ai.usage.input_tokens"]
            tokens_out += record["attributes"]["gen_ai.usage.output_tokens"]
        for child in children.get(record["id"], []):
            walk(child, inside or is_call)

    for root in children.get(None, []):
        walk(root, False)
    return calls, tokens_in, tokens_out


@settings(max_examples=40, deadline=None)
@given(span_trees(), st.randoms(use_true_random=False))
def test_summary_counts_outermost_model_calls_and_tools_in_start_order(
    records: list[dict[str, Any]], rnd: random.Random
) -> None:
    shuffled = list(records)
    rnd.shuffle(shuffled)
    packed = TrialSpans.of(shuffled, dropped=3)
    assert packed.records() == shuffled and packed.count == len(records)
    summary = packed.summary()
    assert (summary.model_calls, summary.input_tokens, summary.output_tokens) == _reference(records)
    assert summary.tools == [r["attributes"]["gen_ai.tool.name"] for r in records if "gen_ai.tool.name" in r["attributes"]]
    assert summary.errors == [r["name"] for r in records if r["status"] == "error"]
    assert summary.spans == len(records) and summary.dropped == 3
    assert [d.name for d in summary.timeline] == [r["name"] for r in records][:50]


def test_no_spans_summarise_to_nothing() -> None:
    assert TrialSpans().records() == [] and summarize([]) == SpanSummary()
