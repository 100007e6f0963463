"""Bad inputs that used to surface as a bare Python error are one line naming where they are.

A run value spelled with a digit other than ASCII ``0``-``9`` (``"²"``, ``"٣"``) is refused as
any other bad run is: ``FILE:LINE: the run must be ... (task id 'X')``, in JSON lines and CSV. A
dotted path part that is not ASCII digits does not index a list. ``--worker-memory-mb`` without
``--isolation process`` reads as the other option errors, without pydantic's wording.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli_shared import run_here
from pydantic import ValidationError

from ablation.cli.options import one_line
from ablation.config import CampaignConfig

_RUN = "the run must be an integer from 0 to 2**31 - 1, got"


@pytest.mark.parametrize("digit", ["\u00b2", "\u0663", "\uff13"])  # superscript 2, Arabic-Indic 3, fullwidth 3
@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_a_run_in_other_digits_is_one_line(tmp_path: Path, kind: str, digit: str) -> None:
    path = tmp_path / f"r.{kind}"
    if kind == "jsonl":
        path.write_text('{"id": "a", "run": "0", "passed": true}\n'
                        f'{{"id": "b", "run": "{digit}", "passed": true}}\n', encoding="utf-8")  # fmt: skip
        line = 2
    else:
        path.write_text(f"id,run,passed\na,0,true\nb,{digit},false\n", encoding="utf-8")
        line = 3
    proc = run_here(["compare", path.name, path.name, "--run-field", "run", "-q"], cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"ablation: error: {path.name}:{line}: {_RUN} {digit!r} (task id 'b')\n"


def test_a_run_in_ascii_digits_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("id,run,passed\na, 0 ,true\na,12,false\n")
    proc = run_here(["compare", path.name, path.name, "--run-field", "run", "-q",
                     "--format", "json"], cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("part", ["\u00b2", "--1"])
def test_a_path_part_that_is_no_index_does_not_index(tmp_path: Path, part: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "a", "passed": true, "l": [1]}\n')
    proc = run_here(["compare", path.name, path.name, "--key", f"l.{part}", "-q"], cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == f"ablation: error: {path.name}:1: no 'l.{part}' field (the task id)\n"


_SUITE = '''
from ablation import AblationTask

tasks = [AblationTask(task_id="t0", input_data={"k": 0}, expected_output={"answer": 0})]


def agent(x):
    return {"answer": 0}
'''


def test_worker_memory_without_processes_is_one_plain_line(tmp_path: Path) -> None:
    suite = tmp_path / "suite.py"
    suite.write_text(_SUITE)
    proc = run_here(["run", str(suite), "--baseline", f"{suite}:agent", "--candidate", f"{suite}:agent",
                     "--worker-memory-mb", "100", "--no-store", "-q", "--no-progress"], cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr == (
        "ablation: error: invalid option: --worker-memory-mb: limits worker processes, so it "
        "needs isolation='process'\n"
    )


def test_worker_memory_from_pyproject_names_the_file_and_key(tmp_path: Path) -> None:
    suite = tmp_path / "suite.py"
    suite.write_text(_SUITE)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.ablation]\nworker_memory_mb = 256\n")
    proc = run_here(["run", str(suite), "--baseline", f"{suite}:agent", "--candidate", f"{suite}:agent",
                     "--no-store", "-q", "--no-progress"], cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr == (
        f"ablation: error: invalid option: {pyproject} [tool.ablation] worker_memory_mb: limits "
        "worker processes, so it needs isolation='process'\n"
    )


def test_one_line_keeps_field_errors_and_drops_pydantic_wording() -> None:
    with pytest.raises(ValidationError) as caught:
        CampaignConfig(alpha=2, worker_memory_mb=100)  # a field error: the model check is not reached
    assert one_line(caught.value) == "invalid option: alpha: Input should be less than 0.5"
    with pytest.raises(ValidationError) as caught:
        CampaignConfig(worker_memory_mb=100)
    assert one_line(caught.value) == (
        "invalid option: worker_memory_mb: limits worker processes, so it needs isolation='process'"
    )
