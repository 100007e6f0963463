"""The ``ablation`` argument parser: the commands and their positional arguments.

Every option (flag) is declared in :mod:`ablation.cli.option_table` and added from there.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ablation.cli.flag_types import flag_type
from ablation.cli.option_table import GROUPS, OPTIONS, SETTINGS_COMMANDS, Option
from ablation.errors import UsageError

__all__ = ["UsageError", "build_parser", "command_of"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """``ablation: error: ablation run: ...`` from ``main``: a command's parser names itself
        (the top-level parser, ``ablation``, is already named by ``main``)."""
        raise UsageError(message if self.prog == "ablation" else f"{self.prog}: {message}")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """As argparse, but a command's unknown options are reported in the command's name:
        argparse reports them from the top-level parser, as ``ablation: unrecognized arguments``."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(parsed, "command", None)
            where, see = (f"ablation {command}: ", f" (see ablation {command} --help)") if command else ("", "")
            raise UsageError(f"{where}unrecognized arguments: {' '.join(extras)}{see}")
        return parsed


def _add_options(p: argparse.ArgumentParser, command: str) -> None:
    """Add every option of ``command`` declared in :data:`ablation.cli.option_table.OPTIONS`.

    The reporting commands (:data:`~ablation.cli.option_table.SETTINGS_COMMANDS`) show their
    options in groups; the others have few options, listed together.
    """
    groups: dict[str, Any] = {}
    for option in OPTIONS:
        if command not in option.commands or not option.flags:
            continue
        where: Any = p
        if option.group is not None and command in SETTINGS_COMMANDS:
            if option.group not in groups:
                groups[option.group] = p.add_argument_group(GROUPS[option.group])
            where = groups[option.group]
        where.add_argument(*option.flags, **_argparse_kwargs(option, command))


def _argparse_kwargs(option: Option, command: str) -> dict[str, Any]:
    """``add_argument`` keywords of ``option`` in ``command``.

    A command that reads ``[tool.ablation]`` gets ``None`` ("not given") as the default, so a
    value from the file is not masked and the declared default stays with the code that applies
    it; a switch without a key is ``False`` and a repeatable flag ``[]``. Other commands get the
    declared default, but for an option with a key (``plan --alpha``), which is ``None`` too:
    the command takes the file's value when the flag is not given
    (:func:`ablation.cli.options.over_file`).
    """
    kw: dict[str, Any] = {"dest": option.target, "help": option.help_for(command)}
    if option.metavar is not None:
        kw["metavar"] = option.metavar
    if option.required:
        kw["required"] = True
    kind = option.kind
    default = option.default
    if command in SETTINGS_COMMANDS:
        default = False if option.kind == "optional" else None
    elif option.key is not None:  # laid over the file by the command (options.over_file)
        default = None
    if kind in ("float", "int"):
        kw["type"] = flag_type(option.flags[0])
    elif kind in ("path", "pair"):
        kw["type"] = Path
        kw["nargs"] = 2 if kind == "pair" else None
    elif kind == "choice":
        kw["choices"] = option.choices
    elif kind == "switch":
        kw["action"] = "store_true"
        default = False if default is None and option.key is None else default
    elif kind == "off":
        kw["action"] = "store_false"
    elif kind == "list":
        kw["action"] = "append"
        default = None if option.required else []
    elif kind == "optional":
        kw.update(nargs="?", const=True)
    kw["default"] = default
    return kw


def _run_parser(sub: Any) -> None:
    """``ablation run``."""
    run = sub.add_parser(
        "run", help="run a campaign",
        description="Run baseline and candidate agents on every task of SUITE and report.",
        epilog="example: ablation run tasks/arithmetic.py --baseline agents/arithmetic.py:baseline "
        "--candidate agents/arithmetic.py:candidate --runs 3",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("suite", help="suite: tasks/x.py, tasks/x.jsonl or pkg.mod:attr")
    _add_options(run, "run")


def _compare_parser(sub: Any) -> None:
    """``ablation compare``."""
    cmp_ = sub.add_parser(
        "compare", help="compare existing result files",
        description="Pair two (or more) JSONL/CSV result files by id and report. With several "
        "AFTER files, each is compared with BEFORE and a summary with Holm-adjusted p follows.",
        epilog="example: ablation compare runs/gpt-5.jsonl runs/gpt-5.1.jsonl --key id --field passed",
    )
    cmp_.add_argument("before", type=Path,
                      help="baseline results (a file of any supported format, - for stdin)")
    cmp_.add_argument("after", type=Path, nargs="+", help="candidate results (likewise)")
    _add_options(cmp_, "compare")


def _report_parser(sub: Any) -> None:
    """``ablation report``."""
    rep = sub.add_parser(
        "report", help="re-render a stored campaign",
        description="Rebuild the report of a stored campaign (from its trials) in any format.",
        epilog="example: ablation report latest --format html -o report.html",
    )
    rep.add_argument("campaign", nargs="?", default="latest", help="campaign id or 'latest'")
    _add_options(rep, "report")


def _plan_parser(sub: Any) -> None:
    """``ablation plan``."""
    plan = sub.add_parser(
        "plan", help="tasks needed for an effect, or the smallest effect a suite can see",
        description="Connor (1987) sample size for a paired binary comparison, or the minimum "
        "detectable effect of N tasks (or of an existing result pair).",
        epilog="example: ablation plan --discordance 0.10 --uplift 0.03 --alpha 0.05 --power 0.8",
    )
    _add_options(plan, "plan")


def _init_parser(sub: Any) -> None:
    """``ablation init``."""
    init = sub.add_parser(
        "init", help="scaffold tasks/, agents/ and a config in a project",
        description="Create an example suite, two agents and [tool.ablation] defaults.",
        epilog="example: ablation init my-project",
    )
    init.add_argument("directory", nargs="?", type=Path, default=Path("."))
    _add_options(init, "init")


def _list_parser(sub: Any) -> None:
    """``ablation list``."""
    lst = sub.add_parser(
        "list", help="list the campaigns of a run store",
        description="List the campaigns of a run store, newest first: id, time, status, suite, "
        "agents, verdict and stored trials. The table shows the newest 20 (--limit).",
        epilog="example: ablation list --store .ablation/runs.db --limit 0 --format json",
    )
    lst.add_argument("store_arg", nargs="?", type=Path, metavar="STORE",
                     help="run store (default [tool.ablation] store, else .ablation/runs.db)")
    _add_options(lst, "list")


def _view_parser(sub: Any) -> None:
    """``ablation view``."""
    view = sub.add_parser(
        "view", help="browse campaigns, tasks and history in the browser",
        description="Serve a local web app over a run store (read-only; needs ablation[view]).",
        epilog="example: ablation view --store .ablation/runs.db --no-browser",
    )
    view.add_argument("store_arg", nargs="?", type=Path, metavar="STORE",
                      help="run store (default .ablation/runs.db)")
    _add_options(view, "view")


_COMMAND_PARSERS: dict[str, Callable[[Any], None]] = {
    "run": _run_parser,
    "compare": _compare_parser,
    "report": _report_parser,
    "plan": _plan_parser,
    "init": _init_parser,
    "list": _list_parser,
    "view": _view_parser,
}


def command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first word that is not an option), if it is one with options.

    The top-level parser has no option that takes a value, so the first such word is the command.
    """
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in _COMMAND_PARSERS else None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of every command.

    Args:
        command: Build the options of this command only (:func:`command_of` of the arguments about
            to be parsed); the other commands stay known by name, without options, which saves
            building about a hundred options at every start. ``None`` builds every command whole
            (top-level ``--help`` lists them all).
    """
    parser = _Parser(
        prog="ablation",
        description="Paired ablation campaigns: run a baseline and a candidate agent on the same "
        "tasks and report what changed, whether it is real, and whether the release gates hold.",
        epilog="Exit codes: 0 gates pass, 1 usage/input/operational error, 2 a gate failed.",
    )
    parser.add_argument("--version", action="version", version=f"ablation {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    for name, add in _COMMAND_PARSERS.items():
        if command in (None, name):
            add(sub)
        else:
            sub.add_parser(name)
    sub.add_parser("schema", help="print the JSON Schema of the JSON report",
                   description="Print the JSON Schema of `--format json` reports (AblationReport).")
    return parser


def _version() -> str:
    from ablation import __version__

    return __version__
