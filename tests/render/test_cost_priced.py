"""An arm whose trials did not all state a cost says so: ``ArmSummary.cost_trials`` counts the
trials its ``cost_total`` and ``cost_mean`` count, and the Arms row of every rendering says
"8 of 12 trials priced" when some stated none (a total over fewer trials is not the arm's cost).

The reference is a count of the trials' own costs, made here: a campaign run in this process
(one and two runs per task) and two result files read by ``compare`` (the columnar path).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ablation import AblationTask, AgentOutput, CampaignConfig, run_ablation_campaign
from ablation.analysis.build import compare_results
from ablation.render import plots, render
from ablation.report import AblationReport

N = 12


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTML pages without their plots: no test here reads them (their labels are glyph paths, not
    text), and drawing them is most of a page's time."""
    monkeypatch.setattr(plots, "report_plots", lambda report: [])


def _base(x: int) -> AgentOutput:
    return AgentOutput(output=x, cost=0.01)


def _cand(x: int) -> AgentOutput:
    return AgentOutput(output=x) if x % 3 == 0 else AgentOutput(output=x, cost=0.02 + x / 1000)


def _expected(runs: int) -> tuple[int, float]:
    priced = [0.02 + x / 1000 for x in range(N) if x % 3]
    return runs * len(priced), runs * math.fsum(priced)


def _check(report: AblationReport, runs: int) -> None:
    trials, total = _expected(runs)
    b, c = report.baseline, report.candidate
    assert (b.cost_trials, b.n_trials) == (runs * N, runs * N)
    assert (c.cost_trials, c.n_trials) == (trials, runs * N)
    assert c.cost_total == pytest.approx(total, rel=1e-12)
    assert c.cost_mean == pytest.approx(total / trials, rel=1e-12)
    said = f"{trials} of {runs * N} trials priced"
    for fmt in ("terminal", "markdown", "html"):
        text = " ".join(render(report, fmt, width=200).split())
        assert text.count(said) == 1, fmt
        assert "trials priced" not in text.replace(said, ""), fmt  # the baseline's row says nothing
    assert json.loads(render(report, "json"))["candidate"]["cost_trials"] == trials


@pytest.mark.parametrize("runs", [1, 2])
def test_a_campaign_counts_its_priced_trials(runs: int) -> None:
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(N)]
    report = run_ablation_campaign(_base, _cand, tasks, config=CampaignConfig(n_resamples=200, runs=runs))
    _check(report, runs)


def test_compare_counts_its_priced_trials(tmp_path: Path) -> None:
    def write(name: str, agent: object) -> str:
        rows = []
        for x in range(N):
            out = agent(x)  # type: ignore[operator]
            rows.append({"id": f"t{x}", "passed": True} | ({} if out.cost is None else {"cost": out.cost}))
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
        return str(tmp_path / name)

    _check(compare_results(write("b.jsonl", _base), write("c.jsonl", _cand)), 1)


def test_no_cost_at_all_is_none() -> None:
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(3)]
    report = run_ablation_campaign(lambda x: x, lambda x: x, tasks, config=CampaignConfig(n_resamples=100))
    assert report.baseline.cost_trials is None and report.baseline.cost_total is None
