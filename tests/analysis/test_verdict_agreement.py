"""Every part of a report tells one verdict: random paired results, random gates.

Random paired result lists (verdicts, repeated runs with unequal run counts, latencies from
microseconds to days, costs, metrics, categories, critical tasks, errored and timed-out trials,
tasks missing from one arm) are compared under random gate policies (every kind of gate), and
each report is checked against itself: the verdict, the exit code, the gates, the summary
sentence, the report's own intervals and p-values, and the JSON, Markdown, HTML, JUnit and
terminal renderings.
"""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ablation import CampaignConfig, compare_results
from ablation.analysis.builtin_gates import (
    GATE_CRITICAL,
    GATE_LATENCY,
    GATE_NONINFERIORITY,
    GATE_REGRESSION,
)
from ablation.analysis.gate_data import metric_section
from ablation.analysis.metric_gate import GATE_METRIC
from ablation.analysis.metric_margins import LOWER_IS_BETTER
from ablation.config import GatePolicy, SequentialPolicy
from ablation.render import render
from ablation.render._format import (
    fmt_level,
    fmt_noun,
    fmt_p,
    fmt_pp,
    summary_sentence,
    verdict_line,
)
from ablation.render.html import esc
from ablation.render.markdown import md_cell
from ablation.report import AblationReport

_TESTED = (GATE_REGRESSION, GATE_NONINFERIORITY, GATE_LATENCY)


def _trial(rng: random.Random, tid: str, run: int, arm: str, shape: dict) -> dict:
    status = rng.choices(["completed", "error", "timeout"], [1.0, shape["errors"], shape["timeouts"]])[0]
    rate = shape["pass_b"] if arm == "baseline" else shape["pass_c"]
    row: dict = {"task_id": tid, "run": run, "status": status}
    row["passed"] = status == "completed" and rng.random() < rate
    if status == "error":
        row["error_type"] = rng.choice(["RuntimeError", "ValueError"])
        row["error_message"] = "boom"
    if rng.random() < shape["latency"]:
        scale = shape["latency_scale"] * (shape["slowdown"] if arm == "candidate" else 1.0)
        row["latency_s"] = min(scale * rng.lognormvariate(0, shape["spread"]), 1e12)
    if rng.random() < shape["cost"]:
        row["cost"] = rng.random() * (1.3 if arm == "candidate" else 1.0)
    if rng.random() < shape["metric"] and (arm == "baseline" or not shape["metric_one_arm"]):
        row["metrics"] = {"steps": float(rng.randrange(10) + (shape["steps_shift"] if arm == "candidate" else 0))}
    if shape["categories"]:
        row["category"] = f"c{int(tid[1:]) % shape['categories']}"
    return row


def _results(seed: int, shape: dict) -> tuple[list[dict], list[dict], list[str]]:
    if shape["clean"]:  # every value in every trial: the margins' tests can run, and pass
        shape = {**shape, "missing": 0.0, "errors": 0.0, "timeouts": 0.0, "uneven": 0.0,
                 "latency": 1.0, "cost": 1.0, "metric": 1.0, "metric_one_arm": False}  # fmt: skip
    rng = random.Random(seed)
    base: list[dict] = []
    cand: list[dict] = []
    ids = [f"t{i}" for i in range(shape["tasks"])]
    critical = {t for t in ids if rng.random() < shape["critical"]}
    for tid in ids:
        runs = rng.randint(1, shape["runs"])
        passed: dict[int, bool] = {}
        for arm, rows in (("baseline", base), ("candidate", cand)):
            if rng.random() < shape["missing"]:
                continue
            k = runs if rng.random() > shape["uneven"] else rng.randint(1, shape["runs"])
            for run in range(k):
                row = _trial(rng, tid, run, arm, shape)
                row["critical"] = tid in critical
                if shape["twin"] is not None and arm == "candidate" and run in passed:
                    # the baseline's verdict, now and then lost: sparse regressions, no improvement
                    row["passed"] = row["status"] == "completed" and passed[run] and rng.random() >= shape["twin"]
                passed.setdefault(run, row["passed"])
                rows.append(row)
    return base, cand, ids


_SHAPE = st.fixed_dictionaries(
    {
        "tasks": st.one_of(st.integers(1, 25), st.integers(100, 130)),
        "runs": st.sampled_from([1, 1, 2, 3]),
        "uneven": st.sampled_from([0.0, 0.0, 0.2]),
        "missing": st.sampled_from([0.0, 0.0, 0.0, 0.05, 0.5]),
        "errors": st.sampled_from([0.0, 0.0, 0.0, 0.1, 100.0]),
        "timeouts": st.sampled_from([0.0, 0.0, 0.0, 0.1]),
        "pass_b": st.sampled_from([0.0, 0.3, 0.7, 1.0]),
        "pass_c": st.sampled_from([0.0, 0.3, 0.7, 1.0]),
        "latency": st.sampled_from([0.0, 0.9, 1.0]),
        "latency_scale": st.sampled_from([1e-6, 1.0, 1e5]),
        "spread": st.sampled_from([0.0, 0.3, 2.0]),
        "slowdown": st.sampled_from([0.5, 1.0, 1.3, 3.0]),
        "cost": st.sampled_from([0.0, 0.8, 1.0]),
        "metric": st.sampled_from([0.0, 0.9, 1.0]),
        "metric_one_arm": st.booleans(),
        "steps_shift": st.sampled_from([-2, 0, 0, 1]),
        "categories": st.sampled_from([0, 2, 5]),
        "critical": st.sampled_from([0.0, 0.1, 1.0]),
        "clean": st.booleans(),
        "twin": st.sampled_from([None, None, 0.1, 0.25]),
    }
)

_POLICY = st.builds(
    GatePolicy,
    critical_must_not_regress=st.booleans(),
    noninferiority_margin=st.one_of(st.none(), st.sampled_from([0.02, 0.1, 0.3])),
    no_significant_regression=st.booleans(),
    max_latency_ratio=st.one_of(st.none(), st.sampled_from([0.9, 1.0, 1.2, 2.0])),
    require_complete=st.booleans(),
    min_completed=st.sampled_from([0.0, 0.5, 0.95, 1.0]),
    metric_margins=st.sampled_from([{}, {"steps": 1.0}, {"cost": 0.1}, {"latency_s": 0.5, "steps": 0.5}]),
)


def _harmful(ci, margin: float, lower_is_better: bool) -> bool:
    """Whether the interval of candidate - baseline lies wholly past the margin on the bad side."""
    return ci.low > margin if lower_is_better else ci.high < -margin


def _check_gates(report: AblationReport, policy: GatePolicy, alpha: float) -> None:
    by_name = {g.name: g for g in report.gates}
    assert len(by_name) == len(report.gates), "a gate listed twice"
    holds = all(g.status in ("pass", "off") for g in report.gates)
    assert report.verdict == ("pass" if holds else "fail")
    assert report.exit_code == (0 if holds else 2)
    for g in report.gates:
        if g.status == "pass":
            assert "could not run" not in g.evidence, g
        if report.n_paired == 0 and (g.name in _TESTED or g.name.startswith("non-inferiority of")):
            assert g.status in ("inconclusive", "off"), g
    crit = by_name[GATE_CRITICAL]
    if policy.critical_must_not_regress:
        want = "fail" if report.critical_regressions else "inconclusive" if report.critical_excluded else "pass"
        assert crit.status == want, crit
    else:
        assert crit.status == "off"
    test = report.uplift_test
    reg = by_name.get(GATE_REGRESSION)
    seq = report.sequential
    if report.n_paired:
        assert test is not None and reg is not None
        assert (report.summary == "regression") == (test.pvalue_worse < alpha)
        assert (report.summary == "improvement") == (test.pvalue_better < alpha)
    if report.n_paired and seq is None:
        assert reg.pvalue == test.pvalue_worse
        if policy.no_significant_regression:
            assert reg.status == ("fail" if test.pvalue_worse < alpha else "pass"), reg
        else:
            assert reg.status == "off"
    if seq is not None and reg is not None and reg.status == "pass":
        assert seq.interval.high >= 0, reg
        if not seq.fixed_n_descriptive:
            assert report.summary != "regression", reg
        if seq.fixed_n_descriptive:
            assert seq.gate == "non_inferior" and report.summary != "regression", reg
            assert all(iv.high >= 0 for iv in report.uplift.intervals), reg
    if reg is not None and reg.status == "pass" and (seq is None or not seq.fixed_n_descriptive):
        below = [iv for iv in report.uplift.intervals if iv.high < 0]
        if below:
            assert report.verdict_note is not None and "below 0" in report.verdict_note
    ni_gate = by_name.get(GATE_NONINFERIORITY)
    margin = policy.noninferiority_margin
    if margin is not None and report.n_paired and seq is None:
        assert ni_gate is not None and report.noninferiority is not None
        ni = report.noninferiority
        want = {"non-inferior": "pass", "regression": "fail", "inconclusive": "inconclusive"}[ni.decision]
        assert ni_gate.status == want, ni_gate
        if ni_gate.status == "pass":
            assert ni.pvalue <= alpha
            assert not _harmful(ni.ci, margin, False), ni_gate
        if ni_gate.status == "fail":
            assert ni.ci.high < 0
    if margin is not None and seq is not None and ni_gate is not None and ni_gate.status == "pass":
        assert seq.interval.low > -margin, ni_gate
    if ni_gate is not None and ni_gate.status == "pass":
        assert margin is not None and not _harmful(report.uplift.ci, margin, False), (ni_gate, report.uplift.ci)
    for metric, m in policy.metric_margins.items():
        gate = by_name[GATE_METRIC.format(metric=metric)]
        ni = report.metric_noninferiority.get(metric)
        if gate.status == "pass":
            assert ni is not None and ni.decision == "non-inferior" and ni.pvalue <= alpha
            lower = metric in LOWER_IS_BETTER
            # the 1 - 2 alpha t interval is the test's dual: a pass lies strictly inside the margin
            assert (ni.ci.high < m) if lower else (ni.ci.low > -m), (gate, ni.ci)
            section = metric_section(report, metric)
            assert section is not None and section.n_left_out == 0, (gate, section)
            if section.ci is not None:
                assert not _harmful(section.ci, m, lower), (gate, section.ci)
        if ni is not None:
            want = {"non-inferior": "pass", "regression": "fail", "inconclusive": "inconclusive"}[ni.decision]
            assert gate.status == want, (gate, ni)
        elif report.n_paired:
            assert gate.status == "inconclusive", gate
    lat = by_name.get(GATE_LATENCY)
    if lat is not None and lat.status == "pass":
        ratio = report.latency.ratio_ci if report.latency is not None else None
        assert ratio is not None
        if ratio.low > (policy.max_latency_ratio or 0):
            assert report.verdict_note is not None and "latency ratio" in report.verdict_note


def _check_sentence(report: AblationReport) -> None:
    sentence = summary_sentence(report)
    test = report.uplift_test
    if report.n_paired == 0:
        assert report.summary == "no paired tasks"
        return
    assert test is not None
    t = report.table
    assert t.both_pass + t.regressions + t.improvements + t.both_fail == report.n_paired
    assert (len(report.regressions), len(report.improvements)) == (t.regressions, t.improvements)
    ci = report.uplift.ci
    assert f"{fmt_level(ci.confidence_level)} CI {fmt_pp(ci.low)} to {fmt_pp(ci.high)}" in sentence
    assert f"{fmt_noun(t.regressions, 'regression')}" in sentence
    assert set(report.errored_regressions) <= set(report.regressions)
    if report.summary == "regression":
        assert sentence.startswith("Candidate is worse")
        assert f"{test.method}, H1: candidate worse, p = {fmt_p(test.pvalue_worse)}" in sentence
    if report.summary == "improvement":
        assert sentence.startswith("Candidate is better")
        assert f"{test.method}, H1: candidate better, p = {fmt_p(test.pvalue_better)}" in sentence
    reg = next((g for g in report.gates if g.name == GATE_REGRESSION), None)
    if reg is not None and reg.pvalue is not None and "H1: candidate worse" in sentence:
        assert f"p = {fmt_p(reg.pvalue)}" in sentence


def _check_renderings(report: AblationReport, html: bool) -> None:
    doc = json.loads(render(report, "json"))
    assert doc["verdict"] == report.verdict
    assert [(g["name"], g["status"]) for g in doc["gates"]] == [(g.name, g.status) for g in report.gates]
    assert doc["summary"] == report.summary
    back = AblationReport.model_validate_json(report.model_dump_json())
    assert back.verdict == report.verdict and back.gates == report.gates
    word = f"Verdict: {report.verdict.upper()}"
    line = verdict_line(report)
    assert line.startswith(word)
    markdown = render(report, "markdown")
    assert word in markdown and word in render(report, "terminal")
    page = render(report, "html") if html else ""  # with its plots: ~0.5 s a page
    assert not html or f'class="verdict {report.verdict}"' in page
    for g in report.gates:  # every gate's row shows its own status
        assert f"| {md_cell(g.name)} | {g.status.upper()} |" in markdown, g.name
        row = f'<td>{esc(g.name)}</td><td class="status-{g.status}">{g.status.upper()}</td>'
        assert not html or row in page, g.name
    root = ET.fromstring(render(report, "junit"))
    gates_suite = next(s for s in root.iter("testsuite") if s.get("name") == "ablation")
    failures = int(gates_suite.get("failures") or 0)
    assert (failures > 0) == (report.verdict == "fail"), (failures, line)
    props = {p.get("name"): p.get("value") for p in gates_suite.iter("property")}
    assert props.get("verdict") == report.verdict, props


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=_SHAPE,
    policy=_POLICY,
    seed=st.integers(0, 2**16),
    page=st.integers(0, 19),  # one example in 20 renders the HTML page too
    alpha=st.sampled_from([0.05, 0.1]),
    level=st.sampled_from([0.8, 0.9, 0.95]),
    on_error=st.sampled_from(["fail", "exclude"]),
    sequential=st.one_of(
        st.none(), st.none(),
        st.builds(SequentialPolicy, futility_after=st.sampled_from([None, 5, 40]), suite_claim=st.booleans()),
    ),
)
def test_every_part_of_a_report_tells_one_verdict(shape, policy, seed, page, alpha, level, on_error, sequential) -> None:
    base, cand, ids = _results(seed, shape)
    config = CampaignConfig(
        n_resamples=200, alpha=alpha, confidence_level=level, on_error=on_error, gates=policy,
        sequential=sequential,
    )
    if not (base and cand):  # an arm with no result at all is bad input, never a verdict
        with pytest.raises(ValueError, match="empty"):
            compare_results(base, cand, expected_ids=ids or None, config=config)
        return
    report = compare_results(base, cand, expected_ids=ids, config=config)
    _check_gates(report, policy, alpha)
    _check_sentence(report)
    _check_renderings(report, html=page == 7)


@pytest.mark.parametrize("margin", [None, 0.1])
def test_a_sequential_replay_with_no_pair_judges_no_gate_of_the_pairs(margin) -> None:
    # Every candidate trial errored and on_error="exclude" pairs none of the 3 tasks: the
    # sequential monitor saw 0 pairs and stopped at the end of the suite. Its regression gate said
    # "pass" (the e-process never reached 1/alpha after 0 pairs, the fixed-n p = 1), a check that
    # could not run shown as a pass; the fixed-n gate is inconclusive on the same results.
    base = [{"task_id": f"t{i}", "passed": True} for i in range(3)]
    cand = [{"task_id": f"t{i}", "status": "error", "error_type": "X"} for i in range(3)]
    for sequential in (None, SequentialPolicy()):
        config = CampaignConfig(
            n_resamples=200, on_error="exclude", sequential=sequential,
            gates=GatePolicy(noninferiority_margin=margin),
        )  # fmt: skip
        report = compare_results(base, cand, config=config)
        assert report.n_paired == 0 and (report.sequential is None) == (sequential is None)
        judged = {g.name: g for g in report.gates}
        names = [GATE_REGRESSION] + ([GATE_NONINFERIORITY] if margin else [])
        for name in names:
            assert judged[name].status == "inconclusive", judged[name]
            assert "could not run, because no task was paired" in judged[name].evidence
        root = ET.fromstring(render(report, "junit"))
        cases = {c.get("name"): c for c in root.iter("testcase")}
        for name in names:
            assert cases[f"gate: {name}"].find("failure") is not None
