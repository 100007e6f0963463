"""End to end: agent-written code that attacks the framework through the code-test sandbox.

Issue 11 items 2, 7 and 8, through the real command line and a real store: the code kills its
parent, escapes with ``setsid`` and a fresh environment, or forges its verdict by walking frames
or returning always-equal objects. Each campaign completes, every trial is stored with the
honest verdict, no process is left behind and no scratch directory leaks.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from helpers.cli import cli_env, run
from helpers.matrix_agents import HONEST_CODE, HOSTILE_CODE, escape_code, escape_sleep_arg
from helpers.procs import processes_with_arg

SUITE = '''
from ablation import AblationTask
from ablation.verifiers import code_tests

VERIFIER = code_tests(time_limit_s=5, memory_mb=256)
tasks = [
    AblationTask(task_id=f"add-{i}", input_data={"i": i}, verifier=VERIFIER,
                 metadata={"tests": f"assert add({i}, 1) == {i + 1}\\nassert add(-1, 1) == 0\\n"})
    for i in range(3)
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
@pytest.mark.parametrize("candidate", ["kill_parent", "escape", "frame_forge", "always_equal"])
def test_hostile_code_cannot_kill_escape_or_forge(tmp_path: Path, candidate: str) -> None:
    (tmp_path / "suite.py").write_text(SUITE)
    # Leftover processes are looked for machine-wide, by an argument no other test uses.
    sleep_arg = escape_sleep_arg()
    (tmp_path / "agents.py").write_text(_agents(sleep_arg))
    store = tmp_path / "runs.db"
    # A private temporary directory: other runs on the machine create sandboxes too.
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**cli_env(), "TMPDIR": str(tmp)}
    args = [
        "run", str(tmp_path / "suite.py"), "--baseline", f"{tmp_path / 'agents.py'}:honest",
        "--candidate", f"{tmp_path / 'agents.py'}:{candidate}", "--format", "json",
        "--no-progress", "--store", str(store),
    ]
    proc = run(args, env, timeout=120)
    assert proc.returncode in (0, 2), proc.stderr
    report = json.loads(proc.stdout)
    assert report["baseline"]["passes"] == 3
    assert report["candidate"]["passes"] == (3 if candidate == "kill_parent" else 0)
    with sqlite3.connect(store) as db:
        assert db.execute("select count(*) from trials").fetchone() == (6,)
        assert db.execute("select status from campaigns").fetchone() == ("complete",)
    assert processes_with_arg(sleep_arg.encode()) == []
    assert _scratch_dirs(tmp) == set()
