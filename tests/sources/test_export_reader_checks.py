"""Every field of an ``ablation report --export-jsonl`` row is checked, as a plain row's are.

A value of the wrong JSON type in one field of one stored trial is either read as the valid value
it stands for (the report is the report of the export holding that value) or refused in one line
naming the file, the line and the task id, exit 1. Where the plain JSON-lines reader reads the
same field, it decides which values stand for what, and a refusal uses its words; for the other
fields :class:`~ablation.schema.TaskResult` decides (the export reader may be stricter there,
never looser). ``null`` stands for an absent field. The export comes from a real campaign.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation import AblationTask, run_ablation_campaign
from ablation.errors import InputError
from ablation.schema import TaskResult
from ablation.sources.readers import ResultReader, Row, register_reader, registry
from ablation.sources.readers.rows import NumericVerdict
from ablation.sources.result_files import load_result_columns, load_results
from ablation.store.run_store import RunStore

ARMS = ["--baseline-where", "arm=baseline", "--where", "arm=candidate", "--format", "json"]
NAME = "export.jsonl"
#: The plain reader's name of each field it reads too (its column, or its option's default).
PLAIN = {name: name for name in ("passed", "run", "latency_s", "cost", "tokens", "category", "critical",
                                 "output", "cost_currency", "cost_source")} | {"task_id": "id"}  # fmt: skip
ERROR = re.compile(rf"ablation: error: {re.escape(NAME)}:(\d+): (.*?)(?: \(task id '(.*)'\))?")
JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")

Outcome = tuple[int, str, str]


def _baseline(x: dict[str, int]) -> int:
    return x["n"]


def _candidate(x: dict[str, int]) -> int:
    if x["n"] == 3:
        raise ValueError("boom")
    return -1 if x["n"] in (1, 2) else x["n"]  # t1 and t2 regress


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The lines of a real campaign's export: 8 tasks, two regressions, one error."""
    folder = tmp_path_factory.mktemp("campaign")
    tasks = [AblationTask(task_id=f"t{i}", input_data={"n": i}, expected_output=i) for i in range(8)]
    run_ablation_campaign(_baseline, _candidate, tasks, store=folder / "runs.db")
    with RunStore(folder / "runs.db") as runs:
        campaign = runs.latest_campaign()
        assert campaign is not None
        runs.export_jsonl(campaign.campaign_id, folder / NAME)
    return (folder / NAME).read_text().splitlines()


@pytest.fixture(scope="module")
def compare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """``ablation compare FILE FILE`` of export lines: ``(exit code, stdout, stderr)``, cached."""
    folder = tmp_path_factory.mktemp("compare")
    seen: dict[str, Outcome] = {}

    def run(lines: list[str]) -> Outcome:
        text = "\n".join(lines) + "\n"
        if text not in seen:
            (folder / NAME).write_text(text)
            done = run_here(["compare", NAME, NAME, *ARMS], cwd=folder)
            seen[text] = (done.returncode, done.stdout, done.stderr)
        return seen[text]

    yield run


def _json_types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a field of this schema takes (a number field takes integers too)."""
    types: set[str] = set()
    for option in schema.get("anyOf", [schema]):
        if "$ref" in option:
            types.add("object")
        elif "type" in option:
            types.add(option["type"])
        else:  # any value
            return set(JSON_TYPES)
    return types | {"integer"} if "number" in types else types


_SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4)
_VALUES = {
    "null": st.none(),
    "boolean": st.booleans(),
    "integer": st.integers(-2, 3) | st.integers(),
    "number": st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([0.5, -1.5, 1.0]),
    "string": st.text(max_size=6) | st.sampled_from(
        ["false", "true", "no", "1", "0", "1.5", "-2", "1e3", "baseline", "candidate", "error", "agent", "usd"]
    ),
    "array": st.lists(_SCALARS, max_size=3),
    "object": st.dictionaries(st.text(max_size=3), _SCALARS, max_size=2),
}
_PROPERTIES = TaskResult.model_json_schema()["properties"]


@st.composite
def mutations(draw: st.DrawFn, count: int) -> tuple[int, str, Any]:
    """``(line index, field, value)``: a value of a JSON type the field does not take (or null)."""
    field = draw(st.sampled_from(sorted(TaskResult.model_fields)))
    wrong = [t for t in JSON_TYPES if t not in _json_types(_PROPERTIES[field])] or list(JSON_TYPES)
    value = draw(st.one_of([_VALUES[t] for t in sorted({"null", *wrong})]))
    return draw(st.integers(1, count - 1)), field, value


def _plain_reading(field: str, value: Any, folder: Path) -> tuple[Any, str | None]:
    """What a one-row plain JSON-lines file reads ``value`` in ``field`` as: ``(the trial's
    value, None)``, or ``(None, the problem it states)`` when it refuses (``""``: a number where
    a verdict is read, which turns the comparison numeric)."""
    column = PLAIN[field]
    row = {"id": "x", "passed": True, column: value}
    path = folder / "plain.jsonl"
    path.write_text(json.dumps(row) + "\n")
    try:
        (result,) = load_results(path, run_field="run" if field == "run" else None)
    except NumericVerdict:
        return None, ""
    except InputError as exc:  # the export names the field as it calls it (task_id, not id)
        words = re.sub(r" \(task id 'x'\)$", "", str(exc).removeprefix(f"{path}:1: "))
        return None, words.replace(repr(column), repr(field), 1)  # the name precedes the value
    return result.model_dump(mode="json")[field], None


def _model_reading(row: dict[str, Any], field: str, value: Any) -> tuple[Any, str | None]:
    """What :class:`TaskResult` reads ``value`` in ``field`` of ``row`` as, or ``(None, "")``."""
    try:
        return TaskResult.model_validate({**row, field: value}).model_dump(mode="json")[field], None
    except ValueError:
        return None, ""


def _refused(outcome: Outcome, field: str, line: int | None, words: str | None) -> None:
    """One line naming the file, the line (``line`` when given) and the task id; exit 1."""
    code, out, err = outcome
    assert (code, out) == (1, ""), outcome
    match = ERROR.fullmatch(err.strip())
    assert match is not None and "\n" not in err.strip(), err
    assert line is None or int(match[1]) == line + 1, err
    assert field == "task_id" or match[3] is not None, err
    assert not words or match[2] == words, (err, words)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_a_wrong_type_in_any_field_is_read_as_a_plain_row_reads_it_or_named(
    export: list[str], compare: Any, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    index, field, value = data.draw(mutations(len(export)))
    row = json.loads(export[index])
    mutated = export.copy()
    mutated[index] = json.dumps({**row, field: value})
    equivalent = {k: v for k, v in row.items() if k != field}  # null is an absent field...
    words: str | None = None
    if field == "passed" and row["status"] != "completed":  # a failed trial's verdict is not read
        equivalent[field] = row[field]
    elif field in PLAIN:  # ... where the plain reader does not say otherwise
        reading, words = _plain_reading(field, value, tmp_path_factory.mktemp("plain"))
        equivalent[field] = reading
    elif value is not None:
        reading, words = _model_reading(row, field, value)
        equivalent[field] = reading
    outcome = compare(mutated)
    if words is not None:  # no valid value stands for it
        _refused(outcome, field, None if words == "" and field == "passed" else index, words)
        return
    expected = compare([*export[:index], json.dumps(equivalent), *export[index + 1:]])
    if outcome != expected and field not in PLAIN:  # stricter than TaskResult: a number is never
        _refused(outcome, field, index, None)  # a boolean, a null status is not "completed"
    else:
        assert outcome == expected


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("category", 1.5, "'category' must be a string, got 1.5"),
        ("category", {"a": 1}, "'category' must be a string, got {'a': 1}"),
        ("critical", "maybe", "'critical' is not an unambiguous boolean: 'maybe'"),
        ("cost_currency", 5, "'cost_currency' must be a string, got 5"),
        ("attempts", "x", "'attempts' is not a number: 'x'"),
        ("wall_s", "x", "'wall_s' is not a number: 'x'"),
        ("error_type", {"a": 1}, "field 'error_type': Input should be a valid string (got {'a': 1})"),
        ("quality", [], "'quality' must be an object of numbers, got list"),
        ("arm", "both", "field 'arm': Input should be 'baseline' or 'candidate' (got 'both')"),
    ],
)
def test_a_wrong_value_in_a_stored_trial_is_one_line(
    export: list[str], compare: Any, field: str, value: Any, words: str
) -> None:
    index = next(i for i, line in enumerate(export) if '"task_id":"t1","arm":"candidate"' in line)
    mutated = export.copy()
    mutated[index] = json.dumps({**json.loads(export[index]), field: value})
    _refused(compare(mutated), field, index, words)


def test_critical_as_text_is_the_boolean_it_spells(export: list[str], compare: Any) -> None:
    """``"false"`` on a regressing task is not critical, ``"yes"`` is: as in a plain row."""
    for text, flag in {"false": False, "no": False, "0": False, "yes": True, "true": True}.items():
        spelled, equivalent = [], []
        for line in export:
            row = json.loads(line)
            regressing = row.get("task_id") == "t1"
            spelled.append(json.dumps({**row, "critical": text}) if regressing else line)
            equivalent.append(json.dumps({**row, "critical": flag}) if regressing else line)
        outcome = compare(spelled)
        assert outcome == compare(equivalent)
        report = json.loads(outcome[1])
        assert report["critical_regressions"] == (["t1"] if flag else [])
        critical_gate = report["gates"][0]
        assert critical_gate["name"].startswith("critical")
        assert critical_gate["status"] == ("fail" if flag else "pass")


def test_the_columns_take_only_a_boolean_critical_flag(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A reader that hands on ``critical`` unchecked: an error naming the row, not a critical task."""
    monkeypatch.setattr(registry, "_READERS", list(registry._READERS))

    def rows(text: str, display: str, options: Any) -> Iterator[Row]:
        for line, raw in enumerate(text.splitlines(), 1):
            task_id, critical = raw.split()
            yield Row(line, task_id, True, extra={"critical": critical})

    register_reader(ResultReader("flags", ("text",), lambda text: text.startswith("t"), rows))
    path = tmp_path / "flags.txt"
    path.write_text("t1 false\nt2 false\n")
    with pytest.raises(InputError) as caught:
        load_result_columns(path)
    assert str(caught.value) == f"{path}:1: 'critical' must be a boolean, got 'false' (task id 't1')"
