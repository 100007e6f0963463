"""``ablation compare`` with random gate flags: the exit code, the JSON, the JUnit and the terminal
text give one verdict, and each flag's gate is there as the flag asks.

Random result files (verdicts, repeated runs, latencies, costs, critical tasks, ids on one side
only) are compared with random gate options (``--margin``, ``--metric-margin``,
``--max-latency-ratio``, ``--no-critical-gate``, ``--allow-significant-regression``,
``--allow-incomplete``, ``--min-completed``, ``--alpha``, ``--confidence``, ``--sequential-replay``),
each command run in this process.
"""

from __future__ import annotations

import json
import random
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from helpers.analysis_shared import run_here
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _files(folder: Path, seed: int, tasks: int, runs: int, gap: float, missing: float) -> list[str]:
    rng = random.Random(seed)
    rows: dict[str, list[dict]] = {"before": [], "after": []}
    for i in range(tasks):
        critical = rng.random() < 0.1
        for name, rate in (("before", 0.6), ("after", 0.6 - gap)):
            if rng.random() < missing:
                continue
            for run in range(runs):
                rows[name].append({
                    "id": f"t{i}", "run": run, "passed": rng.random() < rate, "critical": critical,
                    "latency_s": rng.lognormvariate(0, 0.5) * (1.2 if name == "after" else 1.0),
                    "cost": round(rng.random(), 3),
                })  # fmt: skip
    paths = []
    for name, found in rows.items():
        path = folder / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in found) or json.dumps({"id": "x", "passed": True}) + "\n")
        paths.append(str(path))
    return paths


_SWITCHES = ["--no-critical-gate", "--allow-significant-regression", "--allow-incomplete", "--sequential-replay"]
_FLAGS = st.fixed_dictionaries(
    {
        "--margin": st.sampled_from([None, "0.05", "0.2"]),
        "--metric-margin": st.sampled_from([None, "cost=0.1", "latency_s=0.5"]),
        "--max-latency-ratio": st.sampled_from([None, "1.1", "2"]),
        "--min-completed": st.sampled_from([None, "0.5", "1"]),
        "--alpha": st.sampled_from([None, "0.1"]),
        "--confidence": st.sampled_from([None, "0.8", "0.99"]),
        "switches": st.sets(st.sampled_from(_SWITCHES)),
    }
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 1000), tasks=st.sampled_from([3, 20, 110]), runs=st.sampled_from([1, 2]),
    gap=st.sampled_from([0.0, 0.3]), missing=st.sampled_from([0.0, 0.1]), flags=_FLAGS,
)  # fmt: skip
def test_compare_tells_one_verdict_in_every_output(seed, tasks, runs, gap, missing, flags) -> None:
    args = [a for k, v in flags.items() if k != "switches" and v is not None for a in (k, v)]
    args += sorted(flags["switches"]) + (["--run-field", "run"] if runs > 1 else [])
    with tempfile.TemporaryDirectory() as tmp:
        files = _files(Path(tmp), seed, tasks, runs, gap, missing)
        as_json = run_here(["compare", *files, *args, "--resamples", "200", "--format", "json"])
        if as_json.returncode == 1:  # bad input (no id in common): one line, no report
            assert as_json.stdout == "" and as_json.stderr.count("\n") == 1, as_json.stderr
            return
        junit = run_here(["compare", *files, *args, "--resamples", "200", "--format", "junit"])
        text = run_here(["compare", *files, *args, "--resamples", "200"])
    report = json.loads(as_json.stdout)
    verdict = report["verdict"]
    assert as_json.returncode == junit.returncode == text.returncode == (0 if verdict == "pass" else 2)
    gates = {g["name"]: g["status"] for g in report["gates"]}
    holds = all(s in ("pass", "off") for s in gates.values())
    assert verdict == ("pass" if holds else "fail"), gates
    suite = next(s for s in ET.fromstring(junit.stdout).iter("testsuite") if s.get("name") == "ablation")
    assert (int(suite.get("failures") or 0) > 0) == (verdict == "fail")
    assert f"Verdict: {verdict.upper()}" in text.stdout
    sequential = "--sequential-replay" in flags["switches"]
    assert gates["critical tasks must not regress"] == "off" or "--no-critical-gate" not in flags["switches"]
    assert (gates.get("complete comparison") == "off") == ("--allow-incomplete" in flags["switches"])
    if "--allow-significant-regression" in flags["switches"] and not sequential:
        assert gates["no significant regression"] == "off"  # a sequential replay keeps it on
    elif report["n_paired"]:
        assert gates["no significant regression"] != "off"
    assert ("non-inferiority" in gates) == (flags["--margin"] is not None)
    assert ("no significant latency regression" in gates) == (flags["--max-latency-ratio"] is not None)
    if flags["--metric-margin"] is not None:
        assert f"non-inferiority of {flags['--metric-margin'].split('=')[0]}" in gates
