"""What the readers bring beside the verdict, checked against the files the real tools wrote.

The pydantic-evals and Inspect fixtures (``tests/generate_tool_fixtures.py``) record inputs,
outputs, targets, a task error, token usage and (Inspect) a tool-calling transcript. Every
expectation below is read from the file itself (or from the generator's scenario constants),
never from the reader: the reader must carry each recorded value into the trial unchanged.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import LAUNCH, REPO, cli_env, run_here
from hypothesis import given
from hypothesis import strategies as st

from ablation.schema import TaskResult
from ablation.sources.readers.transcripts import MAX_MESSAGES, MAX_TEXT, chat_trace, split_error
from ablation.sources.result_files import load_results

TOOLS = REPO / "tests" / "data" / "tools"
sys.path.insert(0, str(REPO / "tests"))
try:
    from generate_tool_fixtures import FAILURE
finally:
    sys.path.remove(str(REPO / "tests"))

FAILED_ARM, FAILED_SAMPLE, FAILED_MESSAGE = FAILURE


def by_key(path: Path) -> dict[tuple[str, int], TaskResult]:
    return {(r.task_id, r.run): r for r in load_results(path)}


def test_pydantic_evals_cases_keep_input_output_target_and_usage() -> None:
    report = json.loads((TOOLS / "pe_baseline.json").read_text())
    trials = by_key(TOOLS / "pe_baseline.json")
    assert len(trials) == len(report["cases"])
    for case in report["cases"]:
        repeat = int(case["name"].rsplit("[", 1)[1].split("/")[0])
        trial = trials[(case["source_case_name"], repeat - 1)]
        assert (trial.input, trial.output, trial.expected_output) == (
            case["inputs"], case["output"], case["expected_output"])
        metrics = case["metrics"]
        assert trial.usage is not None
        assert trial.usage.input_tokens == metrics["input_tokens"]
        assert trial.usage.output_tokens == metrics["output_tokens"]
        assert trial.usage.cached_tokens == metrics["cache_read_tokens"]
        assert trial.usage.model_requests == metrics["requests"]
        assert trial.tokens == metrics["input_tokens"] + metrics["output_tokens"]
        assert trial.metrics["model_requests"] == metrics["requests"]
        assert trial.latency_s == pytest.approx(case["task_duration"])


def test_pydantic_evals_failure_is_its_exception_not_task_failure() -> None:
    report = json.loads((TOOLS / f"pe_{FAILED_ARM}.json").read_text())
    [failure] = report["failures"]
    trials = by_key(TOOLS / f"pe_{FAILED_ARM}.json")
    repeat = int(failure["name"].rsplit("[", 1)[1].split("/")[0])
    trial = trials[(FAILED_SAMPLE, repeat - 1)]  # the run its name says, not its position
    assert trial.status == "error" and trial.error_stage == "agent"
    assert (trial.error_type, trial.error_message) == ("RuntimeError", FAILED_MESSAGE)
    assert trial.error_traceback is not None
    assert trial.error_traceback.rstrip().endswith(f"RuntimeError: {FAILED_MESSAGE}")
    assert (trial.input, trial.expected_output) == (failure["inputs"], failure["expected_output"])
    other = trials[(FAILED_SAMPLE, 1 - (repeat - 1))]
    assert other.completed and not other.passed


def test_old_pydantic_evals_failure_without_message_stays_task_failure(tmp_path: Path) -> None:
    path = tmp_path / "pe.json"
    path.write_text(json.dumps({"name": "x", "cases": [], "failures": [{"name": "a"}]}))
    [trial] = load_results(path)
    assert (trial.status, trial.error_type, trial.error_message) == ("error", "TaskFailure", None)


@pytest.mark.parametrize("ext", ["json", "eval"])
def test_inspect_samples_keep_input_target_output_usage_and_transcript(ext: str) -> None:
    log = json.loads((TOOLS / "inspect_baseline.json").read_text())
    trials = by_key(TOOLS / f"inspect_baseline.{ext}")
    for sample in log["samples"]:
        trial = trials[(sample["id"], sample["epoch"] - 1)]
        assert (trial.input, trial.expected_output, trial.output) == (
            sample["input"], sample["target"], sample["output"]["completion"])
        replies = [m for m in sample["messages"] if m["role"] == "assistant"]
        calls = [c["function"] for m in replies for c in m.get("tool_calls") or ()]
        assert calls, "the baseline calls its tool in every sample"
        [(model, usage)] = sample["model_usage"].items()
        assert trial.usage is not None
        assert (trial.usage.input_tokens, trial.usage.output_tokens, trial.usage.model) == (
            usage["input_tokens"], usage["output_tokens"], model)
        assert trial.usage.model_requests == len(replies)
        assert trial.usage.tool_calls == {name: calls.count(name) for name in calls}
        assert trial.metrics[f"tool_calls.{calls[0]}"] == len(calls)
        assert trial.trace is not None
        assert [m["kind"] for m in trial.trace] == [m["role"] for m in sample["messages"]]
        traced = [p["tool"] for m in trial.trace for p in m["parts"] if p["kind"] == "tool-call"]
        assert traced == calls


@pytest.mark.parametrize("ext", ["json", "eval"])
def test_inspect_sample_error_is_its_exception(ext: str) -> None:
    log = json.loads((TOOLS / f"inspect_{FAILED_ARM}.json").read_text())
    [sample] = [s for s in log["samples"] if s.get("error")]
    trial = by_key(TOOLS / f"inspect_{FAILED_ARM}.{ext}")[(sample["id"], sample["epoch"] - 1)]
    assert sample["id"] == FAILED_SAMPLE
    assert (trial.status, trial.error_stage) == ("error", "agent")
    assert (trial.error_type, trial.error_message) == ("RuntimeError", FAILED_MESSAGE)
    assert trial.output is None and trial.expected_output == sample["target"]


def test_inspect_json_and_eval_logs_give_the_same_trials() -> None:
    volatile = {"latency_s", "error_traceback"}  # two runs of the tool: times differ
    for arm in ("baseline", "candidate"):
        from_json, from_eval = by_key(TOOLS / f"inspect_{arm}.json"), by_key(TOOLS / f"inspect_{arm}.eval")
        assert from_json.keys() == from_eval.keys()
        for key, trial in from_json.items():
            assert trial.model_dump(exclude=volatile) == from_eval[key].model_dump(exclude=volatile)


_IDENT = st.text("abcxyzABCXYZ_", min_size=1, max_size=8)


@given(st.lists(_IDENT, min_size=1, max_size=3).map(".".join), st.text())
def test_split_error_reads_both_spellings(name: str, message: str) -> None:
    assert split_error(f"{name}: {message}") == (name, message)
    error = type(name.rsplit(".", 1)[-1], (Exception,), {})(message)
    assert split_error(repr(error)) == (type(error).__name__, message)


@given(st.text().filter(lambda t: ": " not in t and not t.endswith(")")))
def test_split_error_keeps_untyped_text_whole(text: str) -> None:
    assert split_error(text) == (None, text)


@given(st.integers(0, MAX_MESSAGES + 5), st.integers(0, MAX_TEXT + 5))
def test_chat_trace_is_bounded(n: int, size: int) -> None:
    messages = [{"role": "user", "content": "x" * size}] * n
    trace = chat_trace(messages)
    if n == 0:
        assert trace is None
        return
    assert trace is not None and len(trace) == min(n, MAX_MESSAGES)
    text = trace[0]["parts"][0]["content"] if size else ""
    assert len(text) == (size if size <= MAX_TEXT else MAX_TEXT + 3)


def _compare(before: Path, after: Path, fmt: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-c", LAUNCH, "compare", str(before), str(after), "--details", "--format", fmt]
    return subprocess.Popen(cmd, cwd=REPO, env=cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _here(before: Path, after: Path, fmt: str) -> str:
    done = run_here(["compare", str(before), str(after), "--details", "--format", fmt])
    assert done.returncode in (0, 2), done.stderr
    return done.stdout


def _finish(proc: subprocess.Popen[str]) -> str:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode in (0, 2), err
    return out


@pytest.mark.slow
def test_compare_details_show_outputs_targets_errors_and_usage() -> None:
    """``ablation compare --details`` on the real files, in JSON, the terminal and Markdown."""
    # the terminal report through a real process, the other two in this one meanwhile
    terminal_proc = _compare(TOOLS / "pe_baseline.json", TOOLS / "pe_candidate.json", "terminal")
    outs = {fmt: _here(TOOLS / "inspect_baseline.json", TOOLS / "inspect_candidate.json", fmt)
            for fmt in ("json", "markdown")}  # fmt: skip
    outs["terminal"] = _finish(terminal_proc)
    log = {arm: json.loads((TOOLS / f"inspect_{arm}.json").read_text()) for arm in ("baseline", "candidate")}
    sample = {(arm, s["id"], s["epoch"] - 1): s for arm, doc in log.items() for s in doc["samples"]}

    details = {d["task_id"]: d for d in json.loads(outs["json"])["details"]}
    assert set(details) == {"s1", FAILED_SAMPLE}
    regression = details[FAILED_SAMPLE]
    assert regression["kind"] == "regression"
    first = sample[("baseline", FAILED_SAMPLE, 0)]
    assert (regression["input"], regression["expected_output"]) == (first["input"], first["target"])
    assert regression["baseline"]["output"] == first["output"]["completion"]
    usage = next(iter(first["model_usage"].values()))
    assert regression["baseline"]["usage"]["input_tokens"] == usage["input_tokens"]
    assert regression["baseline"]["tools"] == ["lookup"] and regression["candidate"]["tools"] == []
    errors = [r["error"] for r in regression["candidate_runs"] if r["error"]]
    assert errors == [f"RuntimeError: {FAILED_MESSAGE}"]
    improvement = details["s1"]
    assert improvement["baseline"]["output"] == sample[("baseline", "s1", 0)]["output"]["completion"]
    assert improvement["candidate"]["output"] == sample[("candidate", "s1", 0)]["output"]["completion"]

    pe = json.loads((TOOLS / "pe_baseline.json").read_text())
    case = next(c for c in pe["cases"] if c["source_case_name"] == FAILED_SAMPLE)
    terminal = outs["terminal"]
    assert f"input: {case['inputs']}" in terminal and f"expected: {case['expected_output']}" in terminal
    assert FAILED_MESSAGE in terminal and "TaskFailure" not in terminal
    assert f"tokens {case['metrics']['input_tokens']} in / {case['metrics']['output_tokens']} out" in terminal

    markdown = outs["markdown"]
    assert f"<b>input</b>:\n<pre>{first['input']}</pre>" in markdown
    assert f"<b>expected</b>:\n<pre>{first['target']}</pre>" in markdown
    assert f"error: RuntimeError: {FAILED_MESSAGE}" in markdown
    assert f"tokens {usage['input_tokens']} in / {usage['output_tokens']} out" in markdown


def test_lm_eval_lines_keep_doc_target_responses_and_prompt() -> None:
    path = TOOLS / "lm_eval_candidate.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    kept = [obj for obj in lines if obj["filter"] == "strict-match"]
    trials = {r.task_id: r for r in load_results(path, where={"filter": "strict-match"})}
    assert len(trials) == len(kept)
    for obj in kept:
        trial = trials[str(obj["doc_id"])]
        [[response]] = obj["resps"]
        assert (trial.input, trial.expected_output, trial.output) == (obj["doc"], obj["target"], response)
        assert trial.verifier_note == f"strict-match: {json.dumps(obj['filtered_resps'])}"
        assert trial.trace is not None
        [prompt] = [a["arg_0"] for a in obj["arguments"].values()]
        assert trial.trace[0]["parts"][0]["content"] == prompt
        assert trial.trace[1]["parts"][0]["content"] == response


def test_promptfoo_results_keep_vars_output_usage_note_and_error(tmp_path: Path) -> None:
    doc = json.loads((TOOLS / "promptfoo_results.json").read_text())
    entries = [e for e in doc["results"]["results"] if e["promptIdx"] == 1]
    failing = next(e for e in entries if not e["success"])
    failing.update(failureReason=2, error="429 Too Many Requests: rate limited")
    path = tmp_path / "promptfoo.json"
    path.write_text(json.dumps(doc))
    trials = {r.task_id: r for r in load_results(path, where={"promptIdx": "1"})}
    assert len(trials) == len(entries)
    for entry in entries:
        trial = trials[str(entry["testIdx"])]
        tokens = entry["response"]["tokenUsage"]
        assert (trial.input, trial.output) == (entry["vars"], entry["response"]["output"])
        assert trial.usage is not None
        assert (trial.usage.input_tokens, trial.usage.output_tokens, trial.usage.cached_tokens) == (
            tokens["prompt"], tokens["completion"], tokens["cached"])
        assert trial.usage.model == entry["provider"]["id"].split(":")[-1]
        assert trial.tokens == tokens["total"] and trial.cost == entry["cost"]
        assert trial.latency_s == pytest.approx(entry["latencyMs"] / 1000)
        if entry is failing:
            assert (trial.status, trial.error_type, trial.error_message) == (
                "error", "ProviderError", entry["error"])
        elif not entry["success"]:
            assert trial.verifier_note == entry["gradingResult"]["reason"]
        else:
            assert trial.verifier_note is None and trial.error is None


def test_openai_evals_match_keeps_sampled_expected_prompt_and_usage(tmp_path: Path) -> None:
    events = [json.loads(line) for line in (TOOLS / "openai_evals_candidate.jsonl").read_text().splitlines()]
    for number, event in enumerate(events):
        if event.get("type") == "sampling":
            event["data"]["usage"] = {"prompt_tokens": 10 + number, "completion_tokens": number}
    path = tmp_path / "record.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    trials = {r.task_id: r for r in load_results(path)}
    matches = [e for e in events if e.get("type") == "match"]
    assert len(trials) == len(matches)
    for match in matches:
        [sampling] = [e for e in events if e.get("type") == "sampling" and e["sample_id"] == match["sample_id"]]
        trial = trials[match["sample_id"]]
        assert (trial.output, trial.expected_output) == (match["data"]["sampled"], match["data"]["expected"])
        assert trial.input == sampling["data"]["prompt"]
        assert trial.usage is not None
        assert (trial.usage.input_tokens, trial.usage.output_tokens, trial.usage.model_requests) == (
            sampling["data"]["usage"]["prompt_tokens"], sampling["data"]["usage"]["completion_tokens"], 1)
        assert trial.trace is not None
        assert [m["kind"] for m in trial.trace] == [m["role"] for m in sampling["data"]["prompt"]] + ["assistant"]


def test_report_schema_says_where_input_and_expected_output_come_from() -> None:
    from ablation.report import AblationReport

    detail = AblationReport.model_json_schema()["$defs"]["PairDetail"]["properties"]
    for name in ("input", "expected_output"):
        assert "result files" in detail[name]["description"]


def test_column_and_object_reads_agree_on_usage_and_errors(tmp_path: Path) -> None:
    """The report of ``compare`` (column read) equals the one built from the trials, for files
    whose samples carry usage (OpenAI evals) and a provider error (promptfoo)."""
    from ablation.analysis.build import compare_columns, compare_results
    from ablation.config import CampaignConfig
    from ablation.sources.readers.columnar import FileTrials
    from ablation.sources.result_files import load_result_columns

    evals = {}
    for arm in ("baseline", "candidate"):
        events = [json.loads(line) for line in (TOOLS / f"openai_evals_{arm}.jsonl").read_text().splitlines()]
        for number, event in enumerate(events):
            if event.get("type") == "sampling":
                event["data"]["usage"] = {"prompt_tokens": 10 + number, "completion_tokens": number}
        evals[arm] = tmp_path / f"{arm}.jsonl"
        evals[arm].write_text("".join(json.dumps(e) + "\n" for e in events))
    doc = json.loads((TOOLS / "promptfoo_results.json").read_text())
    entry = next(e for e in doc["results"]["results"] if e["promptIdx"] == 1 and not e["success"])
    entry.update(failureReason=2, error="429 Too Many Requests")
    promptfoo = tmp_path / "promptfoo.json"
    promptfoo.write_text(json.dumps(doc))
    config = CampaignConfig(n_resamples=200)
    for before, after, read_b, read_c in (
        (evals["baseline"], evals["candidate"], {}, {}),
        (promptfoo, promptfoo, {"where": {"promptIdx": "0"}}, {"where": {"promptIdx": "1"}}),
    ):
        names = (str(before), str(after))
        trials = compare_results(load_results(before, arm="baseline", **read_b),
                                 load_results(after, arm="candidate", **read_c), config=config, names=names)
        b, c = load_result_columns(before, arm="baseline", **read_b), load_result_columns(after, arm="candidate", **read_c)
        columns = compare_columns(b.columns, c.columns, config=config, names=names,
                                  trial_lookup=FileTrials({"baseline": b, "candidate": c}))
        assert columns.model_dump_json() == trials.model_dump_json()
        assert trials.details  # (the drill-downs are part of what is compared)
