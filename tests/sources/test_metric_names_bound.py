"""A result file whose rows name many different metrics is refused in one line, not held densely.

Every quality or metric name is a column with a value in every row, so rows that each name
metrics of their own hold names x rows values: 200 rows of 2,500 names each (a 7.5 MB file) took
3 GB, a 15 MB file more than 8 GB. Past ``NAMED_CELLS_LIMIT`` (a name counted as 1,024 rows at
least) ``compare`` names the file and the count, exit 1; so does ``ablation run`` (its report)
when an agent's trials name that many metrics.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_here

from ablation.outputs import NAMED_CELLS_LIMIT


def _write(path: Path, rows: int, names_per_row: int, shared: bool = False) -> None:
    """``rows`` rows, each with ``names_per_row`` numeric fields: its own names, or shared ones."""
    with path.open("w") as fh:
        for i in range(rows):
            row: dict[str, object] = {"id": f"t{i}", "passed": i % 2 == 0}
            row.update({f"m{0 if shared else i}_{j}": j for j in range(names_per_row)})
            fh.write(json.dumps(row) + "\n")


def test_rows_naming_their_own_metrics_are_refused_past_the_limit(tmp_path: Path) -> None:
    rows = 2048
    per_row = NAMED_CELLS_LIMIT // (rows * rows) + 1  # names x rows just past the limit
    baseline, sparse = tmp_path / "baseline.jsonl", tmp_path / "sparse.jsonl"
    _write(baseline, rows, 1, shared=True)
    _write(sparse, rows, per_row)
    refused = run_here(["compare", str(baseline), str(sparse), "--format", "json"])
    assert (refused.returncode, refused.stdout) == (1, "")
    [line] = refused.stderr.strip().splitlines()
    assert f"sparse.jsonl: {rows * per_row} or more distinct metric names over {rows} trials" in line
    assert str(NAMED_CELLS_LIMIT) in line


def test_a_few_names_in_every_row_are_read(tmp_path: Path) -> None:
    baseline, dense = tmp_path / "baseline.jsonl", tmp_path / "dense.jsonl"
    _write(baseline, 3000, 1, shared=True)
    _write(dense, 3000, 20, shared=True)  # 20 names, every row: far below the limit
    read = run_here(["compare", str(baseline), str(dense), "--format", "json"])
    assert read.returncode in (0, 2), read.stderr
    assert json.loads(read.stdout)["n_paired"] == 3000


def test_a_campaign_whose_agent_names_too_many_metrics_is_refused_in_one_line(tmp_path: Path) -> None:
    # Three tasks whose candidate names 22,000 metrics of its own each: 66,000 names, past the
    # 65,536 a few trials may hold; each trial's metrics stay far below max_output_bytes.
    per_task = NAMED_CELLS_LIMIT // 1024 // 3 + 200
    (tmp_path / "suite.py").write_text(
        "from ablation import AblationTask\n"
        "tasks = [AblationTask(task_id=f't{i}', input_data={'i': i}) for i in range(3)]\n"
    )
    (tmp_path / "agents.py").write_text(
        "from ablation import AgentOutput\n"
        "def plain(task_input):\n    return 'ok'\n"
        "def many(task_input):\n"
        "    i = task_input['i']\n"
        f"    return AgentOutput(output='ok', metrics={{f'm{{i}}_{{j}}': 1.0 for j in range({per_task})}})\n"
    )
    agents = tmp_path / "agents.py"
    proc = run_here([
        "run", str(tmp_path / "suite.py"), "--baseline", f"{agents}:plain",
        "--candidate", f"{agents}:many", "--store", str(tmp_path / "runs.db"), "--no-progress",
        "--format", "json",
    ])  # fmt: skip
    assert (proc.returncode, proc.stdout) == (1, "")
    [line] = proc.stderr.strip().splitlines()
    assert "the candidate trials:" in line and "distinct metric names over 3 trials" in line, line


def test_compare_results_refuses_trials_naming_too_many_metrics() -> None:
    """The Python API built one dense column per name without a bound (the command's readers and
    the store had one): three trials naming 22,000 metrics of their own each are refused with the
    same count, as TaskResult objects and as mappings, and a quality scorer's names alike."""
    from ablation import TaskResult, compare_results
    from ablation.errors import TooManyNames

    per_task = NAMED_CELLS_LIMIT // 1024 // 3 + 200
    plain = [TaskResult(task_id=f"t{i}", arm="baseline", passed=True) for i in range(3)]
    for field, kind in (("metrics", "metric"), ("quality", "quality")):
        many = [
            TaskResult(task_id=f"t{i}", arm="candidate", passed=True,
                       **{field: {f"m{i}_{j}": 0.5 for j in range(per_task)}})
            for i in range(3)
        ]  # fmt: skip
        for candidate in (many, [r.model_dump(mode="json") for r in many]):
            with pytest.raises(TooManyNames, match=f"distinct {kind} names over 3 trials"):
                compare_results(plain, candidate)
