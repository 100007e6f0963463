"""Values nested past the depth ``values_equal`` follows are the verifier's error, not a failure.

``values_equal`` stopped at 100 levels of nesting and answered ``False``: an agent returning
exactly the expected output, nested 101 lists deep, failed its task, a check that could not run
recorded as a verdict. Python's own ``==`` is the reference for what the values are: equal.
Past the depth, ``equals`` and ``json_equal`` raise ``VerifierError`` (the trial's error at the
verifier stage); within it they still compare.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.evaluate import equality
from ablation.evaluate.verifiers import VerifierError, equals, json_equal

#: The depth ``values_equal`` follows (``equality.MAX_DEPTH``; it stopped there before, too).
MAX_DEPTH = 100


def _nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def _holding_itself() -> list[Any]:
    value: list[Any] = [1]
    value.append(value)
    return value


DEEP = [_nested(MAX_DEPTH + 1), _nested(3 * MAX_DEPTH), _holding_itself()]


@pytest.mark.parametrize("value", DEEP, ids=["just-past", "far-past", "holds-itself"])
def test_past_the_depth_is_an_error(value: Any) -> None:
    copy = value if value is DEEP[2] else json.loads(json.dumps(value))
    assert copy == value  # the reference: Python's == finds them equal
    task = AblationTask(task_id="t", expected_output=copy)
    for verifier in (equals, json_equal()):
        with pytest.raises(VerifierError, match=f"nested more than {MAX_DEPTH} levels"):
            verifier(value, task)


def test_within_the_depth_they_are_compared() -> None:
    assert equality.MAX_DEPTH == MAX_DEPTH
    task = AblationTask(task_id="t", expected_output=_nested(MAX_DEPTH))
    assert equals(_nested(MAX_DEPTH), task) is True and json_equal()(_nested(MAX_DEPTH), task) is True
    assert equals([_nested(MAX_DEPTH - 1)], task) is True and equals(_nested(MAX_DEPTH - 1), task) is False


def test_a_campaign_records_the_verifiers_error() -> None:
    tasks = [AblationTask(task_id="deep", input_data=MAX_DEPTH + 1, expected_output=_nested(MAX_DEPTH + 1))]
    for r in AblationEngine(CampaignConfig()).run(_nested, _nested, tasks):
        assert (r.status, r.passed, r.error_stage, r.error_type) == ("error", False, "verifier", "VerifierError")
