"""The option table is the one declaration of every option: the parsers, the ``[tool.ablation]``
model, the ranges, the error names and the configuration mapping all follow it.

References are outside the table: the argparse parsers as built, :class:`CampaignConfig`'s own
fields and defaults, and what a real ``pyproject.toml`` read by the command line accepts.
"""

from __future__ import annotations

import argparse
import functools
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation.cli.option_table import OPTIONS, SETTINGS_COMMANDS, Option
from ablation.cli.parser import UsageError, build_parser
from ablation.cli.settings import load_tool_settings
from ablation.config import CampaignConfig
from ablation.errors import ConfigError

COMMANDS = ("run", "compare", "report", "plan", "init", "list", "view")
#: The named arguments that are not options of the table: argparse's own.
ARGPARSE_OWN = {"-h", "--help"}


def _command_parser(command: str) -> argparse.ArgumentParser:
    sub = build_parser(command)._subparsers._group_actions[0]  # type: ignore[union-attr]
    return sub.choices[command]  # type: ignore[no-any-return]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_flag_of_every_command_is_a_table_entry(command: str) -> None:
    built = {
        (tuple(a.option_strings), a.dest) for a in _command_parser(command)._actions if a.option_strings
    } - {(("-h", "--help"), "help")}
    declared = {(o.flags, o.target) for o in OPTIONS if command in o.commands and o.flags}
    assert built == declared


def test_one_entry_per_name_key_and_flag_of_a_command() -> None:
    assert len({o.name for o in OPTIONS}) == len(OPTIONS)
    keys = [o.key for o in OPTIONS if o.key is not None]
    assert len(set(keys)) == len(keys)
    for command in COMMANDS:
        mine = [o for o in OPTIONS if command in o.commands]
        assert len({o.target for o in mine}) == len(mine)
        flags = [f for o in mine for f in o.flags]
        assert len(set(flags)) == len(flags)
    for o in OPTIONS:  # a key is read by a command that reads [tool.ablation]
        assert o.key is None or set(o.commands) & SETTINGS_COMMANDS, o.name


def _config_default(path: str) -> Any:
    value: Any = CampaignConfig()
    for part in path.split("."):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize("option", [o for o in OPTIONS if o.config is not None], ids=lambda o: o.name)
def test_config_paths_exist_and_defaults_agree(option: Option) -> None:
    assert option.config is not None
    head, *rest = option.config.split(".")
    assert head in CampaignConfig.model_fields
    if head == "sequential":  # off by default: its fields are those of SequentialPolicy
        from ablation.config import SequentialPolicy

        assert not rest or rest[0] in SequentialPolicy.model_fields
        return
    if option.copied:  # a value copied unchanged is read under the option's own key
        assert option.key == option.name
    if option.default is not None:
        assert _config_default(option.config) == option.default
    elif option.copied:
        assert _config_default(option.config) is None


def _bound_probes(option: Option) -> list[str]:
    """Values on, just inside and just outside each bound of ``option``."""
    assert option.bounds is not None
    probes = ["nan", "inf", "-inf", "0", "1", "0.5", "-1"]
    for bound in (option.bounds.low, option.bounds.high):
        if bound is None:
            continue
        if option.kind == "int":
            probes += [str(int(bound) + d) for d in (-1, 0, 1)]
        else:
            probes += [repr(math.nextafter(bound, -math.inf)), repr(float(bound)),
                       repr(math.nextafter(bound, math.inf))]  # fmt: skip
    return probes


NUMERIC_KEYS = [o for o in OPTIONS if o.bounds is not None and o.key is not None]


@functools.cache
def _parser(command: str) -> argparse.ArgumentParser:
    return build_parser(command)


def _flag_accepts(option: Option, text: str) -> bool:
    command = option.commands[0]
    argv = {"run": ["run", "s.py", "--baseline", "a", "--candidate", "b"], "compare": ["compare", "a", "b"],
            "report": ["report"]}[command]  # fmt: skip
    try:
        _parser(command).parse_args([*argv, f"{option.flags[0]}={text}"])
    except UsageError as exc:
        assert option.flags[0] in str(exc)  # a flag's error names the flag
        return False
    return True


def _file_accepts(option: Option, text: str, tmp: Path) -> bool:
    toml = {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(text, text)
    path = tmp / "pyproject.toml"
    path.write_text(f"[tool.ablation]\n{option.key} = {toml}\n", encoding="utf-8")
    try:
        load_tool_settings(path)
    except ConfigError as exc:
        assert f"{path} [tool.ablation] {option.key}:" in str(exc)  # a file's error names the key
        return False
    return True


def _config_accepts(option: Option, text: str) -> bool:
    assert option.config is not None
    value: Any = int(text) if option.kind == "int" else float(text)
    *parents, leaf = option.config.split(".")
    fields: dict[str, Any] = {"isolation": "process"}  # which worker_memory_mb needs
    place = fields
    for parent in parents:
        place = place.setdefault(parent, {})
    place[leaf] = value
    try:
        CampaignConfig.model_validate(fields)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("option", NUMERIC_KEYS, ids=lambda o: o.name)
def test_a_flag_and_its_key_accept_the_same_values(option: Option, tmp_path: Path) -> None:
    for text in _bound_probes(option):
        if option.kind == "int" and not text.lstrip("-").isdigit():
            continue  # TOML has no integer nan; the flag's refusal is tested in test_flag_bounds
        flag = _flag_accepts(option, text)
        assert flag == _file_accepts(option, text, tmp_path), (option.name, text)
        if flag and option.config and option.copied:
            assert _config_accepts(option, text), (option.name, text)


@settings(max_examples=40, deadline=None)
@given(
    option=st.sampled_from(NUMERIC_KEYS),
    value=st.one_of(st.integers(-(2**64), 2**64), st.floats(allow_nan=False, allow_infinity=False)),
)
def test_random_values_agree_between_flag_file_and_config(option: Option, value: float, tmp_path_factory: Any) -> None:
    if option.kind == "int" and not isinstance(value, int):
        value = int(value) if abs(value) < 2**64 else 0
    text = repr(value)
    flag = _flag_accepts(option, text)
    assert flag == _file_accepts(option, text, tmp_path_factory.mktemp("p"))
    if flag and option.config and option.copied:
        assert _config_accepts(option, text)


def test_a_misspelt_key_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.ablation]\nconcurency = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown key\(s\) in \[tool.ablation\]: concurency \(line 2\) \(known: "):
        load_tool_settings(path)


def _choices(command: str, flag: str) -> list[str]:
    action = next(a for a in _command_parser(command)._actions if flag in a.option_strings)
    return list(action.choices or ())


def test_format_names_come_from_their_registries(tmp_path: Path) -> None:
    from ablation.render import FORMATS as REPORT_FORMATS
    from ablation.sources.readers import FORMATS as RESULT_FORMATS

    for command in sorted(SETTINGS_COMMANDS):
        assert _choices(command, "--format") == list(REPORT_FORMATS)
    assert _choices("compare", "--from") == list(RESULT_FORMATS)
    path = tmp_path / "pyproject.toml"
    for name in REPORT_FORMATS:
        path.write_text(f'[tool.ablation]\nformat = "{name}"\n', encoding="utf-8")
        assert load_tool_settings(path) == {"format": name}


def test_no_module_of_the_command_line_lists_the_formats_again() -> None:
    import ast

    from ablation import cli
    from ablation.render import FORMATS as REPORT_FORMATS
    from ablation.sources.readers import FORMATS as RESULT_FORMATS

    found = []
    for path in Path(cli.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                words = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                if len(words & set(REPORT_FORMATS)) >= 3 or len(words & set(RESULT_FORMATS)) >= 3:
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []


def test_the_readme_lists_the_report_formats() -> None:
    import re as regex

    from ablation.render import FORMATS as REPORT_FORMATS

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    listed = regex.findall(r"`--format ([a-z]+(?:\|[a-z]+)+)`", readme)
    assert listed and all(entry.split("|") == list(REPORT_FORMATS) for entry in listed)
