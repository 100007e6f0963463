"""``ablation compare`` of a campaign exported by ``ablation report --export-jsonl``.

The export holds both arms and every trial as stored: an error or a timeout must stay one, so
``compare`` of the export judges the campaign as ``ablation report`` of the store does (the
completeness gate fails on the same errors), instead of reading them as wrong answers.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from helpers.cli import run_here

from ablation import AblationTask, CampaignConfig, InputError, load_results, run_ablation_campaign
from ablation.sources.readers import engine
from ablation.store.run_store import RunStore

ARMS = ["--baseline-where", "arm=baseline", "--where", "arm=candidate"]


def _baseline(x: dict[str, int]) -> int:
    return x["n"]


def _candidate(x: dict[str, int]) -> int:
    if x["n"] % 5 == 0:
        raise ValueError("boom")
    if x["n"] == 7:
        time.sleep(2)  # past the timeout
    return x["n"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("export")
    store = folder / "runs.db"
    tasks = [AblationTask(task_id=f"t{i:02d}", input_data={"n": i}, expected_output=i) for i in range(20)]
    run_ablation_campaign(_baseline, _candidate, tasks, config=CampaignConfig(timeout_s=0.5), store=store)
    with RunStore(store) as runs:
        campaign = runs.latest_campaign()
        assert campaign is not None
        runs.export_jsonl(campaign.campaign_id, folder / "all.jsonl")
    return store, folder / "all.jsonl"


def _judged(report: dict[str, object]) -> tuple[object, ...]:
    gates = tuple((g["name"], g["status"]) for g in report["gates"])  # type: ignore[attr-defined]
    errors = sorted(
        (g["arm"], g["error_type"], tuple(g["task_ids"]))
        for g in report["errors"]["groups"]  # type: ignore[index]
    )
    return report["verdict"], gates, report["table"], report["regressions"], errors


@pytest.mark.parametrize("engine_from", [None, 0], ids=["small-file", "engine-size"])
def test_compare_of_an_export_judges_as_the_stores_report(
    exported: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, engine_from: int | None
) -> None:
    store, export = exported
    if engine_from is not None:  # a file the columnar engine would take is still read as an export
        monkeypatch.setattr(engine, "MIN_BYTES", engine_from)
    stored = run_here(["report", "--store", str(store), "--format", "json"])
    compared = run_here(["compare", str(export), str(export), *ARMS, "--format", "json"])
    assert (stored.returncode, compared.returncode) == (2, 2), compared.stderr
    mine, theirs = json.loads(compared.stdout), json.loads(stored.stdout)
    assert _judged(mine) == _judged(theirs)
    types = {g["error_type"] for g in mine["errors"]["groups"]}
    assert types == {"ValueError", "Timeout"}
    complete = next(g for g in mine["gates"] if g["name"] == "complete comparison")
    assert complete["status"] == "fail"  # errors and timeouts are not wrong answers


def test_an_export_read_without_picking_an_arm_says_so(exported: tuple[Path, Path]) -> None:
    _, export = exported
    done = run_here(["compare", str(export), str(export)])
    assert done.returncode == 1
    line, = done.stderr.strip().splitlines()
    assert str(export) in line and "holds both arms" in line and "--where arm=candidate" in line


def test_load_results_of_an_export_names_the_python_form_of_the_pick(exported: tuple[Path, Path]) -> None:
    """The refusal named only the command line's flags; from Python the pick is a where mapping."""
    _, export = exported
    with pytest.raises(InputError, match="holds both arms") as raised:
        load_results(export)
    where = "where={'arm': 'candidate'}"
    assert where in str(raised.value)
    assert {r.arm for r in load_results(export, arm="candidate", where={"arm": "candidate"})} == {"candidate"}


def test_a_bad_number_in_an_export_names_its_line_and_task(exported: tuple[Path, Path], tmp_path: Path) -> None:
    _, export = exported
    lines = export.read_text().splitlines()
    row = json.loads(lines[3])
    row["latency_s"] = "fast"
    lines[3] = json.dumps(row)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("\n".join(lines) + "\n")
    done = run_here(["compare", str(damaged), str(damaged), *ARMS])
    assert done.returncode == 1
    line, = done.stderr.strip().splitlines()
    assert f"{damaged}:4" in line and row["task_id"] in line and "'latency_s' is not a number" in line
