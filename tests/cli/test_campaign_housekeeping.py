"""The first hour of a project: ``ablation list``, ``ablation init``'s CI files, and what
environment a ``cmd:`` agent inherits (``--agent-env``). Each through the real command line."""

from __future__ import annotations

import json
import shlex
import sqlite3
import sys
from pathlib import Path

import pytest
from helpers.cli import REPO
from helpers.cli_shared import run_here

SUITE = "tests/helpers/slow_suite.py"
AGENTS = "tests/helpers/slow_agents.py"
FAST = {"SLOW_SUITE_TASKS": "12", "SLOW_AGENTS_SCALE": "0"}


def _run(store: Path | None, candidate: str, *extra: str, env: dict[str, str] | None = None) -> int:
    """``ablation run`` in this process, into ``store`` (``None``: ``--no-store``)."""
    kept = ["--store", str(store)] if store is not None else ["--no-store"]
    done = run_here(
        ["run", SUITE, "--baseline", f"{AGENTS}:baseline", "--candidate", candidate,
         *kept, "--no-progress", "--quiet", *extra],
        {**FAST, **(env or {}), "SLOW_SUITE_CHANGE": None},
    )  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    return done.returncode


@pytest.mark.slow
def test_list_shows_each_stored_campaign_with_its_verdict(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    codes = [_run(store, f"{AGENTS}:candidate_b"), _run(store, f"{AGENTS}:candidate_c")]
    done = run_here(["list", str(store), "--format", "json"])
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    with sqlite3.connect(store) as conn:  # the store itself, read independently
        stored = conn.execute(
            "SELECT c.id, c.status, (SELECT COUNT(*) FROM trials t WHERE t.campaign_id = c.id)"
            " FROM campaigns c ORDER BY c.created_at DESC"
        ).fetchall()
    assert [(r["campaign_id"], r["status"], r["n_trials"]) for r in rows] == stored
    assert [r["candidate_agent"] for r in rows] == [f"{AGENTS}:candidate_c", f"{AGENTS}:candidate_b"]
    assert [r["verdict"] for r in rows] == [{0: "pass", 2: "fail"}[c] for c in reversed(codes)]
    assert {r["n_tasks"] for r in rows} == {12} and len({r["suite_fingerprint"] for r in rows}) == 1
    table = run_here(["list", str(store)]).stdout.splitlines()
    assert table[0].split()[:3] == ["campaign", "created", "status"]
    assert [line.split()[0] for line in table[1:]] == [r["campaign_id"] for r in rows]


def test_list_without_a_store_is_one_line_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ablation.cli import main

    assert main(["list", str(tmp_path / "missing.db")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{tmp_path / 'missing.db'}: no run store here" in err


@pytest.mark.slow
@pytest.mark.parametrize(("flags", "visible"), [
    ([], {"PATH", "HOME", "LC_ALL"}),
    (["--agent-env", "OPENAI_API_KEY"], {"PATH", "OPENAI_API_KEY"}),
    (["--agent-env", "*"], {"PATH", "OPENAI_API_KEY", "GITHUB_TOKEN"}),
])  # fmt: skip
def test_cmd_agents_inherit_only_safe_and_named_variables(
    tmp_path: Path, flags: list[str], visible: set[str]
) -> None:
    out = tmp_path / "env.json"
    agent = "cmd:" + shlex.join([sys.executable, str(REPO / "tests/helpers/env_agent.py"), str(out)])
    secrets = {"OPENAI_API_KEY": "sk-test", "GITHUB_TOKEN": "ghs-test", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path)}
    # two tasks: each call of a cmd: agent starts an interpreter, and one shows the environment
    _run(None, agent, "--concurrency", "1", *flags, env={**secrets, "SLOW_SUITE_TASKS": "2"})
    names = set(json.loads(out.read_text()))
    assert visible <= names
    hidden = {"OPENAI_API_KEY", "GITHUB_TOKEN"} - visible
    assert not hidden & names


def test_init_adds_the_store_to_gitignore_once_and_keeps_what_was_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ablation.cli import main

    (tmp_path / ".gitignore").write_text("build/\n*.pyc")  # no final newline
    assert main(["init", str(tmp_path)]) == 0
    assert main(["init", str(tmp_path), "--force"]) == 0
    capsys.readouterr()
    lines = (tmp_path / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["build/", "*.pyc"] and lines.count(".ablation/") == 1
    assert (tmp_path / ".github" / "workflows" / "ablation.yml").is_file()
    assert main(["init", str(tmp_path)]) == 1  # the files exist: refused without --force
    assert "exists (use --force" in capsys.readouterr().err
