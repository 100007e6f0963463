"""``compare_results`` on rows given as mappings reads them as ``ablation compare`` reads the same
rows written as JSON lines, with the same options.

A file's rows go through the reader registry, which recognises ``TaskResult`` rows (an ablation
export's, or a program's ``model_dump``) whatever ``run_field`` says and keeps their status,
errors, quality, metrics, usage and cost; rows given as mappings were read by the generic reader,
which takes them as plain id/verdict rows once an option is given. Repro: the dumps of TaskResults
with errors and quality scores, as dicts with ``run_field="run"`` (what ``ablation compare
--run-field run`` was given), failed with "no 'id' field (the task id)", and with
``key="task_id"`` too gave no errors section, no quality comparison and other gates.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from helpers.cli import run_here

from ablation import TaskResult, TrialUsage, compare_results


def _rows(arm: str, rng: random.Random) -> list[TaskResult]:
    out = []
    for i in range(40):
        for run in range(2):
            error = rng.random() < 0.15
            out.append(TaskResult(
                task_id=f"t{i}", arm=arm, run=run, status="error" if error else "completed",  # type: ignore[arg-type]
                passed=not error and rng.random() < (0.7 if arm == "baseline" else 0.55),
                latency_s=rng.random() * 3, cost=rng.random() / 10, cost_currency="USD", cost_source="agent",
                quality={"q": rng.random()}, metrics={"m": rng.random() * 10}, category=f"c{i % 3}",
                usage=TrialUsage(input_tokens=rng.randint(1, 99), output_tokens=rng.randint(1, 49),
                                 tool_calls={"search": rng.randint(0, 3)}, model="m"),
                critical=i < 3, error_type="Boom" if error else None, error_message="bad" if error else None,
                error_stage="agent" if error else None, output={"x": i},
            ))
    return out


def _report_json(text: str) -> dict[str, object]:
    doc = json.loads(text)
    doc.pop("provenance")
    return doc  # type: ignore[no-any-return]


def test_mapping_rows_give_the_report_of_their_json_lines(tmp_path: Path) -> None:
    rng = random.Random(7)
    sides = {arm: _rows(arm, rng) for arm in ("baseline", "candidate")}
    paths = {arm: tmp_path / f"{arm}.jsonl" for arm in sides}
    for arm, rows in sides.items():
        paths[arm].write_text("".join(r.model_dump_json() + "\n" for r in rows))
    proc = run_here(["compare", str(paths["baseline"]), str(paths["candidate"]), "--format", "json",
                     "--run-field", "run"])
    assert proc.returncode in (0, 2), proc.stderr
    expected = _report_json(proc.stdout)
    assert expected["errors"] and expected["quality"]  # the rows' errors and scores were read
    dumps = {arm: [json.loads(r.model_dump_json()) for r in rows] for arm, rows in sides.items()}
    names = (str(paths["baseline"]), str(paths["candidate"]))
    got = compare_results(dumps["baseline"], dumps["candidate"], names=names, run_field="run")  # as the command
    assert _report_json(got.model_dump_json()) == expected
