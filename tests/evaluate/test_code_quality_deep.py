"""Code quality of valid code with a deeply nested expression is scored, not a RecursionError.

``CodeQualityScorer`` counted decision points by recursing through the syntax tree, one Python
frame per level: a function returning a 1,500-term concatenation (generated tables do this),
which Python parses and runs, was the scorer's ``RecursionError`` instead of a score. Code
nested past what the parser can build does not compile either, and scores 0 as code that does
not parse. The expected scores are computed by hand from the documented components.
"""

from __future__ import annotations

import asyncio

import pytest

from ablation.evaluate.quality import CodeQualityScorer, run_scorer
from ablation.schema import AblationTask


def _concatenation(terms: int) -> str:
    """A documented function returning ``terms`` strings joined by ``+``, one per short line."""
    body = "\n".join('        "a" +' for _ in range(terms - 1))
    return f'def f():\n    """Doc."""\n    return (\n{body}\n        "a"\n    )\n'


def _score(code: str) -> float:
    return asyncio.run(run_scorer(CodeQualityScorer(), code, AblationTask(task_id="t")))


@pytest.mark.parametrize("terms", [3, 1500])
def test_a_long_expression_is_scored(terms: int) -> None:
    code = _concatenation(terms)
    namespace: dict[str, object] = {}
    exec(compile(code, "<agent>", "exec"), namespace)  # the premise: Python compiles and runs it
    assert namespace["f"]() == "a" * terms  # type: ignore[operator]
    # by hand: structure 15; docstrings 1 of 2 units (module, f) 12.5; annotations 0 of 1 slot
    # (f's return) 0; complexity: no decision point 20; naming 10; every line short 5
    assert _score(code) == pytest.approx(15 + 12.5 + 0 + 20 + 10 + 5)


def test_code_nested_past_the_parser_scores_zero() -> None:
    code = "x = " + " + ".join(["1"] * 20_000) + "\n"
    with pytest.raises(RecursionError):
        compile(code, "<agent>", "exec")  # the premise: Python cannot compile it
    assert CodeQualityScorer().breakdown(code)["parses"] == 0.0
    assert _score(code) == 0.0
