"""``ablation compare`` of one campaign's export judges it as ``ablation report`` judges the campaign.

The trials of an export do not say how they are judged: the header names the runs per task,
``on_error``, alpha, the gate policy, the suite and the run's other candidates
(:mod:`ablation.analysis.export_campaign`). Each case runs a real campaign through ``ablation run``
(in this process), exports it, and compares the export arm against arm: the report must be the
run's own, sentence, gates, figures and exit code (names, times and the drill-downs' task inputs
aside). Each campaign runs once per module; a test that edits an export edits its own copy. Suite: 30 tasks both arms pass, 4 the candidate fails, 3 on which it raises, 5 the
baseline fails and every candidate passes.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import analysis_shared, cli

SUITE = """
from ablation import AblationTask
tasks = [AblationTask(task_id=f"ok{i:02d}", input_data="ok", expected_output="yes") for i in range(30)]
tasks += [AblationTask(task_id=f"reg{i}", input_data="reg", expected_output="yes") for i in range(4)]
tasks += [AblationTask(task_id=f"err{i}", input_data="err", expected_output="yes") for i in range(3)]
tasks += [AblationTask(task_id=f"imp{i}", input_data="imp", expected_output="yes") for i in range(5)]
"""
AGENTS = """
def baseline(kind):
    return "no" if kind == "imp" else "yes"

def candidate(kind):
    if kind == "err":
        raise ValueError("boom")
    return "no" if kind == "reg" else "yes"

def other(kind):
    return "yes"

_calls = set()

def flaky(kind):
    # fails its first call on every input kind with a transient error (a retry passes)
    if kind not in _calls:
        _calls.add(kind)
        raise ConnectionError("flaky")
    return "yes"

class Score:
    name = "qual"

    def __call__(self, output, task):
        if task.task_id == "ok00":
            raise ValueError("no score")
        return 1.0

score = Score()
"""
_ARMS = ("--baseline-where", "arm=baseline", "--where", "arm=candidate")

pytestmark = pytest.mark.xdist_group("export-campaign-settings")  # one worker runs each campaign once

Campaigns = Callable[..., tuple[Path, list[Path]]]


def _run(folder: Path, *flags: str, candidates: tuple[str, ...] = ("candidate",)) -> tuple[Path, list[Path]]:
    """Run the campaign in ``folder``; its store and one export per candidate's campaign."""
    folder.mkdir()
    (folder / "suite.py").write_text(SUITE, encoding="utf-8")
    (folder / "agents.py").write_text(AGENTS, encoding="utf-8")
    store = folder / "runs.db"
    picks = [w for c in candidates for w in ("--candidate", f"agents.py:{c}")]
    proc = analysis_shared.run_here(["run", "suite.py", "--baseline", "agents.py:baseline", *picks, "--store",
                                     str(store), "--no-progress", "--resamples", "200", "-q", *flags],
                                    cwd=folder)  # fmt: skip
    assert proc.returncode in (0, 2), proc.stderr
    listed = json.loads(cli.run_here(["list", str(store), "--format", "json"], cwd=folder).stdout)
    exports = []
    for campaign in reversed(listed):  # oldest first: the order of the candidates
        export = folder / f"{campaign['campaign_id']}.jsonl"
        done = cli.run_here(["report", campaign["campaign_id"], "--store", str(store), "--export-jsonl", str(export),
                             "-q"], cwd=folder)  # fmt: skip
        assert done.returncode in (0, 2), done.stderr
        exports.append(export)
    return store, exports


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory: pytest.TempPathFactory) -> Campaigns:
    """``campaigns(*flags, candidates=...)``: :func:`_run` of those settings, run once per module."""
    made: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[Path, list[Path]]] = {}

    def get(*flags: str, candidates: tuple[str, ...] = ("candidate",)) -> tuple[Path, list[Path]]:
        key = (flags, candidates)
        if key not in made:
            made[key] = _run(tmp_path_factory.mktemp("campaign") / "c", *flags, candidates=candidates)
        return made[key]

    return get


def _own_export(campaigns: Campaigns, tmp_path: Path, *flags: str) -> Path:
    """A copy in ``tmp_path`` of the export of the campaign run with ``flags``, for a test to edit."""
    _, [export] = campaigns(*flags)
    return Path(shutil.copy(export, tmp_path / export.name))


def _report(store: Path, campaign: str) -> tuple[int, dict[str, Any]]:
    proc = cli.run_here(["report", campaign, "--store", str(store), "--format", "json"], cwd=store.parent)
    return proc.returncode, json.loads(proc.stdout)


def _compare(export: Path, *flags: str) -> tuple[int, dict[str, Any]]:
    proc = cli.run_here(["compare", str(export), str(export), *_ARMS, "--format", "json", *flags], cwd=export.parent)
    assert proc.returncode in (0, 2), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _same(report: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in report.items() if k not in ("provenance", "details")}
    kept |= {arm: {**report[arm], "agent": None} for arm in ("baseline", "candidate")}
    return cli.stable(kept)


@pytest.mark.parametrize(
    "flags",
    [
        ("--alpha", "0.01"),
        ("--on-error", "exclude", "--allow-incomplete"),
        ("--allow-significant-regression", "--margin", "0.1", "--min-completed", "0.5"),
        ("--runs", "3", "--seed", "7"),
    ],
    ids=["alpha", "on-error-exclude", "gate-policy", "runs"],
)
def test_compare_of_the_export_is_the_campaigns_report(campaigns: Campaigns, flags: tuple[str, ...]) -> None:
    store, [export] = campaigns(*flags)
    code, report = _report(store, "latest")
    compared_code, compared = _compare(export)
    assert compared_code == code
    assert _same(compared) == _same(report)


def test_runs_missing_from_the_export_are_partly_run_tasks(campaigns: Campaigns, tmp_path: Path) -> None:
    """An interrupted ``--runs 3`` campaign: the header's runs make the missing runs visible, and
    its suite the task that never ran (as the store's report lists them)."""
    export = _own_export(campaigns, tmp_path, "--runs", "3", "--seed", "7")
    header, *trials = export.read_text(encoding="utf-8").splitlines()
    kept = [t for t in trials if json.loads(t)["run"] < 2 and json.loads(t)["task_id"] != "ok29"]
    export.write_text("\n".join([header, *kept]) + "\n", encoding="utf-8")
    code, report = _compare(export)
    assert code == 2 and report["verdict"] == "fail"
    reasons = {e["task_id"]: e["reason"] for e in report["excluded"]}
    assert reasons["ok00"].startswith("partly run: baseline 2 of 3 runs, candidate 2 of 3 runs")
    assert reasons["ok29"].startswith("missing")
    assert report["n_tasks"] == 42 and report["n_paired"] == 0


def test_a_flag_given_replaces_the_campaigns_setting(campaigns: Campaigns) -> None:
    store, [export] = campaigns("--alpha", "0.01")
    _, report = _report(store, "latest")
    _, compared = _compare(export, "--alpha", "0.2")
    assert report["provenance"]["alpha"] == 0.01 and compared["provenance"]["alpha"] == 0.2
    proc = cli.run_here(["report", "latest", "--store", str(store), "--format", "json", "--alpha", "0.2"],
                        cwd=store.parent)  # fmt: skip
    assert _same(compared) == _same(json.loads(proc.stdout))


def test_a_candidate_of_several_is_holm_adjusted_over_the_run(campaigns: Campaigns) -> None:
    """Two candidates with 5 improvements each (one-sided p = 1/32): each is "better" alone, not
    after Holm over both. Each export's claim is adjusted over both, the other at p = 1 (it is not
    in the file), which here is what the run's own report says."""
    store, exports = campaigns(candidates=("other", "other"))
    listed = json.loads(cli.run_here(["list", str(store), "--format", "json"], cwd=store.parent).stdout)
    for export, campaign in zip(exports, reversed(listed), strict=True):
        code, report = _report(store, campaign["campaign_id"])
        compared_code, compared = _compare(export)
        assert compared["improvement_holm_candidates"] == report["improvement_holm_candidates"] == 2
        assert compared["summary"] == report["summary"] == "no significant difference"
        assert compared["improvement_holm_pvalue"] == pytest.approx(2 / 32) and compared_code == code


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ({"alpha": "x"}, "field 'alpha': Input should be a valid number"),
        ({"bogus": 1}, "unknown field 'bogus' (known fields: seed, "),
        ("nope", "Input should be a valid dictionary"),
    ],
)
def test_a_header_config_that_is_no_configuration_is_one_line(
    campaigns: Campaigns, tmp_path: Path, config: Any, said: str
) -> None:
    """The header is read when both sides are the campaign's export: a config it cannot be
    judged by is the file's error, never a comparison under other settings."""
    export = _own_export(campaigns, tmp_path)
    header, *trials = export.read_text(encoding="utf-8").splitlines()
    campaign = json.loads(header)["campaign"]
    campaign["config"] = {**campaign["config"], **config} if isinstance(config, dict) else config
    export.write_text("\n".join([json.dumps({"campaign": campaign}), *trials]) + "\n", encoding="utf-8")
    proc = cli.run_here(["compare", str(export), str(export), *_ARMS], cwd=export.parent)
    assert proc.returncode == 1 and proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"ablation: error: {export}, line 1: the campaign header's config: ")
    assert said in line


def test_scorer_errors_and_retries_travel_with_the_export(campaigns: Campaigns) -> None:
    """A scorer that failed on a trial leaves its metric gate inconclusive, and retried trials are
    counted, in the re-read export as in the campaign's report."""
    store, [export] = campaigns("--quality", "agents.py:score", "--metric-margin", "qual=0.5",
                           "--max-attempts", "2", candidates=("flaky",))  # fmt: skip
    code, report = _report(store, "latest")
    gate = next(g for g in report["gates"] if g["name"] == "non-inferiority of qual")
    assert gate["status"] == "inconclusive" and report["candidate"]["retried"] > 0
    compared_code, compared = _compare(export)
    assert compared_code == code == 2
    assert compared["gates"] == report["gates"] and compared["errors"] == report["errors"]
    assert compared["candidate"]["retried"] == report["candidate"]["retried"]


def test_a_numeric_field_of_an_export_is_judged_with_its_header(campaigns: Campaigns, tmp_path: Path) -> None:
    """The header's alpha and suite hold for a numeric --field too: tasks cut from the export are
    missing, as in the verdict comparison."""
    export = _own_export(campaigns, tmp_path, "--alpha", "0.01")
    header, *trials = export.read_text(encoding="utf-8").splitlines()
    kept = [t for t in trials if json.loads(t)["task_id"] != "ok29"]
    export.write_text("\n".join([header, *kept]) + "\n", encoding="utf-8")
    proc = cli.run_here(["compare", str(export), str(export), *_ARMS, "--field", "latency_s", "--format", "json"],
                        cwd=export.parent)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    result = json.loads(proc.stdout)
    text = json.dumps(result)
    assert '"alpha": 0.01' in text and "ok29" in text


def test_two_headers_of_one_campaign_that_differ_are_refused(campaigns: Campaigns, tmp_path: Path) -> None:
    export = _own_export(campaigns, tmp_path, "--on-error", "exclude", "--allow-incomplete")
    header, *trials = export.read_text(encoding="utf-8").splitlines()
    campaign = json.loads(header)["campaign"]
    campaign["config"]["labels"] = {"edited": "yes"}
    other = export.with_name("other.jsonl")
    other.write_text("\n".join([json.dumps({"campaign": campaign}), *trials]) + "\n", encoding="utf-8")
    proc = cli.run_here(["compare", str(export), str(other), *_ARMS], cwd=export.parent)
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    assert f"{export} and {other} are exports of campaign {campaign['campaign_id']} whose headers differ" in line
    assert "(in config)" in line


@pytest.mark.parametrize("edit", ["run-beyond-runs", "second-header"])
def test_rows_the_header_cannot_hold_are_one_line(campaigns: Campaigns, tmp_path: Path, edit: str) -> None:
    export = _own_export(campaigns, tmp_path)
    header, *trials = export.read_text(encoding="utf-8").splitlines()
    extra = json.dumps({**json.loads(trials[0]), "run": 1}) if edit == "run-beyond-runs" else header
    export.write_text("\n".join([header, *trials, extra]) + "\n", encoding="utf-8")
    proc = cli.run_here(["compare", str(export), str(export), *_ARMS], cwd=export.parent)
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    at = f"ablation: error: {export}:{len(trials) + 2}: "
    said = "run 1, but the campaign ran 1 run(s) per task (its header, line 1)" if edit == "run-beyond-runs" \
        else "a second campaign header (the first is on line 1): an export holds one campaign"
    assert line.startswith(at + said)
