"""Options from ``[tool.ablation]`` and the command line, merged into a :class:`CampaignConfig`.

Which configuration field each option feeds, and whether unchanged, is declared in
:data:`ablation.cli.option_table.OPTIONS`; only the options translated on the way (switches that
turn a gate off, ``NAME=VALUE`` lists, the sequential policy) are written out here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ablation.cli.option_table import OPTIONS, option_of

__all__ = [
    "FROM_FILE", "campaign_config", "merged_settings", "one_line", "over_file", "read_options", "store_path",
    "where_set",
]  # fmt: skip

#: Settings key holding ``{key: pyproject path}`` for the values read from ``[tool.ablation]``.
FROM_FILE = "_from_file"


#: Flags stored as ``False`` when given (``store_false``, default ``None``): ``False`` is their value,
#: not the absence of a ``store_true`` flag.
_FALSE_WHEN_GIVEN = frozenset(o.target for o in OPTIONS if o.kind == "off")


def merged_settings(args: argparse.Namespace) -> dict[str, Any]:
    """``[tool.ablation]`` with every option given on the command line laid over it.

    An option counts as given unless it is ``None``, ``[]`` or a ``store_true`` flag left ``False``.
    The keys whose value came from the file are kept under ``FROM_FILE`` (key -> the file), so an
    error names where the bad value was written: the flag or ``pyproject.toml [tool.ablation] KEY``.
    """
    from ablation.cli.settings import find_pyproject, load_tool_settings

    path = find_pyproject()
    from_file = load_tool_settings(path) if path is not None else {}
    merged = dict(from_file)
    for key, value in vars(args).items():
        if value is False and key not in _FALSE_WHEN_GIVEN:
            continue
        if value is not None and value != []:
            merged[key] = value
            from_file.pop(key, None)
    merged[FROM_FILE] = {key: str(path) for key in from_file}
    return merged


def over_file(args: argparse.Namespace, command: str) -> dict[str, str]:
    """Fill in ``args`` the options of ``command`` (one outside ``SETTINGS_COMMANDS``, such as
    ``plan``) that have a ``[tool.ablation]`` key and were not given as a flag (``None``, the
    parser's default for them): the file's value, else the option's declared default. So ``plan``
    plans at the ``alpha`` (and, with ``--sequential``, the ``margin``) that ``run`` and
    ``compare`` judge at.

    Returns:
        Where each value came from, by option name: its flag, or ``FILE [tool.ablation] KEY``.
    """
    from ablation.cli.settings import find_pyproject, load_tool_settings

    path = find_pyproject()
    from_file = load_tool_settings(path) if path is not None else {}
    names: dict[str, str] = {}
    for option in OPTIONS:
        if command not in option.commands or option.key is None or not option.flags:
            continue
        names[option.name] = option.flags[0]
        if getattr(args, option.target, None) is None:
            value = from_file.get(option.key)
            if value is not None:
                names[option.name] = f"{path} [tool.ablation] {option.key}"
            setattr(args, option.target, option.default if value is None else value)
    return names


def campaign_config(s: dict[str, Any]) -> Any:
    from ablation.config import CampaignConfig
    from ablation.errors import ConfigError

    labels = dict(s.get("labels", {}))
    for item in s.get("label", []):
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--label needs KEY=VALUE, got {item!r}")
        labels[key] = value
    fields: dict[str, Any] = {"labels": labels, "prices": s.get("prices") or {}}
    for option in OPTIONS:  # the values that go to their configuration field unchanged
        if option.config and option.copied and s.get(option.name) is not None:
            *parents, leaf = option.config.split(".")
            place = fields
            for parent in parents:
                place = place.setdefault(parent, {})
            place[leaf] = s[option.name]
    if s.get("retry_on"):
        fields.setdefault("retry", {})["retry_on"] = tuple(s["retry_on"])
    gates = _gate_fields(s)
    if gates:
        fields.setdefault("gates", {}).update(gates)
    # [tool.ablation] sequential = true applies to `run` only; compare asks with --sequential-replay
    run_sequential = s.get("sequential") and s.get("command", "run") == "run"
    if run_sequential or s.get("sequential_replay"):
        fields["sequential"] = {
            "futility_after": s.get("stop_when_inconclusive_after"),
            "candidates": s.get("n_candidates", 1),
            "suite_claim": bool(s.get("suite_claim")),
        }
    elif s.get("stop_when_inconclusive_after") is not None:
        raise ConfigError("--stop-when-inconclusive-after needs --sequential (or --sequential-replay)")
    elif s.get("suite_claim"):
        raise ConfigError("--suite-claim needs --sequential (or --sequential-replay)")
    try:
        return CampaignConfig.model_validate(fields)
    except ValueError as exc:
        raise ConfigError(_user_names(one_line(exc), s)) from None


#: Configuration field paths and the settings key that sets each (the first option feeding it).
_KEY_OF = {o.config: o.key or o.name for o in reversed(OPTIONS) if o.config is not None}


def where_set(key: str, s: dict[str, Any]) -> str:
    """Where the value of settings ``key`` came from: ``--flag`` or ``FILE [tool.ablation] key``."""
    path = s.get(FROM_FILE, {}).get(key)
    if path is not None:
        return f"{path} [tool.ablation] {key}"
    try:
        return option_of(key).flags[0]
    except (KeyError, IndexError):  # not an option, or a key with no flag
        return "--" + key.replace("_", "-")


def setting_names(s: dict[str, Any]) -> dict[str, str]:
    """How the user set each configuration field, by field path (``{"seed": "--seed"}``, or
    ``FILE [tool.ablation] seed``), as a refusal names it (the first option feeding a field)."""
    return {path: where_set(key, s) for path, key in _KEY_OF.items()}


def paths_from_file(s: dict[str, Any]) -> set[str]:
    """The configuration field paths whose value came from ``[tool.ablation]``, not a flag."""
    from_file = s.get(FROM_FILE, {})
    return {path for path, key in _KEY_OF.items() if key in from_file}


def _user_names(message: str, s: dict[str, Any]) -> str:
    """``message`` with internal config field paths replaced by where each value was set (a
    path into a value, ``labels.team``, keeps its tail: ``FILE [tool.ablation] labels.team``)."""
    import re

    # a field path starts the message or one of its parts; the longest first, so that a path
    # is never read as a shorter one with a tail
    for internal, key in sorted(_KEY_OF.items(), key=lambda item: -len(item[0])):
        where = where_set(key, s).replace("\\", "\\\\")  # a path is text, not a template
        message = re.sub(rf"(^|: |; ){re.escape(internal)}((?:\.[^:;]+)?):", rf"\g<1>{where}\g<2>:", message)
    return message


def _gate_fields(s: dict[str, Any]) -> dict[str, Any]:
    """The gate policy fields the options set by translation (the values copied unchanged, such
    as ``margin``, are set from the option table; the defaults stay with :class:`GatePolicy`)."""
    from ablation.errors import ConfigError

    gates: dict[str, Any] = {}
    allow = bool(s.get("allow_significant_regression"))
    if allow and s.get("no_significant_regression") is True:
        from_file = s.get(FROM_FILE, {})
        pair = ("allow_significant_regression", "no_significant_regression")
        flags = [key for key in pair if key not in from_file]
        if len(flags) != 1:  # both on the command line, or both in the file
            raise ConfigError(
                f"{where_set(pair[0], s)} and {where_set(pair[1], s)} contradict each other"
            )
        allow = flags[0] == pair[0]  # a flag wins over the file
    if allow or s.get("no_significant_regression") is False:
        gates["no_significant_regression"] = False
    elif s.get("no_significant_regression") is True:
        gates["no_significant_regression"] = True
    if s.get("allow_incomplete") or s.get("require_complete") is False:
        gates["require_complete"] = False
    if s.get("critical_gate") is False:
        gates["critical_must_not_regress"] = False
    margins = dict(s.get("metric_margins") or {})
    for item in s.get("metric_margin") or []:
        name, sep, value = str(item).partition("=")
        try:
            margins[name.strip()] = float(value)
        except ValueError:
            raise ConfigError(f"--metric-margin needs NAME=VALUE with a number, got {item!r}") from None
        if not sep or not name.strip():
            raise ConfigError(f"--metric-margin needs NAME=VALUE, got {item!r}")
    if margins:
        gates["metric_margins"] = margins
    return gates
def read_options(args: argparse.Namespace, *, baseline: bool = False) -> dict[str, Any]:
    """The keyword arguments of ``load_results`` given by ``compare``'s reading flags.

    ``--where PATH=VALUE`` (repeatable) becomes a mapping; for the baseline (``baseline=True``),
    ``--baseline-where`` replaces it when given. An item without ``=`` is a
    :class:`~ablation.errors.ConfigError`.
    """
    items = args.baseline_where if baseline and args.baseline_where else args.where
    return {
        "key": args.key,
        "field": args.field,
        "run_field": args.run_field,
        "format": args.from_format,
        "where": _where(items),
        "pass_values": args.pass_values.split(",") if args.pass_values else None,
        "max_bytes": getattr(args, "max_input_bytes", None),
    }


def _where(items: list[str]) -> dict[str, str]:
    from ablation.errors import ConfigError

    where: dict[str, str] = {}
    for item in items:
        path, sep, value = item.partition("=")
        if not sep or not path.strip():
            raise ConfigError(f"--where expects PATH=VALUE, got {item!r}")
        where[path.strip()] = value.strip()
    return where


def one_line(exc: BaseException) -> str:
    """``exc`` on one line; a pydantic ``ValidationError`` as ``invalid option: FIELD: message``
    per error, without pydantic's ``Value error, `` prefix (the text a validator raised) and
    without the field for an error about the whole configuration (a model validator's, whose
    message names its fields itself)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = []
        for e in errors():
            msg = str(e.get("msg"))
            if e.get("type") == "value_error":
                msg = msg.removeprefix("Value error, ")
            loc = ".".join(str(p) for p in e.get("loc", ()))
            parts.append(f"{loc}: {msg}" if loc else msg)
        return "invalid option: " + "; ".join(parts)
    return " ".join(str(exc).split())


def store_path(args: argparse.Namespace, command: str, *, settings: bool) -> Path:
    """The run store a command that takes ``STORE`` or ``--store`` reads: either one (the same
    file when both are given), else ``[tool.ablation] store`` when the command reads
    ``settings``, else the default.

    Raises:
        UsageError: ``STORE`` and ``--store`` name different files.
    """
    from ablation.errors import UsageError
    from ablation.store.run_store import DEFAULT_STORE_PATH

    given, flag = args.store_arg, args.store
    if given is not None and flag is not None and given.resolve() != flag.resolve():
        raise UsageError(
            f"ablation {command}: STORE {str(given)!r} and --store {str(flag)!r} name different "
            "run stores: give one"
        )
    chosen = merged_settings(args).get("store") if settings else flag
    return Path(given or chosen or DEFAULT_STORE_PATH)
