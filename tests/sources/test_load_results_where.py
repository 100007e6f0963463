"""``load_results(where=...)`` is a mapping of dotted paths to texts, and says so when it is not.

A row's value is compared as text: ``where={"run": 1}`` matched no row and the error blamed the
file ("no result rows match --where run=1") although its rows hold run 1; the command line's form
``where="run=1"`` failed inside ``dict()`` ("dictionary update sequence element #0 has length 1"),
an error outside ablation's tree.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ablation import ConfigError, load_results


@pytest.fixture
def rows(tmp_path: Path) -> Path:
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "a", "passed": true, "run": 1}\n{"id": "b", "passed": true, "run": 0}\n')
    return path


def test_texts_select_rows(rows: Path) -> None:
    assert [r.task_id for r in load_results(rows, where={"run": "1"})] == ["a"]
    assert [r.task_id for r in load_results(rows, where=[("run", "0")])] == ["b"]  # type: ignore[arg-type]


@pytest.mark.parametrize(("where", "named"), [({"run": 1}, "'run': 1"), ("run=1", "str 'run=1'"),
                                              (["run=1"], "list ['run=1']")])
def test_a_value_or_a_form_that_is_not_a_mapping_of_texts_is_refused_naming_it(
    rows: Path, where: object, named: str
) -> None:
    with pytest.raises(ConfigError, match=r"^where m") as raised:
        load_results(rows, where=where)  # type: ignore[arg-type]
    assert named in str(raised.value)
