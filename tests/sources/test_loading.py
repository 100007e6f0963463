"""Tests of the loaders of ablation.sources: suites, agents, result files and expected-id lists.

Every error case checks that the one-line message names the file, the line and the task id where
they are known.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import types
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ablation.agents import CommandAgent, HttpAgent, as_agent
from ablation.errors import AgentSpecError, ConfigError, InputError
from ablation.schema import TaskResult
from ablation.sources.agent_specs import load_agent
from ablation.sources.result_files import load_expected_ids, load_results, parse_verdict
from ablation.sources.suites import load_suite

DATA = Path(__file__).parents[1] / "data"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def error_of(exc_type: type[Exception], fn: Callable[..., Any], *args: Any, **kw: Any) -> str:
    """Run ``fn`` expecting ``exc_type``; return the message, checked to be one line."""
    with pytest.raises(exc_type) as info:
        fn(*args, **kw)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message, message
    return message


@pytest.fixture
def unique() -> Iterator[str]:
    """A fresh module-name suffix; modules imported under it are dropped afterwards."""
    token = "m" + uuid.uuid4().hex[:10]
    yield token
    for name in [n for n in sys.modules if token in n]:
        del sys.modules[name]


# --------------------------------------------------------------------------- suites from Python

SUITE_WITH_SIBLING = """
from ablation import AblationTask
from helper_{u} import make

tasks = [make("a", 1), make("b", 2)]
"""
HELPER = """
from ablation import AblationTask


def make(task_id, value):
    return AblationTask(task_id=task_id, input_data=value, expected_output=value * 2)
"""


def test_py_suite_with_sibling_import(tmp_path: Path, unique: str) -> None:
    write(tmp_path / f"helper_{unique}.py", HELPER)
    suite = write(tmp_path / "suite.py", SUITE_WITH_SIBLING.format(u=unique))
    before = list(sys.path)
    tasks = load_suite(str(suite))
    assert [t.task_id for t in tasks] == ["a", "b"]
    assert tasks[1].expected_output == 4
    assert sys.path == before  # the directory was only on sys.path while importing
    assert load_suite(suite) == tasks  # a PathLike works too, and loading twice is fine


def test_py_suite_tasks_callable_and_named_attribute(tmp_path: Path) -> None:
    suite = write(
        tmp_path / "calls.py",
        "from ablation import AblationTask\n"
        "def tasks():\n    return (AblationTask(task_id='x'),)\n"
        "smoke = [AblationTask(task_id='s1'), AblationTask(task_id='s2')]\n",
    )
    assert [t.task_id for t in load_suite(str(suite))] == ["x"]
    assert [t.task_id for t in load_suite(f"{suite}:smoke")] == ["s1", "s2"]


def test_py_suite_without_tasks_names_file_and_names(tmp_path: Path) -> None:
    suite = write(tmp_path / "notasks.py", "examples = []\ndef helper():\n    pass\n")
    message = error_of(InputError, load_suite, str(suite))
    assert str(suite) in message and "'tasks'" in message
    assert "examples" in message and "helper" in message


def test_py_suite_import_error_names_file_line_and_exception(tmp_path: Path) -> None:
    suite = write(tmp_path / "broken.py", "x = 1\n\ny = 1 / 0\n")
    message = error_of(InputError, load_suite, str(suite))
    assert message.startswith(f"{suite}:3:")
    assert "ZeroDivisionError" in message


def test_py_suite_syntax_error(tmp_path: Path) -> None:
    suite = write(tmp_path / "syntax.py", "tasks = [\n\n  def\n")
    message = error_of(InputError, load_suite, str(suite))
    assert str(suite) in message and "SyntaxError" in message


def test_py_suite_tasks_function_raising(tmp_path: Path) -> None:
    suite = write(tmp_path / "raising.py", "def tasks():\n    raise RuntimeError('no data')\n")
    message = error_of(InputError, load_suite, str(suite))
    assert message.startswith(f"{suite}:2:") and "RuntimeError: no data" in message


def test_py_suite_bad_contents(tmp_path: Path) -> None:
    suite = write(tmp_path / "bad.py", "tasks = 'abc'\n")
    assert "list or tuple of AblationTask" in error_of(InputError, load_suite, str(suite))
    empty = write(tmp_path / "empty.py", "tasks = []\n")
    assert "empty" in error_of(InputError, load_suite, str(empty))
    dup = write(
        tmp_path / "dup.py",
        "from ablation import AblationTask\ntasks = [AblationTask(task_id='d')] * 2\n",
    )
    message = error_of(ConfigError, load_suite, str(dup))
    assert str(dup) in message and "'d'" in message


def test_suite_path_that_does_not_exist(tmp_path: Path) -> None:
    for name in ("missing.py", "missing.jsonl", "sub/dir/missing"):
        message = error_of(InputError, load_suite, str(tmp_path / name))
        assert message == f"{tmp_path / name}: no such file"


def test_suite_unsupported_file_type(tmp_path: Path) -> None:
    path = write(tmp_path / "suite.yaml", "tasks: []\n")
    assert "unsupported suite file type '.yaml'" in error_of(InputError, load_suite, str(path))


def test_suite_from_module_spec(
    tmp_path: Path, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / f"pkg_{unique}"
    write(pkg / "__init__.py", "")
    write(
        pkg / "suite.py",
        "from ablation import AblationTask\n"
        "tasks = [AblationTask(task_id='m1')]\nother = [AblationTask(task_id='o1')]\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert [t.task_id for t in load_suite(f"pkg_{unique}.suite")] == ["m1"]
    assert [t.task_id for t in load_suite(f"pkg_{unique}.suite:other")] == ["o1"]
    message = error_of(InputError, load_suite, f"pkg_{unique}.suite:nope")
    assert "'nope'" in message and "other" in message and "tasks" in message
    message = error_of(InputError, load_suite, f"pkg_{unique}.absent")
    assert f"pkg_{unique}.absent" in message and "no module named" in message


# --------------------------------------------------------------------------- suites from JSONL


def jsonl(tmp_path: Path, *rows: dict[str, Any] | str, name: str = "suite.jsonl") -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    return write(tmp_path / name, "\n".join(lines) + "\n")


def test_jsonl_suite_loads_fields(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path,
        {
            "task_id": "a",
            "input_data": {"q": 1},
            "expected_output": 2,
            "category": "math",
            "tags": ["x", "y"],
            "critical": True,
            "verifier": "equals",
        },
        "",
        {"task_id": "b", "quality_rubric": [{"name": "polite", "keywords": ["please"]}]},
    )
    a, b = load_suite(str(path))
    assert (a.task_id, a.input_data, a.tags, a.critical, a.verifier) == (
        "a",
        {"q": 1},
        ("x", "y"),
        True,
        None,
    )
    assert b.quality_rubric is not None and b.quality_rubric[0].name == "polite"  # type: ignore[union-attr]


def test_jsonl_suite_malformed_line(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"task_id": "a"}, '{"task_id": "b", ')
    message = error_of(InputError, load_suite, str(path))
    assert message.startswith(f"{path}:2: malformed JSON")


def test_jsonl_suite_missing_task_id(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"task_id": "a"}, {"input_data": 3})
    assert error_of(InputError, load_suite, str(path)) == f"{path}:2: missing task_id"


def test_jsonl_suite_unknown_field_is_readable(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"task_id": "a"}, {"task_id": "b", "expected": 4})
    message = error_of(InputError, load_suite, str(path))
    assert message.startswith(f"{path}:2: unknown field 'expected'")
    assert "did you mean 'expected_output'?" in message
    assert message.endswith("(task id 'b')")


def test_jsonl_suite_wrong_type_names_field(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"task_id": "a", "critical": "maybe"})
    message = error_of(InputError, load_suite, str(path))
    assert message.startswith(f"{path}:1: field 'critical'") and "'maybe'" in message
    assert message.endswith("(task id 'a')")


def test_jsonl_suite_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"task_id": "a"}, {"task_id": "b"}, {"task_id": "a"})
    message = error_of(InputError, load_suite, str(path))
    assert message.startswith(f"{path}:3:") and "line 1" in message and "line 3" in message
    assert message.endswith("(task id 'a')")


def test_jsonl_suite_empty_file_and_non_objects(tmp_path: Path) -> None:
    empty = write(tmp_path / "empty.jsonl", "\n  \n")
    assert error_of(InputError, load_suite, str(empty)) == f"{empty}: empty file: no tasks"
    listed = jsonl(tmp_path, '["not", "an", "object"]', name="list.jsonl")
    assert error_of(InputError, load_suite, str(listed)).startswith(f"{listed}:1: expected a JSON")


def test_jsonl_suite_rejects_hooks(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"task_id": "h", "setup": "reset_db"})
    message = error_of(InputError, load_suite, str(path))
    assert message.startswith(f"{path}:1: field 'setup'") and "(task id 'h')" in message


def test_jsonl_suite_unknown_verifier(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"task_id": "a"}, {"task_id": "v", "verifier": "fuzzy"})
    message = error_of(InputError, load_suite, str(path))
    assert message.startswith(f"{path}:2: unknown verifier 'fuzzy'")
    assert message.endswith("(task id 'v')")
    path = jsonl(tmp_path, {"task_id": "w", "verifier": 3}, name="n.jsonl")
    assert "(task id 'w')" in error_of(InputError, load_suite, str(path))


@pytest.fixture
def fake_verifiers(
    monkeypatch: pytest.MonkeyPatch,
) -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    """Stand-in ``ablation.evaluate.verifiers`` and ``ablation.evaluate.code_tests`` recording
    factory calls (the real ones are tested apart)."""
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
    module = types.ModuleType("ablation.evaluate.verifiers")

    def factory(name: str) -> Callable[..., Any]:
        def make(*args: Any, **kwargs: Any) -> Callable[[Any, Any], bool]:
            calls.append((name, args, kwargs))

            def verifier(output: Any, task: Any) -> bool:
                return True

            verifier.spec = (name, args, kwargs)  # type: ignore[attr-defined]
            return verifier

        return make

    for name in ("numeric", "regex", "contains", "json_equal", "code_tests"):
        setattr(module, name, factory(name))
    for home in ("ablation.evaluate.verifiers", "ablation.evaluate.code_tests"):
        monkeypatch.setitem(sys.modules, home, module)
    return calls


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("numeric", ("numeric", (), {})),
        ("numeric:1e-6", ("numeric", (), {"abs_tol": 1e-6})),
        ("regex", ("regex", (), {})),
        ("regex:^a:b+$", ("regex", ("^a:b+$",), {})),
        ("contains", ("contains", (), {})),
        ("contains:needle in", ("contains", ("needle in",), {})),
        ("json", ("json_equal", (), {})),
        ("code_tests", ("code_tests", (), {})),
        ("code_tests:2.5", ("code_tests", (), {"time_limit_s": 2.5})),
    ],
)
def test_jsonl_verifier_names_call_the_factories(
    tmp_path: Path, fake_verifiers: list[Any], name: str, expected: tuple[Any, ...]
) -> None:
    (task,) = load_suite(str(jsonl(tmp_path, {"task_id": "t", "verifier": name})))
    assert fake_verifiers == [expected]
    assert task.verifier is not None and task.verifier.spec == expected  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "name", ["numeric:abc", "numeric:-1", "regex:", "regex:(", "contains:", "json:x", "equals:1"]
)
def test_jsonl_bad_verifier_arguments(tmp_path: Path, fake_verifiers: list[Any], name: str) -> None:
    path = jsonl(tmp_path, {"task_id": "t"}, {"task_id": "u", "verifier": name})
    message = error_of(InputError, load_suite, str(path))
    assert message.startswith(f"{path}:2: verifier {name!r}") and message.endswith("(task id 'u')")


def test_jsonl_verifier_names_with_the_real_module(tmp_path: Path) -> None:
    pytest.importorskip("ablation.verifiers")
    names = [
        "equals",
        "numeric",
        "numeric:1e-6",
        "regex",
        "regex:^4",
        "contains",
        "contains:4",
        "json",
        "code_tests",
        "code_tests:3",
    ]
    rows = [{"task_id": f"t{i}", "verifier": n} for i, n in enumerate(names)]
    tasks = load_suite(str(jsonl(tmp_path, *rows)))
    assert tasks[0].verifier is None
    assert all(callable(t.verifier) for t in tasks[1:])


# --------------------------------------------------------------------------- agents

AGENT_FILE = """
from helper_{u} import factor

def v1(x):
    return x * factor

class Agents:
    @staticmethod
    def v2(x):
        return x + factor
"""


def test_load_agent_from_file_with_sibling(tmp_path: Path, unique: str) -> None:
    write(tmp_path / f"helper_{unique}.py", "factor = 3\n")
    path = write(tmp_path / "agents.py", AGENT_FILE.format(u=unique))
    assert load_agent(f"{path}:v1")(2) == 6
    assert as_agent(load_agent(f"{path}:Agents.v2")).call_sync(2) == 5


def test_load_agent_missing_attribute_lists_names(tmp_path: Path, unique: str) -> None:
    write(tmp_path / f"helper_{unique}.py", "factor = 3\n")
    path = write(tmp_path / "agents.py", AGENT_FILE.format(u=unique))
    message = error_of(AgentSpecError, load_agent, f"{path}:v3")
    assert message.startswith(f"{path}: no attribute 'v3'")
    assert "v1" in message and "Agents" in message
    message = error_of(AgentSpecError, load_agent, str(path))
    assert f"{path}:NAME" in message and "v1" in message


def test_load_agent_file_that_fails_to_import(tmp_path: Path) -> None:
    path = write(tmp_path / "bad_agent.py", "import json\nraise ValueError('no key')\n")
    message = error_of(AgentSpecError, load_agent, f"{path}:agent")
    assert message.startswith(f"{path}:2:") and "ValueError: no key" in message
    missing = tmp_path / "nope.py"
    assert error_of(AgentSpecError, load_agent, f"{missing}:a") == f"{missing}: no such file"


def test_load_agent_from_module(
    tmp_path: Path, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / f"mod_{unique}.py", "def agent(x):\n    return -x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_agent(f"mod_{unique}:agent")(4) == -4
    message = error_of(AgentSpecError, load_agent, f"mod_{unique}:other")
    assert f"mod_{unique}" in message and "agent" in message
    assert "no module named" in error_of(AgentSpecError, load_agent, f"absent_{unique}:x")


def test_load_agent_command_line() -> None:
    script = DATA / "cmd_agent.py"
    agent = load_agent(f"cmd:{sys.executable} '{script}'")
    assert isinstance(agent, CommandAgent)
    assert agent.argv == (sys.executable, str(script))
    assert asyncio.run(agent.run({"mode": "echo"})) == {"echo": {"mode": "echo"}}
    assert "needs a command line" in error_of(AgentSpecError, load_agent, "cmd:  ")
    assert "cannot split" in error_of(AgentSpecError, load_agent, "cmd:python 'unclosed")


def test_load_agent_http() -> None:
    agent = load_agent("https://agents.example.com/v2")
    assert isinstance(agent, HttpAgent) and agent.name == "https://agents.example.com/v2"


@pytest.mark.parametrize("spec", ["hello", "pkg.mod", "1bad:x", ""])
def test_load_agent_rejects_other_strings(spec: str) -> None:
    assert "not an agent spec" in error_of(AgentSpecError, load_agent, spec)


def test_load_agent_rejects_non_strings() -> None:
    error_of(AgentSpecError, load_agent, 42)


# --------------------------------------------------------------------------- verdicts

TRUE_VALUES = [True, 1, 1.0, "true", "TRUE", " True ", "1", "pass", "PASSED", "yes", "Yes", "1.0"]
FALSE_VALUES = [False, 0, 0.0, -0.0, "false", "0", "fail", "Failed", "no", " NO\t", "0.0"]
AMBIGUOUS = ["maybe", 2, -1, 0.5, None, "", "  ", "y", "t", "passing", [], {}, math.nan, "2"]


@pytest.mark.parametrize("value", TRUE_VALUES)
def test_verdict_true(value: Any) -> None:
    assert parse_verdict(value) is True


@pytest.mark.parametrize("value", FALSE_VALUES)
def test_verdict_false(value: Any) -> None:
    assert parse_verdict(value) is False


@pytest.mark.parametrize("value", AMBIGUOUS)
def test_verdict_ambiguous_is_none(value: Any) -> None:
    assert parse_verdict(value) is None


@pytest.mark.parametrize("value", ["maybe", 2, None, ""])
def test_ambiguous_verdict_in_a_file_names_file_line_id_and_value(
    tmp_path: Path, value: Any
) -> None:
    path = write(
        tmp_path / "r.jsonl",
        json.dumps({"id": "ok", "passed": True}) + "\n" + json.dumps({"id": "q7", "passed": value}),
    )
    message = error_of(InputError, load_results, path)
    assert message.startswith(f"{path}:2: verdict 'passed'")
    assert repr(value) in message and message.endswith("(task id 'q7')")


def test_ambiguous_verdict_in_csv(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", "id,passed\na,1\nb,\n")
    message = error_of(InputError, load_results, path)
    assert message.startswith(f"{path}:3: verdict 'passed'") and "''" in message
    assert message.endswith("(task id 'b')")


# --------------------------------------------------------------------------- result files


def test_csv_and_jsonl_give_the_same_results() -> None:
    from_jsonl = load_results(DATA / "results_sample.jsonl", arm="candidate")
    from_csv = load_results(DATA / "results_sample.csv", arm="candidate")
    assert from_jsonl == from_csv
    first = from_jsonl[0]
    assert first == TaskResult(
        task_id="t1",
        arm="candidate",
        passed=True,
        output="42",
        latency_s=1.5,
        cost=0.01,
        tokens=120,
        quality={"score": 0.9},
        metrics={"steps": 3.0},
        category="math",
        critical=True,
    )
    assert [r.task_id for r in from_jsonl] == ["t1", "t2", "3", "t4"]
    assert [r.passed for r in from_jsonl] == [True, False, True, False]
    assert all(r.status == "completed" and r.run == 0 for r in from_jsonl)


def test_json_array_file_and_custom_columns(tmp_path: Path) -> None:
    rows = [{"task": "a", "ok": "pass", "latency": 0.25}, {"task": "b", "ok": 0}]
    path = write(tmp_path / "r.json", json.dumps(rows, indent=2))
    results = load_results(path, key="task", field="ok")
    assert [(r.task_id, r.passed, r.latency_s) for r in results] == [
        ("a", True, 0.25),
        ("b", False, None),
    ]


def test_json_array_errors_carry_item_lines(tmp_path: Path) -> None:
    text = '[\n  {"id": "a", "passed": true},\n  {"id": "b", "passed": "perhaps"}\n]\n'
    path = write(tmp_path / "r.json", text)
    message = error_of(InputError, load_results, path)
    assert message.startswith(f"{path}:3:") and message.endswith("(task id 'b')")
    broken = write(tmp_path / "broken.json", '[\n {"id": "a", "passed": true},\n {"id": }\n]')
    assert error_of(InputError, load_results, broken).startswith(f"{broken}:3: malformed JSON")


def test_results_malformed_json_line(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", '{"id": "a", "passed": true}\n\n{"id": "b", passed: 1}\n')
    message = error_of(InputError, load_results, path)
    assert message.startswith(f"{path}:3: malformed JSON (")


def test_results_row_without_key(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", '{"id": "a", "passed": true}\n{"passed": false}\n')
    assert error_of(InputError, load_results, path) == f"{path}:2: no 'id' field (the task id)"


def test_results_row_without_verdict(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", '{"id": "a", "passed": true}\n{"id": "b", "score": 1}\n')
    message = error_of(InputError, load_results, path)
    assert message == f"{path}:2: no 'passed' field (the verdict) (task id 'b')"


def test_results_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", "id,passed\nx,1\ny,0\nx,0\n")
    message = error_of(InputError, load_results, path)
    assert message.startswith(f"{path}:4: duplicate id 'x'")
    assert "line 2" in message and "line 4" in message and message.endswith("(task id 'x')")


def test_results_integer_and_string_ids_collide(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", '{"id": 7, "passed": 1}\n{"id": "7", "passed": 0}\n')
    assert "duplicate id '7'" in error_of(InputError, load_results, path)


@pytest.mark.parametrize(
    ("row", "needle"),
    [
        ('{"id": "n", "passed": 1, "cost": NaN}', "'cost' is not a finite number"),
        ('{"id": "n", "passed": 1, "latency_s": Infinity}', "'latency_s' is not a finite number"),
        ('{"id": "n", "passed": 1, "steps": -Infinity}', "'steps' is not a finite number"),
        ('{"id": "n", "passed": 1, "cost": "cheap"}', "'cost' is not a number"),
        ('{"id": "n", "passed": 1, "cost": true}', "'cost' is not a number"),
        ('{"id": "n", "passed": 1, "tokens": 1.5}', "'tokens' must be an integer from 0 to 2**52 - 1"),
        ('{"id": "n", "passed": 1, "latency": -2}', "latency must not be negative"),
        ('{"id": "n", "passed": 1, "latency": 1, "latency_s": 1}', "both 'latency' and"),
        ('{"id": "n", "passed": 1, "critical": "sometimes"}', "'critical' is not"),
        ('{"id": [1], "passed": 1}', "'id' must be a string or an integer"),
    ],
)
def test_results_bad_values(tmp_path: Path, row: str, needle: str) -> None:
    path = write(tmp_path / "r.jsonl", '{"id": "ok", "passed": 0}\n' + row + "\n")
    message = error_of(InputError, load_results, path)
    assert message.startswith(f"{path}:2:") and needle in message


def test_results_csv_non_finite_and_numeric_metrics(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", "id,passed,cost\na,1,inf\n")
    message = error_of(InputError, load_results, path)
    assert message.startswith(f"{path}:2: 'cost' is not a finite number")
    ok = write(tmp_path / "ok.csv", "id,passed,note,steps\na,yes,nan,4\nb,no,text,\n")
    a, b = load_results(ok)
    assert (a.metrics, b.metrics) == ({"steps": 4.0}, {})  # 'nan' text is not a number in CSV


def test_results_csv_structure_errors(tmp_path: Path) -> None:
    ragged = write(tmp_path / "ragged.csv", "id,passed\na,1\nb,0,extra\n")
    message = error_of(InputError, load_results, ragged)
    assert message.startswith(f"{ragged}:3: row has 3 fields") and "(task id 'b')" in message
    no_col = write(tmp_path / "nocol.csv", "task,passed\na,1\n")
    message = error_of(InputError, load_results, no_col)
    assert message.startswith(f"{no_col}:1: no column 'id'") and "task, passed" in message
    header_only = write(tmp_path / "header.csv", "id,passed\n")
    assert error_of(InputError, load_results, header_only) == f"{header_only}: no result rows"
    quoted = write(tmp_path / "quoted.csv", 'id,passed,output\na,1,"two\nlines"\nb,2,x\n')
    assert error_of(InputError, load_results, quoted).startswith(f"{quoted}:4:")


def test_results_file_errors(tmp_path: Path) -> None:
    missing = tmp_path / "absent.jsonl"
    assert error_of(InputError, load_results, missing) == f"{missing}: no such file"
    empty = write(tmp_path / "empty.jsonl", "\n\n")
    assert error_of(InputError, load_results, empty) == f"{empty}: empty file: no results"
    odd = write(tmp_path / "r.txt", "id,passed\na,1\n")
    # the format comes from the content: neither a JSON object nor an array reads as CSV
    assert [r.task_id for r in load_results(odd)] == ["a"]
    assert [r.task_id for r in load_results(odd, format="csv")] == ["a"]
    assert "unknown format 'xml'" in error_of(InputError, load_results, odd, format="xml")
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"id,passed\nt\xe9,1\n")
    assert error_of(InputError, load_results, latin).startswith(f"{latin}:2: not UTF-8")


def test_results_arguments_are_checked(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", "id,passed\na,1\n")
    with pytest.raises(ConfigError):
        load_results(path, arm="treatment")
    with pytest.raises(ConfigError):
        load_results(path, key="passed", field="passed")


# --------------------------------------------------------------------------- expected ids


def test_expected_ids_text_and_json(tmp_path: Path) -> None:
    text = write(tmp_path / "ids.txt", "# inventory\n a \n\nb\n# c\n7\n")
    assert load_expected_ids(text) == ["a", "b", "7"]
    listed = write(tmp_path / "ids.json", '["a", "b", 7]')
    assert load_expected_ids(listed) == ["a", "b", "7"]


def test_expected_ids_errors(tmp_path: Path) -> None:
    dup = write(tmp_path / "ids.txt", "a\nb\n\na\n")
    message = error_of(InputError, load_expected_ids, dup)
    assert message.startswith(f"{dup}:4: duplicate id 'a'") and "line 1" in message
    dup_json = write(tmp_path / "ids.json", '[\n"a",\n"a"\n]')
    assert error_of(InputError, load_expected_ids, dup_json).startswith(f"{dup_json}:3:")
    bad = write(tmp_path / "bad.json", '["a", null]')
    assert "non-empty string or an integer" in error_of(InputError, load_expected_ids, bad)
    empty = write(tmp_path / "empty.txt", "# nothing\n")
    assert "no ids" in error_of(InputError, load_expected_ids, empty)
    missing = tmp_path / "absent.txt"
    assert error_of(InputError, load_expected_ids, missing) == f"{missing}: no such file"
