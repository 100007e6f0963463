"""A registered reader's category that is not text is refused in one line, not sorted.

A reader added through the public registry hands on ``category`` in ``Row.extra``; the column
read (``ablation compare``, :func:`~ablation.sources.result_files.load_result_columns`) sorts the
categories, so one that is not a string must be an input error naming the file, the line and
the task id, as the same read's ``critical`` check does, never a bare ``TypeError``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here

from ablation.errors import InputError
from ablation.sources.readers import ResultReader, Row, register_reader, registry
from ablation.sources.result_files import load_result_columns, load_results
from ablation.sources.text import short_repr

#: The category the toy reader gives task ``t2`` (the others get text).
ODD: dict[str, Any] = {"integer": 5, "float": 1.5, "boolean": True, "list": ["a"], "object": {"a": 1}}


@pytest.fixture
def labelled(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A ``labelled`` reader of ``ID JSON-CATEGORY`` lines, registered for this test only."""
    monkeypatch.setattr(registry, "_READERS", list(registry._READERS))

    def rows(text: str, display: str, options: Any) -> Iterator[Row]:
        for line, raw in enumerate(text.splitlines(), 1):
            task_id, category = raw.split(" ", 1)
            yield Row(line, task_id, task_id != "t3", extra={"category": json.loads(category)})

    register_reader(ResultReader("labelled", ("text",), lambda text: text.startswith("t1 "), rows))
    yield


def _write(path: Path, odd: Any) -> None:
    lines = [("t1", "alpha"), ("t2", odd), ("t3", "beta")]
    path.write_text("".join(f"{task_id} {json.dumps(category)}\n" for task_id, category in lines))


@pytest.mark.parametrize("kind", sorted(ODD))
def test_a_category_that_is_not_text_is_one_input_error(labelled: None, tmp_path: Path, kind: str) -> None:
    path = tmp_path / "labels.txt"
    _write(path, ODD[kind])
    words = f"'category' must be a string, got {short_repr(ODD[kind])} (task id 't2')"
    with pytest.raises(InputError) as caught:
        load_result_columns(path)
    assert str(caught.value) == f"{path}:2: {words}"
    done = run_here(["compare", path.name, path.name, "--format", "json"], cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, ""), done
    assert done.stderr.strip() == f"ablation: error: {path.name}:2: {words}"


def test_text_categories_of_a_registered_reader_are_read(labelled: None, tmp_path: Path) -> None:
    path = tmp_path / "labels.txt"
    _write(path, "gamma")
    done = run_here(["compare", path.name, path.name, "--format", "json"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(c["category"] for c in report["categories"]) == ["alpha", "beta", "gamma"]


@pytest.mark.parametrize("kind", sorted(ODD))
def test_the_row_path_refuses_it_in_one_line_too(labelled: None, tmp_path: Path, kind: str) -> None:
    """``load_results`` (each row a ``TaskResult``) names the file, line, field and task id,
    where it raised pydantic's many-line ``ValidationError``."""
    path = tmp_path / "labels.txt"
    _write(path, ODD[kind])
    with pytest.raises(InputError) as caught:
        load_results(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:2: field 'category'") and text.endswith("(task id 't2')"), text
    assert "\n" not in text
