"""``ablation report`` of a stored campaign and the settings given to it, through the real command.

A sequential campaign's stop is a fact of the campaign: it was decided with the stored seed (the
run order), alpha, margin and critical rule, so its report replays it with those. A flag that
would change one is refused (one line naming the flag and the stored value, exit 1); the same
key in ``[tool.ablation]`` is left unused with one note. A fixed-n campaign's report may still be
judged with other gate settings, and a gate option changes only its own stored field.

Suite: 60 tasks both arms pass and 3 the candidate fails; the campaigns run with ``--margin 0.2``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import analysis_shared, cli, margin_campaign

pytestmark = pytest.mark.xdist_group("sequential-report-settings")  # one worker runs the campaign once

_campaign = analysis_shared.margin_run


def _report(store: Path, *flags: str, cwd: Path | None = None) -> Any:
    return cli.run_here(
        ["report", "latest", "--store", str(store), "--format", "json", *flags],
        cwd=cwd or store.parent,
    )


@pytest.fixture(scope="module")
def sequential(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    return _campaign(tmp_path_factory.mktemp("seq") / "campaign", "--sequential")


@pytest.fixture(scope="module")
def fixed_n(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    return _campaign(tmp_path_factory.mktemp("fixed") / "campaign")


def test_the_campaign_stopped_early(sequential: tuple[Path, dict[str, Any]]) -> None:
    _, run = sequential
    s = run["sequential"]
    assert s["stopped_early"] and s["tasks_run"] < s["n_tasks"] == 63
    assert run["provenance"]["seed"] == 0 and s["margin"] == 0.2


def test_plain_report_and_the_stored_values_give_the_runs_report(
    sequential: tuple[Path, dict[str, Any]],
) -> None:
    store, run = sequential
    for flags in ((), ("--seed", "0", "--margin", "0.2", "--alpha", "0.05")):
        proc = _report(store, *flags)
        assert proc.returncode in (0, 2), proc.stderr
        assert cli.stable(json.loads(proc.stdout)) == cli.stable(run)


@pytest.mark.parametrize(
    ("flags", "named", "stored"),
    margin_campaign.STOP_CHANGES,
)
def test_a_flag_that_changes_the_stop_is_refused(
    sequential: tuple[Path, dict[str, Any]], flags: tuple[str, ...], named: str, stored: str
) -> None:
    store, _ = sequential
    proc = _report(store, *flags)
    assert proc.returncode == 1
    assert proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"ablation: error: {named}: campaign ")
    assert f"its stop was decided with {stored};" in line
    assert line.endswith(f"(drop {named.split()[0]})")


def test_other_gate_options_keep_the_stored_stop(sequential: tuple[Path, dict[str, Any]]) -> None:
    """A gate that does not decide the stop is judged as given; the rest of the stored gate
    policy (the margin) and the replay stay."""
    store, run = sequential
    proc = _report(store, "--allow-incomplete")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["sequential"] == run["sequential"]
    status = {g["name"]: g["status"] for g in report["gates"]}
    assert status["complete comparison"] == "off"
    assert status["non-inferiority"] == {g["name"]: g["status"] for g in run["gates"]}["non-inferiority"]


def test_file_values_are_left_unused_with_a_note(
    sequential: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """``[tool.ablation]`` holds the settings of the next run; the stored campaign keeps its own."""
    store, run = sequential
    (tmp_path / "pyproject.toml").write_text(
        "[tool.ablation]\nseed = 3\nmargin = 0.4\nsequential = true\n"
        "stop_when_inconclusive_after = 5\nsuite_claim = true\n",
        encoding="utf-8",
    )
    proc = _report(store, cwd=tmp_path)
    assert proc.returncode in (0, 2), proc.stderr
    assert cli.stable(json.loads(proc.stdout)) == cli.stable(run)
    notes = [line for line in proc.stderr.splitlines() if line.startswith("ablation: note:")]
    assert len(notes) == 1
    assert "[tool.ablation] seed = 3" in notes[0] and "[tool.ablation] margin = 0.4" in notes[0]
    assert "decided with seed 0, margin 0.2" in notes[0]


def test_a_fixed_n_report_is_judged_with_the_given_gates(fixed_n: tuple[Path, dict[str, Any]]) -> None:
    store, run = fixed_n
    assert run["sequential"] is None and run["noninferiority"]["margin"] == 0.2
    wider = json.loads(_report(store, "--margin", "0.5").stdout)
    assert wider["noninferiority"]["margin"] == 0.5
    reseeded = json.loads(_report(store, "--seed", "7").stdout)
    assert reseeded["provenance"]["seed"] == 7
    # a gate option changes its own field only: the stored margin stays
    relaxed = json.loads(_report(store, "--min-completed", "0.5").stdout)
    assert relaxed["noninferiority"]["margin"] == 0.2
    assert [g["name"] for g in relaxed["gates"]] == [g["name"] for g in run["gates"]]
