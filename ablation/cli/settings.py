"""Defaults for the command line from ``[tool.ablation]`` in the project's ``pyproject.toml``.

Keys use the command line's option names with dashes or underscores: ``alpha``, ``confidence``,
``resamples``, ``seed``, ``margin``, ``no-significant-regression`` (``false`` turns that default
gate off), ``allow-significant-regression``, ``min-completed``, ``require-complete`` (``false``
turns the completeness gate off), ``allow-incomplete``, ``critical-gate`` (``false`` turns the
critical-task gate off), ``metric-margins`` (a table NAME = margin), ``max-latency-ratio``,
``concurrency``, ``timeout``, ``runs``, ``store`` (a relative path is relative to the folder of
the ``pyproject.toml``, wherever the command is run), ``on-error``, ``fail-fast``, ``max-attempts``,
``retry-on``, ``rate-limit``, ``quality``, ``format`` (``terminal``, ``markdown``, ``json``,
``html`` or ``junit``), ``timestamps``, ``labels``, ``sequential`` (``run`` only),
``stop-when-inconclusive-after``, ``suite-claim``, ``isolation`` (``"thread"`` or ``"process"``),
``sandbox`` (``"bubblewrap"`` or ``"process"``), ``traces`` (``"auto"``, ``"on"`` or ``"off"``),
``worker-memory-mb``, ``max-output-bytes``, ``agent-env`` (the variables ``cmd:`` agents
inherit besides the safe ones), ``prices`` (a table per model id of ``input_per_mtok``,
``output_per_mtok``, ``cached_input_per_mtok``, ``cache_write_per_mtok`` and ``currency``, which
prices a trial's usage instead of the price database; prompt tokens written to the cache cost
``input_per_mtok`` unless ``cache_write_per_mtok`` is set). The accepted keys, their types and
ranges are declared once, in :data:`ablation.cli.option_table.OPTIONS` (with the flag of the same
option), from which
:class:`ablation.cli.tool_settings.ToolSettings` is built; this list is tested against it. Flags
given on the command line win over the file; the file wins over built-in defaults.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ablation.errors import ConfigError

__all__ = ["find_pyproject", "line_of", "load_tool_settings"]


def find_pyproject(start: Path | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` in ``start`` (default: the working directory) or above."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_tool_settings(path: Path | None = None) -> dict[str, Any]:
    """Read ``[tool.ablation]``; unknown keys are an error naming the file, the key and its line,
    as is a value of the wrong type or out of range (:func:`line_of`), and so are a key given
    in both spellings (``min-completed`` and ``min_completed``) and a file that
    is not UTF-8 text or not TOML.

    Returns:
        Settings keyed by option name with underscores (empty when there is no section).
    """
    path = path or find_pyproject()
    if path is None:
        return {}
    import tomllib  # only when there is a file to parse

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:  # TOML is UTF-8 text; a file saved in another encoding
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}), as TOML must be") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML ({exc})") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(
            f"{path} tool: must be a table holding [tool.ablation], got {type(tool).__name__} {tool!r:.40}"
        )
    section = tool.get("ablation", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.ablation] must be a table")
    settings: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in section.items():
        name = key.replace("-", "_")
        if name in settings:  # both spellings of one key: neither silently wins
            raise ConfigError(
                f"{path} [tool.ablation] {name}: given twice, as {spelled[name]!r} and {key!r}: keep one"
            )
        settings[name], spelled[name] = value, key
    if settings:  # an empty table has nothing to check (every key is optional)
        from ablation.cli.option_table import OPTIONS
        from ablation.cli.tool_settings import check_tool_types, known_keys

        text = path.read_text(encoding="utf-8")

        def line(name: str) -> str:
            """``" (line N)"``, where the key ``name`` is written, or nothing when not found."""
            number = line_of(text, spelled[name])
            return "" if number is None else f" (line {number})"

        unknown = sorted(set(settings) - known_keys())
        if unknown:
            raise ConfigError(
                f"{path}: unknown key(s) in [tool.ablation]: {', '.join(k + line(k) for k in unknown)} "
                f"(known: {', '.join(sorted(known_keys()))})"
            )
        check_tool_types(settings, path, line)
        for option in OPTIONS:  # a path the file names is relative to the file, not to where it is run
            if option.kind == "path" and option.key in settings:
                settings[option.key] = str(path.parent / settings[option.key])
    return settings


_HEADER = re.compile(r"^\s*\[\[?([^\]]+)\]\]?\s*(?:#.*)?$")


def line_of(text: str, key: str) -> int | None:
    """The line (from 1) of ``text`` where the ``[tool.ablation]`` key ``key`` (as spelled) is
    written: ``key = ...`` in that table, ``ablation.key`` under ``[tool]``,
    ``tool.ablation.key`` at the top, or a ``[tool.ablation.key...]`` table of its own; ``None``
    when it is written otherwise (an inline table)."""
    name = rf"""(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')"""
    prefixes = {"tool.ablation": "", "tool": r"ablation\s*\.\s*", "": r"tool\s*\.\s*ablation\s*\.\s*"}
    table = ""
    for number, written in enumerate(text.splitlines(), 1):
        header = _HEADER.match(written)
        if header is not None:
            table = re.sub(r"""\s*\.\s*""", ".", header.group(1).strip()).replace('"', "").replace("'", "")
            if table == f"tool.ablation.{key}" or table.startswith(f"tool.ablation.{key}."):
                return number
            continue
        prefix = prefixes.get(table)
        if prefix is not None and re.match(rf"\s*{prefix}{name}\s*[.=]", written):
            return number
    return None
