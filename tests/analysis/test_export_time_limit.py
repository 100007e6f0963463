"""``compare`` of ``ablation`` export files counts a timed-out trial at the campaign's time limit.

An export's header holds the campaign's configuration, ``timeout_s`` included; without it a
timeout counted at the largest latency seen (a lower bound the report names as such), although
the limit the trial ran into was written in the file. The rules
(:func:`~ablation.analysis.latency_censoring.time_limit_of_files`): a ``timeout_s`` the user sets
wins; else the limit every file holding a timeout names; files with timeouts under different
limits are refused (one line, exit 1); a file without a timeout has no say.

Oracle: the report of the same trials given to ``compare_results`` with ``timeout_s`` set, and
the candidate's latency mean written out (exact arithmetic on the few values below).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here

from ablation import CampaignConfig, compare_results
from ablation.analysis.latency_censoring import time_limit_of_files
from ablation.errors import InputError
from ablation.schema import TaskResult

N = 12
BASE_LAT = [1.5 + 0.25 * i for i in range(N)]  # largest 4.25 s: far below every limit used
SLOW = {2, 5, 9}  # the candidate's timed-out tasks


def _trials(arm: str, slow: set[int]) -> list[TaskResult]:
    return [
        TaskResult(task_id=f"t{i:02d}", arm=arm, status="timeout", passed=False, error_type="Timeout")  # type: ignore[arg-type]
        if i in slow
        else TaskResult(task_id=f"t{i:02d}", arm=arm, passed=True, latency_s=BASE_LAT[i] * (1.25 if arm == "candidate" else 1))  # type: ignore[arg-type]
        for i in range(N)
    ]


def _export(path: Path, trials: list[TaskResult], config: dict[str, Any]) -> Path:
    header = {"campaign": {"campaign_id": path.stem, "config": config, "schema_version": 5}}
    lines = [json.dumps(header), *(t.model_dump_json() for t in trials)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _latency(before: Path, after: Path, cwd: Path) -> dict[str, Any]:
    proc = run_here(["compare", str(before), str(after), "--format", "json"], cwd=cwd)
    assert proc.returncode in (0, 2), proc.stderr
    latency: dict[str, Any] = json.loads(proc.stdout)["latency"]
    return latency


def _candidate_mean(cap: float) -> float:
    lat = [Fraction(cap) if i in SLOW else Fraction(BASE_LAT[i]) * Fraction(5, 4) for i in range(N)]
    return float(sum(lat) / N)


@pytest.mark.parametrize("base_limit", [60.0, 30.0, None], ids=["same", "other", "none"])
def test_timeouts_count_at_the_limit_the_export_names(tmp_path: Path, base_limit: float | None) -> None:
    """The candidate's file names 60 s; the baseline's limit (no timeout there) has no say."""
    before = _export(tmp_path / "before.jsonl", _trials("baseline", set()), {"timeout_s": base_limit, "runs": 1})
    after = _export(tmp_path / "after.jsonl", _trials("candidate", SLOW), {"timeout_s": 60.0, "runs": 1})
    latency = _latency(before, after, tmp_path)
    assert latency["censoring"] == "timed-out trials counted at 60 s, the time limit: their latencies are lower bounds"
    assert latency["candidate_mean"] == pytest.approx(_candidate_mean(60.0), rel=1e-12)
    assert latency["timeouts_only_candidate"] == len(SLOW)
    oracle = compare_results(_trials("baseline", set()), _trials("candidate", SLOW),
                             config=CampaignConfig(timeout_s=60.0)).latency  # fmt: skip
    assert oracle is not None
    assert latency == json.loads(oracle.model_dump_json())


def test_a_limit_the_user_sets_wins(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ablation]\ntimeout = 100\n", encoding="utf-8")
    before = _export(tmp_path / "before.jsonl", _trials("baseline", set()), {"timeout_s": 60.0})
    after = _export(tmp_path / "after.jsonl", _trials("candidate", SLOW), {"timeout_s": 60.0})
    latency = _latency(before, after, tmp_path)
    assert latency["censoring"].startswith("timed-out trials counted at 100 s, the time limit")
    assert latency["candidate_mean"] == pytest.approx(_candidate_mean(100.0), rel=1e-12)


@pytest.mark.parametrize("config", [{"runs": 1}, {"timeout_s": None}, {"timeout_s": "60"}, {"timeout_s": True}])
def test_a_header_without_a_usable_limit_leaves_it_unknown(tmp_path: Path, config: dict[str, Any]) -> None:
    """Without a limit, a timeout counts at the largest latency seen (the candidate's 5.3125 s)."""
    before = _export(tmp_path / "before.jsonl", _trials("baseline", set()), {"timeout_s": 60.0})
    after = _export(tmp_path / "after.jsonl", _trials("candidate", SLOW), config)
    latency = _latency(before, after, tmp_path)
    assert latency["censoring"].startswith("timed-out trials counted at 5.3125 s, the largest latency seen")
    assert latency["candidate_mean"] == pytest.approx(_candidate_mean(5.3125), rel=1e-12)


def test_timeouts_under_different_limits_are_refused(tmp_path: Path) -> None:
    before = _export(tmp_path / "before.jsonl", _trials("baseline", {1}), {"timeout_s": 30.0})
    after = _export(tmp_path / "after.jsonl", _trials("candidate", SLOW), {"timeout_s": 60.0})
    proc = run_here(["compare", str(before), str(after)], cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1
    assert f"trials timed out under different time limits ({before} under 30 s, {after} under 60 s)" in proc.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.ablation]\ntimeout = 60\n", encoding="utf-8")
    assert run_here(["compare", str(before), str(after)], cwd=tmp_path).returncode in (0, 2)


def test_time_limit_of_files_rules() -> None:
    unset = CampaignConfig()
    assert time_limit_of_files(unset).timeout_s is None
    assert time_limit_of_files(unset, [("a", 60.0, True), ("b", 30.0, False)]).timeout_s == 60.0
    assert time_limit_of_files(unset, [("a", 60.0, True), ("b", 60.0, True)]).timeout_s == 60.0
    assert time_limit_of_files(unset, [("a", 60.0, True), ("b", None, True)]).timeout_s is None
    assert time_limit_of_files(unset, [("a", 60.0, False), ("b", 30.0, False)]).timeout_s is None
    assert time_limit_of_files(CampaignConfig(timeout_s=5), [("a", 60.0, True), ("b", 30.0, True)]).timeout_s == 5
    with pytest.raises(InputError, match=r"^trials timed out under different time limits \(a under 60 s, b under 30 s\)"):
        time_limit_of_files(unset, [("a", 60.0, True), ("b", 30.0, True)])
