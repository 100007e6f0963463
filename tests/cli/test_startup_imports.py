"""What the command line imports and builds at start-up (issue 13: a 500-line compare in under
0.5 s).

The ``[tool.ablation]`` type model is not imported when there is no such table, the thread pool
that only large reports use is imported only when one runs, and the report's models are built
without parsing a builtin's text signature; each is checked in a fresh interpreter, so that
nothing imported by other tests hides a module-level import. What a binary compare leaves alone
(the sequential, repeated-runs, planning and equivalence statistics, and the type model) is
checked on its import list in ``test_compare_no_scipy.py``, beside scipy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ablation.cli.settings import load_tool_settings
from ablation.errors import ConfigError
from tests.helpers.cli import fresh_python


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
