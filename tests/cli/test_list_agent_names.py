r"""``ablation list`` shows agent names as every report does: one line, escapes, no CI command.

An agent's name is user text (a Python agent's ``name``, a spec). The table wrote it as it was:
a name ``base\n::add-mask::secret\x1b[2J`` printed a line a GitHub Actions runner reads as a
workflow command and cleared a terminal, and ``cand ##[error]x \u202e`` held the command's old
form and a right-to-left override. ``ablation report`` of the same store showed them escaped.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers.cli import run_here

from ablation import AblationTask, CampaignConfig, run_ablation_campaign
from ablation.agents.callables import as_agent

BASELINE = "base\n::add-mask::secret\x1b[2J"
CANDIDATE = "cand ##[error]x \u202e"


def test_list_shows_hostile_agent_names_on_one_safe_line(tmp_path: Path) -> None:
    tasks = [AblationTask(task_id=f"t{i}", input_data={"i": i}, expected_output=i) for i in range(4)]
    baseline = as_agent(lambda x: x["i"], name=BASELINE)
    candidate = as_agent(lambda x: 0, name=CANDIDATE)
    run_ablation_campaign(baseline, candidate, tasks, config=CampaignConfig(n_resamples=100), store=tmp_path / "r.db")
    proc = run_here(["list", str(tmp_path / "r.db")])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2  # the header and the one campaign
    assert {c for c in proc.stdout if not (c == "\n" or c.isprintable())} == set()
    commands = [line for line in re.split(r"\r\n|\r|\n", proc.stdout) if line.strip().startswith("::") or "##[" in line]
    assert commands == []
    assert "base\\n::add-mask::secret\\x1b[2J" in lines[1] and "cand ##" in lines[1] and "\\u202e" in lines[1]
