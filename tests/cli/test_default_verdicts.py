"""Verdicts a CI user can trust with no flags: the default gates, through the real command line.

Each case was a PASS (exit 0) before the regression and completeness gates became defaults:
a significant regression, a candidate erroring on every task, both arms erroring, an interrupted
stored campaign, a compare where one side holds 1 of 100 ids, and an unreachable HTTP agent
that ran the whole campaign as errors.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest
from helpers.cli import REPO, campaigns, cli_env, fresh_json, run
from helpers.cli_shared import run_here

from ablation.config import CampaignConfig
from ablation.schema import TaskResult
from ablation.store.run_store import RunStore

pytestmark = pytest.mark.slow

DATA = REPO / "examples" / "data"
GPT5 = str(DATA / "swebench-verified-mini__gpt-5.jsonl")
GPT5_MINI = str(DATA / "swebench-verified-mini__gpt-5-mini.jsonl")
AGENTS = "tests/helpers/broken_agents.py"


def _gates(report: dict) -> dict[str, dict]:
    return {g["name"]: g for g in report["gates"]}


def _json(proc) -> dict:
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.first
def test_significant_regression_fails_by_default_and_the_opt_out_is_shown() -> None:
    args = ["compare", GPT5, GPT5_MINI, "--key", "id", "--field", "passed"]
    # in this process: a real process's exit with main's code is test_entry.py's and test_ci_fit.py's
    proc = run_here(args)
    assert proc.returncode == 2, proc.stderr
    assert "FAIL" in proc.stdout and "no significant regression" in proc.stdout
    gate = _gates(_json(run_here([*args, "--format", "json"])))["no significant regression"]
    assert gate["status"] == "fail" and gate["pvalue"] < 0.05

    off = run_here([*args, "--allow-significant-regression"])
    assert off.returncode == 0, off.stdout[-2000:]
    assert "turned off: no significant regression" in off.stdout
    report = _json(run_here([*args, "--allow-significant-regression", "--format", "json"]))
    gate = _gates(report)["no significant regression"]
    assert gate["status"] == "off"
    # the configuration field the flag feeds (the option table's), not a spelling of the flag
    assert gate["evidence"].startswith("turned off (GatePolicy.no_significant_regression = False)")
    assert "would have failed" in gate["evidence"]
    # the old explicit flag is still accepted (it is the default now), and it cannot be combined
    assert run_here([*args, "--no-significant-regression"]).returncode == 2
    both = run_here([*args, "--no-significant-regression", "--allow-significant-regression"])
    assert both.returncode == 1 and "contradict" in both.stderr


def test_tool_settings_can_turn_the_regression_gate_off(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.ablation]\nno_significant_regression = false\n", encoding="utf-8"
    )
    proc = run_here(["compare", GPT5, GPT5_MINI, "--format", "json"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _gates(_json(proc))["no significant regression"]["status"] == "off"


def test_a_candidate_erroring_on_every_task_fails_two_gates() -> None:
    args = ["run", "tasks/arithmetic.py", "--baseline", f"{AGENTS}:working",
            "--candidate", f"{AGENTS}:raising", "--no-store", "--no-progress", "--format", "json"]
    proc = run_here(args)
    assert proc.returncode == 2, proc.stderr
    report = _json(proc)
    gates = _gates(report)
    assert gates["no significant regression"]["status"] == "fail"
    completeness = gates["complete comparison"]
    assert completeness["status"] == "fail"
    assert "candidate completed 0 of 40" in completeness["evidence"]
    assert "RuntimeError" in completeness["evidence"]
    # errors are named by default: arm, stage, type, tasks; regressions marked as errors
    (group,) = report["errors"]["groups"]
    assert (group["arm"], group["stage"], group["error_type"]) == ("candidate", "agent", "RuntimeError")
    assert group["count"] == group["n_tasks"] == 40 and len(group["task_ids"]) == 20
    assert "model refused" in group["example"]
    assert report["errored_regressions"] == report["regressions"] != []
    terminal = run_here(args[:-2])
    assert "Errors and timeouts (40 trials)" in terminal.stdout
    assert "candidate / agent / RuntimeError: 40 trial(s) on 40 task(s)" in terminal.stdout
    assert "ERROR" in terminal.stdout


def test_both_arms_erroring_on_every_task_fails_completeness() -> None:
    args = ["run", "tasks/arithmetic.py", "--baseline", f"{AGENTS}:raising",
            "--candidate", f"{AGENTS}:raising", "--no-store", "--no-progress", "--format", "json"]
    proc = run_here(args)
    assert proc.returncode == 2, proc.stderr
    report = _json(proc)
    assert report["summary"] == "no discordant pairs"
    gate = _gates(report)["complete comparison"]
    assert gate["status"] == "fail"
    assert "baseline completed 0 of 40" in gate["evidence"]
    assert "candidate completed 0 of 40" in gate["evidence"]
    assert _gates(report)["no significant regression"]["status"] == "pass"
    off = run_here([*args, "--allow-incomplete"])
    assert off.returncode == 0
    assert _gates(_json(off))["complete comparison"]["status"] == "off"


def _interrupted_store(path: Path, n_tasks: int = 400, n_done: int = 95) -> str:
    """A stored campaign of ``n_tasks`` tasks interrupted after ``n_done`` pairs."""
    ids = [f"task-{i:03d}" for i in range(n_tasks)]
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(), suite_fingerprint="suite", task_digests={t: t for t in ids},
            baseline_agent="base", candidate_agent="cand",
        )
        store.append_many(cid, [
            TaskResult(task_id=t, arm=arm, passed=True) for t in ids[:n_done]
            for arm in ("baseline", "candidate")
        ])  # fmt: skip
        store.set_status(cid, "interrupted")
    return cid


def test_an_interrupted_stored_campaign_fails_naming_what_is_missing(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    _interrupted_store(store)
    proc = run_here(["report", "latest", "--store", str(store), "--format", "json"])
    assert proc.returncode == 2, proc.stderr
    gate = _gates(_json(proc))["complete comparison"]
    assert gate["status"] == "fail"
    assert "305 of 400 expected pair(s) missing" in gate["evidence"]
    assert "task-095" in gate["evidence"]
    assert gate["tasks"][0] == "task-095" and len(gate["tasks"]) == 305
    terminal = run_here(["report", "latest", "--store", str(store)])
    assert terminal.returncode == 2 and "complete comparison" in terminal.stdout


def test_compare_with_one_of_100_ids_fails_naming_what_is_missing(tmp_path: Path) -> None:
    before = tmp_path / "before.jsonl"
    after = tmp_path / "after.jsonl"
    before.write_text(
        "".join(json.dumps({"id": f"t{i:03d}", "passed": True}) + "\n" for i in range(100)),
        encoding="utf-8",
    )
    after.write_text(json.dumps({"id": "t000", "passed": True}) + "\n", encoding="utf-8")
    proc = run_here(["compare", str(before), str(after), "--format", "json"])
    assert proc.returncode == 2, proc.stderr
    gate = _gates(_json(proc))["complete comparison"]
    assert gate["status"] == "fail"
    assert "99 of 100 expected pair(s) missing" in gate["evidence"]
    assert "only in baseline" in gate["evidence"] and "t001" in gate["evidence"]


def test_an_unreachable_http_agent_stops_within_seconds(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    args = ["run", "tasks/arithmetic.py", "--baseline", "agents/arithmetic.py:baseline",
            "--candidate", "http://127.0.0.1:9/", "--store", str(store), "--no-progress"]
    began = time.monotonic()
    proc = run(args, cli_env(), timeout=120)
    elapsed = time.monotonic() - began
    assert proc.returncode == 1, proc.stdout[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "candidate agent 'http://127.0.0.1:9/' is broken" in lines[0]
    assert "AgentConnectionError" in lines[0] and "--resume" in lines[0]
    assert elapsed < 60, elapsed  # interpreter start-up included; the campaign itself is instant
    ((cid, status, _),) = campaigns(store)
    assert status == "aborted"
    with closing(sqlite3.connect(store)) as conn:
        failed = conn.execute(
            "SELECT COUNT(*) FROM trials WHERE arm = 'candidate' AND status = 'error'"
        ).fetchone()[0]
    assert failed == 0  # the broken arm's trials are not kept: the resume runs them again
    resumed = run_here([*args, "--resume", cid, "--fail-fast", "0"])  # the stop above was the process's
    assert resumed.returncode == 2  # runs to the end once fail-fast is off; the gates fail
    with closing(sqlite3.connect(store)) as conn:
        failed = conn.execute(
            "SELECT COUNT(*) FROM trials WHERE arm = 'candidate' AND status = 'error'"
        ).fetchone()[0]
    assert failed == 40  # every candidate trial ran, once
    assert campaigns(store)[0][1] == "complete"


FORMATS = ("json", "markdown", "html")


def _same_bytes_commands(store: Path, fmt: str) -> dict[str, list[str]]:
    """The compare of every format, and the report of a stored campaign in JSON and Markdown. An
    HTML page is ``render_html`` over the sections the Markdown report is built from; the
    compare's page runs that renderer and its plots (~1 s a page), so the report's would run
    the same code again on data the JSON and Markdown reports already check."""
    commands = {"compare": ["compare", GPT5, GPT5_MINI, "--format", fmt, "--seed", "3"]}
    if fmt != "html":
        commands["report"] = ["report", "latest", "--store", str(store), "--format", fmt]
    return commands


@pytest.fixture(scope="module")
def other_interpreter(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list]]:
    """A stored campaign, and ``(exit code, stdout)`` of the compare and the report of every
    format run by one other interpreter (another hash seed than this one), keyed ``fmt/command``."""
    store = tmp_path_factory.mktemp("same-bytes") / "runs.db"
    _interrupted_store(store, n_tasks=30, n_done=30)
    commands = {f"{fmt}/{name}": args for fmt in FORMATS for name, args in _same_bytes_commands(store, fmt).items()}
    code = (
        "import json; from helpers.cli import run_here\n"
        f"commands = {commands!r}\n"
        "done = {k: run_here(a) for k, a in commands.items()}\n"
        "print(json.dumps({k: [p.returncode, p.stdout] for k, p in done.items()}))"
    )
    return store, fresh_json(code)


@pytest.mark.first
@pytest.mark.xdist_group("default-verdicts-same-bytes")  # one worker starts the other interpreter
@pytest.mark.parametrize("fmt", FORMATS)
def test_same_inputs_give_the_same_bytes(fmt: str, other_interpreter: tuple[Path, dict[str, list]]) -> None:
    store, there = other_interpreter
    commands = _same_bytes_commands(store, fmt)
    first = there[f"{fmt}/compare"]
    second = run_here(commands["compare"])
    assert first[0] == second.returncode == 2
    assert first[1] == second.stdout
    assert "finished_at" not in first[1] or '"finished_at": null' in first[1]
    if "report" in commands:
        assert there[f"{fmt}/report"][1] == run_here(commands["report"]).stdout


def test_timestamps_only_when_asked(tmp_path: Path) -> None:
    args = ["compare", GPT5, GPT5_MINI, "--format", "json"]
    plain = _json(run_here(args))["provenance"]
    assert plain["finished_at"] is None and plain["started_at"] is None
    epoch = _json(run_here(args, {"SOURCE_DATE_EPOCH": "1700000000"}))["provenance"]
    assert epoch["finished_at"] == "2023-11-14T22:13:20+00:00"
    store = tmp_path / "runs.db"
    _interrupted_store(store, n_tasks=10, n_done=10)
    rep = ["report", "latest", "--store", str(store), "--format", "json"]
    assert _json(run_here(rep))["provenance"]["started_at"] is None
    assert _json(run_here([*rep, "--timestamps"]))["provenance"]["started_at"] is not None
