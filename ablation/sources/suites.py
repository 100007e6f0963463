"""Task suites by path or module spec, and the verifier names a JSONL suite may use.

Owns :func:`load_suite`: a Python file or module defining ``tasks``, or a JSONL file with one task
per line whose ``verifier`` is a name (``equals``, ``numeric:ABS_TOL``, ``code_tests:SECONDS``...)
resolved to a built-in of :mod:`ablation.verifiers`. Every error raised here is one line that
starts with ``FILE:LINE:`` when the line is known (``FILE:`` otherwise), states the problem, and
ends with ``(task id 'X')`` when the task is known. Files are read as UTF-8 (a byte-order mark is
allowed); line numbers count from 1.
"""

from __future__ import annotations

import importlib
import math
import os
import re
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ablation.errors import ConfigError, InputError, validation_line
from ablation.schema import AblationTask, validate_suite
from ablation.sources.modules import (
    ATTR_PATH,
    MODULE_NAME,
    exec_file,
    frame_line,
    get_attr,
    import_by_name,
    split_py_attr,
)
from ablation.sources.text import (
    MAX_BYTES,
    MAX_JSON_DEPTH,
    bounded_lines,
    exc_text,
    file_error,
    load_json,
    nested_too_deep,
    short_repr,
)

__all__ = ["JsonlSuite", "load_suite", "open_suite"]


def load_suite(spec: str | os.PathLike[str]) -> tuple[AblationTask, ...]:
    """Load a task suite from a Python file, a module, or a JSONL file.

    A Python suite defines ``tasks`` (or the attribute named after ``:``): a list or tuple of
    :class:`AblationTask`, or a zero-argument callable returning one. A file is imported under a
    unique module name with its own directory first on ``sys.path`` while it runs, so it can
    import sibling modules. It is executed on every call (its code is trusted, like any import).

    A JSONL suite holds one JSON object per line with :class:`AblationTask` fields; blank lines
    are skipped. ``verifier`` names a built-in of :mod:`ablation.verifiers`: ``equals``
    (the default, same as leaving it out), ``numeric``, ``numeric:ABS_TOL``, ``regex`` (the
    pattern is ``expected_output``), ``regex:PATTERN``, ``contains``, ``contains:TEXT``, ``json``,
    ``code_tests``, ``code_tests:SECONDS``. ``setup`` and ``teardown`` cannot be given (they are
    Python callables).

    Args:
        spec: ``suite.py``, ``suite.py:NAME``, ``pkg.mod``, ``pkg.mod:NAME`` or ``suite.jsonl``.

    Returns:
        The tasks, checked by :func:`~ablation.schema.validate_suite`.

    Raises:
        InputError: the file is missing, empty, malformed, defines no tasks, or a JSONL line is
            invalid (the message names the file, line and task id).
        ConfigError: the tasks fail :func:`validate_suite` (prefixed with the file or module).
    """
    if isinstance(spec, os.PathLike):
        return _suite_from_path(Path(spec), os.fspath(spec), "tasks")
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(
            f"a suite is a .py or .jsonl path or a module spec 'pkg.mod[:NAME]', got {short_repr(spec)}"
        )
    py_attr = split_py_attr(spec)
    if py_attr is not None:
        return _suite_from_path(Path(py_attr[0]), py_attr[0], py_attr[1])
    path = Path(spec)
    if path.suffix.lower() in (".py", ".jsonl") or "/" in spec or os.sep in spec or path.exists():
        return _suite_from_path(path, spec, "tasks")
    module_name, _, attr = spec.partition(":")
    if MODULE_NAME.fullmatch(module_name) and (not attr or ATTR_PATH.fullmatch(attr)):
        module = import_by_name(module_name, InputError)
        return _tasks_from(module, attr or "tasks", f"module {module_name!r}")
    raise InputError(
        f"{spec}: not a suite: expected a .py or .jsonl path or a module spec 'pkg.mod[:NAME]'"
    )


def open_suite(spec: str | os.PathLike[str]) -> tuple[AblationTask, ...] | JsonlSuite:
    """A suite for a campaign: a JSONL file streamed (:class:`JsonlSuite`), anything else loaded.

    Takes the specs of :func:`load_suite`. A ``.jsonl`` path gives a :class:`JsonlSuite`, read line
    by line on each pass of the campaign (its lines are checked by the campaign's first pass,
    before any trial); Python suites are loaded by :func:`load_suite`.

    Raises:
        InputError: as :func:`load_suite` (a JSONL file's lines only when it is read).
    """
    text = os.fspath(spec) if isinstance(spec, os.PathLike) else spec
    if isinstance(text, str) and split_py_attr(text) is None and text.lower().endswith(".jsonl"):
        return JsonlSuite(Path(text), text)
    return load_suite(spec)


def _suite_from_path(path: Path, display: str, attr: str) -> tuple[AblationTask, ...]:
    if not path.exists():
        raise file_error(InputError, display, "no such file")
    suffix = path.suffix.lower()
    if suffix == ".py":
        if not attr or not ATTR_PATH.fullmatch(attr):
            raise file_error(InputError, display, f"invalid attribute name {attr!r} after ':'")
        return _tasks_from(exec_file(path, display, InputError), attr, display)
    if suffix == ".jsonl":
        return _suite_from_jsonl(path, display)
    raise file_error(
        InputError,
        display,
        f"unsupported suite file type {suffix or '(none)'!r}; expected .py or .jsonl",
    )


def _tasks_from(module: types.ModuleType, attr: str, where: str) -> tuple[AblationTask, ...]:
    hint = "; a suite defines tasks = [AblationTask(...), ...] or def tasks(): ..."
    value = get_attr(module, attr, where, InputError, hint if attr == "tasks" else "")
    if callable(value) and not isinstance(value, list | tuple):
        try:
            value = value()
        except Exception as exc:
            found = frame_line(exc, getattr(module, "__file__", None))
            raise file_error(
                InputError,
                where,
                f"{attr}() raised {exc_text(exc)}",
                line=found[1] if found else None,
            ) from None
    if isinstance(value, str | bytes | Mapping) or not hasattr(value, "__iter__"):
        raise file_error(
            InputError,
            where,
            f"{attr!r} must be a list or tuple of AblationTask (or a function "
            f"returning one), got {type(value).__name__}",
        )
    try:
        items = list(value)
    except Exception as exc:
        raise file_error(InputError, where, f"iterating {attr!r} raised {exc_text(exc)}") from None
    if not items:
        raise file_error(InputError, where, f"{attr!r} is empty: a suite needs at least one task")
    try:
        return validate_suite(items)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _suite_from_jsonl(path: Path, display: str) -> tuple[AblationTask, ...]:
    return validate_suite(JsonlSuite(path, display))


class JsonlSuite:
    """A JSONL suite read line by line on every pass, never held whole (see :func:`open_suite`).

    Each pass parses and checks every line as :func:`load_suite` does (errors name the file, line
    and task id), so a campaign's first pass refuses a bad line before any trial runs.

    Args:
        path: The ``.jsonl`` file.
        display: How errors name it (the path as given).
    """

    def __init__(self, path: str | os.PathLike[str], display: str | None = None) -> None:
        self.path = Path(path).absolute()  # read on every pass, whatever the cwd is by then
        self.display = display if display is not None else os.fspath(path)
        if not self.path.exists():
            raise file_error(InputError, self.display, "no such file")

    def __repr__(self) -> str:
        return f"JsonlSuite({self.display!r})"

    def __iter__(self) -> Iterator[AblationTask]:
        empty = True
        for task in _jsonl_tasks(self.path, self.display):
            empty = False
            yield task
        if empty:
            raise file_error(InputError, self.display, "empty file: no tasks")


def _jsonl_tasks(path: Path, display: str) -> Iterator[AblationTask]:
    """Each line's task, checked (JSON, fields, verifier name, a repeated id) as it is read."""
    first_line: dict[str, int] = {}
    line, task_id = 0, None

    def fail(problem: str) -> Exception:
        return file_error(InputError, display, problem, line=line, task_id=task_id)

    for line, raw in _streamed_lines(path, display):
        task_id = None
        obj = load_json(raw, display, line)  # malformed, too deep to decode, a huge integer
        if not isinstance(obj, dict):
            raise fail(f"expected a JSON object (one task per line), got {type(obj).__name__}")
        raw_id = obj.get("task_id")
        if raw_id is None or raw_id == "":
            raise fail("missing task_id")
        task_id = raw_id if isinstance(raw_id, str) else short_repr(raw_id)
        for name, value in obj.items():
            if nested_too_deep(value):
                raise fail(f"field {name!r} is nested more than {MAX_JSON_DEPTH} levels deep")
        if task_id in first_line:
            raise fail(
                f"duplicate task id, first on line {first_line[task_id]}, again on line {line}"
            )
        for hook in ("setup", "teardown"):
            if hook in obj:
                raise fail(f"field {hook!r} cannot be given in JSONL (a Python callable)")
        try:
            if "verifier" in obj:
                obj["verifier"] = _resolve_verifier(obj["verifier"])
            task = AblationTask.model_validate(obj)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise fail(validation_line(exc, AblationTask.model_fields)) from None
        first_line[task_id] = line
        yield task


def _streamed_lines(path: Path, display: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each non-blank line, decoded as UTF-8 one line at a time.

    A line longer than :data:`~ablation.sources.text.MAX_BYTES` (256 MiB; a file with no line
    break, such as ``/dev/zero``) is an error naming the file, the line and the limit.
    """
    try:
        handle = path.open("rb")
    except IsADirectoryError:
        raise file_error(InputError, display, "is a directory, not a file") from None
    except OSError as exc:
        raise file_error(InputError, display, f"cannot read the file: {exc.strerror or exc}") from None
    with handle:
        for number, data in bounded_lines(handle, display, InputError, MAX_BYTES):
            try:
                text = data.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise file_error(
                    InputError, display, f"not UTF-8 text ({exc.reason})", line=number
                ) from None
            text = text.rstrip("\r\n")
            if text.strip():
                yield number, text


# --------------------------------------------------------------------------- verifier names

VerifierBuilder = Callable[[Any, "str | None"], Any]


def _no_arg(name: str, arg: str | None) -> None:
    if arg is not None:
        raise ValueError(f"{name!r} takes no argument")


def _positive(name: str, arg: str) -> float:
    try:
        value = float(arg)
    except ValueError:
        raise ValueError(f"{name!r} needs a number after ':', got {arg!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name!r} needs a finite non-negative number, got {arg!r}")
    return value


def _build_equals(verifiers: Any, arg: str | None) -> None:
    _no_arg("equals", arg)
    return None  # the engine's default verifier: equality


def _build_numeric(verifiers: Any, arg: str | None) -> Any:
    if arg is None:
        return verifiers.numeric()
    return verifiers.numeric(abs_tol=_positive("numeric", arg.strip()))


def _build_regex(verifiers: Any, arg: str | None) -> Any:
    if arg is None:
        return verifiers.regex()  # the pattern is the task's expected_output
    if not arg:
        raise ValueError("'regex:' needs a pattern after ':' (or use 'regex' alone)")
    try:
        re.compile(arg)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {arg!r}: {exc}") from None
    return verifiers.regex(arg)


def _build_contains(verifiers: Any, arg: str | None) -> Any:
    if arg is None:
        return verifiers.contains()
    if not arg:
        raise ValueError("'contains:' needs text after ':' (or use 'contains' alone)")
    return verifiers.contains(arg)


def _build_json(verifiers: Any, arg: str | None) -> Any:
    _no_arg("json", arg)
    return verifiers.json_equal()


def _build_code_tests(verifiers: Any, arg: str | None) -> Any:
    if arg is None:
        return verifiers.code_tests()
    limit = _positive("code_tests", arg.strip())
    if limit == 0:
        raise ValueError("'code_tests' needs a positive time limit")
    return verifiers.code_tests(time_limit_s=limit)


_BUILTINS = "ablation.evaluate.verifiers"
_CODE_TESTS = "ablation.evaluate.code_tests"
# name -> (module the builder takes, imported only when the name is used; the builder)
_VERIFIERS: dict[str, tuple[str | None, VerifierBuilder]] = {
    "equals": (None, _build_equals),
    "numeric": (_BUILTINS, _build_numeric),
    "regex": (_BUILTINS, _build_regex),
    "contains": (_BUILTINS, _build_contains),
    "json": (_BUILTINS, _build_json),
    "code_tests": (_CODE_TESTS, _build_code_tests),
}
_VERIFIER_FORMS = (
    "equals, numeric, numeric:ABS_TOL, regex, regex:PATTERN, contains, contains:TEXT, json, "
    "code_tests, code_tests:SECONDS"
)


def _resolve_verifier(value: Any) -> Any:
    """Turn a JSONL ``verifier`` name into a verifier from :mod:`ablation.evaluate.verifiers`
    (or, for ``code_tests``, :mod:`ablation.evaluate.code_tests`).

    ``"equals"`` (and ``null``) give ``None``: the task's default equality verifier, so a JSONL
    task and a Python task without a verifier get the same suite fingerprint. The verifier
    modules are imported only when a non-default name is used.

    Raises:
        ValueError: naming the problem (the caller adds the file, line and task id).
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"'verifier' must be a name ({_VERIFIER_FORMS}), got {short_repr(value)}")
    name, sep, arg = value.partition(":")
    entry = _VERIFIERS.get(name.strip().lower())
    if entry is None:
        raise ValueError(f"unknown verifier {value!r} (known: {_VERIFIER_FORMS})")
    module_name, builder = entry
    try:
        module = None if module_name is None else importlib.import_module(module_name)
        return builder(module, arg if sep else None)
    except Exception as exc:
        reason = str(exc) if isinstance(exc, ValueError) else exc_text(exc)
        raise ValueError(f"verifier {value!r}: {reason}") from None
