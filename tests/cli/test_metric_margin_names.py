"""Which names a ``--metric-margin`` (or ``[tool.ablation] metric_margins``) may use, and what the
usage error lists.

One rule (docs/DESIGN.md section 8): the built-in names (``latency_s``/``latency``, ``cost``,
``tokens``) are always accepted, and results without values of one get an INCONCLUSIVE gate; any
other name must be a quality score or metric of the results, else the command stops with exit 1
and lists the metrics the results hold and the built-in ones they lack. The list once named
fixed words (``known: cost, latency, latency_s, tokens``) whatever the results held.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers.cli_shared import run_here

from ablation import CampaignConfig, TaskResult, compare_results
from ablation.analysis.metric_margins import LOWER_IS_BETTER

_ERROR = re.compile(r"^ablation: error: (?P<where>.+): no metric named '(?P<name>.+)' in the results "
                    r"\((?P<known>.+)\)$")  # fmt: skip


def _write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """``rich``: a score, a latency and an agent metric ``steps``; ``plain``: verdicts only."""
    rich = [{"id": f"t{i}", "passed": i % 2 == 0, "score": i / 10, "latency": 1 + i, "steps": 3 + i}
            for i in range(100)]  # fmt: skip  # a margin needs MEAN_DIFFERENCE_MIN_N pairs
    return {
        "rich": _write(tmp_path / "rich.jsonl", rich),
        "plain": _write(tmp_path / "plain.jsonl", [{"id": f"t{i}", "passed": True} for i in range(4)]),
    }


def _known(stderr: str) -> tuple[str, set[str], set[str]]:
    """``(where, held, absent built-in)`` of the one-line usage error."""
    match = _ERROR.match(stderr.strip())
    assert match, stderr
    held, absent = set(), set()
    for part in match["known"].split("; "):
        if part.startswith("the results hold: "):
            held = set(part.removeprefix("the results hold: ").split(", "))
        elif builtin := re.fullmatch(r"the built-in (.+) (?:is|are) absent from them", part):
            absent = set(builtin[1].split(", "))
        else:
            assert part == "the results hold no metric", part
    return match["where"], held, absent


def test_an_unknown_name_lists_what_the_results_hold(files: dict[str, str]) -> None:
    done = run_here(["compare", files["rich"], files["rich"], "--metric-margin", "foo=1"])
    assert done.returncode == 1 and done.stdout == ""
    where, held, absent = _known(done.stderr)
    assert where == "--metric-margin"
    assert held == {"score", "latency_s", "steps"}  # the file's columns, latency by its canonical name
    assert absent == {"cost", "tokens"}  # the built-in names the file lacks, said to be absent


def test_results_with_no_metric_say_so(files: dict[str, str]) -> None:
    done = run_here(["compare", files["plain"], files["plain"], "--metric-margin", "helpfulnes=0.1"])
    assert done.returncode == 1
    _, held, absent = _known(done.stderr)
    assert held == set() and absent == {"cost", "latency_s", "tokens"}


def test_the_pyproject_key_follows_the_same_rule(files: dict[str, str], tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "pyproject.toml").write_text("[tool.ablation]\nmetric_margins = { foo = 1.0 }\n", encoding="utf-8")
    done = run_here(["compare", files["rich"], files["rich"]], cwd=work)
    assert done.returncode == 1
    where, held, _ = _known(done.stderr)
    assert where == f"{work / 'pyproject.toml'} [tool.ablation] metric_margins"
    assert "steps" in held
    # a built-in name the results lack is a gate that could not run, from the file as from a flag
    (work / "pyproject.toml").write_text("[tool.ablation]\nmetric_margins = { cost = 0.1 }\n", encoding="utf-8")
    done = run_here(["compare", files["rich"], files["rich"], "--format", "json"], cwd=work)
    gate = next(g for g in json.loads(done.stdout)["gates"] if g["name"] == "non-inferiority of cost")
    assert done.returncode == 2 and gate["status"] == "inconclusive"
    assert "the results carry no cost at all" in gate["evidence"]


@pytest.mark.parametrize("name", sorted(LOWER_IS_BETTER))
def test_a_builtin_name_is_accepted_and_untested_without_values(files: dict[str, str], name: str) -> None:
    done = run_here(["compare", files["plain"], files["plain"], "--metric-margin", f"{name}=0.5",
                     "--format", "json"])  # fmt: skip
    assert done.returncode == 2, done.stderr
    gate = next(g for g in json.loads(done.stdout)["gates"] if g["name"] == f"non-inferiority of {name}")
    assert gate["status"] == "inconclusive"


@pytest.mark.parametrize("name", ["steps", "score", "latency", "latency_s"])
def test_a_metric_of_the_results_is_tested(files: dict[str, str], name: str) -> None:
    done = run_here(["compare", files["rich"], files["rich"], "--metric-margin", f"{name}=0.5",
                     "--format", "json"])  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    gate = next(g for g in json.loads(done.stdout)["gates"] if g["name"] == f"non-inferiority of {name}")
    assert gate["status"] in ("pass", "fail") and gate["pvalue"] is not None


def test_carried_metrics_are_the_reports_sections() -> None:
    from ablation.analysis.gate_data import carried_metrics

    def arm(name: str, **fields: Any) -> list[TaskResult]:
        return [TaskResult(task_id=f"t{i}", arm=name, passed=True, **fields) for i in range(3)]

    config = CampaignConfig(n_resamples=200)
    bare = compare_results(arm("baseline"), arm("candidate"), config=config)
    assert carried_metrics(bare) == set()
    full = compare_results(
        arm("baseline", latency_s=1.0, cost=0.2, tokens=10, quality={"judge": 0.5}, metrics={"steps": 2.0}),
        arm("candidate", cost=0.3), config=config,
    )  # fmt: skip
    assert carried_metrics(full) == {"latency_s", "cost", "tokens", "judge", "steps"}
    # latency of the candidate alone is still latency the results carry
    only = compare_results(arm("baseline"), arm("candidate", latency_s=1.0), config=config)
    assert carried_metrics(only) == {"latency_s"}
