"""End to end: agent-written code that attacks the framework through the code-test sandbox.

Issue 11 items 2, 7 and 8, through the real command line and a real store: the code kills its
parent, escapes with ``setsid`` and a fresh environment, or forges its verdict by walking frames
or returning always-equal objects. Each campaign completes, every trial is stored with the
honest verdict, no process is left behind and no scratch directory leaks.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import venv
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import LAUNCH, REPO, TESTS, cli_env, kill, run, run_here, start, wait_until
from helpers.matrix_agents import HONEST_CODE, HOSTILE_CODE, escape_code, escape_sleep_arg
from helpers.procs import alive, processes_with_arg

SUITE = '''
from ablation import AblationTask
from ablation.verifiers import code_tests

VERIFIER = code_tests(time_limit_s=5, memory_mb=256)
tasks = [
    AblationTask(task_id=f"add-{i}", input_data={"i": i}, verifier=VERIFIER,
                 metadata={"tests": f"assert add({i}, 1) == {i + 1}\\nassert add(-1, 1) == 0\\n"})
    for i in range(2)
]
'''

ANSWERS = {
    "honest": HONEST_CODE,
    # Item 2: today this kills the ablation process (exit 137, nothing stored).
    "kill_parent": "import os\nos.kill(os.getppid(), 9)\n" + HONEST_CODE,
    # Item 7: double fork, setsid and an exec that drops the environment marker.
    "escape": escape_code("SLEEP_ARG"),
    # Item 8: no add() at all (a pass could only be forged), or an always-equal result.
    "frame_forge": HOSTILE_CODE["sb_frames"],
    "always_equal": HOSTILE_CODE["sb_eq"],
}


def _agents(sleep_arg: str) -> str:
    """The agents module; the escape's ``sleep`` carries ``sleep_arg``, this test's own marker."""
    answers = {name: code.replace("SLEEP_ARG", sleep_arg) for name, code in ANSWERS.items()}
    return "ANSWERS = " + repr(answers) + "\n" + "".join(
        f"\ndef {name}(task_input):\n    return ANSWERS[{name!r}]\n" for name in answers
    )


def _scratch_dirs(tmp: Path) -> set[str]:
    return {p for p in os.listdir(tmp) if p.startswith("ablation-sandbox-")}


@pytest.mark.slow
def test_hostile_code_cannot_kill_escape_or_forge(tmp_path: Path) -> None:
    """The four hostile candidates share one run and its honest baseline (one campaign each, the
    baseline's trials reused): the baseline's sandbox runs and the interpreter start once."""
    (tmp_path / "suite.py").write_text(SUITE)
    # Leftover processes are looked for machine-wide, by an argument no other test uses.
    sleep_arg = escape_sleep_arg()
    (tmp_path / "agents.py").write_text(_agents(sleep_arg))
    store = tmp_path / "runs.db"
    # A private temporary directory: other runs on the machine create sandboxes too.
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**cli_env(), "TMPDIR": str(tmp)}
    hostile = ["kill_parent", "escape", "frame_forge", "always_equal"]
    args = [
        "run", str(tmp_path / "suite.py"), "--baseline", f"{tmp_path / 'agents.py'}:honest",
        *(arg for name in hostile for arg in ("--candidate", f"{tmp_path / 'agents.py'}:{name}")),
        "--format", "json", "--no-progress", "--store", str(store),
    ]  # fmt: skip
    proc = run(args, env, timeout=120)
    assert proc.returncode in (0, 2), proc.stderr
    reports = {c["name"].rsplit(":", 1)[1]: c["report"] for c in json.loads(proc.stdout)["candidates"]}
    assert list(reports) == hostile
    for candidate, report in reports.items():
        assert report["baseline"]["passes"] == 2, candidate
        assert report["candidate"]["passes"] == (2 if candidate == "kill_parent" else 0), candidate
    with sqlite3.connect(store) as db:
        rows = db.execute("select c.status, count(t.rowid) from campaigns c"
                          " join trials t on t.campaign_id = c.id group by c.id").fetchall()  # fmt: skip
    assert rows == [("complete", 4)] * len(hostile)
    assert processes_with_arg(sleep_arg.encode()) == []
    assert _scratch_dirs(tmp) == set()


# ------------------------------------------------------------------ the campaign around the sandbox

SLEEPY_SUITE = '''
from ablation import AblationTask
from ablation.verifiers import code_tests

tasks = [AblationTask(task_id=f"t{i}", input_data={}, verifier=code_tests(time_limit_s=90),
                      metadata={"tests": "assert x == 1\\n"}) for i in range(2)]
'''


def _sleepy_agents(sleep_arg: str) -> str:
    code = f"import os\nos.execv('/bin/sleep', ['sleep', {sleep_arg!r}])\n"
    return f"def sleepy(task_input):\n    return {code!r}\n"


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    stat = fh.read()
                children.setdefault(int(stat[stat.rfind(b")") + 2 :].split()[1]), []).append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    found, todo = set(), [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.add(pid)
            todo.append(pid)
    return found


def _alive(pids: set[int]) -> set[int]:
    return {pid for pid in pids if alive(pid)}


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_killing_ablation_ends_its_sandboxes(tmp_path: Path, sig: signal.Signals) -> None:
    (tmp_path / "suite.py").write_text(SLEEPY_SUITE)
    sleep_arg = escape_sleep_arg()
    (tmp_path / "agents.py").write_text(_sleepy_agents(sleep_arg))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**cli_env(), "TMPDIR": str(tmp)}
    agent = f"{tmp_path / 'agents.py'}:sleepy"
    proc = start(
        ["run", str(tmp_path / "suite.py"), "--baseline", agent, "--candidate", agent,
         "--no-progress", "--store", str(tmp_path / "runs.db"), "--timeout", "120"],
        env,
    )  # fmt: skip
    # Both arms' code is asleep in its sandboxes (four of them).
    wait_until(lambda: len(processes_with_arg(sleep_arg.encode())) == 4, timeout=60, proc=proc)
    below = _descendants(proc.pid)
    assert below, "the sandboxes' processes are descendants of ablation"
    kill(proc, sig)
    deadline = time.monotonic() + 5
    while (_alive(below) or processes_with_arg(sleep_arg.encode())) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(below) == set()
    assert processes_with_arg(sleep_arg.encode()) == []
    assert _scratch_dirs(tmp) == set()


CODE_SUITE = '''
from ablation import AblationTask
from ablation.verifiers import code_tests

tasks = [AblationTask(task_id=f"t{i}", input_data={}, verifier=code_tests(time_limit_s=10),
                      metadata={"tests": "assert x == 1\\n"}) for i in range(2)]
'''


@pytest.mark.slow
def test_without_bubblewrap_every_trial_is_an_error_and_the_run_fails(tmp_path: Path) -> None:
    (tmp_path / "suite.py").write_text(CODE_SUITE)
    (tmp_path / "agents.py").write_text("def right(task_input):\n    return 'x = 1\\n'\n")
    agent = f"{tmp_path / 'agents.py'}:right"
    env = {"PATH": str(tmp_path / "no-tools")}  # in this process: no signal or exit is checked
    args = ["run", str(tmp_path / "suite.py"), "--baseline", agent, "--candidate", agent,
            "--no-progress", "--no-store", "--format", "json"]  # fmt: skip
    proc = run_here(args, env)
    assert proc.returncode == 2, proc.stderr
    report = json.loads(proc.stdout)
    assert report["verdict"] == "fail"
    groups = report["errors"]["groups"]
    assert {(g["arm"], g["error_type"], g["count"]) for g in groups} == {
        ("baseline", "SandboxUnavailable", 2), ("candidate", "SandboxUnavailable", 2)
    }
    gates = {g["name"]: g["status"] for g in report["gates"]}
    assert gates["complete comparison"] == "fail", gates
    lines = [line for line in proc.stderr.splitlines() if line.startswith("ablation: error:")]
    assert len(lines) == 1 and "install bubblewrap" in lines[0] and "--sandbox process" in lines[0]
    # The weaker confinement, opted into, runs the code and says so in the provenance.
    proc = run_here([*args, "--sandbox", "process"], env)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["provenance"]["sandbox"] == "process"
    assert report["candidate"]["passes"] == 2


@pytest.mark.slow
def test_a_codegen_campaign_in_a_fresh_virtualenv_under_tmp(tmp_path: Path) -> None:
    """A virtualenv under /tmp, as users install: the reference passes every task there, and the
    candidate's table is the one this interpreter gives against the same reference trials.

    Every fourth task of ``tasks/codegen.py`` from the third (8: two of each category, two of
    the candidate's regressions): each sandbox run costs an interpreter start, and a sandbox that
    cannot start from the venv fails every task."""
    venv.create(tmp_path / "venv", with_pip=False)
    python = str(tmp_path / "venv" / "bin" / "python")
    # The venv sees this environment's packages and the repository through PYTHONPATH only.
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    env = {**cli_env(), "PYTHONPATH": os.pathsep.join([str(TESTS), str(REPO), *paths])}
    agents = "agents/codegen.py"

    suite = tmp_path / "codegen_half.py"
    suite.write_text(f"import runpy\n\ntasks = runpy.run_path({str(REPO / 'tasks' / 'codegen.py')!r})['tasks'][2::4]\n")
    store = tmp_path / "runs.db"
    args = ["run", str(suite), "--baseline", f"{agents}:reference", "--candidate",
            f"{agents}:candidate", "--store", str(store), "--no-progress", "--format", "json"]  # fmt: skip

    def report(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
        assert proc.returncode in (0, 2), proc.stderr
        return dict(json.loads(proc.stdout))

    # The reference solutions pass every task in the venv; the candidate's table there is the
    # table this interpreter gives against the same reference trials (reused from the store:
    # each sandbox run costs an interpreter start, and the reference passing every task in this
    # interpreter is tests/test_suites.py's check).
    in_venv = report(subprocess.run(
        [python, "-c", LAUNCH, *args], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=300, check=False,
    ))  # fmt: skip
    assert in_venv["n_tasks"] == in_venv["baseline"]["passes"] == 8
    assert in_venv["errors"]["groups"] == []
    here = report(run_here([*args, "--reuse-baseline", in_venv["provenance"]["campaign_id"]]))
    assert in_venv["table"] == here["table"]
    assert in_venv["regressions"] == here["regressions"] != []
    assert in_venv["candidate"]["passes"] == here["candidate"]["passes"]
