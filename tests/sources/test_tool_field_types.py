"""A field another eval tool writes as a number, an object, a list or a count, holding another
type, is bad input: one line naming the file, the entry, the field and the task id, exit 1.

Such a value was read as no value (a ``score`` of ``"0.5"``, a ``latencyMs`` of ``"200"``, a token
count of ``"5"`` or ``-5``: the quality, latency or usage of that trial silently gone, or 0), or
failed inside the reader and was named only as "not X as the reader knows it", without the entry
or task id. Absent or null stays no value, and a count written as a whole float (``2.0``, as
JavaScript and some serialisers write integers) is that count.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here

TOOLS = Path(__file__).resolve().parents[1] / "data" / "tools"
PROMPTFOO = ("promptfoo_results.json", "promptfoo_results.json", ("--baseline-where", "promptIdx=0", "--where", "promptIdx=1"))
PE = ("pe_baseline.json", "pe_candidate.json", ())
INSPECT = ("inspect_baseline.json", "inspect_candidate.json", ())
RESULT = ("results", "results", 1)  # promptfoo's testIdx 0 of prompt 1
USAGE = ("samples", 0, "model_usage", "offline/candidate")

#: (files and flags, path in the candidate document, bad value, what the message names, entry)
BAD = [
    (PROMPTFOO, (*RESULT, "score"), "0.5", "'score' must be a number, got '0.5'", "results.results[1]"),
    (PROMPTFOO, (*RESULT, "latencyMs"), "200", "'latencyMs' must be a number", "results.results[1]"),
    (PROMPTFOO, (*RESULT, "cost"), True, "'cost' must be a number, got True", "results.results[1]"),
    (PROMPTFOO, (*RESULT, "namedScores"), "x", "'namedScores' must be an object", "results.results[1]"),
    (PROMPTFOO, (*RESULT, "namedScores"), {"accuracy": "1"}, "'namedScores.accuracy' must be a number",
     "results.results[1]"),
    (PROMPTFOO, (*RESULT, "response"), ["x"], "'response' must be an object", "results.results[1]"),
    (PROMPTFOO, (*RESULT, "response", "tokenUsage"), 13, "'response.tokenUsage' must be an object",
     "results.results[1]"),
    (PROMPTFOO, (*RESULT, "response", "tokenUsage", "total"), "13", "'response.tokenUsage.total' must be a number",
     "results.results[1]"),
    (PROMPTFOO, (*RESULT, "response", "tokenUsage", "prompt"), -10,
     "'response.tokenUsage.prompt' must be a whole number from 0, got -10", ":2:"),
    (PROMPTFOO, (*RESULT, "response", "tokenUsage", "completion"), 2.5,
     "'response.tokenUsage.completion' must be a whole number from 0, got 2.5", ":2:"),
    (PE, ("cases", 0, "task_duration"), "0.1", "'task_duration' must be a number", "cases[0]"),
    (PE, ("cases", 0, "metrics"), [1], "'metrics' must be an object", "cases[0]"),
    (PE, ("cases", 0, "metrics", "input_tokens"), "2", "'metrics.input_tokens' must be a number", "cases[0]"),
    (PE, ("cases", 0, "scores"), "x", "'scores' must be an object", "cases[0]"),
    (PE, ("cases", 0, "scores"), {"sim": 0.9}, "'scores.sim' must be an object", "cases[0]"),
    (PE, ("cases", 0, "scores"), {"sim": {"value": "0.9"}}, "'scores.sim.value' must be a number", "cases[0]"),
    (PE, ("cases", 0, "evaluator_failures"), "x", "'evaluator_failures' must be a list", "cases[0]"),
    (PE, ("cases", 0, "evaluator_failures"), [1], "'evaluator_failures[0]' must be an object", "cases[0]"),
    (INSPECT, ("samples", 0, "total_time"), "0.07", "'total_time' must be a number", "samples[0]"),
    (INSPECT, ("samples", 0, "messages"), 5, "'messages' must be a list, got 5", "samples[0]"),
    (INSPECT, ("samples", 0, "messages"), [{"role": "assistant", "tool_calls": 5}],
     "'messages[0].tool_calls' must be a list", "samples[0]"),
    (INSPECT, ("samples", 0, "model_usage"), [1], "'model_usage' must be an object", "samples[0]"),
    (INSPECT, USAGE, 3, "'model_usage.offline/candidate' must be an object", ":1:"),
    (INSPECT, (*USAGE, "input_tokens"), "2", "'model_usage.offline/candidate.input_tokens' must be a whole number",
     ":1:"),
    (INSPECT, (*USAGE, "output_tokens"), -1, "'model_usage.offline/candidate.output_tokens' must be a whole number",
     ":1:"),
    (INSPECT, (*USAGE, "total_tokens"), 3.5, "'model_usage.offline/candidate.total_tokens' must be a whole number",
     ":1:"),
]  # fmt: skip
TASK = {"promptfoo_results.json": "0", "pe_candidate.json": "s0", "inspect_candidate.json": "s0"}


def _compare(tmp_path: Path, files: tuple[str, str, tuple[str, ...]], edits: dict[tuple[Any, ...], Any]) -> tuple[int, str, str, Path]:
    """``ablation compare`` of the baseline fixture and the candidate with ``edits`` applied
    (a value of ``...`` removes the key, if there): exit code, JSON report, stderr, the candidate's path."""
    baseline, candidate, flags = files
    doc = json.loads((TOOLS / candidate).read_text())
    for path, value in edits.items():
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        if value is ...:
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = value
    mutated = tmp_path / candidate
    mutated.write_text(json.dumps(doc))
    done = run_here(["compare", str(TOOLS / baseline), str(mutated), *flags, "--format", "json"])
    return done.returncode, done.stdout.replace(str(mutated), "CANDIDATE"), done.stderr, mutated


@pytest.mark.parametrize(("files", "path", "value", "problem", "entry"), BAD,
                         ids=[f"{b[0][1].split('_')[0]}:{'.'.join(map(str, b[1]))}={b[2]!r}" for b in BAD])  # fmt: skip
def test_a_field_of_another_type_is_one_line_naming_entry_field_and_task(
    tmp_path: Path, files: tuple[str, str, tuple[str, ...]], path: tuple[Any, ...], value: Any, problem: str, entry: str
) -> None:
    code, out, err, mutated = _compare(tmp_path, files, {path: value})
    assert code == 1 and not out, err
    assert err.count("\n") == 1 and err.startswith(f"ablation: error: {mutated}"), err
    assert problem in err and entry in err, err
    assert err.rstrip().endswith(f"(task id {TASK[files[1]]!r})"), err


#: (files, path, a value the tool may write there, the same value as another spelling or absent)
SAME = [
    (PROMPTFOO, (*RESULT, "score"), None, ...),
    (PROMPTFOO, (*RESULT, "response", "tokenUsage", "prompt"), 10.0, 10),
    (PE, ("cases", 0, "task_duration"), None, ...),
    (PE, ("cases", 0, "scores"), {"sim": {"value": 0.5}, "gone": {"value": None}}, {"sim": {"value": 0.5}}),
    (INSPECT, (*USAGE, "input_tokens"), 2.0, 2),
    (INSPECT, (*USAGE, "total_tokens"), 3.0, 3),
    (INSPECT, (*USAGE, "input_tokens_cache_read"), None, ...),
]  # fmt: skip


@pytest.mark.parametrize(("files", "path", "value", "same"), SAME,
                         ids=[f"{s[0][1].split('_')[0]}:{'.'.join(map(str, s[1]))}={s[2]!r}" for s in SAME])  # fmt: skip
def test_null_is_no_value_and_a_whole_float_count_is_that_count(
    tmp_path: Path, files: tuple[str, str, tuple[str, ...]], path: tuple[Any, ...], value: Any, same: Any
) -> None:
    code, out, err, _ = _compare(tmp_path, files, {path: value})
    assert code in (0, 2), err
    (tmp_path / "same").mkdir()
    expected_code, expected, _, _ = _compare(tmp_path / "same", files, {path: same})
    volatile = ("started_at", "finished_at", "campaign_id")
    read, want = json.loads(out), json.loads(expected)
    for doc in (read, want):
        for key in volatile:
            doc.get("provenance", {}).pop(key, None)
    assert (code, read) == (expected_code, want)


def _openai_compare(tmp_path: Path, usage: Any = None, tail: str = "") -> tuple[int, str, str, Path]:
    """``ablation compare`` of the OpenAI evals fixtures, the candidate's sampling events with
    ``data.usage`` set to ``usage`` (unless ``None``) and ``tail`` appended."""
    events = [json.loads(line) for line in (TOOLS / "openai_evals_candidate.jsonl").read_text().splitlines()]
    for event in events:
        if usage is not None and event.get("type") == "sampling":
            event["data"]["usage"] = usage
    mutated = tmp_path / "candidate.jsonl"
    mutated.write_text("".join(json.dumps(event) + "\n" for event in events) + tail)
    done = run_here(["compare", str(TOOLS / "openai_evals_baseline.jsonl"), str(mutated), "--format", "json"])
    return done.returncode, done.stdout.replace(str(mutated), "CANDIDATE"), done.stderr, mutated


@pytest.mark.parametrize(("usage", "problem"), [
    ({"prompt_tokens": -3, "completion_tokens": 1}, "'data.usage.prompt_tokens' must be a whole number from 0, got -3"),
    ({"prompt_tokens": "3", "completion_tokens": 1}, "'data.usage.prompt_tokens' must be a whole number from 0, got '3'"),
    ({"prompt_tokens": 3, "completion_tokens": 0.5}, "'data.usage.completion_tokens' must be a whole number from 0, got 0.5"),
    ("3 tokens", "a sampling event's 'data.usage' must be an object, got '3 tokens'"),
])  # fmt: skip
def test_an_openai_evals_usage_that_is_not_counts_is_one_line(tmp_path: Path, usage: Any, problem: str) -> None:
    code, out, err, mutated = _openai_compare(tmp_path, usage)
    assert code == 1 and not out, err
    assert err == f"ablation: error: {mutated}:4: its usage cannot be read: {problem} (task id 'double.dev.0')\n"


def test_an_openai_evals_whole_float_count_is_that_count(tmp_path: Path) -> None:
    code, out, err, _ = _openai_compare(tmp_path, {"prompt_tokens": 10.0, "completion_tokens": 2.0})
    assert code in (0, 2), err
    (tmp_path / "ints").mkdir()
    assert _openai_compare(tmp_path / "ints", {"prompt_tokens": 10, "completion_tokens": 2})[:2] == (code, out)


def test_another_tools_lines_in_an_openai_evals_record_are_refused(tmp_path: Path) -> None:
    """lm-eval sample lines appended to an OpenAI evals record: never skipped as events that are
    not matches (the comparison would miss them)."""
    lm_eval = (TOOLS / "lm_eval_candidate.jsonl").read_text()
    code, out, err, mutated = _openai_compare(tmp_path, tail=lm_eval)
    first = len((TOOLS / "openai_evals_candidate.jsonl").read_text().splitlines()) + 1
    assert code == 1 and not out, err
    assert err == (f"ablation: error: {mutated}:{first}: not an OpenAI evals record line: no 'type' (an event's), "
                   "'spec' or 'final_report' field\n")  # fmt: skip


def test_a_fractional_pydantic_evals_count_is_kept_as_a_metric_not_cut_to_a_count(tmp_path: Path) -> None:
    """``requests`` 0.5 is no count: the trial has no usage and keeps the metric as written, as a
    negative count does (it was read as 0 model requests, the metric gone)."""
    from ablation import load_results

    _, _, err, mutated = _compare(tmp_path, PE, {("cases", 0, "metrics", "requests"): 0.5})
    assert "requests" not in err
    trial = next(r for r in load_results(mutated) if r.task_id == "s0" and r.run == 0)
    assert trial.usage is None and trial.metrics["requests"] == 0.5, trial


def test_an_empty_pydantic_evals_evaluator_failure_is_the_cases_error(tmp_path: Path) -> None:
    """An ``evaluator_failures`` entry with no fields still says an evaluator crashed: the trial is
    an error at the verifier stage (it was a case with no verdict, refused as "None")."""
    from ablation import load_results

    _, _, err, mutated = _compare(tmp_path, PE, {("cases", 0, "evaluator_failures"): [{}]})
    assert "verdict" not in err, err
    trial = next(r for r in load_results(mutated) if r.task_id == "s0" and r.run == 0)
    assert (trial.status, trial.error_stage) == ("error", "verifier"), trial


@pytest.mark.parametrize("metrics", [5, "exact_match", {"exact_match": 1}])
def test_an_lm_eval_metrics_field_that_is_no_list_is_one_line(tmp_path: Path, metrics: Any) -> None:
    lines = [json.loads(line) for line in (TOOLS / "lm_eval_candidate.jsonl").read_text().splitlines()]
    lines[2]["metrics"] = metrics
    mutated = tmp_path / "candidate.jsonl"
    mutated.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = run_here(["compare", str(TOOLS / "lm_eval_baseline.jsonl"), str(mutated), "--where", "filter=strict-match"])
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr == (f"ablation: error: {mutated}:3: 'metrics' must be a list of metric names, got {metrics!r} "
                           f"(task id '{lines[2]['doc_id']}')\n")  # fmt: skip
