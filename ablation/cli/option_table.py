"""Every command-line option and ``[tool.ablation]`` key, declared once.

Each :class:`Option` says what the option is (its kind, range or choices, documented default),
how it is written (its flags, its ``[tool.ablation]`` key), where its value goes (the
:class:`~ablation.config.CampaignConfig` field path it feeds, if any), which commands take it and
its help. Generated from :data:`OPTIONS`:

- the argparse flags of every command (:func:`ablation.cli.parser.build_parser`; the parser itself
  keeps only subcommands and positional arguments);
- the numeric ranges a flag checks (:data:`ablation.cli.flag_types.FLAG_RANGES`) and the same
  ranges for the file (:class:`ablation.cli.tool_settings.ToolSettings`, the strict model of the
  accepted keys, :func:`~ablation.cli.tool_settings.known_keys`);
- the names errors use: a flag's error names the flag, a file's error names
  ``pyproject.toml [tool.ablation] KEY`` (:func:`ablation.cli.options.where_set`);
- the option-to-configuration mapping of :func:`ablation.cli.options.campaign_config`;
- the flags other code writes or reads in a command line (:func:`flags_of`: the resume hint of
  :func:`ablation.cli.resume_hint.resume_command`, the GitHub Action's command).

The key list documented in :mod:`ablation.cli.settings` is tested against this table. Adding an
option is one entry here plus the code that uses its value.

Assumptions: the table is plain data (frozen dataclasses, no pydantic), because every start of
the command builds a parser from it; a choice list owned by another module is named lazily
(:class:`LazyChoices`) and imported only when a value is checked or help is printed.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "GROUPS",
    "OPTIONS",
    "SETTINGS_COMMANDS",
    "Bounds",
    "LazyChoices",
    "Option",
    "flags_of",
    "option_of",
]

#: Commands that read ``[tool.ablation]`` whole: their flags default to "not given" (``None``),
#: so a value from the file is not masked; the other commands take the declared defaults
#: directly, but for an option with a key (``plan --alpha``), which they lay over the file
#: themselves (:func:`ablation.cli.options.over_file`).
SETTINGS_COMMANDS = frozenset({"run", "compare", "report"})

#: Help section titles of the option groups.
GROUPS = {"gates": "analysis and release gates", "output": "output"}

_RSC = ("run", "compare", "report")
#: The commands that read result files (``plan`` with ``--results``), with ``compare``'s flags.
_READS = ("compare", "plan")


@dataclass(frozen=True, slots=True)
class Bounds:
    """A numeric range; ``None`` is open-ended. Values must also be finite."""

    low: float | None
    high: float | None
    low_inclusive: bool = True
    high_inclusive: bool = True


class LazyChoices:
    """The choices ``module:NAME`` holds, imported on first use (a membership test or help)."""

    def __init__(self, source: str) -> None:
        self.source = source

    def _load(self) -> tuple[str, ...]:
        module, _, name = self.source.partition(":")
        return tuple(getattr(importlib.import_module(module), name))

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __contains__(self, value: object) -> bool:
        return value in self._load()

    def __len__(self) -> int:
        return len(self._load())

    def __getitem__(self, index: int) -> str:
        return self._load()[index]


#: How an option is given. ``switch``: a flag that sets ``True`` (a boolean key in the file);
#: ``off``: a flag that sets ``False`` (its key is the positive name); ``list``: a repeatable
#: flag (a list of strings in the file); ``optional``: a flag with an optional value; ``pair``:
#: a flag taking two paths. ``margins``/``labels``/``prices`` are tables in the file.
Kind = Literal[
    "float", "int", "str", "path", "choice", "switch", "off", "list", "optional", "pair",
    "margins", "labels", "prices",
]


@dataclass(frozen=True, slots=True)
class Option:
    """One option.

    Attributes:
        name: Unique name; the settings key and argparse ``dest`` unless ``dest`` says otherwise.
        kind: See :data:`Kind`.
        commands: The commands that take it.
        help: Help text (per command overrides in ``help_in``).
        flags: Its flags, the first named in errors; empty for a key with no flag.
        key: Its ``[tool.ablation]`` key (underscore form), or ``None``.
        config: The :class:`~ablation.config.CampaignConfig` field path it feeds, or ``None``.
        copied: The value goes to ``config`` unchanged (otherwise ``options.py`` translates it).
        bounds: Range of a numeric option.
        choices: Accepted values of a ``choice`` option.
        default: The documented default (argparse default of commands outside
            :data:`SETTINGS_COMMANDS`).
        metavar: argparse ``metavar``.
        group: Key of :data:`GROUPS`, or ``None``.
        required: A required flag (``run --baseline``).
        help_in: ``(command, help)`` pairs replacing ``help`` in that command.
        file_kind: The key's form where it is not the flag's (``metric_margins`` is a table).
        dest: argparse ``dest`` when it is not ``name`` (two options of one flag name in
            different commands: ``plan --sequential``, ``list --format``).
    """

    name: str
    kind: Kind
    commands: tuple[str, ...]
    help: str | None = None
    flags: tuple[str, ...] = ()
    key: str | None = None
    config: str | None = None
    copied: bool = True
    bounds: Bounds | None = None
    choices: tuple[str, ...] | LazyChoices | None = None
    default: Any = None
    metavar: str | tuple[str, ...] | None = None
    group: str | None = None
    required: bool = False
    help_in: tuple[tuple[str, str], ...] = field(default=())
    file_kind: Kind | None = None
    dest: str | None = None

    @property
    def target(self) -> str:
        """The argparse ``dest`` (and settings key of a flag's value)."""
        return self.dest or self.name

    def help_for(self, command: str) -> str | None:
        """The help text of this option in ``command``."""
        return dict(self.help_in).get(command, self.help)


_UNIT = Bounds(0, 1, False, False)
_REPORT_FORMATS = LazyChoices("ablation.render:FORMATS")
_RESULT_FORMATS = LazyChoices("ablation.sources.readers:FORMATS")
_SEQ_HELP = (("compare", "with --sequential-replay: stop as inconclusive after N pairs"),)

OPTIONS: tuple[Option, ...] = (
    # run: what runs, and how
    Option("baseline", "str", ("run",), "agent: file.py:attr, pkg.mod:attr, 'cmd:node agent.js' or http://...",
           ("--baseline",), metavar="SPEC", required=True),
    Option("candidate", "list", ("run",), "candidate agent (repeat to compare several against one baseline)",
           ("--candidate",), metavar="SPEC", required=True),
    Option("runs", "int", ("run",), "runs per task and arm (default 1)", ("--runs",), "runs", "runs",
           bounds=Bounds(1, 10**6), default=1),
    Option("concurrency", "int", ("run",), "trials in flight (default 8)", ("--concurrency",), "concurrency",
           "concurrency", bounds=Bounds(1, 10**5), default=8),
    Option("timeout", "float", ("run",), "seconds per trial (default 300)", ("--timeout",), "timeout",
           "timeout_s", bounds=Bounds(0, 10**7, False, True), default=300.0),
    Option("on_error", "choice", ("run",), "how errors and timeouts count (default fail)", ("--on-error",),
           "on_error", "on_error", choices=("fail", "exclude", "abort"), default="fail"),
    Option("max_attempts", "int", ("run",), "attempts per agent call (default 1)", ("--max-attempts",),
           "max_attempts", "retry.max_attempts", bounds=Bounds(1, 1000), default=1),
    Option("retry_on", "list", ("run",), "exception type to retry (repeatable; default ConnectionError, "
           "TimeoutError; transient errors of the common SDKs, 408, 429 and 5xx are retried too)",
           ("--retry-on",), "retry_on", "retry.retry_on", copied=False, metavar="EXC"),
    Option("rate_limit", "float", ("run",), "max agent calls per second per arm", ("--rate-limit",),
           "rate_limit", "rate_limit_per_s", bounds=Bounds(1e-3, None)),
    Option("fail_fast", "int", ("run",), "stop (exit 1) when an arm's first K trials all fail with the "
           "same infrastructure error (default 10; 0 disables)", ("--fail-fast",), "fail_fast",
           bounds=Bounds(0, 10**9), default=10, metavar="K"),
    Option("quality", "list", ("run",), "quality scorer: code_quality, rubric, or file.py:attr (repeatable)",
           ("--quality",), "quality", metavar="SCORER"),
    Option("store", "path", ("run", "report", "list", "view"), "run store (default .ablation/runs.db)", ("--store",),
           "store", help_in=(("list", "run store, as STORE (default [tool.ablation] store, else .ablation/runs.db)"),
                             ("view", "run store, as STORE (default .ablation/runs.db)"))),
    Option("no_store", "switch", ("run",), "keep results in memory only", ("--no-store",)),
    Option("resume", "optional", ("run",), "run only the missing trials of the newest (or given) campaign",
           ("--resume",), metavar="CAMPAIGN", default=False),
    Option("allow_changed_agent", "switch", ("run",), "with --resume: continue even if an agent's code "
           "changed since the campaign started (the report then mixes two versions of it)",
           ("--allow-changed-agent",)),
    Option("max_output_bytes", "int", ("run",), "cap on a command agent's stdout, bytes (default 8 MiB); "
           "more is that trial's error", ("--max-output-bytes",), "max_output_bytes", "max_output_bytes",
           bounds=Bounds(1, 2**27), default=8 * 1024 * 1024, metavar="N"),
    Option("agent_env", "list", ("run",), "environment variable a cmd: agent inherits besides PATH, HOME, "
           "locale and temp-dir variables (repeatable; shell patterns such as OPENAI_*; '*' inherits "
           "everything)", ("--agent-env",), "agent_env", metavar="NAME"),
    Option("reuse_baseline", "str", ("run",), "take baseline trials from a stored campaign on the same suite",
           ("--reuse-baseline",), metavar="CAMPAIGN"),
    Option("no_progress", "switch", ("run",), "no progress bar", ("--no-progress",)),
    Option("sequential", "switch", ("run",), "seeded random task order; stop as soon as the gates are "
           "decided (anytime-valid; alpha split across candidates)", ("--sequential",), "sequential",
           "sequential", copied=False),
    Option("stop_when_inconclusive_after", "int", ("run", "compare"), "with --sequential: stop as "
           "inconclusive after N pairs", ("--stop-when-inconclusive-after",), "stop_when_inconclusive_after",
           "sequential.futility_after", copied=False, bounds=Bounds(1, 10**9), metavar="N", help_in=_SEQ_HELP),
    Option("suite_claim", "switch", ("run", "compare"), "with --sequential: non-inferiority about this "
           "suite only (sampling without replacement), not the default population claim", ("--suite-claim",),
           "suite_claim", "sequential.suite_claim", copied=False,
           help_in=(("compare", "with --sequential-replay: non-inferiority about this suite only"),)),
    # run: where agents run
    Option("isolation", "choice", ("run",), "where Python agents run: thread (default) or process (worker "
           "processes: an agent that crashes, calls os._exit or times out costs one trial)", ("--isolation",),
           "isolation", "isolation", choices=("thread", "process"), default="thread"),
    Option("sandbox", "choice", ("run",), "how code_tests confines agent-written code: bubblewrap (default; "
           "a trial is an error where it cannot run) or process (weaker: resource limits only, named in "
           "the report)", ("--sandbox",), "sandbox", "sandbox", choices=("bubblewrap", "process"),
           default="bubblewrap"),
    Option("traces", "choice", ("run",), "collect each trial's OpenTelemetry spans: auto (default: when "
           "opentelemetry-sdk is installed), on (required) or off", ("--traces",), "traces", "traces",
           choices=("auto", "on", "off"), default="auto"),
    Option("worker_memory_mb", "int", ("run",), "with --isolation process: address-space limit of each "
           "worker (MiB)", ("--worker-memory-mb",), "worker_memory_mb", "worker_memory_mb",
           bounds=Bounds(64, 2**30), metavar="MB"),
    Option("dask_scheduler", "str", ("run",), "run sync agents on a Dask cluster", ("--dask-scheduler",),
           metavar="ADDRESS"),
    Option("dask_local", "int", ("run",), "start a local Dask cluster of N workers", ("--dask-local",),
           bounds=Bounds(1, 4096), metavar="N"),
    # compare and plan --results: reading result files
    Option("key", "str", _READS, "dotted path of the id (default id, or the tool's own id)", ("--key",)),
    Option("field", "str", _READS, "dotted path of the verdict, or the scorer/evaluator/metric of a "
           "tool format (default passed, or the tool's default)", ("--field",)),
    Option("run_field", "str", _READS, "dotted path of the run index (repeated runs)", ("--run-field",)),
    Option("from_format", "choice", _READS, "read the files as this format instead of detecting it",
           ("--from",), choices=_RESULT_FORMATS, metavar="FORMAT"),
    Option("where", "list", _READS, "keep only rows whose dotted PATH reads VALUE (repeatable), e.g. "
           "filter=strict-match or promptIdx=1", ("--where",), metavar="PATH=VALUE"),
    Option("baseline_where", "list", _READS, "filters for BEFORE only, replacing --where there (e.g. "
           "promptIdx=0 to compare two prompts of one promptfoo file)", ("--baseline-where",),
           metavar="PATH=VALUE"),
    Option("regression_delta", "float", ("compare",), "numeric --field: a task regressed when its value fell "
           "by more than D, and the gate fails on a significant mean drop beyond D (default 0)",
           ("--regression-delta",), bounds=Bounds(0, None, True, False), default=0.0, metavar="D"),
    Option("pass_values", "str", _READS, "verdict values that count as a pass, e.g. C,P for Inspect",
           ("--pass-values",), metavar="V1,V2"),
    Option("expected_ids", "path", ("compare",), "file of ids that must all be present", ("--expected-ids",)),
    Option("max_input_bytes", "int", _READS, "largest result file read, after gzip decompression "
           "(default 256 MiB)", ("--max-input-bytes",), bounds=Bounds(1, 2**40), default=256 * 2**20,
           metavar="N"),
    Option("sequential_replay", "switch", ("compare",), "replay the pairs in seeded order: what a "
           "sequential campaign would have decided and spent", ("--sequential-replay",)),
    # report
    Option("export_jsonl", "path", ("report",), "also export the trials as JSONL", ("--export-jsonl",)),
    # analysis and release gates
    Option("alpha", "float", (*_RSC, "plan"), "significance level (default 0.05)", ("--alpha",), "alpha",
           "alpha", bounds=Bounds(0, 0.5, False, False), default=0.05, group="gates"),
    Option("confidence", "float", _RSC, "confidence level of intervals (default 0.95)", ("--confidence",),
           "confidence", "confidence_level", bounds=_UNIT, default=0.95, group="gates"),
    Option("resamples", "int", _RSC, "bootstrap resamples (default 10000)", ("--resamples",), "resamples",
           "n_resamples", bounds=Bounds(100, 10**7), default=10_000, group="gates"),
    Option("seed", "int", _RSC, "seed for arm order and resampling (default 0)", ("--seed",), "seed", "seed",
           bounds=Bounds(0, 2**63 - 1), default=0, group="gates"),
    Option("margin", "float", (*_RSC, "plan"), "non-inferiority margin on the pass rate, e.g. 0.02",
           ("--margin",), "margin", "gates.noninferiority_margin", bounds=_UNIT, group="gates",
           help_in=(("plan", "with --sequential: non-inferiority margin"),)),
    Option("no_significant_regression", "switch", _RSC, "fail when the candidate is significantly worse at "
           "--alpha (one-sided, unadjusted; the default, accepted for explicitness)",
           ("--no-significant-regression",), "no_significant_regression", "gates.no_significant_regression",
           copied=False, default=True, group="gates"),
    Option("allow_significant_regression", "switch", _RSC, "turn the significant-regression gate off (the "
           "report lists it as off)", ("--allow-significant-regression",), "allow_significant_regression",
           "gates.no_significant_regression", copied=False, group="gates"),
    Option("min_completed", "float", _RSC, "least share of each arm's trials that must complete (default "
           "0.95)", ("--min-completed",), "min_completed", "gates.min_completed", bounds=Bounds(0, 1),
           default=0.95, metavar="SHARE", group="gates"),
    Option("require_complete", "switch", _RSC, "false turns the completeness gate off", (), "require_complete",
           "gates.require_complete", copied=False, default=True),
    Option("allow_incomplete", "switch", _RSC, "turn the completeness gate off (missing pairs, errored "
           "arms; listed as off)", ("--allow-incomplete",), "allow_incomplete", "gates.require_complete",
           copied=False, group="gates"),
    Option("metric_margin", "list", _RSC, "non-inferiority gate on a numeric metric or quality score, margin "
           "in its units (latency_s, cost, tokens: lower is better; repeatable; tested from 100 pairs "
           "with the value in both arms, else inconclusive)", ("--metric-margin",),
           "metric_margins", "gates.metric_margins", copied=False, metavar="NAME=VALUE", group="gates",
           file_kind="margins"),
    Option("max_latency_ratio", "float", _RSC, "fail when latency grows beyond this ratio",
           ("--max-latency-ratio",), "max_latency_ratio", "gates.max_latency_ratio",
           bounds=Bounds(0, None, False, False), group="gates"),
    Option("critical_gate", "off", _RSC, "do not fail on regressions of critical tasks", ("--no-critical-gate",),
           "critical_gate", "gates.critical_must_not_regress", copied=False, default=True, group="gates"),
    Option("label", "list", _RSC, "label kept in provenance (repeatable)", ("--label",), "labels", "labels",
           copied=False, metavar="KEY=VALUE", group="gates", file_kind="labels"),
    Option("prices", "prices", _RSC, "per model id: input_per_mtok, output_per_mtok, cached_input_per_mtok, "
           "cache_write_per_mtok (default: input_per_mtok), currency", (), "prices", "prices", copied=False),
    # output
    Option("format", "choice", _RSC, "report format (default terminal)", ("--format",), "format",
           choices=_REPORT_FORMATS, default="terminal", group="output"),
    Option("output", "path", _RSC, "write the report to this file", ("--output", "-o"), group="output"),
    Option("details", "switch", _RSC, "show both outputs of each flipped task", ("--details",), group="output"),
    Option("debug", "switch", (*_RSC, "plan", "init", "list", "view"), "show tracebacks on errors",
           ("--debug",), group="output"),
    Option("timestamps", "switch", _RSC, "show wall-clock start and finish times (default: none, or "
           "SOURCE_DATE_EPOCH)", ("--timestamps",), "timestamps", group="output"),
    Option("verbose", "switch", _RSC, "log diagnostics (formats detected, rows read) to stderr",
           ("--verbose", "-v"), group="output"),
    Option("quiet", "switch", _RSC, "print no report on stdout (errors still go to stderr; --output still "
           "writes); the exit code carries the verdict", ("--quiet", "-q"), group="output"),
    # plan
    Option("discordance", "float", ("plan",), "share of tasks expected to flip (psi)", ("--discordance",),
           bounds=Bounds(1e-6, 1)),
    Option("uplift", "float", ("plan",), "pass-rate change to detect (delta)", ("--uplift",), bounds=Bounds(-1, 1)),
    Option("tasks", "int", ("plan",), "suite size: print the minimum detectable effect", ("--tasks",),
           bounds=Bounds(1, 10**7)),
    Option("results", "pair", ("plan",), "take the task count and discordance from two result files",
           ("--results",), metavar=("BEFORE", "AFTER")),
    Option("power", "float", ("plan",), "power to detect the uplift (default 0.8)", ("--power",),
           bounds=_UNIT, default=0.8),
    Option("one_sided", "switch", ("plan",), "the regression gate's test: one-sided, H1 candidate worse (the "
           "default, accepted for explicitness)", ("--one-sided",)),
    Option("two_sided", "switch", ("plan",), "a two-sided test instead of the gate's one-sided one",
           ("--two-sided",)),
    Option("plan_sequential", "switch", ("plan",), "also simulate a sequential campaign: expected agent "
           "calls (mean, 90th percentile)", ("--sequential",), dest="sequential"),
    Option("simulations", "int", ("plan",), "with --sequential: simulated campaigns (default 2000)",
           ("--simulations",), bounds=Bounds(1, 10**6), default=2000),
    # init, list, view
    Option("force", "switch", ("init",), "overwrite existing files", ("--force",)),
    Option("list_format", "choice", ("list",), "a text table (default) or a JSON array", ("--format",),
           choices=("terminal", "json"), default="terminal", dest="format"),
    Option("limit", "int", ("list",), "list the newest N campaigns (default 20 in the table, all in JSON; "
           "0: all)", ("--limit",), bounds=Bounds(0, 10**9), metavar="N"),
    Option("host", "str", ("view",), "address to bind (default 127.0.0.1)", ("--host",), default="127.0.0.1"),
    Option("port", "int", ("view",), "port (default: a free one)", ("--port",), bounds=Bounds(0, 65535),
           default=0),
    Option("no_browser", "switch", ("view",), "do not open a browser", ("--no-browser",)),
    Option("suite", "str", ("view",), "suite whose task inputs and expected outputs to show", ("--suite",)),
)  # fmt: skip


def option_of(name: str) -> Option:
    """The option whose ``[tool.ablation]`` key or settings name is ``name``.

    Raises:
        KeyError: no option has that key or name.
    """
    for option in OPTIONS:
        if name in (option.key, option.name):
            return option
    raise KeyError(name)


def flags_of(name: str) -> tuple[str, ...]:
    """Every flag of the option whose key or settings name is ``name``; the first is the one to write.

    Raises:
        KeyError: no option has that key or name, or it has no flag.
    """
    flags = option_of(name).flags
    if not flags:
        raise KeyError(f"option {name!r} has no flag")
    return flags
