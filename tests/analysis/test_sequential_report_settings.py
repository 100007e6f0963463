"""A stored campaign re-read with other settings: ``ablation report``, the library's
``report_stored_campaign`` and ``ablation compare`` of its export.

A sequential campaign's stop is a fact of the campaign: it was decided with the stored seed (the
run order), alpha, margin, critical rule and sequential policy, so its report replays it with
those. A flag of ``ablation report`` that would change one is refused (one line naming the flag
and the stored value, exit 1); the same key in ``[tool.ablation]`` is left unused with one note.
A library caller passing the same change in ``config_update`` is refused by the same rule (one
``ConfigError`` naming the setting and its stored value). A fixed-n campaign's report may still
be judged with other settings, and a gate option changes only its own stored field.

A sequential campaign stores every trial that finished, those of tasks still in flight when its
monitor stopped included, and ``ablation report --export-jsonl`` writes them all. Read as plain
results they were a fixed-n comparison of more pairs than the campaign decided on, over the tasks
in the file rather than the suite: another verdict than the campaign's. ``compare`` of the export
now takes the stop settings and the suite from the export's header
(:func:`ablation.analysis.export_campaign.campaign_settings`), so it gives the campaign's report, and
refuses what cannot replay the stop, one line each, exit 1.

Suite (``helpers/margin_campaign.py``): 60 tasks both arms pass and 3 the candidate fails; the
campaigns run with ``--margin 0.2``, once each for the module (the tests only read their stores).
A trial pair of a task the sequential campaign never reached (in flight at the stop) is added to
its export, a regression.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import analysis_shared, cli, margin_campaign

from ablation.analysis.stored import report_stored_campaign
from ablation.errors import ConfigError
from ablation.store import RunStore

pytestmark = pytest.mark.xdist_group("sequential-report-settings")  # one worker runs each campaign once

_ARMS = ("--baseline-where", "arm=baseline", "--where", "arm=candidate")
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


# ``ablation report`` of the stored campaigns


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


# the library's report_stored_campaign


def _gates(store: RunStore, **fields: Any) -> Any:
    record = store.latest_campaign()
    assert record is not None
    return record.config.gates.model_copy(update=fields)


@pytest.mark.parametrize(
    ("update", "given", "stored"),
    [
        ({"seed": 1}, "seed 1", "seed 0"),
        ({"alpha": 0.1}, "alpha 0.1", "alpha 0.05"),
        ({"gates": {"noninferiority_margin": 0.5}}, "margin 0.5", "margin 0.2"),
        ({"gates": {"critical_must_not_regress": False}}, "the critical gate off", "the critical gate on"),
    ],
)
def test_a_changed_stop_setting_is_refused(
    sequential: tuple[Path, dict[str, Any]], update: dict[str, Any], given: str, stored: str
) -> None:
    with RunStore(sequential[0], read_only=True) as store:
        if "gates" in update:
            update = {"gates": _gates(store, **update["gates"])}
        with pytest.raises(ConfigError) as caught:
            report_stored_campaign(store, config_update=update)
    message = str(caught.value)
    assert message.startswith(f"{given}: campaign ")
    assert f"is sequential and its stop was decided with {stored};" in message
    assert "\n" not in message


def test_the_callers_names_are_used(sequential: tuple[Path, dict[str, Any]]) -> None:
    with RunStore(sequential[0], read_only=True) as store, pytest.raises(ConfigError) as caught:
        report_stored_campaign(store, config_update={"seed": 1}, names={"seed": "--seed"})
    assert str(caught.value).startswith("--seed 1: campaign ")
    assert str(caught.value).endswith("(drop --seed)")


def test_the_stored_values_give_the_stored_report(sequential: tuple[Path, dict[str, Any]]) -> None:
    with RunStore(sequential[0], read_only=True) as store:
        plain, record = report_stored_campaign(store)
        same = {"seed": record.config.seed, "alpha": record.config.alpha,
                "gates": record.config.gates, "resamples": 200}  # fmt: skip
        again, _ = report_stored_campaign(store, config_update=same)
        lenient, _ = report_stored_campaign(store, config_update={"gates": _gates(store, min_completed=0.5)})
    stable = [cli.stable(json.loads(r.model_dump_json())) for r in (plain, again)]
    assert stable[0] == stable[1]
    assert lenient.sequential == plain.sequential  # a gate that does not decide the stop


def test_a_fixed_n_campaign_takes_other_settings(fixed_n: tuple[Path, dict[str, Any]]) -> None:
    with RunStore(fixed_n[0], read_only=True) as store:
        report, _ = report_stored_campaign(store, config_update={"seed": 7, "alpha": 0.1})
    assert report.provenance.seed == 7 and report.provenance.alpha == 0.1


# ablation compare of the export


@pytest.fixture(scope="module")
def campaign(sequential: tuple[Path, dict[str, Any]]) -> tuple[Path, dict[str, Any], Path]:
    """The store, the run's JSON report, and its export with an in-flight regression added."""
    store, run = sequential
    export = store.parent / "export.jsonl"
    proc = cli.run_here(["report", "latest", "--store", str(store), "--export-jsonl", str(export), "-q"],
                        cwd=store.parent)  # fmt: skip
    assert proc.returncode in (0, 2), proc.stderr
    lines = export.read_text(encoding="utf-8").splitlines()
    trials = [json.loads(line) for line in lines[1:]]
    ran = {t["task_id"] for t in trials}
    late = next(f"reg{i}" for i in range(3) if f"reg{i}" not in ran)  # a task after the stop
    for arm in ("baseline", "candidate"):
        trial = next(t for t in trials if t["arm"] == arm and t["passed"])
        lines.append(json.dumps({**trial, "task_id": late, "passed": arm == "baseline"}))
    export.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return store, run, export


def _compare(export: Path, *flags: str, cwd: Path | None = None) -> Any:
    return cli.run_here(["compare", str(export), str(export), *_ARMS, "--resamples", "200", *flags],
                        cwd=cwd or export.parent)  # fmt: skip


def _same(report: dict[str, Any]) -> dict[str, Any]:
    """What the campaign decided: everything but names, times and the drill-downs' task inputs."""
    kept = {k: v for k, v in report.items() if k not in ("provenance", "details", "baseline", "candidate")}
    return cli.stable(kept)


def test_the_campaign_stopped_before_the_late_task(campaign: tuple[Path, dict[str, Any], Path]) -> None:
    _, run, _ = campaign
    assert run["sequential"]["stopped_early"] and run["sequential"]["tasks_run"] < 63


def test_compare_of_the_export_is_the_campaigns_report(campaign: tuple[Path, dict[str, Any], Path]) -> None:
    _, run, export = campaign
    proc = _compare(export, "--format", "json")
    assert proc.returncode == (2 if run["verdict"] == "fail" else 0), proc.stderr
    report = json.loads(proc.stdout)
    assert _same(report) == _same(run)
    assert report["sequential"]["pairs"] == run["sequential"]["pairs"]
    assert report["n_tasks"] == 63 and report["regressions"] == run["regressions"]
    for arm in ("baseline", "candidate"):
        assert cli.stable(report[arm]) | {"agent": None} == cli.stable(run[arm]) | {"agent": None}


@pytest.mark.parametrize("flags", [(), ("--sequential-replay",), ("--margin", "0.2", "--seed", "0", "--alpha", "0.05")])
def test_the_campaigns_own_settings_give_the_same_report(
    campaign: tuple[Path, dict[str, Any], Path], flags: tuple[str, ...]
) -> None:
    _, run, export = campaign
    proc = _compare(export, "--format", "json", *flags)
    assert proc.returncode in (0, 2), proc.stderr
    assert _same(json.loads(proc.stdout)) == _same(run)


@pytest.mark.parametrize(
    ("flags", "named", "stored"),
    [
        *margin_campaign.STOP_CHANGES,
        (("--sequential-replay", "--stop-when-inconclusive-after", "5"), "--stop-when-inconclusive-after 5",
         "no inconclusive stop after"),
        (("--sequential-replay", "--suite-claim"), "--suite-claim", "the suite-only claim off"),
    ],
)
def test_a_setting_that_changes_the_stop_is_refused(
    campaign: tuple[Path, dict[str, Any], Path], flags: tuple[str, ...], named: str, stored: str
) -> None:
    _, _, export = campaign
    proc = _compare(export, *flags)
    assert proc.returncode == 1 and proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"ablation: error: {named}: campaign ")
    assert f"its stop was decided with {stored}; a comparison of its export replays" in line
    assert line.endswith(f"(drop {named.split()[0]})")


def test_a_project_setting_that_changes_the_stop_is_left_unused_with_a_note(
    campaign: tuple[Path, dict[str, Any], Path], tmp_path: Path
) -> None:
    """As ``ablation report`` leaves it: a project's value was written for its new campaigns."""
    _, run, export = campaign
    (tmp_path / "pyproject.toml").write_text("[tool.ablation]\nmargin = 0.5\n", encoding="utf-8")
    proc = _compare(export, "--format", "json", cwd=tmp_path)
    assert proc.returncode in (0, 2), proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("ablation: note: ") and "pyproject.toml [tool.ablation] margin = 0.5: campaign " in line
    assert "decided with margin 0.2; a comparison of its export replays that stop" in line
    assert _same(json.loads(proc.stdout)) == _same(run)


def test_a_filter_beyond_the_arm_is_refused(campaign: tuple[Path, dict[str, Any], Path]) -> None:
    _, _, export = campaign
    proc = _compare(export, "--where", "status=completed")
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    assert f"{export} is an export of sequential campaign " in line
    assert "--where status=... on " in line and line.endswith("so the stop cannot be replayed")


def test_another_file_beside_the_export_is_refused(
    campaign: tuple[Path, dict[str, Any], Path], tmp_path: Path
) -> None:
    _, _, export = campaign
    plain = tmp_path / "before.jsonl"
    rows = [{"task_id": f"ok{i:02d}", "arm": "baseline", "passed": True} for i in range(60)]
    plain.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    proc = cli.run_here(["compare", str(plain), str(export), *_ARMS, "--key", "task_id"], cwd=tmp_path)
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    assert f"{plain} is not an export, so the stop cannot be replayed" in line


def test_other_expected_ids_are_refused(campaign: tuple[Path, dict[str, Any], Path], tmp_path: Path) -> None:
    _, _, export = campaign
    ids = tmp_path / "ids.txt"
    ids.write_text("".join(f"ok{i:02d}\n" for i in range(60)), encoding="utf-8")
    proc = _compare(export, "--expected-ids", str(ids))
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    assert "the expected ids are not its suite (63 tasks in its header)" in line


def test_a_numeric_field_of_the_export_is_refused(campaign: tuple[Path, dict[str, Any], Path]) -> None:
    _, _, export = campaign
    proc = cli.run_here(["compare", str(export), str(export), *_ARMS, "--field", "latency_s"], cwd=export.parent)
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    assert "a numeric --field comparison does not replay a stop" in line


def test_a_fixed_n_export_is_read_as_its_trials(fixed_n: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """A campaign that ran every task: its export compares as plain trials, with any settings."""
    store, run = fixed_n
    export = tmp_path / "export.jsonl"
    cli.run_here(["report", "latest", "--store", str(store), "--export-jsonl", str(export), "-q"], cwd=tmp_path)
    proc = _compare(export, "--format", "json", "--margin", "0.2")
    assert proc.returncode in (0, 2), proc.stderr
    assert _same(json.loads(proc.stdout)) == _same(run)
    proc = _compare(export, "--format", "json", "--margin", "0.5", "--seed", "3", "--where", "status=completed")
    assert proc.returncode in (0, 2), proc.stderr
    assert json.loads(proc.stdout)["noninferiority"]["margin"] == 0.5


def test_the_library_refuses_to_load_a_sequential_export_as_plain_results(
    campaign: tuple[Path, dict[str, Any], Path],
) -> None:
    """``load_results`` keeps no header, so the export's rows would be compared as a fixed-n sample
    of every finished trial, the late regression included: another verdict than the campaign's
    (it once loaded them silently). It refuses in one line naming the file and the command that
    replays the stop; a fixed-n campaign's export still loads."""
    from ablation import InputError, load_results

    store, _run, export = campaign
    with pytest.raises(InputError) as caught:
        load_results(export, where={"arm": "candidate"}, arm="candidate")
    line = str(caught.value)
    assert "\n" not in line and line.startswith(f"{export}:1:") and "sequential campaign" in line
    assert "ablation compare" in line and "replays its stop" in line
    fixed = store.parent / "fixed.jsonl"
    header, *trials = export.read_text(encoding="utf-8").splitlines()
    campaign_header = json.loads(header)
    campaign_header["campaign"]["config"]["sequential"] = None
    fixed.write_text("\n".join([json.dumps(campaign_header), *trials]) + "\n", encoding="utf-8")
    loaded = load_results(fixed, where={"arm": "candidate"}, arm="candidate")
    assert len(loaded) == sum(1 for t in trials if json.loads(t)["arm"] == "candidate")
