"""A reader that closes the output early (``ablation list | head -1``) ends the command quietly.

Writing to a pipe whose reader has exited raises ``BrokenPipeError`` in Python (which ignores
SIGPIPE); the commands ended on it with "ablation: error: BrokenPipeError", exit 1 (or, for the
terminal report, exit 1 with no word). Unix tools stop quietly instead; here the command keeps the
exit code it decided (0, or 2 for a failed gate, as its exit code is the answer a script reads),
and says nothing on stderr. The commands are real processes whose stdout is a pipe with its read
end closed before they write, so every write meets a closed pipe, large or small.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from tests.helpers.cli import LAUNCH, REPO, cli_env


def _store(path: Path) -> str:
    """A complete campaign that passes, with its verdict recorded; its id."""
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100), suite_fingerprint="f" * 64,
            task_digests={f"t{i}": "d" for i in range(30)}, baseline_agent="b", candidate_agent="c",
        )  # fmt: skip
        store.append_many(cid, [TaskResult(task_id=f"t{i}", arm=arm, passed=True)
                                for i in range(30) for arm in ("baseline", "candidate")])  # fmt: skip
        store.set_status(cid, "complete")
        store.update_provenance(cid, verdict="pass")
    return cid


def _results(path: Path, failing: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"t{i}", "passed": i >= failing}) + "\n"
                            for i in range(40)))  # fmt: skip
    return path


def _closed_reader(args: list[str]) -> subprocess.Popen[str]:
    """``ablation ARGS`` with stdout a pipe whose read end is already closed."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.Popen(
            [sys.executable, "-c", LAUNCH, *args], cwd=REPO, env=cli_env(), stdout=write,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
    finally:
        os.close(write)


def test_a_closed_pipe_on_stdout_ends_quietly_with_the_commands_exit_code(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    cid = _store(store)
    before, after = _results(tmp_path / "a.jsonl", 0), _results(tmp_path / "b.jsonl", 20)
    scores_a, scores_b = tmp_path / "sa.jsonl", tmp_path / "sb.jsonl"
    for path, shift in ((scores_a, 0.0), (scores_b, 0.01)):
        path.write_text("".join(json.dumps({"id": f"t{i}", "score": 0.3 + 0.01 * (i % 7) + shift}) + "\n"
                                for i in range(40)))  # fmt: skip
    commands = {  # the arguments -> the exit code the command decides
        ("list", str(store)): 0,
        ("list", str(store), "--format", "json"): 0,
        ("report", cid, "--store", str(store)): 0,
        ("report", cid, "--store", str(store), "--format", "json"): 0,
        ("compare", str(before), str(after)): 2,  # 20 of 40 tasks regress: the gate fails
        ("compare", str(scores_a), str(scores_b), "--field", "score"): 0,  # a numeric field
        ("schema",): 0,  # the commands that print without a report, too
        ("plan", "--discordance", "0.1", "--tasks", "500"): 0,
        ("plan", "--discordance", "0.1", "--uplift", "0.03"): 0,
        ("--help",): 0,
    }
    procs = {args: _closed_reader(list(args)) for args in commands}
    for args, proc in procs.items():
        _, err = proc.communicate(timeout=120)
        assert (proc.returncode, err) == (commands[args], ""), args
