"""A metric gate on cost (or tokens, a quality score, a result file's metric) is inconclusive when some pairs
lack the value in one arm: an unreported cost is unknown, not a low one. Before, the gate judged
the priced pairs alone, so a candidate that reported its cost only where it was cheap passed a
cost margin it breaks.

The reference for each case is the same comparison with every value reported: its gate passes
(or fails) on the test, so the inconclusive result comes from the missing values alone.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import run_here

from ablation import AblationTask, AgentOutput, CampaignConfig, GatePolicy, run_ablation_campaign
from ablation.report import AblationReport, GateResult

N = 200  # a margin needs MEAN_DIFFERENCE_MIN_N pairs: 100 here with half the costs unreported


def _gate(report: AblationReport, name: str) -> GateResult:
    (gate,) = [g for g in report.gates if g.name == name]
    return gate


def _campaign(candidate_cost: dict[int, float | None]) -> AblationReport:
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(N)]
    config = CampaignConfig(n_resamples=200, gates=GatePolicy(metric_margins={"cost": 0.05}))
    return run_ablation_campaign(
        lambda x: AgentOutput(output=x, cost=0.10),
        lambda x: AgentOutput(output=x, cost=candidate_cost[x]),
        tasks, config=config,
    )  # fmt: skip


def test_a_cost_reported_only_where_cheap_is_inconclusive() -> None:
    # where it reports, the candidate is cheaper; where it does not, it cost 10x (unknown here)
    cheap_only = _campaign({x: 0.09 if x % 2 else None for x in range(N)})
    gate = _gate(cheap_only, "non-inferiority of cost")
    assert gate.status == "inconclusive" and cheap_only.verdict == "fail"
    assert gate.evidence.startswith("inconclusive: 100 of 200 pairs have no cost in one arm (no cost in an arm: none stated, or a model without a price)")
    assert gate.pvalue is not None  # the test on the priced pairs is shown, not trusted
    priced = _campaign(dict.fromkeys(range(N), 0.09))  # the reference: every cost reported
    assert _gate(priced, "non-inferiority of cost").status == "pass" and priced.verdict == "pass"


def test_a_metric_of_a_result_file_missing_in_one_arm_is_inconclusive(tmp_path: Path) -> None:
    def write(name: str, tokens: dict[int, int | None]) -> str:
        rows = [{"id": f"t{i}", "passed": True, "latency_s": 1.0 + i / 100}
                | ({} if tokens[i] is None else {"tokens": tokens[i]}) for i in range(N)]  # fmt: skip
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
        return str(tmp_path / name)

    before = write("b.jsonl", dict.fromkeys(range(N), 100))
    flags = ["--metric-margin", "tokens=5", "--metric-margin", "latency_s=0.5", "--format", "json"]
    for tokens, status in (({i: 99 for i in range(N)}, "pass"), ({i: 99 if i % 3 else None for i in range(N)}, "inconclusive")):
        out = tmp_path / f"{status}.json"
        done = run_here(["compare", before, write("c.jsonl", tokens), *flags, "-o", str(out)])
        report = json.loads(out.read_text())
        gates = {g["name"]: g for g in report["gates"]}
        assert gates["non-inferiority of tokens"]["status"] == status, gates["non-inferiority of tokens"]
        assert gates["non-inferiority of latency_s"]["status"] == "pass"  # measured on every pair
        assert done.returncode == (0 if status == "pass" else 2)
    assert gates["non-inferiority of tokens"]["evidence"].startswith("inconclusive: 67 of 200 pairs have no tokens in one arm")


def test_a_quality_score_missing_where_the_candidate_timed_out_is_inconclusive() -> None:
    """A candidate that times out on its hard tasks has no output to score there: its quality is
    unknown on them, not good, and the scored pairs are the easy ones. The gate once passed a
    0.05 margin on those alone."""
    from ablation import TaskResult, compare_results

    def arm(name: str, timeouts: bool) -> list[TaskResult]:
        return [
            TaskResult(task_id=f"t{i}", arm=name, passed=False, status="timeout", error_type="TimeoutError")
            if timeouts and i % 10 == 0
            else TaskResult(task_id=f"t{i}", arm=name, passed=True, quality={"judge": 0.8 + 0.001 * (i % 7)})
            for i in range(N)
        ]  # fmt: skip

    config = CampaignConfig(n_resamples=200, gates=GatePolicy(metric_margins={"judge": 0.05}))
    late = compare_results(arm("baseline", False), arm("candidate", True), config=config)
    gate = _gate(late, "non-inferiority of judge")
    assert gate.status == "inconclusive", gate
    assert gate.evidence.startswith("inconclusive: 20 of 200 pairs have no judge in one arm")
    assert late.metric_noninferiority["judge"].decision == "inconclusive"  # as the gate, not the scored pairs alone
    every = compare_results(arm("baseline", False), arm("candidate", False), config=config)
    assert _gate(every, "non-inferiority of judge").status == "pass"  # the reference: all scored
