"""A NaN, an infinity, an integer past the float range, or a count past ``TaskResult``'s bounds
in a result file or in records given to ``compare_results`` is bad input.

Each is one line naming the file, the sample and the task id, exit 1: never an error of the
statistics that names no place (``ValueError: x and y must be finite``), nor an ``int()`` of an
infinity (``OverflowError``) in a reader. Python's :mod:`json` reads ``NaN``, ``Infinity`` and
``1e999`` as floats, and an integer literal of any length as an ``int``, so such files reach the
readers. The same numbers given to :class:`~ablation.TaskResult` directly are refused there,
and the columnar paths (pyarrow's read of a large file, the plain-records path of
``compare_results``) hand such a value to the path that names it instead of keeping it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ablation import TaskResult, compare_results
from ablation.cli.main import main
from ablation.errors import InputError
from ablation.outputs import VALUE_LIMIT
from ablation.sources.readers import engine

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


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, HUGE, 1e300], ids=["inf", "-inf", "nan", "huge", "1e300"])
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
    counted = value == 1e300 and "its usage cannot be read" in err  # a finite count past COUNT_LIMIT
    assert ("is not a finite number" in err or counted) and f"(task id {task_id!r})" in err, err


@pytest.mark.parametrize("field", ["latency_s", "wall_s", "cost"])
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, VALUE_LIMIT, -VALUE_LIMIT, HUGE])
def test_task_result_refuses_a_non_finite_number(field: str, value: float) -> None:
    with pytest.raises(ValidationError, match=field):
        TaskResult(task_id="t", **{field: value})


@pytest.mark.parametrize("field", ["quality", "metrics"])
@pytest.mark.parametrize("value", [math.inf, math.nan, VALUE_LIMIT, -1e300])
def test_task_result_refuses_a_named_number_past_the_limit(field: str, value: float) -> None:
    with pytest.raises(ValidationError, match=f"{field}(?s:.*)value for x is not a finite number below 1e"):
        TaskResult(task_id="t", **{field: {"ok": 1.0, "x": value}})
    assert getattr(TaskResult(task_id="t", **{field: {"x": 0.99 * VALUE_LIMIT}}), field) == {"x": 0.99 * VALUE_LIMIT}


@pytest.mark.parametrize("field", ["latency_s", "wall_s"])
def test_task_result_refuses_a_negative_duration(field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        TaskResult(task_id="t", **{field: -0.5})
    assert getattr(TaskResult(task_id="t", **{field: 0.0}), field) == 0.0


@pytest.mark.parametrize("engine_path", [False, True], ids=["rows", "pyarrow"])
def test_a_token_count_past_a_floats_integers_is_not_quoted_as_another_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, engine_path: bool
) -> None:
    """2**53 + 1 reads as the float 2**53: the error names the range, never a number that is not
    the file's."""
    if engine_path:
        monkeypatch.setattr(engine, "MIN_BYTES", 0)
    rows = [f'{{"id": "t{i}", "passed": true, "tokens": {9007199254740993 if i == 2 else 5}}}' for i in range(6)]
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    before.write_text("\n".join(r.replace("9007199254740993", "5") for r in rows) + "\n")
    after.write_text("\n".join(rows) + "\n")
    assert main(["compare", str(before), str(after), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"{after}:3: 'tokens' must be an integer from 0 to 2**52 - 1, got a number of 2**52 or more" in err, err
    assert "9007199254740992" not in err and err.endswith("(task id 't2')\n"), err


@pytest.mark.parametrize("engine_path", [False, True], ids=["rows", "pyarrow"])
@pytest.mark.parametrize(
    ("cell", "flags", "problem"),
    [
        ('"tokens": 1152921504606846976', (), "'tokens' must be an integer from 0 to 2**52 - 1"),
        ('"run": 2147483648', ("--run-field", "run"), "the run must be an integer from 0 to 2**31 - 1"),
    ],
)
def test_a_count_past_the_result_bounds_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    engine_path: bool, cell: str, flags: tuple[str, ...], problem: str,
) -> None:  # fmt: skip
    if engine_path:
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(engine, "MIN_BYTES", 0)  # the engine reads files of every size
    rows = [f'{{"id": "t{i}", "passed": {str(i % 2 == 0).lower()}, "cost": 0.5}}' for i in range(6)]
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    before.write_text("\n".join(rows) + "\n")
    rows[2] = rows[2][:-1] + ", " + cell + "}"
    after.write_text("\n".join(rows) + "\n")
    code = main(["compare", str(before), str(after), "--quiet", *flags])
    err = capsys.readouterr().err
    assert code == 1, err
    assert err == f"ablation: error: {after}:3: {problem}, got {err.split(', got ')[1]}", err
    assert err.endswith("(task id 't2')\n"), err


RECORD_VALUES = {
    "nan latency": {"latency_s": math.nan},
    "infinite latency": {"latency_s": math.inf},
    "negative latency": {"latency_s": -1.0},
    "infinite cost": {"cost": -math.inf},
    "latency past VALUE_LIMIT": {"latency_s": 1e300},
    "cost past VALUE_LIMIT": {"cost": -1e101},
    "huge cost": {"cost": HUGE},
    "huge run": {"run": 1 << 63},
    "run past the bound": {"run": 1 << 31},
    "huge tokens": {"tokens": HUGE},
    "tokens past the bound": {"tokens": 1 << 52},
    "huge attempts": {"attempts": 1 << 63},
    "huge usage": {"usage": {"input_tokens": HUGE}},
}


@pytest.mark.parametrize("case", sorted(RECORD_VALUES))
def test_records_past_the_bounds_are_one_line_naming_the_record(case: str) -> None:
    """Plain records take a columnar path; a value it cannot vouch for is validated and named."""
    baseline = [{"task_id": f"t{i}", "passed": i % 2 == 0, "latency_s": 1.0} for i in range(12)]
    candidate = [{"task_id": f"t{i}", "passed": True} for i in range(12)]
    baseline[3] = {**baseline[3], **RECORD_VALUES[case]}
    with pytest.raises(InputError) as info:
        compare_results(baseline, candidate)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("baseline: record 4 (task_id 't3'): field "), message


#: (fixture, path of a usage count, task id of that sample, extra flags): a count past
#: COUNT_LIMIT, which TrialUsage refuses, named where it is.
USAGE_PLACES = [
    ("inspect_candidate.json", ("samples", 0, "model_usage", "*", "input_tokens"), "s0", ()),
    ("pe_candidate.json", ("cases", 0, "metrics", "input_tokens"), "s0", ()),
    ("promptfoo_results.json", ("results", "results", 1, "response", "tokenUsage", "prompt"), "0",
     ("--where", "promptIdx=1")),
]  # fmt: skip


def _set_all(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    """:func:`_set`, where ``"*"`` stands for every key of a mapping."""
    if path[0] == "*":
        for key in doc:
            _set_all(doc, (key, *path[1:]), value)
    elif len(path) == 1:
        doc[path[0]] = value
    else:
        _set_all(doc[path[0]], path[1:], value)


@pytest.mark.parametrize(("fixture", "path", "task_id", "flags"), USAGE_PLACES, ids=lambda p: "/".join(map(str, p)) if isinstance(p, tuple) else None)
def test_a_usage_count_past_the_bound_is_one_line_naming_the_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
    fixture: str, path: tuple[Any, ...], task_id: str, flags: tuple[str, ...],
) -> None:  # fmt: skip
    doc = json.loads((TOOLS / fixture).read_text())
    _set_all(doc, path, 1 << 60)
    mutated = tmp_path / fixture
    mutated.write_text(json.dumps(doc))
    baseline, baseline_flags = BASELINES[fixture]
    code = main(["compare", str(TOOLS / baseline), str(mutated), "--quiet", *baseline_flags, *flags])
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.count("\n") == 1 and err.startswith(f"ablation: error: {mutated}:"), err
    assert "its usage cannot be read" in err and f"(task id {task_id!r})" in err, err


def test_an_openai_evals_usage_count_past_the_bound_and_an_odd_run_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [json.loads(line) for line in (TOOLS / "openai_evals_candidate.jsonl").read_text().splitlines()]
    sampling = next(e for e in events if e.get("type") == "sampling")
    sampling["run_id"] = []  # a list, not a run id: its sampling events are not this run's
    odd = tmp_path / "odd.jsonl"
    odd.write_text("".join(json.dumps(e) + "\n" for e in events))
    base = str(TOOLS / "openai_evals_baseline.jsonl")
    assert main(["compare", base, str(odd), "--quiet"]) in (0, 2), capsys.readouterr().err
    for event in events:
        if event.get("type") == "sampling":
            event["run_id"] = next(e["run_id"] for e in events if e.get("type") == "match")
            event["data"]["usage"] = {"prompt_tokens": 1 << 60, "completion_tokens": 1}
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps(e) + "\n" for e in events))
    code = main(["compare", base, str(big), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1, err
    assert err.startswith(f"ablation: error: {big}:") and "its usage cannot be read" in err, err


@pytest.mark.parametrize("engine_path", [False, True], ids=["rows", "pyarrow"])
@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
@pytest.mark.parametrize(
    ("column", "value"),
    [("latency_s", "1e300"), ("cost", "-2e100"), ("steps", "1e100"), ("score", "1e308"), ("latency_s", "9" * 400)],
    ids=["latency_s", "cost", "steps", "score", "integer-past-float"],
)
def test_a_number_past_the_limit_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    engine_path: bool, suffix: str, column: str, value: str,
) -> None:  # fmt: skip
    """A number the statistics cannot square and sum (past VALUE_LIMIT) is refused where it is, on
    either read path, in either format: before, its variance overflowed to a p-value of 1. An
    integer past a float's range is such a number too (a JSON one was said to be "not a number")."""
    if engine_path:
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(engine, "MIN_BYTES", 0)
    cells = [(f"t{i}", str(i % 2 == 0).lower(), str(0.5 + i)) for i in range(6)]
    before, after = tmp_path / f"before{suffix}", tmp_path / f"after{suffix}"
    for path, bad in ((before, False), (after, True)):
        rows = [(i, p, value if bad and n == 2 else x) for n, (i, p, x) in enumerate(cells)]
        if suffix == ".csv":
            path.write_text(f"id,passed,{column}\n" + "".join(f"{i},{p},{x}\n" for i, p, x in rows))
        else:
            path.write_text("".join(f'{{"id": "{i}", "passed": {p}, "{column}": {x}}}\n' for i, p, x in rows))
    code = main(["compare", str(before), str(after), "--quiet"])
    err = capsys.readouterr().err
    line = 4 if suffix == ".csv" else 3
    assert code == 1, err
    assert err.startswith(f"ablation: error: {after}:{line}: ") and err.endswith("(task id 't2')\n"), err
    assert "is not a finite number below 1e+100 in magnitude" in err and err.count("\n") == 1, err
