"""The command line end to end: run, compare, report, plan, init, exit codes and error lines."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli_shared import own_heap
from scipy.stats import binomtest, norm

from ablation.cli import main

ROOT = Path(__file__).resolve().parents[2]
REALDATA = ROOT / "examples" / "data"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def forty(tmp_path: Path) -> tuple[Path, Path]:
    """40 items: 3 improve, 4 regress, 20 pass in both, 13 fail in both."""
    before, after = [], []
    outcomes = [(True, True)] * 20 + [(False, True)] * 3 + [(True, False)] * 4 + [(False, False)] * 13
    for i, (b, a) in enumerate(outcomes):
        before.append({"id": f"case-{i:02d}", "passed": b})
        after.append({"id": f"case-{i:02d}", "passed": a})
    return write_jsonl(tmp_path / "before.jsonl", before), write_jsonl(tmp_path / "after.jsonl", after)


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with own_heap():  # the command's collections skip this process's own objects
        code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_forty_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before, after = forty(tmp_path)
    code, out, err = run_cli(["compare", str(before), str(after)], capsys)
    assert code == 0, err
    assert "24/40" in out and "23/40" in out  # both pass rates
    assert "Wilson" in out
    assert "McNemar" in out
    for i in range(23, 27):  # the four regressions, named
        assert f"case-{i:02d}" in out
    for i in range(20, 23):  # the three improvements, named
        assert f"case-{i:02d}" in out
    code, out, _ = run_cli(["compare", str(before), str(after), "--format", "json"], capsys)
    report = json.loads(out)
    assert code == 0
    assert report["mcnemar"]["pvalue"] == 1.0
    assert report["table"] == {"both_pass": 20, "regressions": 4, "improvements": 3, "both_fail": 13}
    assert report["regressions"] == [f"case-{i:02d}" for i in range(23, 27)]
    assert report["improvements"] == [f"case-{i:02d}" for i in range(20, 23)]
    assert report["baseline"]["pass_rate_ci"]["method"].startswith("Wilson")


def test_compare_real_swebench_same_source(capsys: pytest.CaptureFixture[str]) -> None:
    base = REALDATA / "swebench-verified-mini__gpt-5.jsonl"
    cand = REALDATA / "swebench-verified-mini__gpt-5-mini.jsonl"
    code, out, _ = run_cli(["compare", str(base), str(cand), "--format", "json"], capsys)
    report = json.loads(out)
    # 54 regressions against 28 improvements is a significant regression: the default gate fails
    assert code == 2
    # SOURCES.md: gpt-5 -> gpt-5-mini: 271 / 54 / 28 / 147
    assert report["table"] == {"both_pass": 271, "regressions": 54, "improvements": 28, "both_fail": 147}
    # scipy.stats.binomtest(28, 82, 0.5).pvalue on the discordant counts
    assert report["mcnemar"]["pvalue"] == pytest.approx(binomtest(28, 82, 0.5).pvalue, rel=1e-9)
    assert report["summary"] == "regression"


def test_compare_different_sources_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    base = REALDATA / "swebench-verified-mini__gpt-5.jsonl"
    cand = REALDATA / "swebench-pro-public__gpt-5.jsonl"
    code, out, err = run_cli(["compare", str(base), str(cand), "--format", "json"], capsys)
    # no id in common: nothing to pair is a wrong file or key, one line and exit 1, never a report
    assert (code, out) == (1, "")
    assert err.count("\n") == 1 and "no task id in common" in err and "(500 and 724 distinct ids" in err


@pytest.mark.parametrize(
    ("name", "before_text", "expect"),
    [
        ("malformed", "".join(f'{{"id": "a{i}", "passed": true}}\n' for i in range(6)) + "{oops\n", ":7:"),
        ("duplicate", '{"id": "a", "passed": true}\n{"id": "a", "passed": false}\n', "'a'"),
        ("maybe", '{"id": "a", "passed": "maybe"}\n', "maybe"),
        ("nokey", '{"name": "a", "passed": true}\n', ":1:"),
    ],
)
def test_bad_inputs_exit_1_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, before_text: str, expect: str
) -> None:
    before = tmp_path / f"{name}.jsonl"
    before.write_text(before_text, encoding="utf-8")
    after = write_jsonl(tmp_path / "after.jsonl", [{"id": "a", "passed": True}])
    code, _, err = run_cli(["compare", str(before), str(after)], capsys)
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert expect in lines[0] and f"{name}.jsonl" in lines[0]
    assert "Traceback" not in err


def test_duplicate_names_both_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = tmp_path / "dup.jsonl"
    before.write_text('{"id": "x", "passed": true}\n{"id": "y", "passed": true}\n{"id": "x", "passed": false}\n')
    code, _, err = run_cli(["compare", str(before), str(before)], capsys)
    assert code == 1 and "1" in err and "3" in err and "'x'" in err


def test_unknown_format_and_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    weird = tmp_path / "results.xml"
    weird.write_text("<x/>")
    code, _, err = run_cli(["compare", str(weird), str(weird)], capsys)
    assert code == 1 and "results.xml" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(["compare", str(tmp_path / "nope.jsonl"), str(weird)], capsys)
    assert code == 1 and "nope.jsonl" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(["compare", str(weird)], capsys)  # usage error
    assert (code == 1 and "usage" not in err.lower()) or code == 1


def test_debug_shows_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["compare", str(tmp_path / "nope.jsonl"), str(tmp_path / "x.jsonl"), "--debug"], capsys)
    assert code == 1 and "Traceback" in err


def test_critical_regression_fails_even_at_p_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = write_jsonl(tmp_path / "b.jsonl", [
        {"id": "safe-1", "passed": True}, {"id": "safe-2", "passed": False},
        {"id": "refund-limit", "passed": True, "critical": True}, {"id": "other", "passed": True},
    ])
    after = write_jsonl(tmp_path / "a.jsonl", [
        {"id": "safe-1", "passed": True}, {"id": "safe-2", "passed": True},
        {"id": "refund-limit", "passed": False, "critical": True}, {"id": "other", "passed": True},
    ])
    code, out, _ = run_cli(["compare", str(before), str(after), "--format", "json"], capsys)
    report = json.loads(out)
    assert report["mcnemar"]["pvalue"] == 1.0
    assert report["critical_regressions"] == ["refund-limit"]
    assert code == 2
    code, out, _ = run_cli(["compare", str(before), str(after)], capsys)
    assert code == 2
    assert out.index("refund-limit") < out.index("safe-2")  # the critical task is named first


def test_noninferiority_inconclusive_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = [(True, False)] * 30 + [(False, True)] * 20 + [(True, True)] * 800 + [(False, False)] * 150
    before = write_jsonl(tmp_path / "b.jsonl", [{"id": f"t{i}", "passed": b} for i, (b, _) in enumerate(outcomes)])
    after = write_jsonl(tmp_path / "a.jsonl", [{"id": f"t{i}", "passed": a} for i, (_, a) in enumerate(outcomes)])
    code, out, _ = run_cli(["compare", str(before), str(after), "--margin", "0.02", "--format", "json"], capsys)
    report = json.loads(out)
    assert report["noninferiority"]["decision"] == "inconclusive"
    # exact unconditional p-value (the asymptotic score p was 0.0851)
    assert report["noninferiority"]["pvalue"] == pytest.approx(0.0869, abs=0.001)
    gate = next(g for g in report["gates"] if "inferior" in g["name"])
    assert gate["status"] == "inconclusive"
    assert report["verdict"] == "fail" and code == 2


def test_plan_prints_connor_sample_size(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        ["plan", "--discordance", "0.10", "--uplift", "0.03", "--alpha", "0.05", "--power", "0.8", "--two-sided"], capsys
    )
    # Connor (1987): n = (z_{1-a/2} sqrt(psi) + z_{1-b} sqrt(psi - delta^2))^2 / delta^2
    za, zb = norm.ppf(0.975), norm.ppf(0.8)
    n = (za * math.sqrt(0.10) + zb * math.sqrt(0.10 - 0.03**2)) ** 2 / 0.03**2
    assert code == 0
    assert f"tasks needed: {math.ceil(n)}" in out and math.ceil(n) == 870
    code, out, _ = run_cli(["plan", "--discordance", "0.10", "--tasks", "500", "--two-sided"], capsys)
    assert code == 0 and "0.0395" in out


def test_run_json_and_report_rerender(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["run", str(ROOT / "tasks/arithmetic.py"), "--baseline", str(ROOT / "agents/arithmetic.py:baseline"),
            "--candidate", str(ROOT / "agents/arithmetic.py:candidate"), "--format", "json", "--resamples", "500"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["table"]["regressions"] == 4 and report["table"]["improvements"] == 10
    assert (tmp_path / ".ablation" / "runs.db").exists()
    code, out, _ = run_cli(["report", "latest", "--format", "json", "--resamples", "500"], capsys)
    again = json.loads(out)
    assert code == 0
    assert again["regressions"] == report["regressions"] and again["mcnemar"] == report["mcnemar"]
    assert again["uplift"] == report["uplift"]
    code, out, _ = run_cli(["report", "latest", "--format", "markdown", "--resamples", "500"], capsys)
    assert code == 0 and "|" in out
    html = tmp_path / "r.html"
    code, _, _ = run_cli(["report", "--format", "html", "-o", str(html), "--resamples", "500"], capsys)
    assert code == 0 and "<svg" in html.read_text()


def test_several_candidates_get_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    before, after = forty(tmp_path)
    code, out, err = run_cli(["compare", str(before), str(after), str(before), "--format", "markdown"], capsys)
    assert code == 0, err
    assert "Holm" in out
    code, out, _ = run_cli(["compare", str(before), str(after), str(before), "--format", "json"], capsys)
    payload = json.loads(out)  # one JSON document, not several glued together
    assert [c["name"] for c in payload["candidates"]] == ["after.jsonl", "before.jsonl"]
    assert payload["candidates"][1]["report"]["table"]["regressions"] == 0
    assert len(payload["summary"]["rows"]) == 2
    page = tmp_path / "cands.html"
    code, _, err = run_cli(["compare", str(before), str(after), str(before), "--format", "html", "-o", str(page)], capsys)
    assert code == 0, err
    assert "Candidates vs baseline" in page.read_text()
    assert (tmp_path / "cands.candidate-1.html").exists() and (tmp_path / "cands.candidate-2.html").exists()


def test_pyproject_defaults(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.ablation]\nalpha = 0.2\nresamples = 300\n")
    before, after = forty(tmp_path)
    code, out, _ = run_cli(["compare", str(before), str(after), "--format", "json"], capsys)
    report = json.loads(out)
    assert report["provenance"]["alpha"] == 0.2 and report["provenance"]["n_resamples"] == 300
    code, out, _ = run_cli(["compare", str(before), str(after), "--format", "json", "--alpha", "0.01"], capsys)
    assert json.loads(out)["provenance"]["alpha"] == 0.01
    (tmp_path / "pyproject.toml").write_text("[tool.ablation]\nalpha_typo = 0.2\n")
    code, _, err = run_cli(["compare", str(before), str(after)], capsys)
    assert code == 1 and "alpha_typo" in err


def test_init_scaffolds_a_runnable_project(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(["init"], capsys)
    assert code == 0
    assert (tmp_path / "tasks" / "example.py").exists() and (tmp_path / "agents" / "example.py").exists()
    assert "[tool.ablation]" in (tmp_path / "pyproject.toml").read_text()
    command = out.strip().splitlines()[-1].split()
    assert command[:2] == ["ablation", "run"]
    code, out, err = run_cli([*command[1:], "--format", "json"], capsys)
    report = json.loads(out)
    assert code == 0, err
    assert report["regressions"] and report["n_paired"] == 10
    code, _, err = run_cli(["init"], capsys)
    assert code == 1 and "exists" in err


@pytest.mark.parametrize("command", ["run", "compare", "report", "plan", "init"])
def test_every_command_has_help_with_an_example(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli([command, "--help"], capsys)
    assert code == 0 and "example:" in out


def test_console_script_subprocess(tmp_path: Path) -> None:
    exe = shutil.which("ablation")
    assert exe, "the ablation console script is not installed (pip install -e .)"
    before, after = forty(tmp_path)
    proc = subprocess.run([exe, "compare", str(before), str(after), "--format", "markdown"],
                          capture_output=True, text=True, check=False, cwd=tmp_path,
                          env={**os.environ, "COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    assert "case-23" in proc.stdout
    proc = subprocess.run([exe, "compare", str(tmp_path / "missing.csv"), str(after)],
                          capture_output=True, text=True, check=False, cwd=tmp_path)
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1
    assert sys.executable  # the same interpreter runs the script


def test_resume_command_skips_finished_candidates_and_replaces_store() -> None:
    from ablation.cli.resume_hint import resume_command as _resume_command

    argv = ["run", "tasks/x.py", "--baseline", "a.py:b", "--candidate", "a.py:c1",
            "--candidate=a.py:c2", "--store", "old.db", "--resume", "--seed", "3"]
    command = _resume_command(argv, ["a.py:c1"], Path("my runs/runs.db"), "20261129-1")
    assert command == (
        "ablation run tasks/x.py --baseline a.py:b --candidate=a.py:c2 --seed 3 "
        "--store 'my runs/runs.db' --resume 20261129-1"
    )


def test_report_keeps_stored_gates_and_names_missing_tasks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ablation import AblationTask, CampaignConfig, GatePolicy, RunStore, TaskResult
    from ablation.schema import suite_fingerprint, task_digests

    monkeypatch.chdir(tmp_path)
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(3)]
    config = CampaignConfig(n_resamples=300, gates=GatePolicy(noninferiority_margin=0.05))
    with RunStore(tmp_path / "runs.db") as store:
        cid = store.create_campaign(
            config=config, suite_fingerprint=suite_fingerprint(tasks),
            task_digests=task_digests(tasks), baseline_agent="b", candidate_agent="c",
        )
        for tid in ("t0", "t1"):
            for arm in ("baseline", "candidate"):
                store.append(cid, TaskResult(task_id=tid, arm=arm, passed=True))
        store.set_status(cid, "interrupted")
    code, out, err = run_cli(["report", "--store", str(tmp_path / "runs.db"), "--format", "json"], capsys)
    report = json.loads(out)
    # two pairs cannot show non-inferiority: the stored gate is inconclusive, so exit 2
    assert code == 2 and "interrupted" in err and "4 trial(s) stored" in err
    assert {e["task_id"]: e["reason"] for e in report["excluded"]} == {
        "t2": "missing: no result in either arm"
    }
    assert report["n_tasks"] == 3 and report["n_paired"] == 2
    assert any("inferior" in g["name"] for g in report["gates"])  # the stored gate still applies
    assert report["provenance"]["n_resamples"] == 300
    code, out, _ = run_cli(["report", "--store", str(tmp_path / "runs.db"), "--format", "json",
                            "--alpha", "0.2"], capsys)
    again = json.loads(out)
    assert again["provenance"]["alpha"] == 0.2 and any("inferior" in g["name"] for g in again["gates"])


def test_report_of_a_killed_campaign_says_interrupted_as_list_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a killed run never marks its campaign: the store still says "running", but no process holds
    # its run lock, so `list` shows it as interrupted, and `report` must say the same
    from ablation import AblationTask, CampaignConfig, RunStore, TaskResult
    from ablation.schema import suite_fingerprint, task_digests

    monkeypatch.chdir(tmp_path)
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(3)]
    with RunStore(tmp_path / "runs.db") as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=200), suite_fingerprint=suite_fingerprint(tasks),
            task_digests=task_digests(tasks), baseline_agent="b", candidate_agent="c",
        )
        store.append(cid, TaskResult(task_id="t0", arm="baseline", passed=True))
        assert store.get_campaign(cid).status == "running"
    code, out, _ = run_cli(["list", str(tmp_path / "runs.db")], capsys)
    assert code == 0 and "interrupted" in out and "running" not in out
    code, _, err = run_cli(["report", "--store", str(tmp_path / "runs.db")], capsys)
    assert code == 2
    assert f"campaign {cid} is interrupted: 1 trial(s) stored" in err and "running" not in err
