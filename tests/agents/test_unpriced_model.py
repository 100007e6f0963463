"""A model without a price is named once, with the ``[tool.ablation.prices]`` line that prices it.

A trial whose usage names a model that neither genai-prices nor ``[tool.ablation.prices]`` knows
has no cost, and the report only counted such trials ("no cost reported in an arm"): a user could
not tell which model lacked a price or what to write. Now the ``ablation`` command says it on
stderr, once per model, however many trials used it, and the entry it suggests, written into
``pyproject.toml`` with real prices, prices every trial (the reference: the exact arithmetic of
the override, tokens times price per million).
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from helpers.cli import run_here

MODEL = "acme-unlisted-7b"
AGENTS = f"""
from ablation import AgentOutput, TrialUsage

def baseline(x):
    return AgentOutput(output=x, usage=TrialUsage(model={MODEL!r}, input_tokens=1000, output_tokens=100))

candidate = baseline
"""
SUITE = """
from ablation import AblationTask
tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(6)]
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agents.py").write_text(AGENTS, encoding="utf-8")
    (tmp_path / "suite.py").write_text(SUITE, encoding="utf-8")
    return tmp_path


def _run(project: Path) -> tuple[str, dict]:  # type: ignore[type-arg]
    from ablation.agents import pricing

    pricing._unpriced.cache_clear()  # once per process: this test's process ran others before
    out = project / "report.json"
    done = run_here(["run", "suite.py", "--baseline", "agents.py:baseline", "--candidate",
                     "agents.py:candidate", "--no-store", "--format", "json", "-o", str(out)],
                    cwd=project)  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    return done.stderr, json.loads(out.read_text(encoding="utf-8"))


def test_the_model_without_a_price_is_named_once_with_its_entry(project: Path) -> None:
    stderr, report = _run(project)
    lines = [line for line in stderr.splitlines() if "no price for model" in line]
    assert len(lines) == 1, stderr  # 12 trials, one line
    assert f"'{MODEL}'" in lines[0] and "[tool.ablation.prices]" in lines[0]
    assert report["baseline"]["cost_total"] is None and report["baseline"]["cost_trials"] is None
    suggested = re.search(r'(".+" = \{ input_per_mtok = \.\.\., output_per_mtok = \.\.\. \})', lines[0])
    assert suggested, lines[0]
    entry = suggested[1].replace("...", "2.5", 1).replace("...", "10")
    (project / "pyproject.toml").write_text(
        textwrap.dedent("[tool.ablation.prices]\n") + entry + "\n", encoding="utf-8"
    )
    stderr, report = _run(project)
    assert "no price for model" not in stderr
    per_trial = (1000 * 2.5 + 100 * 10) / 1_000_000
    assert report["baseline"]["cost_trials"] == 6
    assert report["baseline"]["cost_total"] == pytest.approx(6 * per_trial, rel=1e-12)
