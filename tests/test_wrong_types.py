"""A public function given a value of a type it does not take raises ``WrongType``.

``WrongType`` is a ``ConfigError`` (so an ``AblationError``) and a ``TypeError``. Before, a dict
given as ``config`` failed deep in the run as ``AttributeError: 'dict' object has no attribute
'sequential'``, and ``compare_results`` raised bare ``TypeError``/``ValueError`` outside the tree
every error of ablation belongs to (DESIGN section 3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ablation import (
    AblationEngine,
    AblationError,
    AblationTask,
    ConfigError,
    ResultReader,
    TaskResult,
    WrongType,
    compare_results,
    run_ablation_campaign,
)
from ablation.quality import JudgeScorer
from ablation.render import render
from ablation.verifiers import numeric

TASKS = [AblationTask(task_id="a", input_data=1, expected_output=1)]
RESULTS = [TaskResult(task_id="a", passed=True)]


def _agent(x: int) -> int:
    return x


CALLS: dict[str, tuple[Callable[[], Any], str]] = {
    "campaign config dict": (lambda: run_ablation_campaign(_agent, _agent, TASKS, config={"alpha": 0.1}),
                             r"config must be a CampaignConfig, got dict \(pass CampaignConfig\(\*\*fields\)\)"),
    "engine config dict": (lambda: AblationEngine({"alpha": 0.1}), "config must be a CampaignConfig, got dict"),
    "compare config dict": (lambda: compare_results(RESULTS, RESULTS, config={"alpha": 0.1}),
                            "config must be a CampaignConfig, got dict"),
    "compare results mapping": (lambda: compare_results({"a": True}, RESULTS), "baseline results: got dict"),
    "compare results items": (lambda: compare_results([1, 2], RESULTS), "baseline results: items of type int"),
    "compare expected_ids str": (lambda: compare_results(RESULTS, RESULTS, expected_ids="abc"),
                                 "expected_ids must be an iterable of ids"),
}


@pytest.mark.parametrize("case", list(CALLS))
def test_a_value_of_the_wrong_type_is_wrong_type(case: str) -> None:
    call, words = CALLS[case]
    with pytest.raises(WrongType, match=words) as raised:
        call()
    assert isinstance(raised.value, ConfigError) and isinstance(raised.value, TypeError)
    assert isinstance(raised.value, AblationError)


def test_empty_results_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="candidate results: empty"):
        compare_results(RESULTS, [])


def _reader(name: str, shapes: tuple[str, ...]) -> object:
    return ResultReader(name, shapes, lambda doc: False, lambda *a: iter(()))  # type: ignore[arg-type]


def _judge(judge: object) -> object:
    return JudgeScorer(judge)  # type: ignore[arg-type]


#: Public constructors and functions given a value they refuse: (call, the class it must be).
REFUSALS: dict[str, tuple[Callable[[], Any], type[AblationError]]] = {
    "reader name": (lambda: _reader("MyTool", ("document",)), ConfigError),
    "reader shapes": (lambda: _reader("mytool", ("weird",)), ConfigError),
    "render format": (lambda: render(compare_results(RESULTS, RESULTS), "pdf"), ConfigError),
    "numeric tolerance": (lambda: numeric(rel_tol=-1), ConfigError),
    "judge not callable": (lambda: _judge(3), WrongType),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_public_refusals_are_ablation_errors(case: str) -> None:
    """They raised bare ``ValueError``/``TypeError``: a caller's ``except AblationError`` missed
    them; each is now a ``ConfigError`` (a ``ValueError``) or a ``WrongType`` (a ``TypeError``)."""
    call, kind = REFUSALS[case]
    with pytest.raises(kind):
        call()


def _generated(items: list[object]) -> object:
    yield from items


SUITES: dict[str, tuple[Callable[[], Any], str]] = {
    "a string": (lambda: "abc", "a suite is a list of AblationTask, got str"),
    "a mapping": (lambda: {"a": TASKS[0]}, "a suite is a list of AblationTask, got dict"),
    "a list with a string": (lambda: [TASKS[0], "b"], r"not AblationTask: #1 \(str\)"),
    "a generator with numbers": (lambda: _generated([TASKS[0], *range(12)]),
                                 r"not AblationTask: #1 \(int\), .* \.\.\. and 2 more"),
}


@pytest.mark.parametrize("case", list(SUITES))
def test_a_suite_of_the_wrong_type_is_wrong_type(case: str) -> None:
    """A suite that is not one, or holds items that are not tasks, was a ``ConfigError`` only."""
    suite, words = SUITES[case]
    with pytest.raises(WrongType, match=words):
        run_ablation_campaign(_agent, _agent, suite())


@pytest.mark.parametrize("names", ["ab", ("x",), ("a", "b", "c"), ("a", 3)])
def test_compare_names_are_two_strings(names: object) -> None:
    """``names="ab"`` labelled the sides "a" and "b", a third name was dropped silently, one name
    was an ``IndexError`` and a number a pydantic ``ValidationError`` of ``Provenance``."""
    with pytest.raises(WrongType, match=r"names must be two strings \(baseline, candidate\)"):
        compare_results(RESULTS, RESULTS, names=names)  # type: ignore[arg-type]
    report = compare_results(RESULTS, RESULTS, names=["old", "new"])  # type: ignore[arg-type]
    assert (report.provenance.baseline_agent, report.provenance.candidate_agent) == ("old", "new")
