"""The task table against a plain-Python reading of the same trials (Hypothesis), and the word
diff against its inputs: what is kept plus what is deleted gives the baseline's text, what is kept
plus what is inserted the candidate's."""

from __future__ import annotations

import html
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ablation import CampaignConfig, compare_results
from ablation.analysis.details import MAX_DIFF_WORDS
from ablation.analysis.details import word_diff as diff_segments
from ablation.columns import results_to_columns
from ablation.schema import TaskResult
from ablation.view.diff import word_diff
from ablation.view.tasks import FILTERS, SORTS, task_table
from ablation.view.traces import first_divergence, side_by_side

CONFIG = CampaignConfig(n_resamples=100)

trial = st.tuples(
    st.sampled_from(["a", "B", "c1", "c2", "d", "Ab"]),  # task id
    st.integers(0, 1),  # run
    st.booleans(),  # passed
    st.sampled_from(["completed", "completed", "error"]),
    st.one_of(st.none(), st.floats(0.01, 5)),  # latency
)


def results(rows: list[Any], arm: str) -> list[TaskResult]:
    seen: dict[tuple[str, int], TaskResult] = {}
    for tid, run, passed, status, lat in rows:
        cat = "x" if tid in ("a", "c1", "d") else "y"  # a task's category is the task's
        seen.setdefault((tid, run), TaskResult(
            task_id=tid, arm=arm, run=run, status=status, passed=passed and status == "completed",
            category=cat, latency_s=lat, critical=tid.startswith("c"),
            error_type="E" if status == "error" else None,
        ))  # fmt: skip
    return list(seen.values())


def expected_rows(base: list[TaskResult], cand: list[TaskResult], report: Any, show: str,
                  query: str, sort: str, desc: bool) -> list[str]:  # fmt: skip
    paired = {r.task_id for r in base} & {r.task_id for r in cand}
    ids = sorted({r.task_id for r in base + cand})  # the paired tasks and the ones left out

    def arm(rs: list[TaskResult], tid: str) -> list[TaskResult]:
        return [r for r in rs if r.task_id == tid]

    def rate(rs: list[TaskResult]) -> float:
        return sum(r.passed for r in rs) / len(rs) if rs else float("inf")

    def latency(rs: list[TaskResult]) -> float:
        xs = [r.latency_s for r in rs if r.status == "completed" and r.latency_s is not None]
        return sum(xs) / len(xs) if xs else float("inf")

    keep = {
        "all": lambda t: True,
        "paired": lambda t: t in paired,
        "excluded": lambda t: t not in paired,
        "regressions": lambda t: t in report.regressions,
        "improvements": lambda t: t in report.improvements,
        "errors": lambda t: any(r.status != "completed" for r in arm(base + cand, t)),
        "flaky": lambda t: t in {f.task_id for f in report.flaky},
        "critical": lambda t: t.startswith("c"),
    }[show]
    rows = [t for t in ids if keep(t) and query.casefold() in t.casefold()]
    value = {
        "id": lambda t: t,
        "category": lambda t: (arm(cand, t) or arm(base, t))[0].category,
        "baseline": lambda t: rate(arm(base, t)), "candidate": lambda t: rate(arm(cand, t)),
        "errors": lambda t: sum(r.status != "completed" for r in arm(base + cand, t)),
        "latency_b": lambda t: latency(arm(base, t)), "latency_c": lambda t: latency(arm(cand, t)),
    }  # fmt: skip
    if sort == "outcome":
        return rows  # compared as a multiset below: the order of labels is the table's own
    if sort == "id":
        return rows[::-1] if desc else rows
    missing = float("inf")

    def key(t: str) -> Any:
        v = value[sort](t)
        if desc and v == missing:
            return -missing  # unknown last either way
        return v

    ordered = sorted(rows, key=key, reverse=False)
    if desc:  # descending values, ties in id order
        ordered = sorted(rows, key=lambda t: (_neg(key(t)), t))
    return ordered


def _neg(v: Any) -> Any:
    return -v if isinstance(v, int | float) else _Rev(v)


class _Rev(str):
    def __lt__(self, other: object) -> bool:
        return str.__gt__(self, str(other))


@settings(max_examples=30, deadline=None)
@given(
    st.lists(trial, min_size=1, max_size=14), st.lists(trial, min_size=1, max_size=14),
    st.sampled_from(FILTERS), st.sampled_from(["", "c", "A", "b"]), st.sampled_from(sorted(SORTS)),
    st.booleans(),
)  # fmt: skip
def test_table_matches_a_plain_reading(base_rows: list[Any], cand_rows: list[Any], show: str,
                                       query: str, sort: str, desc: bool) -> None:  # fmt: skip
    base, cand = results(base_rows, "baseline"), results(cand_rows, "candidate")
    report = compare_results(base, cand, config=CONFIG)
    table = task_table(results_to_columns(base, "baseline"), results_to_columns(cand, "candidate"),
                       config=CONFIG)  # fmt: skip
    page = table.select(show=show, query=query, sort=sort, descending=desc, size=500)
    got = [str(table.ids[i]) for i in page.rows]
    want = expected_rows(base, cand, report, show, query, sort, desc)
    assert (sorted(got) if sort == "outcome" else got) == (sorted(want) if sort == "outcome" else want)
    assert page.total == len(want)


def test_paging_covers_every_row_once() -> None:
    base = [TaskResult(task_id=f"t{i:03d}", arm="baseline", passed=i % 2 == 0) for i in range(123)]
    cand = [TaskResult(task_id=f"t{i:03d}", arm="candidate", passed=i % 3 == 0) for i in range(123)]
    report = compare_results(base, cand, config=CONFIG)
    table = task_table(results_to_columns(base, "baseline"), results_to_columns(cand, "candidate"),
                       config=CONFIG)  # fmt: skip
    pages = [table.select(page=p, size=50) for p in (1, 2, 3, 4)]
    assert [p.pages for p in pages] == [3, 3, 3, 3] and pages[3].page == 3  # past the end: the last
    seen = [str(table.ids[i]) for p in pages[:3] for i in p.rows]
    assert seen == [f"t{i:03d}" for i in range(123)]
    regs = table.select(show="regressions", size=500)
    assert [str(table.ids[i]) for i in regs.rows] == report.regressions


def _pieces(markup: str, tag: str) -> str:
    found = re.findall(rf"<{tag}>(.*?)</{tag}>", markup, flags=re.S)
    return "".join(found)


@settings(max_examples=60, deadline=None)
@given(st.text(st.sampled_from("ab <>&\"'\n\x1b"), max_size=40),
       st.text(st.sampled_from("ab <>&\"'\n\x1b"), max_size=40))  # fmt: skip
def test_word_diff_rebuilds_both_texts(before: str, after: str) -> None:
    markup = word_diff(before, after)
    assert "<" not in re.sub(r"</?(pre|span|del|ins)( class=\"diff\")?>", "", markup)
    parts = re.findall(r"<(span|del|ins)>(.*?)</\1>", markup, flags=re.S)
    shown = lambda keep: html.unescape("".join(t for k, t in parts if k in keep))  # noqa: E731
    assert shown({"span", "del"}) == before.replace("\x1b", "\\x1b")
    assert shown({"span", "ins"}) == after.replace("\x1b", "\\x1b")


def test_word_diff_of_long_outputs_is_the_reports_diff_and_says_so() -> None:
    """The page shows the report's diff (one diff, not two): past the compared words both texts
    are still shown whole, and the page says how much was compared."""
    before = " ".join(f"w{i}" for i in range(MAX_DIFF_WORDS + 50))
    after = before.replace("w7 ", "x7 ") + " tail"
    markup = word_diff(before, after)
    parts = re.findall(r"<(span|del|ins)>(.*?)</\1>", markup, flags=re.S)
    assert [(k, html.unescape(t)) for k, t in parts] == [
        ({"equal": "span", "delete": "del", "insert": "ins"}[s.op], s.text) for s in diff_segments(before, after)
    ]
    assert "".join(html.unescape(t) for k, t in parts if k != "ins") == before
    assert "".join(html.unescape(t) for k, t in parts if k != "del") == after
    assert f"Only the first {MAX_DIFF_WORDS} pieces of each output (words and the white space" in markup
    assert "Only the first" not in word_diff("a b", "a c")


steps = st.lists(st.sampled_from([{"tool": "ls"}, {"tool": "cat", "arg": "<b>"}, "done", 1]),
                 max_size=6)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(steps, steps)
def test_first_divergence_is_the_first_differing_step(left: list[Any], right: list[Any]) -> None:
    split = first_divergence(left, right)
    if split is None:
        assert left == right
    else:
        assert left[:split] == right[:split]
        assert split == min(len(left), len(right)) or left[split] != right[split]
    markup = side_by_side({"trace": left, "usage": 3}, {"trace": right})
    assert markup.count('id="first-divergence"') == (split is not None)
    assert markup.count("<tr>") + markup.count('<tr class="diverge"') == 1 + max(len(left), len(right))
    assert "<b>" not in markup  # steps are text
