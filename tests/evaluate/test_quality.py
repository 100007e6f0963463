"""Tests of the quality scorers: contract, code quality components, rubric and model judges."""

from __future__ import annotations

import asyncio
import json
import math
import threading
from typing import Any

import numpy as np
import pytest

from ablation import quality as q
from ablation.errors import AblationError
from ablation.schema import AblationTask, RubricCriterion


def task(**kwargs: Any) -> AblationTask:
    kwargs.setdefault("task_id", "t1")
    return AblationTask(**kwargs)


def score(scorer: Any, output: Any, t: AblationTask | None = None) -> float:
    return asyncio.run(q.run_scorer(scorer, output, t or task()))


# --- the scorer contract ----------------------------------------------------------------------


def test_run_scorer_accepts_finite_reals_from_sync_and_async() -> None:
    async def async_scorer(output: Any, t: AblationTask) -> float:
        return 7.5

    assert score(lambda o, t: 3, None) == 3.0 and isinstance(score(lambda o, t: 3, None), float)
    assert score(async_scorer, None) == 7.5
    assert score(lambda o, t: np.float32(0.5), None) == 0.5
    assert score(lambda o, t: np.int64(4), None) == 4.0


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 1e300, -10**400, "5", None, True, [1.0], 1j])
def test_run_scorer_rejects_non_finite_or_non_real(bad: Any) -> None:
    def scorer(output: Any, t: AblationTask) -> Any:
        return bad

    scorer.name = "bad_scorer"  # type: ignore[attr-defined]
    with pytest.raises(q.ScorerError, match="bad_scorer") as info:
        score(scorer, None)
    assert isinstance(info.value, AblationError)


def test_run_scorer_propagates_exceptions_and_names_scorers() -> None:
    error = ValueError("scorer broke")

    def broken(output: Any, t: AblationTask) -> float:
        raise error

    with pytest.raises(ValueError) as info:
        score(broken, None)
    assert info.value is error
    assert q.scorer_name(q.CodeQualityScorer()) == "code_quality"
    assert q.scorer_name(broken).endswith(
        ":test_run_scorer_propagates_exceptions_and_names_scorers.<locals>.broken"
    )


def test_quality_scorer_protocol_and_async_detection() -> None:
    judge = q.JudgeScorer(lambda prompt: "Score: 5")
    for scorer in (q.CodeQualityScorer(), q.RubricScorer(), judge):
        assert isinstance(scorer, q.QualityScorer)
    assert not isinstance(lambda o, t: 1.0, q.QualityScorer)  # no name attribute
    assert q.scorer_is_async(judge) and not q.scorer_is_async(q.RubricScorer())


# --- code quality -----------------------------------------------------------------------------

PERFECT = '''"""Module."""


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''


def test_unparseable_or_empty_code_scores_zero_overall() -> None:
    scorer = q.CodeQualityScorer()
    for code in ("def f(:\n    pass", "", "   \n"):
        parts = scorer.breakdown(code)
        assert parts["parses"] == 0.0 and parts["total"] == 0.0
        assert all(parts[k] == 0.0 for k in q.CODE_QUALITY_WEIGHTS)


def test_weights_sum_to_100_and_perfect_code_scores_100() -> None:
    assert sum(q.CODE_QUALITY_WEIGHTS.values()) == 100
    assert q.CodeQualityScorer().breakdown(PERFECT) == {
        "parses": 1.0,
        "structure": 1.0,
        "docstrings": 1.0,
        "annotations": 1.0,
        "complexity": 1.0,
        "naming": 1.0,
        "line_length": 1.0,
        "total": 100.0,
    }


def test_script_without_definitions_hand_computed() -> None:
    # structure 0, docstrings 0/1, annotations 0 (no function), complexity 1 (module unit, cc=1),
    # naming 0 (nothing named), line_length 1 -> 20 + 5 = 25 points.
    parts = q.CodeQualityScorer().breakdown("x = 1\n")
    assert parts["structure"] == 0.0 and parts["docstrings"] == 0.0
    assert parts["annotations"] == 0.0 and parts["naming"] == 0.0
    assert parts["complexity"] == 1.0 and parts["line_length"] == 1.0
    assert parts["total"] == pytest.approx(25.0)


def test_docstring_share() -> None:
    code = '"""Doc."""\n\ndef a():\n    """Doc."""\n\ndef b():\n    pass\n\nclass C:\n    pass\n'
    # units: module (yes), a (yes), b (no), C (no) -> 2/4
    assert q.CodeQualityScorer().breakdown(code)["docstrings"] == pytest.approx(0.5)


def test_annotation_share_excludes_self_and_counts_varargs() -> None:
    scorer = q.CodeQualityScorer()
    assert scorer.breakdown("def f(a: int, b) -> int:\n    return a\n")["annotations"] == (
        pytest.approx(2 / 3)
    )
    method = "class C:\n    def m(self, x: int) -> None:\n        pass\n"
    assert scorer.breakdown(method)["annotations"] == 1.0
    # slots: a, *args, **kw, return = 4; annotated: *args and return = 2
    varargs = "def f(a, *args: int, **kw) -> None:\n    pass\n"
    assert scorer.breakdown(varargs)["annotations"] == pytest.approx(0.5)
    # a function outside a class keeps ``self`` as a normal parameter
    assert scorer.breakdown("def f(self) -> None:\n    pass\n")["annotations"] == 0.5


def test_complexity_penalty() -> None:
    ifs = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(12))
    code = f"def f(x):\n{ifs}    return -1\n"  # cc = 13 -> 3 over 10 -> 1 - 0.3
    assert q.CodeQualityScorer().breakdown(code)["complexity"] == pytest.approx(0.7)
    # and / or, comprehension for + if: cc = 1 + 2 + 2 = 5; threshold 1 -> 4 over -> 0.6
    code = (
        "def g(a, b, c, ys):\n    if a and b or c:\n        pass\n    return [y for y in ys if y]\n"
    )
    assert q.CodeQualityScorer(complexity_threshold=1).breakdown(code)["complexity"] == (
        pytest.approx(0.5)
    )
    # nested functions count for themselves: outer cc 2 (0.9), inner cc 6 (0.5) -> mean 0.7
    inner = "".join(f"        if y == {i}:\n            pass\n" for i in range(5))
    code = f"def outer(x):\n    if x:\n        pass\n    def inner(y):\n{inner}"
    assert q.CodeQualityScorer(complexity_threshold=1).breakdown(code)["complexity"] == (
        pytest.approx(0.7)
    )


def test_naming_share() -> None:
    code = "def good_name():\n    pass\n\ndef BadName():\n    pass\n\nclass GoodClass:\n    pass\n\nclass bad_class:\n    pass\n"
    assert q.CodeQualityScorer().breakdown(code)["naming"] == pytest.approx(0.5)
    assert q.CodeQualityScorer().breakdown("def __init__():\n    pass\n")["naming"] == 1.0


def test_line_length_share() -> None:
    code = "x = 1\n\ny = 'aaaaaaaaaaaaaaaa'\n"
    assert q.CodeQualityScorer(max_line_length=10).breakdown(code)["line_length"] == 0.5


def test_code_quality_call_forms_and_determinism() -> None:
    scorer = q.CodeQualityScorer()
    assert score(scorer, PERFECT) == 100.0
    assert score(scorer, {"code": PERFECT}) == 100.0
    assert score(scorer, f"```python\n{PERFECT}```") == 100.0
    assert score(scorer, "def f(:") == 0.0
    code = PERFECT + "x = 1 if y else 2\n"
    assert scorer.breakdown(code) == q.CodeQualityScorer().breakdown(code)
    with pytest.raises(q.ScorerError, match="not Python source"):
        score(scorer, 42)


# --- rubric -----------------------------------------------------------------------------------

CRITERIA = (
    RubricCriterion(name="defines", pattern=r"\bdef\b", weight=2),
    RubricCriterion(name="greets", keywords=("Hello", "WORLD"), weight=1),
    RubricCriterion(name="no_todo", pattern="TODO", negate=True, weight=1),
)


def test_rubric_weights() -> None:
    t = task(quality_rubric=CRITERIA)
    assert score(q.RubricScorer(), "def f(): print('hello world')", t) == 100.0
    assert score(q.RubricScorer(), "def f(): pass  # TODO", t) == 50.0  # 2 of 4
    assert score(q.RubricScorer(), "HELLO there, World", t) == 50.0  # greets + no_todo
    assert score(q.RubricScorer(), "TODO", t) == 0.0
    assert q.RubricScorer().explain("def f(): pass", t) == {
        "defines": True,
        "greets": False,
        "no_todo": True,
    }


def test_rubric_pattern_and_keywords_together_and_non_text_output() -> None:
    both = (RubricCriterion(name="both", pattern=r"\d+", keywords=("total",)),)
    t = task(quality_rubric=both)
    assert score(q.RubricScorer(), "Total: 42", t) == 100.0
    assert score(q.RubricScorer(), "Total: many", t) == 0.0
    assert score(q.RubricScorer(), {"total": 3}, t) == 100.0  # scored on its JSON text


def test_rubric_missing_or_free_text_is_an_error_not_zero() -> None:
    with pytest.raises(q.ScorerError, match="task 't1' has no rubric"):
        score(q.RubricScorer(), "x", task())
    with pytest.raises(q.ScorerError, match="free-text rubric"):
        score(q.RubricScorer(), "x", task(quality_rubric="be concise"))
    with pytest.raises(q.ScorerError, match="empty rubric"):
        score(q.RubricScorer(), "x", task(quality_rubric=()))
    bad = (RubricCriterion(name="bad", pattern="("),)
    with pytest.raises(q.ScorerError, match="bad pattern"):
        score(q.RubricScorer(), "x", task(quality_rubric=bad))


# --- judge ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Score: 7", 7.0),
        ("7/10", 7.0),
        ('{"score": 7}', 7.0),
        ('Here you go: {"reason": "ok", "score": 6.5}', 6.5),
        ("Clear and correct.\n**Score:** 8.5", 8.5),
        ("I would give it a score of 6 out of 10.", 6.0),
        ("Draft 4/10 ... final Score: 9", 9.0),
        ("9", 9.0),
        (" 10. ", 10.0),
        ("Score: 0", 0.0),
    ],
)
def test_parse_score(answer: str, expected: float) -> None:
    assert q.parse_score(answer, (0, 10)) == expected


@pytest.mark.parametrize(
    "answer", ["great job", "Score: 11", "Score: -1", "3/5", "", '{"score": true}']
)
def test_parse_score_errors_quote_the_answer(answer: str) -> None:
    with pytest.raises(q.ScorerError) as info:
        q.parse_score(answer, (0, 10))
    assert repr(answer[:20])[1:-1] in str(info.value)


def test_judge_scorer_normalises_and_builds_the_prompt() -> None:
    prompts: list[str] = []

    def judge(prompt: str) -> str:
        prompts.append(prompt)
        return "Reasoning...\nScore: 7"

    t = task(description="Add numbers", input_data={"a": 1}, quality_rubric=CRITERIA)
    assert score(q.JudgeScorer(judge), "THE OUTPUT", t) == pytest.approx(70.0)
    prompt = prompts[0]
    for piece in ("Add numbers", '{"a": 1}', "defines", "greets", "THE OUTPUT", "from 0", "to 10"):
        assert piece in prompt

    def judge5(prompt: str) -> str:
        prompts.append(prompt)
        return "Score: 2"

    free = task(quality_rubric="Be concise and polite.")
    assert score(q.JudgeScorer(judge5, scale=(1, 5), name="j5"), "x", free) == pytest.approx(25.0)
    assert "Be concise and polite." in prompts[-1] and "from 1" in prompts[-1]


def test_judge_scorer_async_judge_and_sync_judge_off_the_loop() -> None:
    async def async_judge(prompt: str) -> str:
        return '{"score": 10}'

    assert score(q.JudgeScorer(async_judge), "x") == 100.0
    seen: list[int] = []

    def sync_judge(prompt: str) -> str:
        seen.append(threading.get_ident())
        return "Score: 5"

    async def main() -> tuple[float, int]:
        return await q.run_scorer(q.JudgeScorer(sync_judge), "x", task()), threading.get_ident()

    value, loop_thread = asyncio.run(main())
    assert value == 50.0 and seen and seen[0] != loop_thread


def test_judge_scorer_errors() -> None:
    with pytest.raises(q.ScorerError, match="no score here"):
        score(q.JudgeScorer(lambda p: "no score here"), "x")
    with pytest.raises(q.ScorerError, match="not text"):
        score(q.JudgeScorer(lambda p: 7), "x")
    with pytest.raises(RuntimeError, match="quota"):
        score(q.JudgeScorer(lambda p: (_ for _ in ()).throw(RuntimeError("quota"))), "x")
    with pytest.raises(ValueError, match="lacks"):
        q.JudgeScorer(lambda p: "", prompt_template="Rate {description}")
    with pytest.raises(ValueError, match="cannot be formatted"):
        q.JudgeScorer(lambda p: "", prompt_template="{output} {unknown}")
    with pytest.raises(ValueError, match="scale"):
        q.JudgeScorer(lambda p: "", scale=(10, 0))
    with pytest.raises(TypeError):
        q.JudgeScorer("not callable")  # type: ignore[arg-type]


# --- pairwise ---------------------------------------------------------------------------------


def test_positions_are_deterministic_per_seed_and_both_occur() -> None:
    ids = [f"task-{i}" for i in range(40)]
    first = [q.PairwiseJudge(lambda p: "A", seed=1).candidate_position(i) for i in ids]
    again = [q.PairwiseJudge(lambda p: "A", seed=1).candidate_position(i) for i in ids]
    other = [q.PairwiseJudge(lambda p: "A", seed=2).candidate_position(i) for i in ids]
    assert first == again
    assert {"A", "B"} == set(first)
    assert first != other


def test_compare_maps_positions_back_to_arms() -> None:
    def picks_candidate(prompt: str) -> str:
        a_part = prompt.split("<<<RESPONSE A")[1].split("RESPONSE A>>>")[0]
        return "Winner: A" if "CAND" in a_part else "Winner: B"

    judge = q.PairwiseJudge(picks_candidate, seed=3)
    always_a = q.PairwiseJudge(lambda p: "[[A]]", seed=3)
    verdicts = []
    for i in range(20):
        t = task(task_id=f"t{i}")
        verdict = asyncio.run(judge.compare(t, "BASE", "CAND"))
        assert verdict.winner == "candidate" and verdict.task_id == f"t{i}"
        biased = asyncio.run(always_a.compare(t, "BASE", "CAND"))
        expected = "candidate" if biased.candidate_position == "A" else "baseline"
        assert biased.winner == expected and biased.raw == "[[A]]"
        verdicts.append(biased)
    summary = q.pairwise_preference(verdicts)
    assert summary.first_position_wins == 20 == summary.decisive
    assert 0 < summary.candidate_wins < 20


def test_compare_tie_and_unparseable() -> None:
    t = task()
    tie = asyncio.run(q.PairwiseJudge(lambda p: '{"winner": "tie"}').compare(t, "a", "b"))
    assert tie.winner == "tie"
    with pytest.raises(q.ScorerError, match="cannot find a winner"):
        asyncio.run(q.PairwiseJudge(lambda p: "both are fine").compare(t, "a", "b"))


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Winner: B", "B"),
        ('{"winner": "A"}', "A"),
        ("[[B]]", "B"),
        ("tie", "tie"),
        ("Response A is better than response B.", "A"),
        ("A is shorter.\nWinner: Response B", "B"),
        ("b", "B"),
        ("Winner: draw", "tie"),
    ],
)
def test_parse_winner(answer: str, expected: str) -> None:
    assert q.parse_winner(answer) == expected


def test_pairwise_preference_counts() -> None:
    v = q.PairwiseVerdict
    verdicts = [
        v("1", "candidate", "A", ""),
        v("2", "candidate", "B", ""),
        v("3", "baseline", "A", ""),
        v("4", "tie", "B", ""),
    ]
    summary = q.pairwise_preference(verdicts)
    assert (summary.n, summary.candidate_wins, summary.baseline_wins, summary.ties) == (4, 2, 1, 1)
    assert summary.first_position_wins == 1  # only verdict 1 went to the response shown as A
    assert summary.decisive == 3 and summary.candidate_win_rate == pytest.approx(2 / 3)
    empty = q.pairwise_preference([])
    assert empty.n == 0 and empty.candidate_win_rate is None


def test_pairwise_prompt_holds_both_outputs_once() -> None:
    judge = q.PairwiseJudge(lambda p: "A")
    prompt = judge.prompt(task(input_data=[1, 2]), {"ans": "base"}, "cand")
    assert prompt.count(json.dumps({"ans": "base"})) == 1 and prompt.count("cand") == 1
