"""Issue 11 item 15: ``[tool.ablation]`` values and bounded flags are checked before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ablation.cli.main import main

SUITE = str(Path(__file__).resolve().parents[1] / "helpers" / "slow_suite.py")
AGENTS = str(Path(__file__).resolve().parents[1] / "helpers" / "hostile_agents.py")


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ('no_significant_regression = "false"', "no_significant_regression"),
        ('critical_gate = "no"', "critical_gate"),
        ('quality = "rubric"', "quality"),
        ('retry_on = "ValueError"', "retry_on"),
        ("store = 5", "store"),
        ("seed = true", "seed"),
        ('format = "pdf"', "format"),
        ("rate_limit = 1e-300", "rate_limit"),
        ("resamples = 100000000000", "resamples"),
        ("labels = { team = nan }", "labels.team"),  # a path into a value keeps its tail
        ("metric_margins = { m = nan }", "metric_margins.m"),  # a table's entry is named too
    ],
)
def test_bad_tool_settings_name_the_key_and_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    line: str, key: str,
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.ablation]\n{line}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code = main(["run", SUITE, "--baseline", f"{AGENTS}:ok", "--candidate", f"{AGENTS}:ok",
                 "--no-progress", "--format", "json"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"pyproject.toml [tool.ablation] {key}:" in err
    assert not (tmp_path / ".ablation").exists()  # nothing ran, no store was created


@pytest.mark.parametrize(
    ("flag", "value"), [("--rate-limit", "1e-300"), ("--resamples", "100000000000")]
)
def test_unbounded_flags_are_refused_up_front(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    flag: str, value: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["run", SUITE, "--baseline", f"{AGENTS}:ok", "--candidate", f"{AGENTS}:ok",
                 "--no-progress", flag, value])
    assert code == 1
    assert f"{flag} must be" in capsys.readouterr().err
