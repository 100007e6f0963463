"""Issue 11 item 12: a resume checks the agents' code and the tasks can always be digested.

End to end through the real command line (``tests/helpers/cli.py``) on a real SQLite store: a
campaign is interrupted with SIGINT, the candidate's source is edited, and ``--resume`` must
refuse with one line naming the arm and the agent, running nothing. Task inputs with no stable
representation are refused when the campaign starts; dataclass inputs resume.
"""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

import pytest
from helpers import cli

from ablation import AblationTask, RunStore, run_ablation_campaign
from ablation.agents import CommandAgent, HttpAgent
from ablation.agents.fingerprint import agent_fingerprint
from ablation.errors import ConfigError, ResumeMismatchError

#: Each call sleeps ``FINGERPRINT_AGENT_SLEEP`` seconds: 0.03 in the campaign that is interrupted
#: (so that it is stopped half-way), none in the resumes (the same source: the same fingerprint).
AGENTS = '''
import os
import time


def baseline(task):
    time.sleep(float(os.environ.get("FINGERPRINT_AGENT_SLEEP", "0")))
    return 3 * task["n"]


def candidate(task):
    time.sleep(float(os.environ.get("FINGERPRINT_AGENT_SLEEP", "0")))
    return task["n"] * 3
'''
#: The environment of the in-process runs (:func:`helpers.cli.run_here`), as ``cli_env`` gives.
HERE = {"SLOW_SUITE_TASKS": "80", "SLOW_SUITE_CHANGE": None, "FINGERPRINT_AGENT_SLEEP": None}
EDITED = AGENTS.replace('    return task["n"] * 3\n', '    return task["n"] * 3 + 1\n')


def _interrupted(tmp_path: Path) -> tuple[Path, list[str], int]:
    """Start a stored campaign, SIGINT it after a few trials; return store, args, trials stored."""
    agents = tmp_path / "agents.py"
    agents.write_text(AGENTS, encoding="utf-8")
    store = tmp_path / "runs.db"
    args = cli.run_args(store, agents=str(agents), extra=["--concurrency", "2"])
    env = cli.cli_env(SLOW_SUITE_TASKS="80", FINGERPRINT_AGENT_SLEEP="0.03")
    proc = cli.start(args, env)
    try:
        cli.wait_until(lambda: cli.stored_trials(store) >= 6, timeout=60, proc=proc)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            cli.kill(proc)
    [(_, status, done)] = cli.campaigns(store)
    assert status == "interrupted" and 0 < done < 160
    return store, args, done


@pytest.mark.slow
def test_resume_refuses_an_edited_agent_and_resumes_an_unchanged_one(tmp_path: Path) -> None:
    store, args, done = _interrupted(tmp_path)
    env = cli.cli_env(SLOW_SUITE_TASKS="80", FINGERPRINT_AGENT_SLEEP=None)
    agents = tmp_path / "agents.py"
    agents.write_text(EDITED, encoding="utf-8")

    refused = cli.run_here([*args, "--resume"], HERE)  # the resume below is a real process
    assert refused.returncode == 1, refused.stderr
    [line] = refused.stderr.strip().splitlines()
    assert f"candidate agent {agents}:candidate changed since the campaign started" in line
    assert "(source digest " in line and "--allow-changed-agent" in line
    assert "baseline agent" not in line  # the baseline's own source did not change
    assert refused.stdout == ""
    assert cli.campaigns(store)[0][1:] == ("interrupted", done)  # nothing ran

    agents.write_text(AGENTS, encoding="utf-8")  # back to the code the campaign started with
    resumed = cli.run([*args, "--resume"], env)
    assert resumed.returncode in (0, 2), resumed.stderr
    assert cli.campaigns(store)[0][1:] == ("complete", 160)


@pytest.mark.slow
def test_allow_changed_agent_is_an_explicit_opt_out(tmp_path: Path) -> None:
    store, args, _ = _interrupted(tmp_path)
    (tmp_path / "agents.py").write_text(EDITED, encoding="utf-8")
    resumed = cli.run_here([*args, "--resume", "--allow-changed-agent"], HERE)
    assert resumed.returncode in (0, 2), resumed.stderr
    assert cli.campaigns(store)[0][1:] == ("complete", 160)


SUITE_WITH = '''
import dataclasses

from ablation import AblationTask


class Foo:
    def __init__(self, n):
        self.n = n


@dataclasses.dataclass
class Point:
    n: int


def _value(n):
    return {KIND}


tasks = [AblationTask(task_id=f"t-{{n}}", input_data={{"x": _value(n)}}, expected_output=n)
         for n in range(6)]
'''
ECHO = "def agent(task):\n    return getattr(task['x'], 'n', task['x'])\n"


def _suite(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    suite = tmp_path / "suite.py"
    suite.write_text(SUITE_WITH.format(KIND=kind), encoding="utf-8")
    agents = tmp_path / "echo.py"
    agents.write_text(ECHO, encoding="utf-8")
    return suite, agents


def test_an_input_with_no_stable_representation_is_refused_up_front(tmp_path: Path) -> None:
    suite, agents = _suite(tmp_path, "Foo(n) if n == 3 else n")
    store = tmp_path / "runs.db"
    done = cli.run_here(cli.run_args(store, suite=str(suite), agents=str(agents), baseline="agent",
                                     candidates=["agent"]))
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "task 't-3' input contains a Foo object with no stable representation" in line
    assert "use plain data, a dataclass or a pydantic model" in line
    assert not store.exists() or cli.campaigns(store) == []  # refused before any campaign


def test_dataclass_inputs_resume(tmp_path: Path) -> None:
    suite, agents = _suite(tmp_path, "Point(n)")
    store = tmp_path / "runs.db"
    args = cli.run_args(store, suite=str(suite), agents=str(agents), baseline="agent",
                        candidates=["agent"])
    first = cli.run(args, cli.cli_env())
    assert first.returncode in (0, 2), first.stderr
    again = cli.run_here([*args, "--resume"])
    assert again.returncode in (0, 2), again.stderr
    assert "tasks changed" not in again.stderr and "changed" not in again.stderr
    assert cli.campaigns(store)[0][1:] == ("complete", 12)


def _plain(x: int) -> int:
    return x


def _tasks() -> list[AblationTask]:
    return [AblationTask(task_id=f"t{n}", input_data=n, expected_output=n) for n in range(3)]


def test_a_store_without_fingerprints_resumes_with_a_warning(tmp_path: Path) -> None:
    store = tmp_path / "old.db"
    run_ablation_campaign(_plain, _plain, _tasks(), store=store)
    with sqlite3.connect(store) as conn:  # make it a schema-2 store, as written before
        conn.execute("DROP TRIGGER campaign_tasks_updated")  # (it names the snapshots table)
        conn.execute("ALTER TABLE campaigns DROP COLUMN agent_fingerprints_json")
        for trigger in ("inserted", "deleted", "updated"):  # nor did schema 5's snapshots
            conn.execute(f"DROP TRIGGER trials_{trigger}")
        conn.execute("DROP TABLE arm_snapshots")
        conn.execute("DROP TABLE trial_counts")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    with pytest.warns(UserWarning, match="without agent fingerprints"):
        report = run_ablation_campaign(_plain, _plain, _tasks(), store=store, resume=True)
    assert report.n_paired == 3
    with RunStore(store) as reopened:  # migrated: the column is back, empty for that campaign
        [campaign] = reopened.list_campaigns()
        assert campaign.n_trials == 6


def test_python_api_resume_refuses_a_different_callable_under_the_same_name(tmp_path: Path) -> None:
    store = tmp_path / "api.db"
    run_ablation_campaign(_plain, {"run": _plain, "name": "fp"}, _tasks(), store=store)

    def _plain_v2(x: int) -> int:
        return x + 0

    with pytest.raises(ResumeMismatchError, match=r"candidate agent .* changed since"):
        run_ablation_campaign(_plain, {"run": _plain_v2, "name": "fp"}, _tasks(),
                              store=store, resume=True)


def test_python_api_refuses_unstable_inputs_only_with_a_store(tmp_path: Path) -> None:
    tasks = [AblationTask(task_id="a", input_data=object(), expected_output=None)]
    with pytest.raises(ConfigError, match=r"task 'a' input contains a object object"):
        run_ablation_campaign(_plain, _plain, tasks, store=tmp_path / "s.db")
    run_ablation_campaign(_plain, _plain, tasks)  # no store: nothing to resume, nothing refused


def test_command_fingerprint_covers_the_script(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text("print(1)\n", encoding="utf-8")
    before = agent_fingerprint(CommandAgent(["python", str(script)]))
    script.write_text("print(2)\n", encoding="utf-8")
    after = agent_fingerprint(CommandAgent(["python", str(script)]))
    assert before.startswith("command:") and after.startswith("command:") and before != after
    assert agent_fingerprint(CommandAgent(["python", str(script), "-v"])) != after
    assert agent_fingerprint(HttpAgent("http://127.0.0.1:9/x")) == "url:http://127.0.0.1:9/x"
    assert agent_fingerprint(len).startswith("name:")  # no source: the qualified name only


def test_plain_data_digests_are_those_of_earlier_versions() -> None:
    import hashlib
    import json

    from ablation.schema import task_digests, to_jsonable

    task = AblationTask(task_id="a", input_data={"n": 1, "b": [1.5, "x", None]}, expected_output=3)
    # The formula of every earlier version (ablation 0.x schema.task_digests), kept as reference.
    old = hashlib.sha256(json.dumps(
        [to_jsonable(task.input_data), to_jsonable(task.expected_output), task.verifier_name],
        sort_keys=True,
    ).encode()).hexdigest()[:16]
    assert task_digests([task]) == {"a": old}
