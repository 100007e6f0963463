"""A gate whose test could not run is INCONCLUSIVE, saying exactly why; a gate turned off names the
``GatePolicy`` field that turned it off.

The latency gate on results without latencies, and a metric gate on a metric with fewer than two
pairs of values, once failed (exit 2) with a guess for a reason ("no pair completed in both
arms?"). Here each way a test can lack data is built from real trials, through the library
(:func:`ablation.compare_results`) and through the ``ablation`` command (``compare`` and ``run``,
with and without ``--sequential``/``--sequential-replay`` and repeated runs): the gate is
``inconclusive``, its evidence names the cause, the verdict is FAIL with exit code 2 (the rule of
:func:`ablation.analysis.gate_status.verdict_of`), and the JSON, Markdown, JUnit and terminal
outputs say the same. Every trial timing out, which once passed the latency gate on a ratio of
two time limits (1x), is inconclusive too.

A default gate turned off once named ``critical_must_not_regress = false`` as if it were a
``[tool.ablation]`` key (the key is ``critical_gate``); the evidence now names the configuration
field, and the field is the one the option table says the flag or key feeds.
"""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import REPO, run_here

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results
from ablation.analysis.gates import GATE_CRITICAL, GATE_LATENCY, GATE_REGRESSION, exit_code_for
from ablation.analysis.numeric import compare_numeric
from ablation.cli.option_table import option_of
from ablation.config import SequentialPolicy
from ablation.render import render
from ablation.report import AblationReport, GateResult

IDS = [f"t{i}" for i in range(6)]
FAST = {"n_resamples": 200, "seed": 1}


def _arm(arm: str, runs: int = 1, ids: list[str] = IDS, **fields: Any) -> list[TaskResult]:
    """One trial per task and run; ``fields`` are set on every trial, a callable field per task."""
    out = []
    for k, task in enumerate(ids):
        for run in range(runs):
            values = {name: (v(k) if callable(v) else v) for name, v in fields.items()}
            out.append(TaskResult(task_id=task, arm=arm, run=run, passed=k % 2 == 0, **values))
    return out


def _gate(report: AblationReport, name: str) -> GateResult:
    return next(g for g in report.gates if g.name == name)


def _inconclusive(report: AblationReport, name: str, *why: str) -> GateResult:
    """The gate ``name`` of ``report`` is inconclusive for the reasons ``why``; the verdict fails."""
    gate = _gate(report, name)
    assert gate.status == "inconclusive", gate
    assert gate.pvalue is None and "could not run, because" in gate.evidence
    for words in why:
        assert words in gate.evidence, (words, gate.evidence)
    assert "?" not in gate.evidence  # a reason, not a guess
    assert report.verdict == "fail" and exit_code_for(report) == report.exit_code == 2
    return gate


# --------------------------------------------------------------------------- the library
@pytest.mark.parametrize("runs", [1, 3])
@pytest.mark.parametrize("sequential", [False, True])
def test_results_without_latency_make_the_latency_gate_inconclusive(runs: int, sequential: bool) -> None:
    config = CampaignConfig(
        gates=GatePolicy(max_latency_ratio=1.2),
        sequential=SequentialPolicy() if sequential else None, **FAST,
    )  # fmt: skip
    report = compare_results(_arm("baseline", runs), _arm("candidate", runs), config=config)
    assert report.latency is None and (report.sequential is not None) == sequential
    _inconclusive(report, GATE_LATENCY, "the results carry no latency at all")
    # the other gates judged their data: only the untested one keeps the verdict from passing
    assert {g.status for g in report.gates if g.name != GATE_LATENCY} <= {"pass", "off"}


@pytest.mark.parametrize(
    ("metric", "why"),
    [
        ("cost", "the results carry no cost at all: no trial of either arm records one"),
        ("latency_s", "the results carry no latency at all"),
        ("latency", "the results carry no latency at all"),
        # the report compares the baseline's metrics: that the baseline has none is what it knows
        ("tokens", "the baseline's results carry no tokens"),
    ],
)
def test_a_metric_absent_from_the_results_is_inconclusive(metric: str, why: str) -> None:
    config = CampaignConfig(gates=GatePolicy(metric_margins={metric: 0.1}), **FAST)
    report = compare_results(_arm("baseline"), _arm("candidate"), config=config)
    _inconclusive(report, f"non-inferiority of {metric}", why, "against margin 0.1")


def test_each_way_of_too_few_pairs_is_named() -> None:
    base = _arm("baseline", cost=1.0, latency_s=lambda k: 1.0 + k)
    # the candidate records no cost and no latency at all
    report = compare_results(base, _arm("candidate"), config=CampaignConfig(
        gates=GatePolicy(max_latency_ratio=1.2, metric_margins={"cost": 0.1}), **FAST))  # fmt: skip
    _inconclusive(report, "non-inferiority of cost", "no pair has cost in both arms",
                  "the candidate's results carry none")  # fmt: skip
    _inconclusive(report, GATE_LATENCY, "no pair has latency in both arms",
                  "no latency in the candidate's results")  # fmt: skip
    # both arms record values, on different tasks
    odd = _arm("candidate", cost=lambda k: 1.0 if k % 2 else None,
               latency_s=lambda k: 2.0 if k % 2 else None)  # fmt: skip
    even = _arm("baseline", cost=lambda k: None if k % 2 else 1.0,
                latency_s=lambda k: None if k % 2 else 1.0)  # fmt: skip
    report = compare_results(even, odd, config=CampaignConfig(
        gates=GatePolicy(max_latency_ratio=1.2, metric_margins={"cost": 0.1}), **FAST))  # fmt: skip
    _inconclusive(report, "non-inferiority of cost", "no pair has cost in both arms",
                  f"{len(IDS)} pair(s) left out")  # fmt: skip
    _inconclusive(report, GATE_LATENCY, "no pair has latency in both arms")
    # a single pair: a test needs two
    one = _arm("candidate", cost=lambda k: 1.0 if k == 0 else None,
               latency_s=lambda k: 1.0 if k == 0 else None)  # fmt: skip
    report = compare_results(even, one, config=CampaignConfig(
        gates=GatePolicy(max_latency_ratio=1.2, metric_margins={"cost": 0.1}), **FAST))  # fmt: skip
    _inconclusive(report, "non-inferiority of cost", "only 1 pair has cost in both arms")
    _inconclusive(report, GATE_LATENCY, "only 1 pair has latency in both arms")


@pytest.mark.parametrize("timeout_s", [2.0, None])
def test_every_trial_timing_out_leaves_the_latency_gate_inconclusive(timeout_s: float | None) -> None:
    """Both arms at the time limit on every task: a ratio of two lower bounds (it passed as 1x)."""
    config = CampaignConfig(
        timeout_s=timeout_s, **FAST,
        gates=GatePolicy(max_latency_ratio=1.2, metric_margins={"latency_s": 0.5}),
    )  # fmt: skip
    report = compare_results(
        _arm("baseline", status="timeout"), _arm("candidate", status="timeout"), config=config
    )
    n = len(IDS)
    why = f"every trial of both arms timed out ({n} baseline, {n} candidate)"
    _inconclusive(report, GATE_LATENCY, why, "lower bound")
    _inconclusive(report, "non-inferiority of latency_s", "measured latency", why)


def test_no_completed_trial_names_the_errors() -> None:
    config = CampaignConfig(gates=GatePolicy(metric_margins={"cost": 0.1}), **FAST)
    report = compare_results(
        _arm("baseline", status="error"), _arm("candidate", status="timeout"), config=config
    )
    n = len(IDS)
    _inconclusive(
        report, "non-inferiority of cost",
        f"no trial of either arm completed (baseline: {n} error(s) in {n} trial(s); candidate: "
        f"{n} timeout(s) in {n} trial(s))",
    )  # fmt: skip


def test_a_report_with_values_still_tests_them() -> None:
    """The gates test what is there: values in both arms (of 100 tasks, the pairs a margin on a
    mean difference needs) give a p-value and a pass or a fail."""
    ids = [f"t{i}" for i in range(100)]
    base = _arm("baseline", ids=ids, cost=lambda k: 1.0 + k / 10, latency_s=lambda k: 1.0 + k / 10)
    cand = _arm("candidate", ids=ids, cost=lambda k: 1.0 + k / 9, latency_s=lambda k: 1.0 + k / 9)
    config = CampaignConfig(
        gates=GatePolicy(max_latency_ratio=1.2, metric_margins={"cost": 0.5}), **FAST
    )
    report = compare_results(base, cand, config=config)
    for name in (GATE_LATENCY, "non-inferiority of cost"):
        gate = _gate(report, name)
        assert gate.status in ("pass", "fail") and gate.pvalue is not None


def test_the_verdict_rule_is_one_function() -> None:
    from ablation.analysis.gate_status import verdict_of

    config = CampaignConfig(gates=GatePolicy(max_latency_ratio=1.2), **FAST)
    report = compare_results(_arm("baseline"), _arm("candidate"), config=config)
    assert report.verdict == verdict_of(report.gates) == "fail"
    for status in ("pass", "off", "fail", "inconclusive"):
        gates = [GateResult(name="g", status=status, evidence="e")]  # type: ignore[arg-type]
        assert verdict_of(gates) == ("pass" if status in ("pass", "off") else "fail")


def test_every_format_says_the_same_of_an_untested_gate() -> None:
    config = CampaignConfig(gates=GatePolicy(max_latency_ratio=1.2), **FAST)
    report = compare_results(_arm("baseline"), _arm("candidate"), config=config)
    gate = _gate(report, GATE_LATENCY)
    doc = json.loads(render(report, "json"))
    assert next(g for g in doc["gates"] if g["name"] == GATE_LATENCY) == json.loads(gate.model_dump_json())
    assert doc["verdict"] == "fail"
    markdown = render(report, "markdown")
    assert f"| {GATE_LATENCY} | INCONCLUSIVE | {gate.evidence} |" in markdown.replace("&gt;", ">")
    suite = ET.fromstring(render(report, "junit"))
    case = next(c for c in suite.iter("testcase") if c.get("name") == f"gate: {GATE_LATENCY}")
    failure = case.find("failure")
    assert failure is not None and gate.evidence in (failure.get("message") or "")
    assert suite.get("failures") == "1"


# --------------------------------------------------------------------------- gates turned off
_OFF_POLICY = GatePolicy(critical_must_not_regress=False, no_significant_regression=False,
                         require_complete=False)  # fmt: skip
_OFF_FIELDS = {GATE_CRITICAL: "critical_must_not_regress", GATE_REGRESSION: "no_significant_regression",
               "complete comparison": "require_complete"}  # fmt: skip


def test_a_gate_turned_off_names_the_policy_field_that_did_it() -> None:
    from ablation.analysis.gate_status import verdict_of

    report = compare_results(_arm("baseline"), _arm("candidate"), config=CampaignConfig(gates=_OFF_POLICY, **FAST))
    off = {g.name: g.evidence for g in report.gates if g.status == "off"}
    assert set(off) == set(_OFF_FIELDS)
    for name, field in _OFF_FIELDS.items():
        assert getattr(_OFF_POLICY, field) is False
        assert off[name].startswith(f"turned off (GatePolicy.{field} = False); "), off[name]
    numeric = compare_numeric(dict.fromkeys(IDS, 0.5), dict.fromkeys(IDS, 0.4), field="score",
                              policy=_OFF_POLICY)  # fmt: skip
    assert numeric.verdict == verdict_of(numeric.gates) == "pass"
    for gate in numeric.gates:
        assert gate.status == "off"
        assert gate.evidence.startswith(f"turned off (GatePolicy.{_OFF_FIELDS[gate.name]} = False); ")


# --------------------------------------------------------------------------- the command line
def _write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.fixture
def plain(tmp_path: Path) -> str:
    """Three verdicts with no latency, cost or tokens: the user's file."""
    return _write(tmp_path / "a.jsonl", [{"id": "t1", "passed": True}, {"id": "t2", "passed": False},
                                         {"id": "t3", "passed": True}])  # fmt: skip


def _compare(*args: str, cwd: Path = REPO) -> tuple[int, dict[str, Any]]:
    done = run_here(["compare", *args, "--format", "json"], cwd=cwd)
    assert done.returncode in (0, 2), done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize(
    ("flags", "name", "why"),
    [
        (["--max-latency-ratio", "1.2"], GATE_LATENCY, "the results carry no latency at all"),
        (["--max-latency-ratio", "1.2", "--sequential-replay"], GATE_LATENCY, "carry no latency at all"),
        (["--metric-margin", "cost=0.1"], "non-inferiority of cost", "the results carry no cost at all"),
        (["--metric-margin", "latency_s=0.1"], "non-inferiority of latency_s", "carry no latency at all"),
        (["--metric-margin", "tokens=1"], "non-inferiority of tokens", "carry no tokens"),
    ],
)
def test_compare_reports_an_untested_gate_as_inconclusive(plain: str, flags: list[str], name: str, why: str) -> None:
    code, doc = _compare(plain, plain, *flags)
    gate = next(g for g in doc["gates"] if g["name"] == name)
    assert code == 2 and doc["verdict"] == "fail"
    assert gate["status"] == "inconclusive" and why in gate["evidence"] and gate["pvalue"] is None
    markdown = run_here(["compare", plain, plain, *flags, "--format", "markdown"])
    shown = name.replace("_", "\\_")  # Markdown escapes the underscore
    assert markdown.returncode == 2 and f"| {shown} | INCONCLUSIVE |" in markdown.stdout
    terminal = run_here(["compare", plain, plain, *flags])
    assert terminal.returncode == 2 and "Verdict: FAIL" in terminal.stdout and "INCONCLUSIVE" in terminal.stdout


def test_compare_with_repeated_runs(tmp_path: Path) -> None:
    rows = [{"id": f"t{i}", "run": r, "passed": (i + r) % 2 == 0} for i in range(5) for r in range(3)]
    path = _write(tmp_path / "runs.jsonl", rows)
    code, doc = _compare(path, path, "--run-field", "run", "--max-latency-ratio", "1.2")
    gate = next(g for g in doc["gates"] if g["name"] == GATE_LATENCY)
    assert code == 2 and doc["runs"] == 3 and gate["status"] == "inconclusive"
    assert "carry no latency at all" in gate["evidence"]


def test_run_with_a_cost_margin_and_no_cost_is_inconclusive(tmp_path: Path) -> None:
    done = run_here([
        "run", str(REPO / "tasks/arithmetic.py"), "--baseline", f"{REPO}/agents/arithmetic.py:baseline",
        "--candidate", f"{REPO}/agents/arithmetic.py:candidate", "--metric-margin", "cost=0.1",
        "--no-store", "--no-progress", "--format", "json", "--resamples", "200",
    ], cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr
    doc = json.loads(done.stdout)
    gate = next(g for g in doc["gates"] if g["name"] == "non-inferiority of cost")
    assert gate["status"] == "inconclusive" and "the results carry no cost at all" in gate["evidence"]
    assert [g["status"] for g in doc["gates"] if g is not gate] == ["pass"] * (len(doc["gates"]) - 1)


_SLOW = textwrap.dedent("""\
    import time


    def slow(x):
        time.sleep(1.0)
        return x
    """)
_SUITE = textwrap.dedent("""\
    from ablation import AblationTask

    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(3)]
    """)


@pytest.mark.parametrize("sequential", [[], ["--sequential"]])
def test_run_where_every_trial_times_out(tmp_path: Path, sequential: list[str]) -> None:
    (tmp_path / "agents.py").write_text(_SLOW, encoding="utf-8")
    (tmp_path / "suite.py").write_text(_SUITE, encoding="utf-8")
    done = run_here([
        "run", "suite.py", "--baseline", "agents.py:slow", "--candidate", "agents.py:slow",
        "--timeout", "0.1", "--max-latency-ratio", "1.2", "--no-store", "--no-progress",
        "--format", "json", "--resamples", "200", *sequential,
    ], cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr
    doc = json.loads(done.stdout)
    gate = next(g for g in doc["gates"] if g["name"] == GATE_LATENCY)
    assert gate["status"] == "inconclusive" and "every trial of both arms timed out" in gate["evidence"]


@pytest.mark.parametrize(
    ("option", "flags", "pyproject"),
    [
        ("critical_gate", ["--no-critical-gate"], None),
        ("critical_gate", [], "critical_gate = false"),
        ("allow_incomplete", ["--allow-incomplete"], None),
        ("require_complete", [], "require_complete = false"),
        ("allow_significant_regression", ["--allow-significant-regression"], None),
        ("no_significant_regression", [], "no_significant_regression = false"),
    ],
)
def test_the_off_evidence_names_the_field_the_option_feeds(
    plain: str, tmp_path: Path, option: str, flags: list[str], pyproject: str | None
) -> None:
    """The option table says which configuration field each flag or key feeds; the OFF gate
    names that field, and no ``[tool.ablation]`` key that does not exist."""
    work = tmp_path / "work"
    work.mkdir()
    if pyproject is not None:
        (work / "pyproject.toml").write_text(f"[tool.ablation]\n{pyproject}\n", encoding="utf-8")
    code, doc = _compare(plain, plain, *flags, cwd=work)
    section, field = str(option_of(option).config).split(".")
    assert section == "gates" and code == 0
    off = [g for g in doc["gates"] if g["status"] == "off"]
    assert len(off) == 1, doc["gates"]
    assert off[0]["evidence"].startswith(f"turned off (GatePolicy.{field} = False); ")
    assert getattr(GatePolicy(**{field: False}), field) is False
