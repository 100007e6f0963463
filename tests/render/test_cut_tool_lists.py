"""The drill-down's tool sequences: the end of a list cut short (spans over the per-trial caps
were dropped, and the sequence is the spans') is not a divergence; the first divergence is
searched only where both sequences are known, as the viewer's step lists search it.

The oracle is written out here on its own: the first index below both lengths whose names
differ; else, when the lengths differ and the shorter list is whole, its end; else none.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ablation.render._drilldown import tool_lines
from ablation.report import PairDetail, TrialView
from ablation.spans import SpanSummary
from ablation.view.traces import first_divergence as step_divergence


def _view(tools: list[str], dropped: int, from_spans: bool = True) -> TrialView:
    spans = SpanSummary(spans=len(tools), dropped=dropped, tools=tools if from_spans else [])
    return TrialView(status="completed", passed=True, tools=tools, spans=spans)


def _lines(base: TrialView, cand: TrialView) -> list[str]:
    return tool_lines(PairDetail(task_id="x", kind="regression", baseline=base, candidate=cand))


def _oracle(base: list[str], cand: list[str], base_cut: bool, cand_cut: bool) -> int | None:
    n = min(len(base), len(cand))
    for i in range(n):
        if base[i] != cand[i]:
            return i
    if len(base) == len(cand):
        return None
    shorter_cut = base_cut if len(base) < len(cand) else cand_cut
    return None if shorter_cut else n


def test_a_cut_list_ending_early_is_not_a_divergence() -> None:
    lines = _lines(_view(["lookup", "policy", "refund"], 0), _view(["lookup", "policy"], 7))
    assert lines[:3] == [
        "baseline tools: lookup -> policy -> refund",
        "candidate tools: lookup -> policy -> ... (7 spans not kept)",
        "same tool calls as far as both were kept",
    ]
    assert not any(">>" in line for line in lines)


def test_a_whole_list_ending_early_still_diverges_at_its_end() -> None:
    lines = _lines(_view(["lookup", "policy"], 0), _view(["lookup"], 0))
    assert lines[1:3] == ["candidate tools: lookup -> >> (end)", "first divergence at tool call 2"]


def test_a_trace_sequence_is_whole_though_spans_were_dropped() -> None:
    # spans record no tool call: the sequence is the trace's, which nothing cut
    lines = _lines(_view(["lookup", "policy"], 0), _view(["lookup"], 4, from_spans=False))
    assert lines[1:3] == ["candidate tools: lookup -> >> (end)", "first divergence at tool call 2"]


def test_a_difference_before_the_cut_is_marked() -> None:
    lines = _lines(_view(["lookup", "guess", "x"], 0), _view(["lookup", "policy"], 2))
    assert lines[:3] == [
        "baseline tools: lookup -> >> guess -> x",
        "candidate tools: lookup -> >> policy -> ... (2 spans not kept)",
        "first divergence at tool call 2",
    ]


_names = st.lists(st.sampled_from(["a", "b"]), max_size=5)


@settings(max_examples=300, deadline=None)
@given(_names, _names, st.integers(0, 3), st.integers(0, 3))
def test_the_marked_divergence_is_the_oracles_and_the_viewers(
    base: list[str], cand: list[str], base_dropped: int, cand_dropped: int
) -> None:
    base_cut, cand_cut = base_dropped > 0 and bool(base), cand_dropped > 0 and bool(cand)
    want = _oracle(base, cand, base_cut, cand_cut)
    assert step_divergence(base, cand, base_dropped * base_cut, cand_dropped * cand_cut) == want
    lines = _lines(_view(base, base_dropped), _view(cand, cand_dropped))
    if not base and not cand:
        assert all(" spans: " in line for line in lines)  # no tool line, only span summaries
        return
    note = lines[2]
    if want is None:
        assert note.startswith("same tool calls")
        assert (note == "same tool calls") == (not base_cut and not cand_cut)
    else:
        assert note == f"first divergence at tool call {want + 1}"
    assert sum(line.count(">>") for line in lines[:2]) == (0 if want is None else 2)
