"""With several candidates, every place that states a claim of improvement uses its Holm-adjusted p.

The reference is the exact binomial tail and Holm's step-down, computed here from the 2x2 counts
of the files the test writes: with one run per task the claim "candidate better" rests on the
one-sided exact McNemar test, ``P(X <= b)`` for ``X ~ Bin(b + c, 1/2)``. Each candidate's
sentence (terminal, Markdown, HTML), its JSON report and the summary row must state the same
claim; a claim of regression and the gates stay unadjusted. Everything runs through the
``ablation`` command line (in this process: ``helpers.cli.run_here``; no process behaviour is
checked here).
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from helpers.cli import run_here

from ablation.render import plots

ALPHA = 0.05
N = 60


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTML pages without their plots: the sentences are checked (the plots' labels are glyph
    paths, not text), and three pages' plots took seconds."""
    monkeypatch.setattr(plots, "report_plots", lambda report: [])


def _ablation(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_here(args, cwd=cwd)


def _write(path: Path, passed: list[bool]) -> None:
    path.write_text("".join(json.dumps({"id": f"t{i}", "passed": p}) + "\n" for i, p in enumerate(passed)))


def _tail(b: int, c: int) -> float:
    """One-sided exact McNemar p of "candidate better": P(X <= b), X ~ Bin(b + c, 1/2)."""
    return sum(math.comb(b + c, k) for k in range(b + 1)) / 2 ** (b + c)


def _holm(ps: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979), written out."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out, running = [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        out[i] = running
    return out


BASE = [i < 30 for i in range(N)]
#: name -> (outcomes, regressions b, improvements c) against BASE
CANDIDATES = {
    "strong.jsonl": ([i < 45 for i in range(N)], 0, 15),
    "weak.jsonl": ([(i < 30 and i != 0) or 30 <= i < 37 for i in range(N)], 1, 7),
    "worse.jsonl": ([i < 20 for i in range(N)], 10, 0),
}


def _setup(tmp_path: Path, names: list[str]) -> dict[str, float]:
    """Write the files; return each candidate's Holm-adjusted p of improvement."""
    _write(tmp_path / "base.jsonl", BASE)
    for name in names:
        _write(tmp_path / name, CANDIDATES[name][0])
    adjusted = _holm([_tail(*CANDIDATES[n][1:]) for n in names])
    return dict(zip(names, adjusted, strict=True))


def test_a_claim_that_does_not_survive_holm_is_withdrawn_everywhere(tmp_path: Path) -> None:
    names = ["weak.jsonl", "strong.jsonl", "worse.jsonl"]
    holm = _setup(tmp_path, names)
    p_weak = _tail(1, 7)
    assert p_weak < ALPHA <= holm["weak.jsonl"]  # the case: significant alone, not after Holm
    assert holm["strong.jsonl"] < ALPHA

    proc = _ablation(tmp_path, "compare", "base.jsonl", *names, "--format", "json")
    assert proc.returncode == 2, proc.stderr  # the worse candidate fails its regression gate
    doc = json.loads(proc.stdout)
    rows = {row["name"]: row for row in doc["summary"]["rows"]}
    reports = {c["name"]: c["report"] for c in doc["candidates"]}
    expected = {"weak.jsonl": "no significant difference", "strong.jsonl": "improvement",
                "worse.jsonl": "regression"}  # fmt: skip
    for name in names:
        assert rows[name]["summary"] == reports[name]["summary"] == expected[name], name
        assert rows[name]["holm_pvalue"] == reports[name]["improvement_holm_pvalue"]
        assert math.isclose(reports[name]["improvement_holm_pvalue"], holm[name], rel_tol=1e-12)
        assert reports[name]["improvement_holm_candidates"] == 3
        assert reports[name]["verdict"] == ("fail" if name == "worse.jsonl" else "pass")

    for fmt in ("terminal", "markdown"):
        proc = _ablation(tmp_path, "compare", "base.jsonl", *names, "--format", fmt)
        text = " ".join(proc.stdout.replace("│", " ").split())  # the terminal's panel wraps lines
        _check_sentences(text.replace("&lt;", "<").replace("&gt;", ">"), holm)
    page = tmp_path / "out.html"
    proc = _ablation(tmp_path, "compare", "base.jsonl", *names, "--format", "html", "--output", str(page))
    assert proc.returncode == 2, proc.stderr
    pages = [page.with_name(f"out.candidate-{i}.html") for i in range(1, 4)]
    text = " ".join(" ".join(p.read_text().split()) for p in pages)
    _check_sentences(text.replace("&lt;", "<").replace("&gt;", ">"), holm)


def _check_sentences(text: str, holm: dict[str, float]) -> None:
    """Each candidate's sentence states its claim after Holm; the regression's stays unadjusted."""
    weak = (
        "Not significant after Holm adjustment across 3 candidates: 1 regression, 7 improvements "
        f"in {N} pairs"
    )
    assert weak in text
    assert f"p = {_p(_tail(1, 7))}, Holm-adjusted {_p(holm['weak.jsonl'])} >= alpha 0.05" in text
    assert "Candidate is better (after Holm adjustment across 3 candidates): 0 regressions, 15" in text
    assert f"Holm-adjusted {_p(holm['strong.jsonl'])} < alpha 0.05" in text
    p_worse = _tail(0, 10)  # P(X >= 10), X ~ Bin(10, 1/2): the mirror image of P(X <= 0)
    assert f"Candidate is worse: 10 regressions, 0 improvements in {N} pairs" in text
    assert f"H1: candidate worse, p = {_p(p_worse)} at alpha 0.05" in text
    assert text.count("Candidate is better") == 1  # never for the weak candidate


def _p(p: float) -> str:
    """A p-value as the reports write it: three significant digits, two below 0.001."""
    return f"{p:.3g}" if p >= 0.001 else f"{p:.2g}"


def test_holm_step_down_keeps_a_claim_bonferroni_would_drop(tmp_path: Path) -> None:
    names = ["weak.jsonl", "strong.jsonl"]
    holm = _setup(tmp_path, names)
    assert holm["weak.jsonl"] < ALPHA <= 2 * _tail(1, 7)  # the step-down's second step
    proc = _ablation(tmp_path, "compare", "base.jsonl", *names, "--format", "json")
    doc = json.loads(proc.stdout)
    assert [c["report"]["summary"] for c in doc["candidates"]] == ["improvement", "improvement"]
    assert [r["summary"] for r in doc["summary"]["rows"]] == ["improvement", "improvement"]


AGENTS = """\
def base(x):
    return x if x < 30 else -1


def weak(x):
    return x if (x < 30 and x != 0) or 30 <= x < 37 else -1
"""

SUITE = f"""\
from ablation import AblationTask

tasks = [AblationTask(task_id=f"t{{i}}", input_data=i, expected_output=i) for i in range({N})]
"""


def test_run_with_several_candidates_states_the_adjusted_claim(tmp_path: Path) -> None:
    (tmp_path / "agents.py").write_text(AGENTS)
    (tmp_path / "suite.py").write_text(SUITE)
    args = ["run", "suite.py", "--baseline", "agents.py:base", "--candidate", "agents.py:weak",
            "--candidate", "agents.py:weak", "--no-store", "--no-progress", "--resamples", "200"]  # fmt: skip
    adjusted = _holm([_tail(1, 7)] * 2)[0]
    assert _tail(1, 7) < ALPHA <= adjusted
    proc = _ablation(tmp_path, *args, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    for c, row in zip(doc["candidates"], doc["summary"]["rows"], strict=True):
        assert c["report"]["summary"] == row["summary"] == "no significant difference"
        assert math.isclose(c["report"]["improvement_holm_pvalue"], adjusted, rel_tol=1e-12)
    proc = _ablation(tmp_path, *args, "--format", "markdown")
    text = proc.stdout.replace("&gt;", ">")
    assert text.count("Not significant after Holm adjustment across 2 candidates") == 2
    assert "Candidate is better" not in text


def test_one_candidate_keeps_its_unadjusted_claim(tmp_path: Path) -> None:
    _setup(tmp_path, ["weak.jsonl"])
    proc = _ablation(tmp_path, "compare", "base.jsonl", "weak.jsonl", "--format", "json")
    report = json.loads(proc.stdout)
    assert report["summary"] == "improvement"
    assert report["improvement_holm_pvalue"] is None


def test_numeric_holm_claims_follow_the_fields_direction(tmp_path: Path) -> None:
    # cost is lower-is-better: a candidate whose cost doubled on every task is no improvement
    base = [1.0 + 0.01 * i for i in range(20)]
    for name, values in (("base.jsonl", base), ("dear.jsonl", [2 * v for v in base]),
                         ("cheap.jsonl", [v / 2 for v in base])):  # fmt: skip
        (tmp_path / name).write_text(
            "".join(json.dumps({"id": f"t{i}", "cost": v}) + "\n" for i, v in enumerate(values))
        )
    proc = _ablation(tmp_path, "compare", "base.jsonl", "dear.jsonl", "cheap.jsonl", "--field",
                     "cost", "--format", "json")  # fmt: skip
    doc = json.loads(proc.stdout)
    rows = {row["name"]: row for row in doc["summary"]["rows"]}
    assert rows["dear.jsonl"]["pvalue"] > 0.5 and rows["dear.jsonl"]["holm_pvalue"] > 0.5
    assert rows["cheap.jsonl"]["pvalue"] < ALPHA and rows["cheap.jsonl"]["holm_pvalue"] < ALPHA
