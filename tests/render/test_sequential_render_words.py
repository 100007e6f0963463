"""What the reports say beside a sequential campaign's gates: never a verdict its numbers deny.

- The non-inferiority section led with the fixed-n exact test, "NON-INFERIOR ... p = 0.0225",
  at the end of a sequential suite whose non-inferiority gate, judged by the anytime-valid
  confidence sequence (its interval still across -margin), was inconclusive and the verdict
  FAIL. It now leads with the gate's decision by the sequence and labels the fixed-n test as
  descriptive, not the gate's, in every format.
- JUnit carried nothing on a passing gate, so at a "non-inferior" stop "gate: no significant
  regression" passed silently beside a descriptive "candidate is worse"; the verdict note is now
  in the suite's properties, the regression gate's ``<system-out>`` and the suite's.
- The summary sentence said "decided by non inferior" (the rule's code); it now says the stop in
  the words the sequential section and the gates' evidence use (one table).
- The verdict line "gates not passed: non-inferiority" read as a failure of a gate that could
  not be judged; it now says "failed: ...; inconclusive: ...".

References: the anytime-valid interval against -margin (the confidence sequence's decision),
scipy's one-sided binomial test of the discordant counts (the sentence's exact McNemar test), a
real XML parser (expat) for JUnit, and the report's gate statuses for the verdict line.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import cli
from scipy import stats as sps

from ablation import CampaignConfig, GatePolicy, SequentialPolicy, compare_results
from ablation.render import plots, render
from ablation.render._format import summary_sentence, verdict_line
from ablation.render._sequential import sequential_rows
from ablation.render._summary import summary_data
from ablation.report import AblationReport

ALPHA, MARGIN, NI, GATE = 0.05, 0.1, "non-inferiority", "no significant regression"
AGENTS = (
    "def base(task):\n    return 0 if task['kind'] == 'imp' else 1\n\n\n"
    "def cand(task):\n    return 0 if task['kind'] == 'reg' else 1\n"
)
#: The decision word each status of the sequential non-inferiority gate stands for.
WORD = {"pass": "NON-INFERIOR", "fail": "INFERIOR", "inconclusive": "INCONCLUSIVE"}

#: One worker builds each module fixture (a command-line campaign, a sequential comparison) once.
pytestmark = pytest.mark.xdist_group("sequential-render-words")


def _kinds(n: int, b: int, c: int) -> list[str]:
    """``b`` regressions and ``c`` improvements spread evenly over ``n`` tasks."""
    kinds = ["tie"] * n
    for j in range(b):
        kinds[j * n // b] = "reg"
    rest = [i for i in range(n) if kinds[i] == "tie"]
    for j in range(c):
        kinds[rest[j * len(rest) // c]] = "imp"
    return kinds


def _run(tmp_path: Path, kinds: list[str], fmt: str, seed: int = 7) -> str:
    """``ablation run --sequential --margin 0.1`` of a suite of ``kinds``; its output in ``fmt``."""
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"task_id": f"t{i:03d}", "input_data": {"kind": k},
                                         "expected_output": 1}) + "\n" for i, k in enumerate(kinds)))  # fmt: skip
    (tmp_path / "agents.py").write_text(AGENTS)
    agents = tmp_path / "agents.py"
    proc = cli.run_here([
        "run", str(suite), "--baseline", f"{agents}:base", "--candidate", f"{agents}:cand",
        "--sequential", "--margin", str(MARGIN), "--no-store", "--no-progress", "--seed", str(seed),
        "--concurrency", "1", "--format", fmt,
    ], cwd=tmp_path)  # fmt: skip
    assert proc.returncode in (0, 2), proc.stderr
    return proc.stdout


def _seq(n: int, b: int, c: int, seed: int, margin: float) -> AblationReport:
    kinds = _kinds(n, b, c)
    base = [{"task_id": f"t{i}", "passed": k != "imp"} for i, k in enumerate(kinds)]
    cand = [{"task_id": f"t{i}", "passed": k != "reg"} for i, k in enumerate(kinds)]
    config = CampaignConfig(seed=seed, n_resamples=100, gates=GatePolicy(noninferiority_margin=margin),
                            sequential=SequentialPolicy())  # fmt: skip
    return compare_results(base, cand, config=config)


def _section(text: str) -> str:
    """The non-inferiority section of a terminal, Markdown or HTML report, as flat text."""
    flat = " ".join(html.unescape(re.sub(r"<[a-z/!][^>]*>", " ", text)).replace("│", " ").replace("\\", "").split())
    start = flat.index("Non-inferiority (H0")
    return flat[start:flat.index("Release gates", start)]


@pytest.fixture(scope="module")
def end_of_suite(tmp_path_factory: pytest.TempPathFactory) -> AblationReport:
    """A campaign run through the command line to the end of its suite, 3 regressions and 3
    improvements in 60 tasks: the sequence still crosses -margin, the fixed-n test clears it."""
    return AblationReport.model_validate_json(_run(tmp_path_factory.mktemp("run"), _kinds(60, 3, 3), "json"))


@pytest.fixture(scope="module")
def non_inferior() -> AblationReport:
    """A campaign stopped non-inferior before every task ran, its sentence "candidate is worse"
    (the regression gate inconclusive beside it)."""
    return _seq(200, 10, 3, 7, MARGIN)


def _gate(report: AblationReport, name: str) -> str:
    return next(g.status for g in report.gates if g.name == name)


def test_at_the_end_of_the_suite_the_section_leads_with_the_sequence_not_the_fixed_n_test(
    end_of_suite: AblationReport, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plots, "report_plots", lambda report: [])
    report = end_of_suite
    s, ni = report.sequential, report.noninferiority
    assert s is not None and ni is not None and s.gate == "end_of_suite"
    assert s.interval.low < -MARGIN < s.interval.high  # the sequence has not cleared -margin
    assert _gate(report, NI) == "inconclusive" and report.verdict == "fail"
    assert ni.decision == "non-inferior" and ni.pvalue < ALPHA  # the fixed-n test alone would pass
    for fmt in ("terminal", "markdown", "html"):
        section = _section(render(report, fmt))
        first = re.search(r"NON-INFERIOR|INFERIOR|INCONCLUSIVE", section)
        assert first is not None and first[0] == "INCONCLUSIVE", (fmt, section)
        assert "anytime-valid confidence sequence" in section, (fmt, section)
        fixed = section.index("NON-INFERIOR")
        assert "descriptive, not the gate's" in section[:fixed], (fmt, section)


@pytest.mark.parametrize(("args", "stop"), [((300, 80, 45, 3, 0.01), "inferior"), ((200, 10, 3, 7, MARGIN), "non_inferior")])
def test_the_section_leads_with_the_gates_decision_at_every_stop(
    args: tuple[int, int, int, int, float], stop: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plots, "report_plots", lambda report: [])
    report = _seq(*args)
    s = report.sequential
    assert s is not None and s.gate == stop
    margin = args[-1]
    assert (s.interval.high < -margin) if stop == "inferior" else (s.interval.low > -margin - 1e-12)
    for fmt in ("terminal", "markdown", "html"):
        first = re.search(r"NON-INFERIOR|INFERIOR|INCONCLUSIVE", _section(render(report, fmt)))
        assert first is not None and first[0] == WORD[_gate(report, NI)], fmt


def test_junit_fails_the_regression_gate_of_a_non_inferior_stop_beside_a_worse_sentence(
    non_inferior: AblationReport,
) -> None:
    """The stop's sentence says "candidate is worse" (its descriptive fixed-n test): the
    regression gate cannot pass beside it, and JUnit carries that gate's ``<failure>`` and the
    verdict (it passed silently, then with a note, beside that sentence)."""
    report = non_inferior
    s, t = report.sequential, report.table
    assert s is not None and s.gate == "non_inferior" and s.interval.high >= 0
    p = sps.binomtest(t.regressions, t.regressions + t.improvements, 0.5, alternative="greater").pvalue
    assert p < ALPHA and summary_sentence(report).startswith("Candidate is worse")
    assert _gate(report, GATE) == "inconclusive" and report.verdict == "fail"
    root = ET.fromstring(render(report, "junit"))
    suite = next(root.iter("testsuite"))
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["verdict"] == "fail"
    case = next(c for c in suite.iter("testcase") if c.get("name") == f"gate: {GATE}")
    failure = case.find("failure")
    assert failure is not None
    assert f"p = {p:.4g} < alpha" in " ".join(((failure.get("message") or "") + " " + (failure.text or "")).split())


def test_the_summary_sentence_says_the_stop_in_the_sequential_sections_words(
    non_inferior: AblationReport,
) -> None:
    report = non_inferior
    s = report.sequential
    assert s is not None and s.gate == "non_inferior" and s.fixed_n_descriptive
    stopped = dict(sequential_rows(report))["stopped"]
    assert stopped == "non-inferior"
    sentence = summary_sentence(report)
    assert f"stopped after {s.pairs} pairs {stopped})" in sentence and "non inferior" not in sentence
    notes = " ".join(summary_data([report], ["cand"])["notes"])  # the candidates summary, alike
    assert f"cand: stopped after {s.pairs} pairs {stopped}," in notes and "non inferior" not in notes


def test_the_verdict_line_names_failed_and_inconclusive_gates_apart(
    end_of_suite: AblationReport, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plots, "report_plots", lambda report: [])
    report = end_of_suite
    statuses = {g.name: g.status for g in report.gates}
    assert statuses[NI] == "inconclusive" and "fail" not in statuses.values()
    flipped = report.model_copy(update={"gates": [
        g.model_copy(update={"status": "fail"}) if g.name == GATE else g for g in report.gates
    ]})  # fmt: skip
    for r, failed in ((report, []), (flipped, [GATE])):
        line = verdict_line(r)
        said = ([f"failed: {', '.join(failed)}"] if failed else []) + [f"inconclusive: {NI}"]
        assert f"not passed; {'; '.join(said)})" in line, line
    for fmt in ("terminal", "markdown", "html"):
        text = " ".join(html.unescape(render(report, fmt)).replace("│", " ").split())
        assert f"gates not passed; inconclusive: {NI}" in text.replace("\\", ""), fmt
    props = {p.get("name"): p.get("value") for p in ET.fromstring(render(report, "junit")).iter("property")}
    assert props["verdict line"] == verdict_line(report)
