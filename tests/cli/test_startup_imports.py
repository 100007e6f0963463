"""What ``ablation compare`` imports at start-up (issue 13: a 500-line compare in under 0.5 s).

Each module below costs milliseconds of every run and is not needed by a binary compare: the
sequential, repeated-runs, planning and equivalence statistics (``ablation.stats`` loads names on
first use) and the ``[tool.ablation]`` type model when there is no such table. The import list
comes from ``PYTHONPROFILEIMPORTTIME=1`` as in ``test_compare_no_scipy.py``. The settings and the
thread pool that only large reports use are checked in a fresh interpreter, so that nothing
imported by other tests hides a module-level import.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ablation.cli.settings import load_tool_settings
from ablation.errors import ConfigError
from tests.cli.test_compare_no_scipy import _imported
from tests.helpers.cli import cli_env, fresh_python, run

NOT_IMPORTED = {
    "ablation.stats.sequential",
    "ablation.stats.sequential_cs",
    "ablation.stats.sequential_monitor",
    "ablation.stats.sequential_sim",
    "ablation.stats.repeated",
    "ablation.stats.planning",
    "ablation.stats.equivalence",
    "ablation.cli.tool_settings",
}


def _write(path: Path, rate: float, seed: int) -> None:
    rng = random.Random(seed)
    rows = (json.dumps({"id": f"t{i:03d}", "passed": rng.random() < rate}) for i in range(200))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_binary_compare_leaves_unused_modules_alone(tmp_path: Path) -> None:
    base, cand, out = tmp_path / "b.jsonl", tmp_path / "c.jsonl", tmp_path / "r.json"
    _write(base, 0.6, 3)
    _write(cand, 0.65, 4)
    proc = run(
        ["compare", str(base), str(cand), "--format", "json", "-o", str(out)],
        cli_env(PYTHONPROFILEIMPORTTIME="1"),
    )
    assert proc.returncode in (0, 1, 2), proc.stderr[-2000:]
    imported = _imported(proc.stderr)
    assert {"ablation.stats.binary", "ablation.stats.power"} <= imported  # the list was captured
    assert not NOT_IMPORTED & imported
    assert json.loads(out.read_text(encoding="utf-8"))["n_paired"] == 200


def _settings_in_fresh_interpreter(cwd: Path) -> tuple[dict[str, object], list[str]]:
    code = (
        "import json, sys; from ablation.cli.settings import load_tool_settings;"
        "s = load_tool_settings();"
        "print(json.dumps([s, sorted(m for m in ('tomllib', 'ablation.cli.tool_settings') "
        "if m in sys.modules)]))"
    )
    settings, loaded = json.loads(fresh_python(code, cwd))
    return settings, loaded


def test_settings_without_a_table_skip_the_type_model(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    settings, loaded = _settings_in_fresh_interpreter(tmp_path)
    assert settings == {}
    assert loaded == ["tomllib"]


def test_settings_with_a_table_are_checked(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ablation]\nseed = 3\n", encoding="utf-8")
    settings, loaded = _settings_in_fresh_interpreter(tmp_path)
    assert settings == {"seed": 3}
    assert loaded == ["ablation.cli.tool_settings", "tomllib"]


@pytest.mark.parametrize("table", ["[tool.ablation]\n", "[tool.ablation]\nseed = true\n"])
def test_empty_table_is_valid_and_a_bad_value_still_fails(tmp_path: Path, table: str) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(table, encoding="utf-8")
    if "seed" in table:
        with pytest.raises(ConfigError, match=r"\[tool.ablation\] seed"):
            load_tool_settings(path)
    else:
        assert load_tool_settings(path) == {}


def test_background_call_imports_a_thread_pool_only_when_it_runs() -> None:
    code = (
        "import sys; from ablation.analysis.background import in_background\n"
        "with in_background(lambda: 1, False) as get: inline = get()\n"
        "print(inline, 'concurrent.futures' in sys.modules)\n"
        "with in_background(lambda: 2, True) as get: threaded = get()\n"
        "print(threaded, 'concurrent.futures' in sys.modules)"
    )
    assert fresh_python(code).split() == ["1", "False", "2", "True"]


def test_models_are_built_without_parsing_a_builtin_signature() -> None:
    """``Field(default_factory=list)`` made pydantic parse ``list``'s text signature when the
    report's models were built; the first parse compiles the tokenizer's regular expression,
    ~5 ms of every command. ``inspect._signature_fromstr`` is where such a parse happens."""
    code = (
        "import inspect\n"
        "calls = []\n"
        "parse = inspect._signature_fromstr\n"
        "inspect._signature_fromstr = lambda *a, **k: calls.append(a[1]) or parse(*a, **k)\n"
        "import ablation.analysis.build, ablation.cli.commands, ablation.run.campaign\n"
        "print(len(calls), calls[:3])"
    )
    assert fresh_python(code).startswith("0 ")
