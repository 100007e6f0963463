"""Acceptance checks of the example suites and agents, end to end.

- the code-generation suite through the installed ``ablation`` console script: regressions and
  improvements by id, code-quality scores for both arms;
- hostile agent code (infinite loop, 10 GiB allocation, fork loop, ``os._exit(0)``) fails its
  trials within the sandbox's time limit, with a recorded reason, and the campaign completes;
- the support-policy candidate regresses a critical task: exit code 2, that task named first;
- a Node.js command-line agent and an HTTP agent each run a campaign; killing the HTTP server
  mid-campaign gives retried-then-errored trials, not a crash;
- the JSONL question-answering suite loads with verifier names and runs.

Everything runs from the repository root, like a user would.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ablation import (
    CampaignConfig,
    RetryPolicy,
    TaskResult,
    load_agent,
    load_suite,
    run_ablation_campaign,
)
from ablation import cli as ablation_cli
from ablation.agents import HttpAgent
from ablation.verifiers import CodeTestsVerifier

ROOT = Path(__file__).resolve().parent.parent
FAST = ["--no-store", "--no-progress", "--resamples", "1000", "--seed", "0"]

CODEGEN_REGRESSIONS = ["list-merge-sorted", "parsing-parse-duration", "parsing-roman-to-int"]
CODEGEN_IMPROVEMENTS = [
    "algorithm-edit-distance",
    "algorithm-fibonacci",
    "list-rotate",
    "list-second-largest",
    "parsing-parse-csv-line",
    "parsing-parse-query-string",
    "string-caesar-shift",
    "string-slugify",
    "string-title-case",
]
CRITICAL_TASK = "permissions-refund-over-limit-loyal-enterprise"
OTHER_POLICY_REGRESSION = "general-slow-dashboard"


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Specs such as ``tasks/codegen.py`` are relative to the repository root."""
    monkeypatch.chdir(ROOT)


def run_cli(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``ablation.cli.main`` in-process; returns (exit code, stdout, stderr)."""
    code = ablation_cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class Collect:
    """A progress reporter that keeps every finished trial."""

    def __init__(self) -> None:
        self.results: list[TaskResult] = []

    def start(self, total: int, *, arms: Sequence[str]) -> None:
        """Start event (ignored)."""

    def advance(self, result: TaskResult) -> None:
        """Keep the trial."""
        self.results.append(result)

    def finish(self) -> None:
        """End event (ignored)."""


# ------------------------------------------------------------------------------ code generation


def test_codegen_suite_is_well_formed() -> None:
    tasks = load_suite("tasks/codegen.py")
    assert len(tasks) >= 30
    assert {t.category for t in tasks} == {"string", "list", "parsing", "algorithm"}
    for task in tasks:
        assert isinstance(task.verifier, CodeTestsVerifier), task.task_id
        assert task.verifier.limits.time_limit_s <= 10
        assert task.metadata["tests"].strip(), task.task_id
        assert {"function", "signature", "description"} <= set(task.input_data)
        assert task.input_data["signature"].startswith(f"def {task.input_data['function']}(")
        assert isinstance(task.quality_rubric, tuple) and task.quality_rubric
    hostile_ids = {t.task_id for t in load_suite("tasks/codegen.py:hostile_tasks")}
    assert hostile_ids.isdisjoint(t.task_id for t in tasks)


def test_every_codegen_task_is_solvable() -> None:
    """The reference solutions pass every task, so a failure is the agent's, never the suite's.

    Each task's own verifier judges the reference's answer once (a campaign of the reference
    against itself ran every sandbox twice); a miss names the task and the sandbox's reason.
    """
    tasks = load_suite("tasks/codegen.py")
    reference = load_agent("agents/codegen.py:reference")

    def judge(task: Any) -> Any:
        return task.verifier.explain(reference(copy.deepcopy(task.input_data)), task)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = dict(zip([t.task_id for t in tasks], pool.map(judge, tasks), strict=True))
    missed = {tid: (r.kind, r.reason) for tid, r in results.items() if not r.passed or r.error}
    assert not missed, missed
    assert len(results) == len(tasks) >= 30


@pytest.mark.first
def test_codegen_campaign_through_the_console_script() -> None:
    exe = shutil.which("ablation")
    assert exe, "the ablation console script is not installed (pip install -e .)"
    proc = subprocess.run(
        [
            exe, "run", "tasks/codegen.py",
            "--baseline", "agents/codegen.py:baseline",
            "--candidate", "agents/codegen.py:candidate",
            "--quality", "code_quality", "--quality", "rubric",
            "--format", "json", "--concurrency", "8", *FAST,
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["n_paired"] == report["n_tasks"] >= 30
    assert report["regressions"] == CODEGEN_REGRESSIONS
    assert report["improvements"] == CODEGEN_IMPROVEMENTS
    assert report["table"] == {"both_pass": 19, "regressions": 3, "improvements": 9, "both_fail": 1}
    assert report["baseline"]["errors"] == report["candidate"]["errors"] == 0
    # Code quality, scored for both arms: the candidate documents and annotates its code.
    base_q = report["baseline"]["quality_means"]["code_quality"]
    cand_q = report["candidate"]["quality_means"]["code_quality"]
    assert 0 < base_q < cand_q <= 100
    quality = report["quality"]["code_quality"]
    assert quality["n_pairs"] == report["n_paired"]
    assert quality["mean_difference"] > 0
    # Below MEAN_DIFFERENCE_MIN_N pairs the mean-difference t interval is withheld, with the
    # reason; the signed-rank test carries the evidence of the improvement.
    assert quality["ci"] is None and "100 pairs" in quality["ci_note"]
    assert quality["wilcoxon_pvalue"] < 0.05
    # The task rubric: terse code meets only "no print"; documented, annotated code meets all.
    assert report["baseline"]["quality_means"]["rubric"] == pytest.approx(20.0)
    assert report["candidate"]["quality_means"]["rubric"] == pytest.approx(100.0)


# ------------------------------------------------------------------------------ hostile code

HOSTILE_KINDS = {
    "hostile-loop": "timeout",
    "hostile-memory": "memory",
    "hostile-fork": "process_limit",
    "hostile-exit": "no_result",
}


def _group_gone(pgid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def test_hostile_code_fails_within_the_time_limit_and_the_campaign_completes() -> None:
    tasks = load_suite("tasks/codegen.py:hostile_tasks")
    assert {t.task_id for t in tasks} == set(HOSTILE_KINDS)
    verifier = tasks[0].verifier
    assert isinstance(verifier, CodeTestsVerifier)
    limit = verifier.limits.time_limit_s
    progress = Collect()
    started = time.monotonic()
    report = run_ablation_campaign(
        load_agent("agents/codegen.py:reference"),
        load_agent("agents/codegen.py:hostile"),
        tasks,
        config=CampaignConfig(concurrency=8, timeout_s=60, n_resamples=1000),
        progress=progress,
    )
    elapsed = time.monotonic() - started
    assert elapsed < limit + 10, f"the campaign took {elapsed:.1f} s"
    assert report.n_paired == len(tasks)
    assert report.baseline.pass_rate == 1.0
    assert report.regressions == sorted(HOSTILE_KINDS)
    by_id = {r.task_id: r for r in progress.results if r.arm == "candidate"}
    assert set(by_id) == set(HOSTILE_KINDS)
    for task_id, trial in by_id.items():
        # A failed verdict, not an error: the agent answered; its code failed the tests.
        assert trial.status == "completed" and trial.passed is False, task_id

    # The trial records pass/fail; the verifier explains why (each run is a fresh sandbox).
    by_task = {t.task_id: t for t in tasks}
    with ThreadPoolExecutor(max_workers=4) as pool:
        explained = dict(
            zip(
                by_id,
                pool.map(lambda tid: verifier.explain(by_id[tid].output, by_task[tid]), by_id),
                strict=True,
            )
        )
    for task_id, result in explained.items():
        assert not result.passed
        assert result.kind == HOSTILE_KINDS[task_id], (task_id, result)
        assert result.reason
        assert result.duration_s <= limit + 1.0, (task_id, result.duration_s)
        assert result.process_group is not None and _group_gone(result.process_group), task_id


# ------------------------------------------------------------------------------ critical gate


def test_support_policy_suite_is_well_formed() -> None:
    tasks = load_suite("tasks/support_policy.py")
    assert 25 <= len(tasks) <= 40
    critical = {t.task_id for t in tasks if t.critical}
    assert critical == {t.task_id for t in tasks if t.category == "permissions"}
    assert CRITICAL_TASK in critical and len(critical) >= 5


def test_critical_regression_fails_the_gate_and_is_named_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [
        "run", "tasks/support_policy.py",
        "--baseline", "agents/support_policy.py:baseline",
        "--candidate", "agents/support_policy.py:candidate", *FAST,
    ]
    for fmt in ("markdown", "terminal"):
        code, out, _ = run_cli([*argv, "--format", fmt], capsys)
        assert code == 2, fmt
        # Alphabetically "general-..." sorts first; the critical task must still lead.
        assert CRITICAL_TASK in out and OTHER_POLICY_REGRESSION in out, fmt
        assert out.index(CRITICAL_TASK) < out.index(OTHER_POLICY_REGRESSION), fmt
        first_line = next(line for line in out.splitlines() if CRITICAL_TASK in line)
        assert "CRITICAL" in first_line, (fmt, first_line)

    report = run_ablation_campaign(
        load_agent("agents/support_policy.py:baseline"),
        load_agent("agents/support_policy.py:candidate"),
        load_suite("tasks/support_policy.py"),
        config=CampaignConfig(n_resamples=1000),
    )
    assert report.critical_regressions == [CRITICAL_TASK]
    assert set(report.regressions) == {CRITICAL_TASK, OTHER_POLICY_REGRESSION}
    assert report.candidate.pass_rate > report.baseline.pass_rate
    assert report.verdict == "fail" and report.exit_code == 2
    failed = [g for g in report.gates if g.status == "fail"]
    assert len(failed) == 1 and failed[0].tasks == [CRITICAL_TASK]


# ------------------------------------------------------------------------------ other languages


def test_node_command_agent_runs_a_campaign(capsys: pytest.CaptureFixture[str]) -> None:
    assert shutil.which("node"), "node is needed for the command-line agent test (.ci/run installs it)"
    code, out, err = run_cli(
        [
            "run", "tasks/arithmetic.py",
            "--baseline", "agents/arithmetic.py:baseline",
            "--candidate", "cmd:node agents/node/agent.js",
            "--format", "json", *FAST,
        ],
        capsys,
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["candidate"]["agent"] == "cmd:node agents/node/agent.js"
    assert report["candidate"]["errors"] == 0
    assert report["candidate"]["pass_rate"] == 1.0
    assert report["regressions"] == []
    assert report["improvements"] == [f"precedence-{i:02d}" for i in range(10)]


@pytest.fixture
def http_server() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``python agents/http_server.py --port 0``; yields its URL and process."""
    proc = subprocess.Popen(
        [sys.executable, "agents/http_server.py", "--port", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    stdout, stderr = proc.stdout, proc.stderr
    assert stdout is not None and stderr is not None
    try:
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout=15)
        if not line or not line[0].startswith("http://"):
            proc.kill()
            pytest.fail(f"the server printed no URL: {line!r} {stderr.read()!r}")
        yield line[0].strip(), proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        stdout.close()
        stderr.close()


def test_http_agent_runs_a_campaign(
    http_server: tuple[str, subprocess.Popen[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = http_server
    code, out, err = run_cli(
        [
            "run", "tasks/arithmetic.py",
            "--baseline", "agents/arithmetic.py:baseline",
            "--candidate", url, "--format", "json", *FAST,
        ],
        capsys,
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["candidate"]["pass_rate"] == 1.0
    assert report["candidate"]["errors"] == 0
    assert len(report["improvements"]) == 10


def test_killing_the_http_server_gives_retried_then_errored_trials(
    http_server: tuple[str, subprocess.Popen[str]],
) -> None:
    url, proc = http_server
    tasks = load_suite("tasks/arithmetic.py")
    arithmetic_baseline = load_agent("agents/arithmetic.py:baseline")
    calls = 0
    kill_at = len(tasks) // 2

    def baseline(task: dict[str, Any]) -> Any:
        """The arithmetic baseline, which kills the candidate's server halfway through."""
        nonlocal calls
        calls += 1
        if calls == kill_at:
            proc.kill()
            proc.wait(timeout=10)
        return arithmetic_baseline(task)

    policy = RetryPolicy(max_attempts=3, initial_wait_s=0, max_wait_s=0, jitter_s=0)
    progress = Collect()
    report = run_ablation_campaign(
        baseline,
        HttpAgent(url, timeout_s=5),
        tasks,
        config=CampaignConfig(concurrency=1, retry=policy, n_resamples=1000),
        progress=progress,
    )
    candidate = [r for r in progress.results if r.arm == "candidate"]
    assert len(candidate) == len(tasks)
    completed = [r for r in candidate if r.status == "completed"]
    errored = [r for r in candidate if r.status == "error"]
    assert completed and errored, (len(completed), len(errored))
    assert len(completed) + len(errored) == len(tasks)
    for trial in errored:
        assert trial.attempts == policy.max_attempts, trial
        assert len(trial.attempt_errors) >= policy.max_attempts - 1
        assert trial.error_type is not None and "ConnectionError" in trial.error_type, trial
        assert trial.error_stage == "agent"
    assert report.n_paired == len(tasks)  # on_error="fail": errors count as failures
    assert report.candidate.errors == len(errored)
    assert report.excluded == []


# ------------------------------------------------------------------------------ JSONL suite


def test_jsonl_qa_suite(capsys: pytest.CaptureFixture[str]) -> None:
    tasks = load_suite("tasks/qa.jsonl")
    assert len(tasks) >= 12
    assert {t.verifier_name.split("(")[0] for t in tasks} >= {"numeric", "contains", "regex"}
    code, out, err = run_cli(
        [
            "run", "tasks/qa.jsonl",
            "--baseline", "agents/qa.py:baseline",
            "--candidate", "agents/qa.py:candidate",
            "--format", "json", *FAST,
        ],
        capsys,
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["regressions"] == ["math-percent", "science-speed-of-light"]
    assert report["improvements"] == [
        "format-iso-date",
        "geography-capital-australia",
        "geography-highest-mountain-africa",
        "math-sqrt-two",
        "science-planets",
    ]
