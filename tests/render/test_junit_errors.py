"""JUnit XML carries the errors section as every other format does: trials that errored or timed
out are ``<error>`` test cases of a ``trial errors`` test suite, one per (arm, stage, error type)
group, naming the tasks, and counted in the ``errors`` attributes.

Reports come from the command line (``ablation run --format junit``) on a small suite whose
candidates raise on tasks chosen here; the expected task ids are computed from those choices,
and the document is read back with a real XML parser (expat, through ElementTree).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from helpers.cli import run_here

SUITE = """\
from ablation import AblationTask

tasks = [AblationTask(task_id=f"t{i}", input_data={"n": i}, expected_output=2 * i) for i in range(8)]
"""
AGENTS = """\
def working(task):
    return 2 * task["n"]


def odd_fails(task):
    if task["n"] % 2:
        raise ValueError(f"cannot double {task['n']}")
    return 2 * task["n"]


def small_fails(task):
    if task["n"] < 3:
        raise KeyError("n")
    return 2 * task["n"]
"""
ODD = [f"t{i}" for i in range(8) if i % 2]
SMALL = [f"t{i}" for i in range(8) if i < 3]


def _junit(tmp_path: Path, *candidates: str, extra: tuple[str, ...] = ()) -> tuple[int, ET.Element]:
    (tmp_path / "suite.py").write_text(SUITE, encoding="utf-8")
    (tmp_path / "agents.py").write_text(AGENTS, encoding="utf-8")
    out = tmp_path / "junit.xml"
    args = ["run", str(tmp_path / "suite.py"), "--baseline", f"{tmp_path / 'agents.py'}:working"]
    for name in candidates:
        args += ["--candidate", f"{tmp_path / 'agents.py'}:{name}"]
    done = run_here([*args, "--no-store", "--no-progress", "--format", "junit", "-o", str(out), *extra],
                    cwd=tmp_path)  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    return done.returncode, ET.parse(out).getroot()


def _counted(suite: ET.Element) -> dict[str, int]:
    """The suite's counts, checked against its cases."""
    cases = suite.findall("testcase")
    seen = {
        "tests": len(cases),
        "failures": sum(c.find("failure") is not None for c in cases),
        "errors": sum(c.find("error") is not None for c in cases),
        "skipped": sum(c.find("skipped") is not None for c in cases),
    }
    assert {k: int(suite.get(k, "-1")) for k in seen} == seen
    assert all(c.get("name") and c.get("classname") for c in cases)
    return seen


def test_a_candidates_raised_errors_are_junit_errors_naming_their_tasks(tmp_path: Path) -> None:
    code, root = _junit(tmp_path, "odd_fails", extra=("--allow-incomplete",))
    gates, errors = root.findall("testsuite")
    assert (gates.get("name"), errors.get("name")) == ("ablation", "trial errors")
    assert _counted(gates)["errors"] == 0
    assert _counted(errors) == {"tests": 1, "failures": 0, "errors": 1, "skipped": 0}
    [case] = errors.findall("testcase")
    assert case.get("name") == "candidate / agent / ValueError"
    error = case.find("error")
    assert error is not None and error.get("type") == "ValueError"
    message = error.get("message", "")
    assert message.startswith(f"{len(ODD)} trial(s) on {len(ODD)} task(s): ")
    assert message.split(": ", 1)[1].split(", ") == ODD
    assert "cannot double" in (error.text or "")  # one example message
    totals = {k: int(root.get(k, "-1")) for k in ("tests", "failures", "errors", "skipped")}
    assert totals == {k: _counted(gates)[k] + _counted(errors)[k] for k in totals}
    # the gates keep their meaning: failures > 0 exactly when the command exits 2
    assert (totals["failures"] > 0) == (code == 2)


def test_several_candidates_have_an_errors_suite_each(tmp_path: Path) -> None:
    _, root = _junit(tmp_path, "odd_fails", "working", "small_fails", extra=("--allow-incomplete",))
    names = [s.get("name") for s in root.findall("testsuite")]
    base = f"{tmp_path / 'agents.py'}:"
    assert names == [f"ablation: {base}odd_fails", f"trial errors: {base}odd_fails",
                     f"ablation: {base}working", f"ablation: {base}small_fails",
                     f"trial errors: {base}small_fails"]  # fmt: skip
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    [odd] = suites[f"trial errors: {base}odd_fails"].iter("error")
    [small] = suites[f"trial errors: {base}small_fails"].iter("error")
    assert (odd.get("type"), small.get("type")) == ("ValueError", "KeyError")
    assert small.get("message", "").split(": ", 1)[1].split(", ") == SMALL
    assert int(root.get("errors", "-1")) == 2 == sum(int(s.get("errors", "-1")) for s in suites.values())
