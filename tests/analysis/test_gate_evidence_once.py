"""A gate's evidence states its null hypothesis once."""

from __future__ import annotations

from pathlib import Path

import pytest

from ablation.cli.main import main


@pytest.mark.parametrize("runs", [1, 3])
def test_the_noninferiority_evidence_names_its_null_once(
    runs: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With repeated runs the betting test's method named ``H0: uplift <= -margin`` and the gate
    added ``H0: uplift <= -0.02``: two nulls in one sentence."""
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    before.write_text("".join(f'{{"id": "t{i}", "run": {r}, "passed": true}}\n' for i in range(20) for r in range(runs)))
    after.write_text("".join(f'{{"id": "t{i}", "run": {r}, "passed": {str(i % 4 > 0).lower()}}}\n'
                             for i in range(20) for r in range(runs)))  # fmt: skip
    out = tmp_path / "r.md"
    main(["compare", str(before), str(after), "--run-field", "run", "--margin", "0.02", "--format", "markdown", "-o", str(out)])
    capsys.readouterr()
    [row] = [line for line in out.read_text().splitlines() if line.startswith("| non-inferiority |")]
    assert row.count("H0:") == 1, row
    assert "H0: uplift &lt;= -0.02" in row
