"""A NaN, an infinity or an integer past the float range in another tool's file is bad input.

Each is one line naming the file, the sample and the task id, exit 1: never an error of the
statistics that names no place (``ValueError: x and y must be finite``), nor an ``int()`` of an
infinity (``OverflowError``) in a reader. Python's :mod:`json` reads ``NaN``, ``Infinity`` and
``1e999`` as floats, and an integer literal of any length as an ``int``, so such files reach the
readers. The same numbers given to :class:`~ablation.TaskResult` directly are refused there.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ablation import TaskResult
from ablation.cli.main import main

TOOLS = Path(__file__).resolve().parents[1] / "data" / "tools"
HUGE = 10**400  # an integer no float holds

#: (fixture, path of a number in its document, the task id of that sample, extra flags)
PLACES = [
    ("inspect_candidate.json", ("samples", 0, "total_time"), "s0", ()),
    ("pe_candidate.json", ("cases", 0, "task_duration"), "s0", ()),
    ("pe_candidate.json", ("cases", 0, "metrics", "requests"), "s0", ()),
    ("pe_candidate.json", ("cases", 0, "metrics", "input_tokens"), "s0", ()),
    ("pe_candidate.json", ("cases", 0, "metrics", "cost"), "s0", ()),
    ("promptfoo_results.json", ("results", "results", 1, "score"), "0", ("--where", "promptIdx=1")),
    ("promptfoo_results.json", ("results", "results", 1, "latencyMs"), "0", ("--where", "promptIdx=1")),
    ("promptfoo_results.json", ("results", "results", 1, "cost"), "0", ("--where", "promptIdx=1")),
    ("promptfoo_results.json", ("results", "results", 1, "response", "tokenUsage", "total"), "0",
     ("--where", "promptIdx=1")),
    ("promptfoo_results.json", ("results", "results", 1, "response", "tokenUsage", "prompt"), "0",
     ("--where", "promptIdx=1")),
]  # fmt: skip

BASELINES = {
    "inspect_candidate.json": ("inspect_baseline.json", ()),
    "pe_candidate.json": ("pe_baseline.json", ()),
    "promptfoo_results.json": ("promptfoo_results.json", ("--baseline-where", "promptIdx=0")),
}


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for part in path[:-1]:
        doc = doc[part]
    doc[path[-1]] = value


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, HUGE], ids=["inf", "-inf", "nan", "huge"])
@pytest.mark.parametrize(("fixture", "path", "task_id", "flags"), PLACES, ids=lambda p: "/".join(map(str, p)) if isinstance(p, tuple) else None)
def test_a_non_finite_number_is_one_line_naming_the_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
    fixture: str, path: tuple[Any, ...], task_id: str, flags: tuple[str, ...], value: float,
) -> None:  # fmt: skip
    doc = json.loads((TOOLS / fixture).read_text())
    _set(doc, path, value)
    mutated = tmp_path / fixture
    mutated.write_text(json.dumps(doc))  # NaN, Infinity and the long integer as Python writes them
    baseline, baseline_flags = BASELINES[fixture]
    code = main(["compare", str(TOOLS / baseline), str(mutated), "--quiet", *baseline_flags, *flags])
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"ablation: error: {mutated}:"), err
    assert "is not a finite number" in err and f"(task id {task_id!r})" in err, err


@pytest.mark.parametrize("field", ["latency_s", "wall_s", "cost"])
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_task_result_refuses_a_non_finite_number(field: str, value: float) -> None:
    with pytest.raises(ValidationError, match=field):
        TaskResult(task_id="t", **{field: value})


@pytest.mark.parametrize("field", ["latency_s", "wall_s"])
def test_task_result_refuses_a_negative_duration(field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        TaskResult(task_id="t", **{field: -0.5})
    assert getattr(TaskResult(task_id="t", **{field: 0.0}), field) == 0.0
