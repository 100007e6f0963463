"""Every script in ``examples/`` runs as a user would run it, and says what it should.

The scripts start together (each as ``python examples/NAME.py`` from the repository root) and
each test then checks one script's exit code and key output lines.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# one worker starts the scripts once for every test of the module (see pyproject's --dist)
pytestmark = [pytest.mark.xdist_group("examples"), pytest.mark.first]  # the scripts take ~10 s

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TIMEOUT_S = 120

# name -> extra arguments
SCRIPTS: dict[str, list[str]] = {
    "quickstart": [],
    "custom_quality": [],
    "compare_swebench": [],
    "repeated_runs": [],
    "ci_gate": ["--markdown", "{tmp}/ci_gate.md"],
    "plan_suite_size": [],
    "dask_scaleout": [],
    "llm_judges": [],
    "llm_agent": [],
}


@dataclass
class Run:
    """The outcome of one example script."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    tmp: Path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    """Start every example at once, then wait for each."""
    tmp = tmp_path_factory.mktemp("examples")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "COLUMNS": "100"}
    procs: dict[str, tuple[subprocess.Popen[str], float]] = {}
    for name, extra in SCRIPTS.items():
        argv = [sys.executable, f"examples/{name}.py", *(a.format(tmp=tmp) for a in extra)]
        procs[name] = (
            subprocess.Popen(
                argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            ),
            time.monotonic(),
        )
    results: dict[str, Run] = {}
    try:
        for name, (proc, started) in procs.items():
            try:
                out, err = proc.communicate(timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
                err += f"\n[test] killed after {TIMEOUT_S} s"
            results[name] = Run(proc.returncode, out, err, time.monotonic() - started, tmp)
        yield results
    finally:
        for proc, _ in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _ok(run: Run, code: int = 0) -> str:
    assert run.returncode == code, f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    return run.stdout


def test_the_group_keeps_the_scripts_on_one_worker(request: pytest.FixtureRequest) -> None:
    # under --dist loadgroup a grouped test's id ends in @GROUP, which is what sends the whole
    # group to one worker (else each worker would run all nine scripts for its share of tests)
    grouped = getattr(request.config.option, "loadgroup", False)  # set on a loadgroup worker
    assert request.node.nodeid.endswith("@examples") == grouped, request.node.nodeid


def test_every_example_is_tested() -> None:
    assert {p.stem for p in EXAMPLES.glob("*.py")} == set(SCRIPTS)


def test_quickstart(runs: dict[str, Run]) -> None:
    out = _ok(runs["quickstart"])
    assert "Regressions (1)" in out
    assert "regressions: temperature-f-c" in out
    assert "improvements: length-ft-m, mass-oz-g, volume-cup-ml" in out
    assert "exact McNemar p = 0.625; verdict: pass" in out


def test_custom_quality(runs: dict[str, Run]) -> None:
    out = _ok(runs["custom_quality"])
    assert "pass rate: baseline 100%, candidate 100% (0 regressions, 0 improvements)" in out
    # 6 pairs: below MEAN_DIFFERENCE_MIN_N the t interval is withheld and the reason printed;
    # all 6 differences are positive, so the exact signed-rank p is 2 / 2**6
    match = re.search(r"brevity difference: \+([\d.]+) points, no CI \(no interval for the mean "
                      r"difference below 100 pairs \(6 here\)", out)
    assert match and float(match.group(1)) > 0, out
    assert f"Wilcoxon p = {2 / 2**6:.3g} over 6 pairs" in out


def test_compare_swebench(runs: dict[str, Run]) -> None:
    out = _ok(runs["compare_swebench"])
    assert "== gpt-5 -> gpt-5-mini: 500 paired tasks ==" in out
    assert "before pass           271           54   (54 regressions)" in out
    assert "before fail            28          147   (28 improvements)" in out
    assert "exact McNemar p = 0.005436 (b = 54, c = 28" in out
    assert "regressions (54): django__django-11211," in out
    assert "gate [fail] no significant regression" in out
    assert "exact McNemar p = 0.001466 (b = 25, c = 54" in out
    assert "1224 task ids, 0 paired, 1224 excluded and named" in out
    assert "only in the Verified file: 500" in out and "only in the Pro file: 724" in out


def test_repeated_runs(runs: dict[str, Run]) -> None:
    out = _ok(runs["repeated_runs"])
    assert "20 tasks x 3 runs per arm" in out
    assert "stable regressions: account-13" in out
    assert "stable improvements: technical-09" in out
    flaky = re.search(r"flaky tasks \((\d+)\):", out)
    assert flaky and int(flaky.group(1)) > 0
    assert re.search(r"^  \S+: baseline \d/3, candidate \d/3 \(flaky in ", out, re.MULTILINE)


def test_ci_gate_fails_on_the_critical_regression(runs: dict[str, Run]) -> None:
    run = runs["ci_gate"]
    out = _ok(run, code=2)
    assert "CRITICAL regressions: permissions-refund-over-limit-loyal-enterprise" in out
    assert "[FAIL] critical tasks must not regress" in out
    assert "verdict: FAIL -> exit code 2" in out
    markdown = (run.tmp / "ci_gate.md").read_text(encoding="utf-8")
    assert markdown.index("permissions-refund-over-limit-loyal-enterprise") < markdown.index(
        "general-slow-dashboard"
    )


def test_plan_suite_size(runs: dict[str, Run]) -> None:
    out = _ok(runs["plan_suite_size"])
    # Connor (1987) reference value: psi = 0.10, delta = 0.03 -> 870 tasks.
    assert re.search(r"^\s+0\.10\s+1,960\s+870\s+312\s+77$", out, re.MULTILINE), out
    assert "500 tasks: 4.0%" in out
    assert "500 tasks, discordance 0.164, observed uplift -5.2%" in out


def test_dask_scaleout(runs: dict[str, Run]) -> None:
    out = _ok(runs["dask_scaleout"])
    assert re.search(r"80 trials ran on Dask workers in [\d.]+ s .*; 0 errors", out), out
    assert "pass rate 75.0% -> 100.0%; 0 regressions, 10 improvements" in out


def test_llm_judges(runs: dict[str, Run]) -> None:
    out = _ok(runs["llm_judges"])
    assert "judge score: baseline 0.0, candidate 80.0 (difference +80.0, 7 pairs;" in out
    assert "1 candidate answer(s) the judge could not grade, left out" in out
    # exact sign test on 7 decisive verdicts, all for the candidate: 2 * 0.5**7
    assert "candidate wins 7, baseline wins 0, ties 1; sign test p = 0.01562" in out
    assert "candidate shown as A and B" in out


def test_llm_agent(runs: dict[str, Run]) -> None:
    out = _ok(runs["llm_agent"], 2)
    assert "Regressions (6)" in out
    doc = " ".join((EXAMPLES / "llm_agent.py").read_text(encoding="utf-8").split('"""')[1].split())
    said = re.search(r"the candidate's (\w+) regressions", doc)
    shown = re.search(r"Regressions \((\d+)\)", out)
    words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    assert said and shown and words.index(said.group(1)) == int(shown.group(1)), "docstring's count"
    assert "ablation: candidate vs baseline" in out  # each arm by its own name
    for order in ("order-1003", "order-1005", "order-1008", "order-1010", "order-1013", "order-1015"):
        assert order in out
    assert "tool 'lookup_order' calls per task fell" in out
    assert "[price-db]" in out and "USD" in out
    assert "candidate runs: run 0: FAIL, run 1: FAIL, run 2: FAIL" in out
