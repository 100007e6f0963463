"""A pydantic-evals evaluator that raised is the trial's error, never its verdict.

pydantic-evals leaves a crashed evaluator out of ``assertions`` and lists it under the case's
``evaluator_failures``; read as the remaining assertions, a crash of the only failing check was a
pass (with one evaluator, the file was refused for a missing verdict). Reports are made by the
real pydantic-evals (the ``test`` extra)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EqualsExpected, Evaluator, EvaluatorContext
from pydantic_evals.reporting import EvaluationReportAdapter

from ablation import compare_results, load_results


def _report(path: Path, crash: bool) -> Path:
    @dataclass
    class Check(Evaluator):
        def evaluate(self, ctx: EvaluatorContext) -> bool:
            if ctx.inputs == 3:
                if crash:
                    raise RuntimeError("evaluator crashed")
                return False
            return True

    cases = [Case(name=f"c{i}", inputs=i, expected_output=i) for i in range(5)]
    dataset = Dataset(name="ds", cases=cases, evaluators=[EqualsExpected(), Check()])
    report = dataset.evaluate_sync(lambda x: x, progress=False)
    path.write_bytes(EvaluationReportAdapter.dump_json(report))
    return path


def test_a_crashed_evaluator_is_an_error_at_the_verifier_stage(tmp_path: Path) -> None:
    before = _report(tmp_path / "before.json", crash=False)
    after = _report(tmp_path / "after.json", crash=True)
    [c3] = [r for r in load_results(after) if r.task_id == "c3"]
    assert (c3.status, c3.passed, c3.error_stage, c3.error_type) == ("error", False, "verifier", "RuntimeError")
    assert "evaluator 'Check': evaluator crashed" in (c3.error_message or "")
    report = compare_results(before, after)
    assert report.improvements == [] and report.verdict == "fail"  # once: PASS, c3 improved
    [group] = report.errors.groups
    assert (group.arm, group.stage, group.task_ids) == ("candidate", "verifier", ["c3"])


def test_a_verdict_that_does_not_rest_on_the_crashed_evaluator_stands(tmp_path: Path) -> None:
    after = _report(tmp_path / "after.json", crash=True)
    [c3] = [r for r in load_results(after, field="EqualsExpected") if r.task_id == "c3"]
    assert (c3.status, c3.passed) == ("completed", True)
