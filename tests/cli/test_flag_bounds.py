"""Issue 11 item 15 (remainder) and ``--max-output-bytes``: every bad numeric flag is one line
naming the flag before anything runs; ``tool = 5`` names the key; the output cap reaches command
agents and an overflow is that trial's error, not the campaign's.
"""

from __future__ import annotations

import json
import math
import sqlite3
import sys
from pathlib import Path

import pytest
from helpers import cli
from helpers.cli_shared import run_here

from ablation.cli.main import main

SUITE = str(Path(__file__).resolve().parents[1] / "helpers" / "slow_suite.py")
AGENTS = str(Path(__file__).resolve().parents[1] / "helpers" / "slow_agents.py")
RUN = ["run", SUITE, "--baseline", f"{AGENTS}:baseline", "--candidate", f"{AGENTS}:candidate",
       "--no-progress", "--format", "json"]
PLAN = ["plan", "--discordance", "0.1", "--uplift", "0.03"]
COMPARE = ["compare", "a.jsonl", "b.jsonl"]

BAD = [
    *((RUN, flag, value) for flag, value in [
        ("--runs", "0"), ("--runs", "-1"), ("--runs", "1.5"), ("--runs", "10000000000"),
        ("--concurrency", "0"), ("--timeout", "0"), ("--timeout", "nan"), ("--timeout", "inf"),
        ("--timeout", "-3"), ("--max-attempts", "0"), ("--fail-fast", "-1"), ("--alpha", "0"),
        ("--alpha", "1"), ("--alpha", "nan"), ("--confidence", "1.5"), ("--seed", "-1"),
        ("--seed", "x"), ("--margin", "0"), ("--margin", "2"), ("--margin", "nan"),
        ("--min-completed", "1.5"), ("--max-latency-ratio", "0"), ("--max-latency-ratio", "inf"),
        ("--max-output-bytes", "0"), ("--max-output-bytes", "-5"), ("--max-output-bytes", "1e3"),
        ("--dask-local", "0"), ("--resamples", "5"), ("--rate-limit", "1e-300"),
        ("--rate-limit", "inf"),
    ]),
    *((COMPARE, flag, value) for flag, value in [
        ("--regression-delta", "-1"), ("--regression-delta", "nan"), ("--margin", "inf"),
        ("--alpha", "-0.1"), ("--stop-when-inconclusive-after", "0"),
    ]),
    *((PLAN, flag, value) for flag, value in [
        ("--discordance", "0"), ("--discordance", "nan"), ("--discordance", "2"),
        ("--uplift", "-2"), ("--uplift", "inf"), ("--alpha", "0"),
        ("--alpha", "1"), ("--power", "1"), ("--power", "0"), ("--tasks", "0"),
        ("--tasks", "100000000000"), ("--margin", "nan"), ("--simulations", "0"),
        ("--simulations", "1e9"),
    ]),
]


@pytest.mark.parametrize(("command", "flag", "value"), BAD)
def test_a_bad_numeric_flag_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    command: list[str], flag: str, value: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main([*command, f"{flag}={value}"])
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    [line] = err.strip().splitlines()
    assert line.startswith("ablation: error: ") and f"argument {flag}: {flag} must be" in line
    assert not (tmp_path / ".ablation").exists()  # nothing ran


@pytest.mark.parametrize(
    ("discordance", "uplift", "fragment"),
    [("0.05", "0.1", "cannot exceed the discordance 0.05"),
     ("0.05", "-0.1", "cannot exceed the discordance 0.05"),
     ("0.05", "1e-300", "--uplift 1e-300 must be at least 1e-06 in size")],
)
def test_plan_errors_name_the_flags(
    capsys: pytest.CaptureFixture[str], discordance: str, uplift: str, fragment: str
) -> None:
    code = main(["plan", "--discordance", discordance, "--uplift", uplift])
    [line] = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and fragment in line and "psi" not in line


def test_a_plan_past_the_exact_power_limit_gives_connors_n_and_says_why_no_more(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Connor's n is defined at any size; the exact power is not computed past 10^7 tasks (this
    plan once failed with an internal limit's message)."""
    from scipy.stats import norm

    code = main(["plan", "--discordance", "1", "--uplift", "0.000001", "--two-sided"])
    out = capsys.readouterr().out
    # Connor (1987): n = (z_a/2 sqrt(psi) + z_b sqrt(psi - delta^2))^2 / delta^2
    n = (norm.ppf(0.975) + norm.ppf(0.8) * math.sqrt(1 - 1e-12)) ** 2 / 1e-12
    printed = int(out.split("tasks needed: ", 1)[1].split()[0])
    assert code == 0 and abs(printed - n) <= 1e-9 * n
    assert "exact McNemar power not computed above 10000000 tasks" in out


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("tool = 5\n", "pyproject.toml tool: must be a table"),
     ("[tool.ablation]\nmax_output_bytes = 0\n", "[tool.ablation] max_output_bytes:"),
     ("[tool.ablation]\nmargin = 0\n", "[tool.ablation] margin:")],
)
def test_pyproject_errors_name_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    text: str, fragment: str,
) -> None:
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code = main(RUN)
    [line] = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and fragment in line and "AttributeError" not in line
    assert not (tmp_path / ".ablation").exists()


@pytest.mark.slow
def test_max_output_bytes_caps_a_flooding_command_agent(tmp_path: Path) -> None:
    flood = tmp_path / "flood.py"
    flood.write_text(
        "import sys\nsys.stdin.read()\nsys.stdout.write('A' * (2 * 1024 * 1024))\n", encoding="utf-8"
    )
    store = tmp_path / "runs.db"
    args = ["run", SUITE, "--baseline", f"{AGENTS}:baseline", "--candidate",
            f"cmd:{sys.executable} {flood}", "--store", str(store), "--no-progress",
            "--format", "json", "--max-output-bytes", "1000000", "--timeout", "30"]
    done = run_here(args, {"SLOW_SUITE_TASKS": "3", "SLOW_AGENTS_SCALE": "0", "SLOW_SUITE_CHANGE": None})
    assert done.returncode in (0, 2), done.stderr  # the gates decide, not a crash
    json.loads(done.stdout)
    with sqlite3.connect(store) as conn:
        rows = conn.execute(
            "SELECT status, json_extract(result_json, '$.error_message') FROM trials"
            " WHERE arm = 'candidate'"
        ).fetchall()
    assert len(rows) == 3
    for status, message in rows:
        assert status == "error" and "1000000" in message, message
    assert cli.campaigns(store)[0][1] == "complete"
