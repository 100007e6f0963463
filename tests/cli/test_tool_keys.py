"""Every documented ``[tool.ablation]`` key is accepted and takes effect through a real
``pyproject.toml``; option errors name the flag (or the file's key) that set the bad value.

The documented list is the docstring of :mod:`ablation.cli.settings`; the declared list is the
option table (:mod:`ablation.cli.option_table`, from which
:class:`ablation.cli.tool_settings.ToolSettings` is built). Every key is written to a
``pyproject.toml`` in a scratch project, read back by the command line's own settings path and
followed to the :class:`CampaignConfig` field it feeds; the keys that change a report are also
checked end to end through ``ablation compare`` / ``ablation run``.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from ablation.cli import main, settings
from ablation.cli.option_table import OPTIONS, option_of
from ablation.cli.options import campaign_config, merged_settings
from ablation.cli.parser import build_parser
from ablation.cli.tool_settings import known_keys
from ablation.config import ModelPrice
from ablation.errors import ConfigError

AGENTS = str(Path(__file__).resolve().parents[1] / "helpers" / "sdk_agents.py")

#: key -> (TOML value, the Python value read back); every documented key has an entry.
VALUES: dict[str, tuple[str, Any]] = {
    "alpha": ("0.1", 0.1), "confidence": ("0.9", 0.9), "resamples": ("2000", 2000),
    "seed": ("7", 7), "margin": ("0.03", 0.03), "no_significant_regression": ("false", False),
    "allow_significant_regression": ("true", True), "min_completed": ("0.5", 0.5),
    "require_complete": ("false", False), "allow_incomplete": ("true", True),
    "critical_gate": ("false", False), "metric_margins": ("{ latency_s = 0.5 }", {"latency_s": 0.5}),
    "max_latency_ratio": ("1.5", 1.5), "concurrency": ("3", 3), "timeout": ("12.5", 12.5),
    "runs": ("2", 2), "store": ('"results/runs.db"', "results/runs.db"), "on_error": ('"exclude"', "exclude"),
    "fail_fast": ("4", 4), "max_attempts": ("3", 3), "retry_on": ('["ValueError"]', ["ValueError"]),
    "rate_limit": ("50", 50), "quality": ('["code_quality"]', ["code_quality"]),
    "format": ('"junit"', "junit"), "timestamps": ("true", True), "labels": ('{ team = "evals" }', {"team": "evals"}),
    "sequential": ("true", True), "stop_when_inconclusive_after": ("40", 40),
    "isolation": ('"process"', "process"), "worker_memory_mb": ("512", 512),
    "max_output_bytes": ("4096", 4096), "agent_env": ('["OPENAI_API_KEY"]', ["OPENAI_API_KEY"]),
    "sandbox": ('"process"', "process"), "traces": ('"off"', "off"), "suite_claim": ("true", True),
    "prices": ("{ m = { input_per_mtok = 1.0, output_per_mtok = 2.0, cached_input_per_mtok = 0.5, "
               "cache_write_per_mtok = 1.25 } }",
               {"m": {"input_per_mtok": 1.0, "output_per_mtok": 2.0, "cached_input_per_mtok": 0.5,
                      "cache_write_per_mtok": 1.25}}),
}  # fmt: skip


#: key -> (CampaignConfig field path, the value there) where the key is translated on the way.
TRANSLATED: dict[str, tuple[str, Any]] = {
    "no_significant_regression": ("gates.no_significant_regression", False),
    "allow_significant_regression": ("gates.no_significant_regression", False),
    "require_complete": ("gates.require_complete", False), "allow_incomplete": ("gates.require_complete", False),
    "critical_gate": ("gates.critical_must_not_regress", False),
    "metric_margins": ("gates.metric_margins", {"latency_s": 0.5}), "retry_on": ("retry.retry_on", (ValueError,)),
    "labels": ("labels", {"team": "evals"}), "sequential": ("sequential.candidates", 1),
    "stop_when_inconclusive_after": ("sequential.futility_after", 40), "suite_claim": ("sequential.suite_claim", True),
    "prices": ("prices", {"m": ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0, cached_input_per_mtok=0.5,
                                          cache_write_per_mtok=1.25)}),
}  # fmt: skip


def _at(config: Any, path: str) -> Any:
    for part in path.split("."):
        config = getattr(config, part)
    return config


def _documented() -> set[str]:
    text = (settings.__doc__ or "").split("The accepted keys")[0]
    text = re.sub(r"\([^)]*\)", "", text)  # the values and notes in parentheses
    return {k.replace("-", "_") for k in re.findall(r"``([a-z][a-z-]*)``", text)}


def test_the_documented_keys_are_the_declared_keys() -> None:
    assert _documented() == set(known_keys()) == set(VALUES)


@pytest.mark.parametrize("key", sorted(VALUES))
def test_every_key_round_trips_through_pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    toml, value = VALUES[key]
    written = key.replace("_", "-") if len(key) % 2 else key  # both spellings are accepted
    lines = [f"{written} = {toml}"]
    if key in ("stop_when_inconclusive_after", "suite_claim"):
        lines.append("sequential = true")
    if key == "worker_memory_mb":
        lines.append('isolation = "process"')
    (tmp_path / "pyproject.toml").write_text("[tool.ablation]\n" + "\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = build_parser("run").parse_args(["run", "suite.py", "--baseline", "a", "--candidate", "b"])
    s = merged_settings(args)
    assert s[key] == (str(Path.cwd().resolve() / value) if key == "store" else value)  # a path: the file's folder's
    config = campaign_config({**s, "n_candidates": 1})  # the command line builds its configuration from it
    option = option_of(key)
    if key in TRANSLATED:
        path, expected = TRANSLATED[key]
        assert _at(config, path) == expected
    elif option.config is not None:
        assert _at(config, option.config) == value
    else:  # read by the command from the settings under the flag's name: store, format, quality, ...
        assert option.target == key
    assert set(TRANSLATED) == {o.key for o in OPTIONS if o.key and o.config and not o.copied}


def _write(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _project(tmp: Path, monkeypatch: pytest.MonkeyPatch, table: str) -> list[str]:
    """A project whose pyproject.toml holds ``table``; returns the compare arguments of two files
    where ids t005..t009 are missing from the candidate and every row has a latency."""
    (tmp / "pyproject.toml").write_text(f"[tool.ablation]\n{table}\n", encoding="utf-8")
    monkeypatch.chdir(tmp)
    before = [{"id": f"t{i:03d}", "passed": True, "latency_s": 1.0 + i / 100} for i in range(10)]
    after = [{"id": f"t{i:03d}", "passed": True, "latency_s": 1.0 + i / 90} for i in range(5)]
    return [_write(tmp / "b.jsonl", before), _write(tmp / "a.jsonl", after)]


def _json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    code = main(args)
    out, err = capsys.readouterr()
    assert code in (0, 2), err
    return code, json.loads(out)


@pytest.mark.parametrize("table", ["require_complete = false", "allow-incomplete = true"])
def test_completeness_keys_turn_the_gate_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], table: str
) -> None:
    files = _project(tmp_path, monkeypatch, table)
    code, report = _json(["compare", *files, "--format", "json"], capsys)
    gate = next(g for g in report["gates"] if g["name"] == "complete comparison")
    assert (gate["status"], code) == ("off", 0)


def test_metric_margins_key_adds_its_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    files = _project(tmp_path, monkeypatch, "allow_incomplete = true\n[tool.ablation.metric_margins]\nlatency_s = 5.0")
    _, report = _json(["compare", *files, "--format", "json"], capsys)
    assert "non-inferiority of latency_s" in [g["name"] for g in report["gates"]]


def test_format_junit_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    files = _project(tmp_path, monkeypatch, 'format = "junit"\nallow_incomplete = true')
    assert main(["compare", *files]) == 0
    assert ET.fromstring(capsys.readouterr().out.split("\n", 1)[1]).tag == "testsuites"


def _suite(tmp: Path) -> str:
    (tmp / "suite.py").write_text(
        "from ablation import AblationTask\n"
        "tasks = [AblationTask(task_id=f't{n:03d}', input_data={'n': n}, expected_output=3 * n) for n in range(30)]\n",
        encoding="utf-8",
    )
    return str(tmp / "suite.py")


@pytest.mark.parametrize(("table", "field"), [("timestamps = true", "timestamps"), ("sequential = true", "sequential")])
def test_run_keys_take_effect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], table: str, field: str
) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    suite = _suite(tmp_path)
    run = ["run", suite, "--baseline", f"{AGENTS}:answer", "--candidate", f"{AGENTS}:answer",
           "--no-progress", "--no-store", "--format", "json"]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    _, plain = _json(run, capsys)
    (tmp_path / "pyproject.toml").write_text(f"[tool.ablation]\n{table}\n", encoding="utf-8")
    _, keyed = _json(run, capsys)
    if field == "timestamps":
        assert plain["provenance"]["started_at"] is None and keyed["provenance"]["started_at"]
    else:
        assert plain["sequential"] is None and keyed["sequential"] is not None


def test_a_bad_flag_value_names_the_flag_not_a_missing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # no pyproject.toml here or above (tmp)
    suite = _suite(tmp_path)
    base = ["run", suite, "--baseline", f"{AGENTS}:answer", "--candidate", f"{AGENTS}:answer", "--no-progress"]
    assert main([*base, "--retry-on", "NoSuchError"]) == 1
    err = capsys.readouterr().err
    assert "--retry-on" in err and "NoSuchError" in err and "pyproject" not in err
    assert main([*base, "--worker-memory-mb", "5", "--isolation", "process"]) == 1
    err = capsys.readouterr().err
    assert "--worker-memory-mb" in err and "worker_memory_mb" not in err
    (tmp_path / "pyproject.toml").write_text('[tool.ablation]\nretry_on = ["NoSuchError"]\n', encoding="utf-8")
    assert main(base) == 1
    assert f"{tmp_path / 'pyproject.toml'} [tool.ablation] retry_on:" in capsys.readouterr().err


@pytest.mark.parametrize(("where", "named"), [
    (["--metric-margin", "helpfulnes=1"], "--metric-margin"),
    ([], "[tool.ablation] metric_margins"),
])  # fmt: skip
def test_a_misspelt_metric_is_a_usage_error_listing_the_known_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    where: list[str], named: str,
) -> None:
    table = "allow_incomplete = true" + ("" if where else "\nmetric_margins = { helpfulnes = 1 }")
    files = _project(tmp_path, monkeypatch, table)
    assert main(["compare", *files, *where]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert named in err and "'helpfulnes'" in err and "latency_s" in err


@pytest.mark.parametrize(
    ("table", "flag", "gate_on"),
    [("allow-significant-regression = true", "--no-significant-regression", True),
     ("no-significant-regression = true", "--allow-significant-regression", False)],
)
def test_a_flag_wins_over_the_opposite_key_in_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str, flag: str, gate_on: bool
) -> None:
    """The first case was refused as a contradiction the user never typed."""
    (tmp_path / "pyproject.toml").write_text(f"[tool.ablation]\n{table}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = build_parser("compare").parse_args(["compare", "b.jsonl", "a.jsonl", flag])
    config = campaign_config({**merged_settings(args), "n_candidates": 1})
    assert config.gates.no_significant_regression is gate_on


def test_both_opposite_keys_in_the_file_are_named_where_they_were_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = "allow-significant-regression = true\nno-significant-regression = true"
    (tmp_path / "pyproject.toml").write_text(f"[tool.ablation]\n{table}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = build_parser("compare").parse_args(["compare", "b.jsonl", "a.jsonl"])
    with pytest.raises(ConfigError, match=r"\[tool.ablation\] allow_significant_regression and .*"
                       r"\[tool.ablation\] no_significant_regression contradict each other"):
        campaign_config({**merged_settings(args), "n_candidates": 1})
