"""A scorer's value whose ``repr``, ``float()`` or type check raises is the scorer's ScorerError.

The error message quoted the value with ``repr``: a ``__repr__`` that raises made the trial
record that exception (a ``RuntimeError``) instead of the :class:`ScorerError` naming the scorer
and the type; a ``__float__`` or ``__index__`` that raises was recorded as its own exception; an
``int`` past ``sys.get_int_max_str_digits`` made ``repr`` raise ``ValueError``. Each value below is
checked first against Python itself (its ``repr``/``float`` does raise, or gives NaN or no float),
then through ``run_scorer`` and a real campaign, where the trial completes and its
``quality_errors`` holds the ScorerError.
"""

from __future__ import annotations

import asyncio
import math
import numbers
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.evaluate.quality import ScorerError, run_scorer


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("repr failed")


class NanReprRaises(float):
    """A float (NaN) whose repr raises: the value is refused as not finite, its repr unreadable."""

    def __repr__(self) -> str:
        raise RuntimeError("repr failed")


class _Real:
    """A minimal registered :class:`numbers.Real` (the ABC's methods are not needed here)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class FloatRaises(_Real):
    def __float__(self) -> float:
        raise ValueError("float failed")


class IndexRaises(_Real):
    def __index__(self) -> int:
        raise ArithmeticError("index failed")


class FloatAndReprRaise(_Real):
    def __float__(self) -> float:
        raise ValueError("float failed")

    def __repr__(self) -> str:
        raise KeyError("repr failed")


class FloatIsText(_Real):
    def __float__(self) -> Any:
        return "0.5"


class MessageRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("str failed")


class FloatRaisesUnprintable(_Real):
    def __float__(self) -> float:
        raise MessageRaises

    def __repr__(self) -> str:
        raise MessageRaises


class ClassRaises:
    """A value whose ``__class__`` raises: ``isinstance`` against most types raises with it."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise RuntimeError("no class")


for _kind in (FloatRaises, IndexRaises, FloatAndReprRaise, FloatIsText, FloatRaisesUnprintable):
    numbers.Real.register(_kind)

HUGE = 10**5000  # past the default 4300 digits int -> str allows

#: (value, type name in the message, how Python itself fails on it)
VALUES: list[tuple[Any, str, Callable[[Any], object]]] = [
    (BadRepr(), "BadRepr", repr),
    (NanReprRaises("nan"), "NanReprRaises", repr),
    (FloatRaises(), "FloatRaises", float),
    (IndexRaises(), "IndexRaises", float),
    (FloatAndReprRaise(), "FloatAndReprRaise", float),
    (FloatIsText(), "FloatIsText", float),
    (FloatRaisesUnprintable(), "FloatRaisesUnprintable", float),
    (ClassRaises(), "ClassRaises", lambda v: isinstance(v, numbers.Real)),
    (10**400, "int", float),
    (-HUGE, "int", repr),
    (np.float32("nan"), "float32", lambda v: None if not math.isnan(float(v)) else 1 / 0),
]
IDS = [f"{name}-{i}" for i, (_, name, _) in enumerate(VALUES)]


@pytest.mark.parametrize(("value", "kind", "fails"), VALUES, ids=IDS)
def test_python_itself_fails_on_the_value(value: Any, kind: str, fails: Callable[[Any], object]) -> None:
    """The premise: each value's ``repr``, ``float()`` or type check raises (the NaN: is NaN)."""
    assert type(value).__name__ == kind
    with pytest.raises(Exception):  # noqa: B017 - whatever the value raises
        fails(value)


def _scorer(value: Any) -> Callable[[Any, AblationTask], Any]:
    def scorer(output: Any, task: AblationTask) -> Any:
        return value

    scorer.name = "odd"  # type: ignore[attr-defined]
    return scorer


@pytest.mark.parametrize(("value", "kind", "fails"), VALUES, ids=IDS)
def test_run_scorer_raises_the_scorer_error(value: Any, kind: str, fails: Callable[[Any], object]) -> None:
    with pytest.raises(ScorerError) as caught:
        asyncio.run(run_scorer(_scorer(value), None, AblationTask(task_id="t")))
    message = str(caught.value)
    assert message.startswith(f"scorer 'odd' returned {kind}")
    assert "a score must be" in message and len(message) < 1000


def test_a_campaign_records_each_as_the_trials_scorer_error() -> None:
    """The trials complete, their verdict stands, and each scorer's error is its ScorerError."""
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(len(VALUES))]

    def agent(x: int) -> int:
        return x

    def scorer(output: int, task: AblationTask) -> Any:
        return VALUES[output][0]

    scorer.name = "odd"  # type: ignore[attr-defined]
    results = AblationEngine(CampaignConfig(concurrency=4), quality_scorers=[scorer]).run(agent, agent, tasks)
    assert len(results) == 2 * len(VALUES)
    for r in results:
        kind = VALUES[int(r.task_id[1:])][1]
        assert (r.status, r.passed, r.quality) == ("completed", True, {}), r
        assert r.quality_errors["odd"].startswith(f"ScorerError: scorer 'odd' returned {kind}"), r.quality_errors


def test_finite_reals_are_still_scores() -> None:
    """Plain and numpy numbers, a Fraction and an int within range read as ``float()`` reads them."""
    from fractions import Fraction

    for value in (3, 2.5, np.float32(0.5), np.int64(-4), Fraction(1, 3), 10**99, sys.float_info.max / 1e300):
        got = asyncio.run(run_scorer(_scorer(value), None, AblationTask(task_id="t")))
        assert type(got) is float and got == float(value)
