"""The regression gate at every sequential stop: never a PASS beside its own numbers' "worse".

A stop that is no decision of the regression gate (a critical regression, "inferior") before
every task ran used to leave the gate PASS, "the e-process never reached 1/alpha", beside the
summary sentence "Candidate is worse ... (descriptive ...)": it is now inconclusive, as after
a futility stop, and a failure when the anytime-valid interval lies below 0 (the confidence
sequence is valid at any stop). At a critical stop where the e-value reached 1/alpha on the
critical pair the gate said "never reached" beside e = 31.88 vs 20: it now fails. At a critical
stop whose anytime-valid upper bound is already below -margin the non-inferiority gate said "the
interval still crosses": it now fails. A "non-inferior" stop passed the regression gate beside a
descriptive sentence "candidate is worse", with a note: that gate is now inconclusive there.

References: scipy's one-sided binomial test of the discordant counts (the sentence's exact
McNemar test) and the e-value's closed form under the uniform prior (STATISTICS.md section 10),
E = sum_{j <= b} C(n + 1, j) / ((n + 1) C(n, b)), n = b + c, in exact integers.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path

import pytest
from helpers import cli
from scipy import stats as sps

from ablation import CampaignConfig, GatePolicy, SequentialPolicy, TaskResult, compare_results
from ablation.analysis.sequential import sequential_order
from ablation.analysis.sequential_gates import SequentialRegressionGate
from ablation.render import plots, render, render_summary
from ablation.render._format import summary_sentence
from ablation.report import AblationReport, Interval

ALPHA, GATE, NI = 0.05, "no significant regression", "non-inferiority"
AGENTS = "def base(task):\n    return 1\n\n\ndef cand(task):\n    return 0 if task['bad'] else 1\n"


def _e_value(b: int, c: int) -> float:
    """The uniform-prior regression e-value, exactly (STATISTICS.md section 10)."""
    n = b + c
    return float(
        Fraction(sum(math.comb(n + 1, j) for j in range(b + 1)), (n + 1) * math.comb(n, b))
    )


def _p_worse(b: int, c: int) -> float:
    return float(sps.binomtest(b, b + c, 0.5, alternative="greater").pvalue)


def _gate(report: AblationReport | dict, name: str):  # type: ignore[no-untyped-def, type-arg]
    gates = report["gates"] if isinstance(report, dict) else [g.model_dump() for g in report.gates]
    return next(g for g in gates if g["name"] == name)


def _critical_suite(tmp_path: Path, regressions: int) -> Path:
    """120 tasks in seed 11's run order: ``regressions`` early ones and the 41st (critical) regress."""
    ids = [f"t{n:03d}" for n in range(120)]
    order = sequential_order(ids, 11)
    bad = set(order[:40:6][:regressions]) | {order[40]}
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({
        "task_id": t, "input_data": {"bad": t in bad}, "expected_output": 1,
        "critical": t == order[40],
    }) + "\n" for t in ids))  # fmt: skip
    (tmp_path / "agents.py").write_text(AGENTS)
    return suite


def _run(tmp_path: Path, regressions: int, fmt: str):  # type: ignore[no-untyped-def]
    suite = _critical_suite(tmp_path, regressions)
    agents = tmp_path / "agents.py"
    return cli.run_here([
        "run", str(suite), "--baseline", f"{agents}:base", "--candidate", f"{agents}:cand",
        "--sequential", "--no-store", "--no-progress", "--seed", "11", "--concurrency", "1",
        "--format", fmt,
    ], cwd=tmp_path)  # fmt: skip


def test_a_critical_stop_leaves_the_regression_gate_inconclusive_in_text_json_and_exit(
    tmp_path: Path,
) -> None:
    doc = _run(tmp_path, 5, "json")
    text = _run(tmp_path, 5, "terminal")
    assert doc.returncode == text.returncode == 2, doc.stderr + text.stderr
    report = json.loads(doc.stdout)
    s = report["sequential"]
    assert s["gate"] == "critical_regression" and s["stopped_early"] and s["pairs"] == 41
    b, c = report["mcnemar"]["b"], report["mcnemar"]["c"]
    assert (b, c) == (6, 0)
    assert _p_worse(b, c) < ALPHA  # the sentence: "Candidate is worse"
    assert s["e_value"] == pytest.approx(_e_value(b, c), rel=1e-9) and _e_value(b, c) < 1 / ALPHA
    assert report["summary"] == "regression"
    assert _gate(report, GATE)["status"] == "inconclusive"
    assert "critical" in _gate(report, GATE)["evidence"]
    flat = " ".join(text.stdout.split())
    assert "Candidate is worse" in flat
    assert re.search(r"no significant regression │ INCONCLUSIVE", flat), flat
    assert not re.search(r"no significant regression │ PASS", flat)
    assert "the regression gate, which this stop did not decide, is inconclusive" in flat


def test_a_critical_stop_where_the_e_process_reached_1_over_alpha_fails_the_gate(
    tmp_path: Path,
) -> None:
    rows = [json.loads(line) for line in _critical_suite(tmp_path, 6).read_text().splitlines()]
    arms = (
        [{"task_id": r["task_id"], "passed": True, "critical": r["critical"]} for r in rows],
        [{"task_id": r["task_id"], "passed": not r["input_data"]["bad"], "critical": r["critical"]}
         for r in rows],
    )  # fmt: skip
    report = compare_results(
        *arms, config=CampaignConfig(seed=11, n_resamples=100, sequential=SequentialPolicy())
    )
    b, c = report.table.regressions, report.table.improvements
    assert report.sequential is not None and report.sequential.gate == "critical_regression"
    assert (b, c) == (7, 0) and _e_value(b, c) >= 1 / ALPHA  # 31.875: rejects at the critical pair
    gate = _gate(report, GATE)
    assert gate["status"] == "fail" and "never reached" not in gate["evidence"]


def _arms(n: int, b: int, c: int, critical: str | None = None) -> tuple[list, list]:  # type: ignore[type-arg]
    """``b`` regressions and ``c`` improvements spread evenly over ``n`` tasks."""
    kinds = ["tie"] * n
    for j in range(b):
        kinds[j * n // b] = "reg"
    rest = [i for i in range(n) if kinds[i] == "tie"]
    for j in range(c):
        kinds[rest[j * len(rest) // c]] = "imp"
    rows = [(f"t{i}", k, f"t{i}" == critical) for i, k in enumerate(kinds)]
    return (
        [{"task_id": t, "passed": k != "imp", "critical": crit} for t, k, crit in rows],
        [{"task_id": t, "passed": k != "reg", "critical": crit} for t, k, crit in rows],
    )


def _seq(arms: tuple[list, list], seed: int, margin: float) -> AblationReport:  # type: ignore[type-arg]
    config = CampaignConfig(
        seed=seed, n_resamples=100, gates=GatePolicy(noninferiority_margin=margin),
        sequential=SequentialPolicy(),
    )  # fmt: skip
    return compare_results(*arms, config=config)


@pytest.fixture(scope="module")
def inferior() -> AblationReport:
    return _seq(_arms(300, 80, 45), 3, 0.01)


@pytest.fixture(scope="module")
def non_inferior() -> AblationReport:
    return _seq(_arms(200, 10, 3), 7, 0.1)


def test_an_inferior_stop_fails_the_regression_gate_by_its_anytime_valid_interval(
    inferior: AblationReport,
) -> None:
    report = inferior
    s = report.sequential
    assert s is not None and s.gate == "inferior" and s.fixed_n_descriptive
    b, c = report.table.regressions, report.table.improvements
    assert _p_worse(b, c) < ALPHA and summary_sentence(report).startswith("Candidate is worse")
    assert _e_value(b, c) < 1 / ALPHA and s.interval.high < 0
    gate = _gate(report, GATE)
    assert gate["status"] == "fail" and "the anytime-valid interval lies below 0" in gate["evidence"]
    assert _gate(report, NI)["status"] == "fail" and report.verdict == "fail"


def test_a_critical_stop_below_minus_margin_fails_non_inferiority(inferior: AblationReport) -> None:
    # the inferior stop above, with its deciding task (a regression) marked critical: the
    # critical rule decides first at the same pair, where the upper bound is below -margin
    assert inferior.sequential is not None
    decider = sequential_order([f"t{i}" for i in range(300)], 3)[inferior.sequential.pairs - 1]
    report = _seq(_arms(300, 80, 45, critical=decider), 3, 0.01)
    s = report.sequential
    assert s is not None and s.gate == "critical_regression" and s.interval.high < -0.01
    ni = _gate(report, NI)
    assert ni["status"] == "fail" and "still crosses" not in ni["evidence"]
    assert _gate(report, GATE)["status"] == "fail"  # its interval lies below 0


def test_a_non_inferior_stop_beside_a_descriptive_worse_is_no_pass_everywhere(
    non_inferior: AblationReport, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plots, "report_plots", lambda report: [])  # the verdict, not the figures
    report = non_inferior
    s = report.sequential
    assert s is not None and s.gate == "non_inferior" and s.fixed_n_descriptive
    b, c = report.table.regressions, report.table.improvements
    p = _p_worse(b, c)
    assert p < ALPHA and s.interval.high >= 0 and report.uplift.ci.high >= 0
    assert summary_sentence(report).startswith("Candidate is worse")
    gate = _gate(report, GATE)
    assert gate["status"] == "inconclusive" and report.verdict == "fail"
    assert f"p = {p:.4g} < alpha 0.05" in gate["evidence"] and "cannot pass beside" in gate["evidence"]
    assert _gate(report, NI)["status"] == "pass"  # the stop's own decision stands
    for fmt in ("terminal", "markdown", "html", "json"):
        flat = " ".join(render(report, fmt).split())
        assert "cannot pass beside" in flat, fmt


def test_the_candidates_summary_does_not_pass_a_non_inferior_stop_beside_a_worse_sentence(
    non_inferior: AblationReport,
) -> None:
    report = non_inferior
    other = compare_results(*_arms(200, 3, 10), config=CampaignConfig(n_resamples=100))
    assert other.verdict == "pass" and other.uplift.ci.high >= 0 and other.summary != "regression"
    summary = json.loads(render_summary([report, other], ["worse", "other"], "json"))
    verdicts = {row["name"]: row["verdict"] for row in summary["rows"]}
    assert verdicts == {"worse": "fail", "other": "pass"}
    assert not [n for n in summary["notes"] if "PASS beside a figure on the harmful side" in n]


def test_a_full_suite_run_with_its_anytime_valid_interval_below_0_fails_the_gate() -> None:
    base = [TaskResult(task_id=f"t{i}", passed=i % 5 != 0) for i in range(60)]
    cand = [TaskResult(task_id=f"t{i}", passed=i % 5 != 1) for i in range(60)]
    report = compare_results(
        base, cand, config=CampaignConfig(n_resamples=100, sequential=SequentialPolicy())
    )
    s = report.sequential
    assert s is not None and not s.fixed_n_descriptive and report.verdict == "pass"
    # the same report with its anytime-valid interval moved below 0 (rare in data: the sequence
    # is wider than the fixed-n interval) and the gate judged again
    below = Interval(low=-0.3, high=-0.01, confidence_level=0.9, method=s.interval.method)
    moved = report.model_copy(update={"sequential": s.model_copy(update={"interval": below})})
    [gate] = SequentialRegressionGate().judge(GatePolicy(), moved, ALPHA)
    assert gate.status == "fail" and "the anytime-valid interval lies below 0" in gate.evidence
