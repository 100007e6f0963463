"""TaskResult lines a program wrote (``result.model_dump_json()`` each, no header) are read as
the trials they are: an error or a timeout stays one.

Such a file was refused ("no 'id' field (the task id)"), and with ``--key task_id`` its error
and timeout trials were read as plain failures, so the completeness gate never saw them. They
are now read as an ``ablation report --export-jsonl`` file without its header.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli_shared import run_here

from ablation import CampaignConfig, TaskResult, compare_results


def _trials(arm: str) -> list[TaskResult]:
    out = []
    for i in range(40):
        if arm == "baseline" and i == 3:
            out.append(TaskResult(task_id=f"t{i}", arm=arm, status="error", error_type="ValueError",
                                  error_message="boom", error_stage="agent"))  # fmt: skip
        elif arm == "candidate" and i == 7:
            out.append(TaskResult(task_id=f"t{i}", arm=arm, status="timeout", error_type="TimeoutError",
                                  error_stage="timeout", latency_s=2.0))  # fmt: skip
        else:
            passed = (i % 3 != 0) if arm == "baseline" else (i % 5 != 0)
            out.append(TaskResult(task_id=f"t{i}", arm=arm, passed=passed, latency_s=0.1 + i / 100,
                                  cost=0.001 * i, category="even" if i % 2 else "odd"))  # fmt: skip
    return out


def _written(path: Path, trials: list[TaskResult]) -> Path:
    path.write_text("".join(t.model_dump_json() + "\n" for t in trials))
    return path


def _shown(report: object) -> dict[str, object]:
    data = report.model_dump(mode="json")  # type: ignore[attr-defined]
    data.pop("provenance")
    return data


def test_the_lines_give_the_report_of_the_trials_themselves(tmp_path: Path) -> None:
    base, cand = _trials("baseline"), _trials("candidate")
    config = CampaignConfig(n_resamples=200)
    expected = compare_results(base, cand, config=config, names=("b", "c"))
    read = compare_results(_written(tmp_path / "b.jsonl", base), _written(tmp_path / "c.jsonl", cand),
                           config=config, names=("b", "c"))
    assert _shown(read) == _shown(expected)
    assert (read.baseline.errors, read.candidate.timeouts) == (1, 1)


def test_the_command_counts_the_error_and_the_timeout(tmp_path: Path) -> None:
    b = _written(tmp_path / "b.jsonl", _trials("baseline"))
    c = _written(tmp_path / "c.jsonl", _trials("candidate"))
    out = tmp_path / "r.json"
    proc = run_here(["compare", str(b), str(c), "--format", "json", "-o", str(out), "--resamples", "200"])
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert (report["baseline"]["errors"], report["candidate"]["timeouts"]) == (1, 1)
    (complete,) = [g for g in report["gates"] if g["name"] == "complete comparison"]
    assert "baseline 39/40 completed, candidate 39/40 completed" in complete["evidence"]


def test_a_bad_status_is_one_line_naming_the_trial(tmp_path: Path) -> None:
    trials = _trials("baseline")
    text = "".join(t.model_dump_json() + "\n" for t in trials).replace(
        '"task_id":"t5","arm":"baseline","run":0,"status":"completed"',
        '"task_id":"t5","arm":"baseline","run":0,"status":"crashed"',
    )
    path = tmp_path / "b.jsonl"
    path.write_text(text)
    proc = run_here(["compare", str(path), str(path)])
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"ablation: error: {path}:6: 'status' must be completed, error or timeout, got 'crashed' (task id 't5')"
    ]
