"""``compare_results`` on a numeric field: one line that says where numbers are compared.

The library's ``compare_results`` builds a pass/fail report; a field that holds numbers is
compared by ``ablation compare --field``. The error is an :class:`~ablation.InputError` naming
the file (or row), the value and the command, whatever shape the side comes in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ablation import AblationError, InputError, compare_results


def _rows(shift: float) -> list[dict[str, object]]:
    return [{"id": f"t{i}", "score": round(0.1 * i + shift, 3)} for i in range(1, 6)]


def test_a_numeric_field_in_a_file_says_where_numbers_are_compared(tmp_path: Path) -> None:
    for name, shift in (("before.jsonl", 0.0), ("after.jsonl", 0.05)):
        (tmp_path / name).write_text("".join(f'{{"id": "{r["id"]}", "score": {r["score"]}}}\n' for r in _rows(shift)))
    with pytest.raises(InputError) as raised:
        compare_results(tmp_path / "before.jsonl", tmp_path / "after.jsonl", field="score")
    text = str(raised.value)
    assert "before.jsonl:1" in text and "is a number, not a verdict" in text
    assert "ablation compare BEFORE AFTER --field score" in text
    assert type(raised.value) is InputError and isinstance(raised.value, AblationError)


def test_a_numeric_field_in_records_says_so_too() -> None:
    with pytest.raises(InputError, match=r"--field score`$"):
        compare_results(_rows(0.0), _rows(0.05), key="id", field="score")
