"""Tests of the verdict contract and the built-in verifiers."""

from __future__ import annotations

import asyncio
import functools
import json
import math
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ablation import verifiers as v
from ablation.errors import AblationError
from ablation.schema import AblationTask, callable_name


def task(expected: Any = None, **kwargs: Any) -> AblationTask:
    return AblationTask(task_id="t1", expected_output=expected, **kwargs)


def verdict(verifier: Any, output: Any, t: AblationTask) -> bool:
    return asyncio.run(v.run_verifier(verifier, output, t))


# --- the verdict contract ---------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["no", "True", 1, 0, None, 1.0, [True], (), b"yes"])
def test_non_bool_verdicts_are_errors_naming_type_and_value(bad: Any) -> None:
    with pytest.raises(v.VerifierError) as info:
        v.check_verdict(bad, "my_verifier")
    message = str(info.value)
    assert "my_verifier" in message and type(bad).__name__ in message and repr(bad) in message
    assert isinstance(info.value, AblationError)


def test_bools_and_numpy_bools_are_accepted() -> None:
    assert v.check_verdict(True, "x") is True
    assert v.check_verdict(False, "x") is False
    converted = v.check_verdict(np.bool_(True), "x")
    assert converted is True and type(converted) is bool
    with pytest.raises(v.VerifierError):
        v.check_verdict(np.array([True]), "x")
    with pytest.raises(v.VerifierError):
        v.check_verdict(np.int64(1), "x")


@pytest.mark.parametrize("bad", ["no", 1, None])
def test_run_verifier_rejects_non_bool_from_sync_and_async(bad: Any) -> None:
    def sync_verifier(output: Any, t: AblationTask) -> Any:
        return bad

    async def async_verifier(output: Any, t: AblationTask) -> Any:
        return bad

    for fn in (sync_verifier, async_verifier):
        with pytest.raises(v.VerifierError, match=type(bad).__name__):
            verdict(fn, "out", task("out"))


def test_run_verifier_calls_sync_and_async_and_awaits_returned_awaitables() -> None:
    async def async_ok(output: Any, t: AblationTask) -> bool:
        return output == t.expected_output

    class AsyncCallable:
        name = "async_callable"

        async def __call__(self, output: Any, t: AblationTask) -> bool:
            return True

    assert verdict(async_ok, 3, task(3)) is True
    assert verdict(lambda o, t: o == 4, 3, task(3)) is False
    assert verdict(AsyncCallable(), 0, task(1)) is True
    assert verdict(lambda o, t: async_ok(o, t), 5, task(5)) is True  # sync returning a coroutine
    assert verdict(None, "  x ", task("x")) is True  # None means the default equality


def test_verifier_exceptions_propagate_unchanged() -> None:
    error = KeyError("missing")

    def broken(output: Any, t: AblationTask) -> bool:
        raise error

    with pytest.raises(KeyError) as info:
        verdict(broken, 1, task(1))
    assert info.value is error


def test_verifier_is_async() -> None:
    async def a(output: Any, t: AblationTask) -> bool:
        return True

    class AsyncCall:
        async def __call__(self, output: Any, t: AblationTask) -> bool:
            return True

    assert v.verifier_is_async(a)
    assert v.verifier_is_async(functools.partial(a))
    assert v.verifier_is_async(AsyncCall())
    assert not v.verifier_is_async(lambda o, t: True)
    assert not v.verifier_is_async(v.equals)
    assert not v.verifier_is_async(v.code_tests())


# --- equality ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (np.array([1, 2]), [1, 2]),
        ([1, 2], np.array([1, 2])),
        (np.array([[1.0, 2.0]]), ((1, 2),)),
        (0.1 + 0.2, 0.3),
        ("  42\n", "42"),
        ({"b": [1, 2], "a": 1}, {"a": 1, "b": (1, 2)}),
        ({"x": np.array([0.5])}, {"x": [0.5]}),
        ((1, 2), [1, 2]),
        (np.float64(2.5), 2.5),
        (np.bool_(True), True),
        (float("nan"), float("nan")),
        (None, None),
        ({1, 2}, {2, 1}),
        (1, 1.0),
    ],
)
def test_equals_true_cases(output: Any, expected: Any) -> None:
    assert verdict(v.equals, output, task(expected)) is True


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (np.array([1, 2]), [1, 3]),
        (np.array([1, 2]), [1, 2, 3]),
        (np.array([1, 2]), np.array([[1, 2]])),
        (0.3001, 0.3),
        ("42", 42),
        (True, 1),
        (1, True),
        ({"a": 1}, {"a": 1, "b": 2}),
        ([1, 2], [2, 1]),
        (None, 0),
        ("a b", "ab"),
    ],
)
def test_equals_false_cases(output: Any, expected: Any) -> None:
    assert verdict(v.equals, output, task(expected)) is False


def test_equals_never_truth_tests_foreign_comparisons() -> None:
    class Weird:
        def __eq__(self, other: object) -> Any:
            return np.array([True, True])

        __hash__ = object.__hash__

    class Broken:
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("no")

        __hash__ = object.__hash__

    assert verdict(v.equals, Weird(), task("x")) is False
    assert verdict(v.equals, Broken(), task("x")) is False


def test_default_verifier_and_names() -> None:
    assert v.default_verifier is v.equals and v.exact() is v.equals
    assert callable_name(v.equals) == "equals"
    assert callable_name(v.numeric()) == "numeric(rel_tol=1e-09, abs_tol=1e-06)"
    assert callable_name(v.regex(r"\d+")) == r"regex('\\d+', flags=0)"
    assert callable_name(v.contains("ok")) == "contains('ok', case_sensitive=False)"
    assert callable_name(v.json_equal()) == "json_equal()"
    assert (
        callable_name(v.code_tests(time_limit_s=2))
        == "code_tests(time_limit_s=2, memory_mb=512, cpu_s=None)"
    )
    assert task(1, verifier=v.numeric(abs_tol=0.1)).verifier_name == (
        "numeric(rel_tol=1e-09, abs_tol=0.1)"
    )
    assert repr(v.equals) == "equals"
    assert callable_name(v.code_tests(1, max_processes=8)) == (
        "code_tests(time_limit_s=1, memory_mb=512, cpu_s=None, max_processes=8)"
    )


# --- numbers and text -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected", "result"),
    [
        ("42", 42, True),
        (" 3.14 ", 3.14, True),
        (42, "42", True),
        (np.float64(1.5), 1.5, True),
        (1.0000001, 1, True),
        (1.01, 1, False),
        ("abc", 1, False),
        ("42 apples", 42, False),
        (None, 0, False),
        (True, 1, False),
        ("nan", float("nan"), False),
        ("inf", float("inf"), True),
        (10**30 + 1, 10**30, True),
        (10**400 + 1, 10**400, True),
        (10**400, 10**401, False),
        (1e308, 10**400, False),
    ],
)
def test_numeric(output: Any, expected: Any, result: bool) -> None:
    assert verdict(v.numeric(), output, task(expected)) is result


def test_numeric_tolerances_and_bad_expected() -> None:
    loose = v.numeric(rel_tol=0, abs_tol=0.01)
    assert verdict(loose, 1.005, task(1.0)) is True
    assert verdict(loose, 1.02, task(1.0)) is False
    assert verdict(v.numeric(rel_tol=0.1, abs_tol=0), 105, task(100)) is True
    with pytest.raises(v.VerifierError, match="not a number"):
        verdict(v.numeric(), 1, task("one"))
    with pytest.raises(ValueError):
        v.numeric(rel_tol=-1)


def test_regex() -> None:
    assert verdict(v.regex(r"\bcat\b"), "a cat sat", task()) is True
    assert verdict(v.regex(r"\bcat\b"), "concatenate", task()) is False
    assert verdict(v.regex("CAT", flags=re.IGNORECASE), "a cat", task()) is True
    assert verdict(v.regex(r"^\d+$"), 123, task()) is True
    assert verdict(v.regex("one"), None, task()) is False
    assert verdict(v.regex(), "order #123", task(r"#\d+")) is True
    with pytest.raises(v.VerifierError, match="string expected_output"):
        verdict(v.regex(), "x", task(5))
    with pytest.raises(re.error):
        v.regex("(")


def test_contains() -> None:
    assert verdict(v.contains("Paris"), "the capital is paris.", task()) is True
    assert verdict(v.contains("Paris", case_sensitive=True), "paris", task()) is False
    assert verdict(v.contains(), "Answer: PARIS", task("Paris")) is True
    assert verdict(v.contains(), None, task("Paris")) is False
    with pytest.raises(v.VerifierError, match="expected_output"):
        verdict(v.contains(), "x", task(None))


def test_json_equal() -> None:
    j = v.json_equal()
    assert verdict(j, '{"b": [1, 2], "a": {"c": null}}', task('{"a": {"c": null}, "b": [1, 2]}'))
    assert verdict(j, {"a": 1.0}, task('{"a": 1}'))
    assert verdict(j, np.array([1, 2]), task("[1, 2]"))
    assert not verdict(j, "{not json", task({"a": 1}))
    assert not verdict(j, '{"s": "x "}', task({"s": "x"}))  # strings inside must match exactly
    assert not verdict(j, '{"a": 1}', task({"a": 1, "b": 2}))
    with pytest.raises(v.VerifierError, match="not valid JSON"):
        verdict(j, "{}", task("{broken"))


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)


@given(json_values)
def test_values_equal_is_reflexive_and_survives_a_json_round_trip(value: Any) -> None:
    assert v.values_equal(value, value)
    assert v.values_equal(value, json.loads(json.dumps(value)), strip_strings=False)


@given(st.one_of(st.integers(), st.floats(), st.text(), st.none(), st.lists(st.booleans())))
def test_check_verdict_accepts_nothing_but_bools(value: Any) -> None:
    with pytest.raises(v.VerifierError):
        v.check_verdict(value, "prop")


# --- code tests -------------------------------------------------------------------------------

TESTS = "assert add(1, 2) == 3\n\ndef test_zero():\n    assert add(0, 0) == 0\n"


def code_task(tests: Any = TESTS) -> AblationTask:
    return AblationTask(task_id="code1", metadata={"tests": tests}, verifier=v.code_tests(3))


def test_code_tests_pass_fail_and_explain() -> None:
    checker = v.code_tests(time_limit_s=3)
    t = code_task()
    assert verdict(checker, "def add(a, b):\n    return a + b\n", t) is True
    assert verdict(checker, {"code": "def add(a, b):\n    return a - b\n"}, t) is False
    assert verdict(checker, "```python\ndef add(a, b):\n    return a + b\n```", t) is True
    result = checker.explain("def add(a, b):\n    return a - b\n", t)
    assert (result.passed, result.kind, result.tests_run, result.tests_passed) == (
        False,
        "failed",
        1,
        0,
    )
    assert "tests.py:1" in result.reason


def test_code_tests_reject_non_code_outputs_as_failures() -> None:
    checker = v.code_tests(time_limit_s=3)
    for output in (None, 42, {"text": "def add(a, b): ..."}):
        assert verdict(checker, output, code_task()) is False
        assert checker.explain(output, code_task()).kind == "bad_output"


def test_code_tests_task_defects_are_verifier_errors() -> None:
    checker = v.code_tests(time_limit_s=3)
    with pytest.raises(v.VerifierError, match=r"code1.*metadata\['tests'\]"):
        checker("def add(a, b): return a + b", AblationTask(task_id="code1"))
    with pytest.raises(v.VerifierError, match="do not compile"):
        checker("def add(a, b): return a + b", code_task("assert (\n"))
    assert checker("def add(a, b): return a + b", code_task(["assert add(1, 1) == 2"])) is True


def test_extract_code() -> None:
    assert v.extract_code("x = 1") == "x = 1"
    assert v.extract_code("```py\nx = 1\n```\n") == "x = 1"
    assert v.extract_code({"code": "y = 2"}) == "y = 2"
    assert v.extract_code("text ```x``` text") == "text ```x``` text"
    assert v.extract_code(None) is None and v.extract_code({"code": 3}) is None


def test_float_tolerance_constants_are_tiny() -> None:
    from ablation.evaluate import equality as impl

    assert impl.FLOAT_REL_TOL == 1e-9 and impl.FLOAT_ABS_TOL <= 1e-12
    assert not v.values_equal(1.0, 1.0 + 1e-6)
    assert v.values_equal(math.inf, math.inf) and not v.values_equal(math.inf, -math.inf)
    # beyond float range: compared exactly with fractions, no OverflowError
    assert v.values_equal(10**400, 10**400 + 1)  # within rel_tol 1e-9
    assert not v.values_equal(10**400, 2 * 10**400)
    assert not v.values_equal(10**400, 1e308)


_scalars = st.one_of(
    st.booleans(), st.integers(), st.integers(min_value=2**60), st.floats(), st.text(max_size=4),
    st.sampled_from([0, 1, 0.0, 1.0, -0.0, " a", "a ", "a", True, False, 2**70, 2**70 + 1]),
)


def _near(value: Any) -> list[Any]:
    """Values the rules may call equal to ``value`` although ``==`` does not (or the reverse)."""
    if isinstance(value, str):
        return [value, f" {value}", value.strip(), value + "x"]
    if isinstance(value, bool):
        return [value, int(value), not value]
    if isinstance(value, int | float):
        nudged = value * (1 + 1e-12) if isinstance(value, float) else value + 1
        return [value, nudged, float(value) if abs(value) < 2**1000 else value, -value]
    return [value]


@given(_scalars, _scalars, st.booleans(), st.integers(min_value=0, max_value=3))
def test_values_equal_scalar_shortcut_gives_the_rules_verdict(
    a: Any, other: Any, strip: bool, pick: int
) -> None:
    from ablation.evaluate import equality

    near = _near(a)
    pairs = [(a, other), (a, near[pick % len(near)]), (near[pick % len(near)], a)]
    shortcut = [equality.values_equal(x, y, strip_strings=strip) for x, y in pairs]
    saved = equality._PLAIN_SCALARS
    equality._PLAIN_SCALARS = frozenset()  # the rules alone: the path before the shortcut
    try:
        rules = [equality.values_equal(x, y, strip_strings=strip) for x, y in pairs]
    finally:
        equality._PLAIN_SCALARS = saved
    assert shortcut == rules
