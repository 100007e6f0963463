"""``compare --field`` on a numeric field: its gates, the options that do not apply, its formats.

Ids on one side only fail the "complete comparison" gate (``--allow-incomplete``: off), the
regression gate follows ``--allow-significant-regression``, gate flags with no meaning for a
number are a usage error (a ``[tool.ablation]`` key is ignored with a note), and ``--format
junit|markdown|html`` write real documents whose failures match the exit code.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from helpers.cli_shared import run_here
from scipy import stats


def _write(path: Path, values: dict[str, float]) -> str:
    path.write_text("".join(json.dumps({"id": k, "score": v}) + "\n" for k, v in values.items()))
    return str(path)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """``base``: 10 tasks at 0.9; ``short``: 3 of them; ``drop``: all 10 at 0.8 to 0.82; ``same``: 10 at 0.9."""
    ten = [f"t{i}" for i in range(10)]
    return {
        "base": _write(tmp_path / "nb.jsonl", dict.fromkeys(ten, 0.9)),
        "short": _write(tmp_path / "na.jsonl", {"t0": 0.5, "t1": 0.9, "t2": 0.95}),
        "drop": _write(tmp_path / "drop.jsonl", {t: 0.8 + 0.01 * (i % 3) for i, t in enumerate(ten)}),
        "same": _write(tmp_path / "same.jsonl", {t: 0.9 + (0.01 if i % 2 else -0.01) for i, t in enumerate(ten)}),
    }


def _json(*args: str, cwd: Path | None = None) -> tuple[int, dict]:
    done = run_here(["compare", *args, "--field", "score", "--format", "json"], **({"cwd": cwd} if cwd else {}))
    assert done.returncode in (0, 2), done.stderr
    return done.returncode, json.loads(done.stdout)


def _gate(doc: dict, name: str) -> dict:
    return next(g for g in doc["gates"] if g["name"] == name)


def test_ids_on_one_side_fail_the_completeness_gate(files: dict[str, str]) -> None:
    code, doc = _json(files["base"], files["short"], "--min-completed", "0.99")
    gate = _gate(doc, "complete comparison")
    assert code == 2 and doc["verdict"] == "fail" and gate["status"] == "fail"
    assert "7 of 10 expected task(s) without a pair" in gate["evidence"] and "t3" in gate["evidence"]
    assert gate["tasks"] == [f"t{i}" for i in range(3, 10)]
    assert "gate_pvalue" in doc and doc["trials"] == {"baseline": [10, 10], "candidate": [3, 10]}
    code, doc = _json(files["base"], files["short"], "--allow-incomplete")
    gate = _gate(doc, "complete comparison")
    assert code == 0 and gate["status"] == "off"
    assert gate["evidence"].startswith("turned off (GatePolicy.require_complete = False)")
    assert "7 of 10" in gate["evidence"]  # what it would have said


def test_expected_ids_missing_from_both_files_fail(files: dict[str, str], tmp_path: Path) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join([f"t{i}" for i in range(10)] + ["t10"]) + "\n")
    code, doc = _json(files["base"], files["drop"], "--expected-ids", str(ids), "--allow-significant-regression")
    gate = _gate(doc, "complete comparison")
    assert code == 2 and gate["status"] == "fail" and "1 in neither arm" in gate["evidence"]
    assert doc["missing_baseline"] == doc["missing_candidate"] == ["t10"]


def test_allow_significant_regression_turns_the_gate_off(files: dict[str, str]) -> None:
    code, doc = _json(files["base"], files["drop"])
    assert code == 2 and _gate(doc, "no significant regression")["status"] == "fail"
    code, doc = _json(files["base"], files["drop"], "--allow-significant-regression")
    gate = _gate(doc, "no significant regression")
    assert code == 0 and doc["verdict"] == "pass"
    assert gate["status"] == "off" and "would have failed" in gate["evidence"]


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--margin", "0.01"], "--margin"),
        (["--metric-margin", "score=0.01"], "--metric-margin"),
        (["--max-latency-ratio", "1.1"], "--max-latency-ratio"),
        (["--sequential-replay"], "--sequential-replay"),
        (["--no-critical-gate"], "--no-critical-gate"),
        (["--seed", "3"], "--seed"),
    ],
)
def test_gate_flags_without_meaning_are_a_usage_error(files: dict[str, str], flags: list[str], named: str) -> None:
    done = run_here(["compare", files["base"], files["same"], "--field", "score", *flags])
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == f"ablation: error: argument {named}: does not apply to a numeric --field (score)"


def test_a_pyproject_key_for_binary_compares_is_ignored_with_a_note(files: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ablation]\nmargin = 0.02\n")
    done = run_here(["compare", files["base"], files["same"], "--field", "score"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "ignored" in done.stderr and "[tool.ablation] margin" in done.stderr


def _junit(*args: str) -> tuple[int, ET.Element]:
    done = run_here(["compare", *args, "--field", "score", "--format", "junit"])
    return done.returncode, ET.fromstring(done.stdout)


@pytest.mark.parametrize(
    ("after", "extra", "code"),
    [("same", [], 0), ("drop", [], 2), ("short", [], 2), ("short", ["--allow-incomplete"], 0)],
)
def test_junit_failures_match_the_exit_code(files: dict[str, str], after: str, extra: list[str], code: int) -> None:
    rc, root = _junit(files["base"], files[after], *extra)
    assert rc == code
    assert (int(root.get("failures", "0")) > 0) == (code == 2)
    names = [c.get("name") for c in root.iter("testcase")]
    assert names == ["gate: complete comparison", "gate: no significant regression"]
    if extra:
        assert root.find(".//skipped") is not None and root.get("skipped") == "1"


def test_several_after_files_are_one_junit_document(files: dict[str, str]) -> None:
    rc, root = _junit(files["base"], files["same"], files["drop"])
    assert rc == 2 and len(root.findall("testsuite")) == 2 and root.get("failures") == "1"


def test_markdown_and_html_escape_ids_and_show_the_gates(tmp_path: Path) -> None:
    ids = ["<img src=x>|*", "a_b`c", "t2"]
    b = _write(tmp_path / "<b>.jsonl", dict.fromkeys(ids, 0.9))
    a = _write(tmp_path / "<i>a.jsonl", {ids[0]: 0.5, ids[1]: 0.5})
    md = run_here(["compare", b, a, "--field", "score", "--format", "markdown"])
    assert md.returncode == 2 and "<img" not in md.stdout and "<b>" not in md.stdout
    assert "&lt;img src=x&gt;\\|\\*" in md.stdout and "| complete comparison | FAIL |" in md.stdout
    page = run_here(["compare", b, a, a, "--field", "score", "--format", "html"])
    assert page.returncode == 2 and page.stdout.count("<!DOCTYPE html>") == 1
    assert "<img" not in page.stdout and "&lt;img src=x&gt;|*" in page.stdout and "Holm" in page.stdout
    assert "<i>" not in page.stdout + md.stdout and "&lt;i&gt;a.jsonl" in page.stdout


def test_json_gate_p_matches_scipy(files: dict[str, str]) -> None:
    _, doc = _json(files["base"], files["same"], "--regression-delta", "0.005")
    x, y = np.full(10, 0.9), np.array([0.9 + (0.01 if i % 2 else -0.01) for i in range(10)])
    ref = stats.ttest_rel(y + 0.005, x, alternative="less").pvalue
    assert doc["gate_pvalue"] == pytest.approx(ref, rel=1e-9)
    assert _gate(doc, "no significant regression")["pvalue"] == pytest.approx(ref, rel=1e-9)
    assert doc["t_pvalue"] == pytest.approx(stats.ttest_rel(y, x).pvalue, rel=1e-9)
