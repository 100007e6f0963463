"""``ablation plan --results BEFORE AFTER`` plans from the pairs ``ablation compare`` makes of the
two files: it names the tasks the pairing left out beside the paired ones, refuses a pair of files
that pairs no task (one line, exit 1: there is nothing to plan from), and names a file it cannot
read as ``--results``' (never as a value of ``--alpha`` or ``--power`` the statistics refused).

The reference for the counts is ``ablation compare``'s own JSON report of the same two files.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli_shared import run_here


def _write(path: Path, rows: dict[str, bool]) -> str:
    path.write_text("".join(json.dumps({"id": k, "passed": v}) + "\n" for k, v in rows.items()))
    return str(path)


def test_plan_names_the_tasks_left_out_beside_the_pairs(tmp_path: Path) -> None:
    before = _write(tmp_path / "b.jsonl", {f"t{i}": i % 3 == 0 for i in range(40)} | {"only-b": True})
    after = _write(tmp_path / "a.jsonl", {f"t{i}": i % 4 == 0 for i in range(40)} | {"x": True, "y": False})
    run_here(["compare", before, after, "--format", "json", "-o", str(tmp_path / "report.json")])
    report = json.loads((tmp_path / "report.json").read_text())
    n, table = report["n_paired"], report["table"]
    psi = (table["regressions"] + table["improvements"]) / n
    done = run_here(["plan", "--results", before, after])
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first == (
        f"observed: {n} paired tasks; 3 tasks excluded, listed by ablation compare; discordance "
        f"{psi:.4f} ({table['regressions']} regressions + {table['improvements']} improvements)"
    )
    assert len(report["excluded"]) == 3
    assert f"with {n} tasks" in done.stdout


def test_plan_refuses_files_that_pair_no_task(tmp_path: Path) -> None:
    before = _write(tmp_path / "b.jsonl", {"a": True, "b": False})
    after = _write(tmp_path / "a.jsonl", {"c": True})
    done = run_here(["plan", "--results", before, after])
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"ablation: error: ablation plan: --results {before} {after}: no task is paired; 3 tasks "
        "excluded, listed by ablation compare: nothing to plan from\n"
    )


def test_plan_names_an_unreadable_results_file_as_results(tmp_path: Path) -> None:
    before = _write(tmp_path / "b.jsonl", {"a": True})
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "passed": "maybe"}\n')
    for after in (str(bad), str(tmp_path / "missing.jsonl")):
        done = run_here(["plan", "--results", before, after])
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr.startswith(f"ablation: error: ablation plan: --results: {after}"), done.stderr
        assert "--alpha" not in done.stderr and done.stderr.count("\n") == 1
