"""Data models of a campaign: tasks, trial results, agent outputs and configuration.

All models are frozen pydantic models with ``extra="forbid"``: a typo in a field name is an
error, never a silently ignored key. Values that cross a process or disk boundary (a
:class:`TaskResult`) hold only JSON-safe data; :func:`to_jsonable` is the one conversion used
for that.
"""

# No ``from __future__ import annotations``: pydantic reads the fields' types without parsing.

import functools
import hashlib
import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from ablation.digests import entry_digest, fingerprint_of_entries
from ablation.errors import ConfigError, WrongType
from ablation.jsonable import safe_text, to_jsonable
from ablation.outputs import (
    COUNT_LIMIT,
    VALUE_LIMIT,
    AgentOutput,
    CostSource,
    NamedNumbers,
    TrialCost,
    TrialUsage,
    usage_metrics,
)
from ablation.spans import TrialSpans

_SORTED_ENCODER = json.JSONEncoder(sort_keys=True)  # json.dumps(v, sort_keys=True), reused
_MAKE_ENCODER = getattr(json.encoder, "c_make_encoder", None)  # None without the C accelerator
#: The C encoder ``_SORTED_ENCODER.encode`` builds per call, built once (no circular check: it
#: only encodes :func:`to_jsonable` output, a tree).
_SORTED_C = _MAKE_ENCODER and _MAKE_ENCODER(
    None, _SORTED_ENCODER.default, json.encoder.encode_basestring_ascii, None, ": ", ", ", True,
    False, True)  # fmt: skip
_ADDRESS = re.compile(r" at 0x[0-9A-Fa-f]{4,}")

__all__ = [
    "ARMS",
    "COUNT_LIMIT",
    "NAME_SHOWN",
    "AblationTask",
    "AgentOutput",
    "Arm",
    "RubricCriterion",
    "TaskResult",
    "TrialCost",
    "TrialUsage",
    "callable_name",
    "duplicate_ids_error",
    "is_async_callable",
    "not_a_suite",
    "not_tasks",
    "safe_text",
    "shown_name",
    "suite_fingerprint",
    "task_entry",
    "to_jsonable",
    "validate_suite",
]

Arm = Literal["baseline", "candidate"]
ARMS: tuple[Arm, Arm] = ("baseline", "candidate")
TrialStatus = Literal["completed", "error", "timeout"]
RUN_LIMIT = 1 << 31  #: TaskResult.run and .attempts are below it (columnar readers' bound)
TASK_ID_LIMIT = 1 << 20  #: Most characters in a task id: a suite's task's, a result file's row's
NAME_SHOWN = 1000  #: Most characters of a task id or category the report's text names whole (:func:`shown_name`)
ErrorStage = Literal["agent", "verifier", "timeout", "setup", "teardown"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_SUITE = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)  # no defer_build: test_models_built


#: A text field written by a suite or an agent: lone surrogates escaped (:func:`safe_text`).
SafeStr = Annotated[str, BeforeValidator(lambda v: safe_text(v) if isinstance(v, str) else v)]


def shown_name(text: str, kind: str) -> str:
    """A task id or category as the report's text names it: whole up to :data:`NAME_SHOWN`
    characters, else its first ``NAME_SHOWN`` followed by ``… [KIND of N characters, sha256 X]``.

    Ids and categories may hold a megabyte of text; the mark says the name was cut, and the digest
    of the whole text (16 hex digits) keeps two long names that share their start apart. Lists
    meant for programs (a report's ``regressions``) keep ids whole.
    """
    if len(text) <= NAME_SHOWN:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{text[:NAME_SHOWN]}… [{kind} of {len(text)} characters, sha256 {digest}]"


def is_async_callable(fn: Any) -> bool:
    """True when calling ``fn`` returns an awaitable: an ``async def`` function or method, a
    :func:`functools.partial` of one, or an object whose class defines ``async def __call__``."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - objects with an async __call__
    return call is not None and inspect.iscoroutinefunction(call)


def callable_name(obj: Any) -> str:
    """A stable, human-readable name for a callable or object (``module:qualname``)."""
    explicit = getattr(obj, "name", None)
    if isinstance(explicit, str) and explicit:
        return explicit
    if isinstance(obj, Mapping):
        inner = obj.get("name") or obj.get("run")
        return str(inner) if isinstance(inner, str) else callable_name(inner)
    target = obj if hasattr(obj, "__qualname__") else type(obj)
    module = getattr(target, "__module__", None) or "?"
    return f"{_module_label(module)}:{getattr(target, '__qualname__', repr(target))}"


def _module_label(module: str) -> str:
    """A module's name, or for a file loaded by path (``_ablation_file_*``) the file's path as the
    user would write it (relative to the working directory when inside it)."""
    if not module.startswith("_ablation_file_"):
        return module
    import os
    import sys

    path = getattr(sys.modules.get(module), "__file__", None)
    if not path:
        return module
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


class RubricCriterion(BaseModel):
    """One weighted criterion of a task's quality rubric.

    A criterion is met when its regular expression matches the output text (``pattern``), or when
    every keyword occurs in it (``keywords``, case-insensitive). With ``negate=True`` it is met
    when the pattern or keywords are *absent* (e.g. "does not mention internal ids").
    """

    model_config = _FROZEN

    name: str
    description: str = ""
    pattern: str | None = None
    keywords: tuple[str, ...] = ()
    weight: float = Field(default=1.0, gt=0)
    negate: bool = False

    @model_validator(mode="after")
    def _has_test(self) -> Self:
        if self.pattern is None and not self.keywords:
            raise ValueError(f"rubric criterion {self.name!r} needs a pattern or keywords")
        return self


class AblationTask(BaseModel):
    """One task of a suite.

    Attributes:
        task_id: Unique id within the suite; the key that pairs the two arms.
        name: Short human name (defaults to the id).
        description: What the task checks.
        category: Group used for per-category breakdowns.
        family: Optional cluster (e.g. several tasks built from one source) for cluster statistics.
        tags: Free labels.
        critical: A regression on a critical task fails the release gate whatever the p-value.
        input_data: What the agent receives (deep-copied for every trial).
        expected_output: What the verifier compares against.
        verifier: ``(output, task) -> bool``, sync or async; ``None`` means equality.
        quality_rubric: Criteria for :class:`~ablation.evaluate.quality.RubricScorer`, or free text for a judge.
        metadata: Anything else (e.g. unit tests for the code-test verifier).
        setup: Optional hook called with the task before each trial.
        teardown: Optional hook called with the task after each trial.
    """

    model_config = _SUITE

    task_id: SafeStr = Field(min_length=1, max_length=TASK_ID_LIMIT)
    name: SafeStr = ""
    description: SafeStr = ""
    category: SafeStr = "default"
    family: SafeStr | None = None
    tags: tuple[SafeStr, ...] = ()
    critical: bool = False
    input_data: Any = None
    expected_output: Any = None
    verifier: Callable[..., Any] | None = Field(default=None, exclude=True)
    quality_rubric: tuple[RubricCriterion, ...] | str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    setup: Callable[..., Any] | None = Field(default=None, exclude=True)
    teardown: Callable[..., Any] | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _default_name(self) -> Self:
        if not self.name:
            object.__setattr__(self, "name", self.task_id)
        return self

    @property
    def verifier_name(self) -> str:
        """Name of the verifier (``"equals"`` when none is set)."""
        return "equals" if self.verifier is None else callable_name(self.verifier)


class TaskResult(BaseModel):
    """One trial: one agent call on one task for one run, with its verdict and measurements.

    ``passed`` is the verifier's verdict for a completed trial and ``False`` for an error or a
    timeout (how such trials count is decided by ``CampaignConfig.on_error`` in the analysis).
    ``latency_s`` is the successful attempt's own duration, ``wall_s`` with retries (``>= 0``);
    ``verifier_note`` what the verifier said of its verdict (why sandboxed code failed: a
    time-out, a memory limit, an early exit); ``arm`` (default ``"baseline"``) is set by
    :func:`~ablation.compare_results` from the side a result is given on.

    ``usage`` (:class:`TrialUsage`) is mirrored where the analysis reads numbers: ``tokens``
    becomes input + output tokens when not given and known, and ``metrics`` gains the entries of
    :func:`~ablation.outputs.usage_metrics` (a metric the caller set keeps its value). ``cost``
    is an amount in ``cost_currency`` (``None``: unstated) from ``cost_source``. Every number is
    finite and below ``VALUE_LIMIT`` in magnitude. ``trace`` is the call's inside (model messages),
    ``spans`` its OpenTelemetry spans; ``input``, ``expected_output``: as another tool records.
    """

    model_config = _FROZEN

    task_id: SafeStr
    arm: Arm = "baseline"
    run: int = Field(default=0, ge=0, lt=RUN_LIMIT)
    status: TrialStatus = "completed"
    passed: bool = False
    output: Any = None
    latency_s: float | None = Field(default=None, ge=0, lt=VALUE_LIMIT, allow_inf_nan=False)
    wall_s: float | None = Field(default=None, ge=0, lt=VALUE_LIMIT, allow_inf_nan=False)
    attempts: int = Field(default=1, ge=0, lt=RUN_LIMIT)
    attempt_errors: tuple[SafeStr, ...] = ()
    error_stage: ErrorStage | None = None
    error_type: SafeStr | None = None
    error_message: SafeStr | None = None
    error_traceback: SafeStr | None = None
    verifier_note: SafeStr | None = None
    quality: NamedNumbers = Field(default_factory=dict)
    quality_errors: dict[SafeStr, SafeStr] = Field(default_factory=dict)
    cost: float | None = Field(default=None, gt=-VALUE_LIMIT, lt=VALUE_LIMIT, allow_inf_nan=False)
    tokens: int | None = Field(default=None, ge=0, lt=COUNT_LIMIT)
    metrics: NamedNumbers = Field(default_factory=dict)
    category: SafeStr | None = None
    critical: bool = False
    started_at: float | None = None
    usage: TrialUsage | None = None
    cost_currency: str | None = None
    cost_source: CostSource | None = None
    trace: list[Any] | None = None
    input: Any = None
    expected_output: Any = None
    spans: TrialSpans | None = None

    @model_validator(mode="after")
    def _mirror_usage(self) -> Self:
        usage = self.usage
        if usage is None:
            return self
        given = self.__pydantic_fields_set__  # the columnar readers read the fields set
        tokens = usage.total_tokens  # None when unknown: never read as 0
        if self.tokens is None and tokens is not None:
            if tokens >= COUNT_LIMIT:
                raise ValueError(f"tokens: input + output tokens ({tokens}) must be below {COUNT_LIMIT}")
            object.__setattr__(self, "tokens", tokens)
            given.add("tokens")
        derived = usage_metrics(usage)
        if not derived.keys() <= self.metrics.keys():
            object.__setattr__(self, "metrics", {**derived, **self.metrics})
            given.add("metrics")
        return self

    @field_validator("output", "trace", "input", "expected_output", mode="before")
    @classmethod
    def _jsonable_output(cls, value: Any) -> Any:
        return to_jsonable(value)

    @property
    def error(self) -> str | None:
        """``"Type: message"`` of the recorded error, or ``None``."""
        if self.error_type is None:
            return None
        return f"{self.error_type}: {self.error_message}" if self.error_message else self.error_type

    @property
    def completed(self) -> bool:
        """True when the agent answered and the verifier gave a verdict."""
        return self.status == "completed"


def validate_suite(tasks: Iterable[Any]) -> tuple[AblationTask, ...]:
    """Check a suite and return it as a tuple.

    Raises:
        ConfigError: an empty suite or a repeated task id.
        WrongType: a string, bytes or mapping as the suite, or an item not an :class:`AblationTask`.
    """
    if isinstance(tasks, str | bytes | Mapping):
        raise not_a_suite(tasks)
    items = list(tasks)
    if not items:
        raise ConfigError("the suite is empty: a campaign needs at least one task")
    bad = [f"#{i} ({type(t).__name__})" for i, t in enumerate(items) if not isinstance(t, AblationTask)]
    if bad:
        raise not_tasks(bad)
    positions: dict[str, list[int]] = {}
    for i, task in enumerate(items):
        positions.setdefault(task.task_id, []).append(i)
    dups = {tid: pos for tid, pos in positions.items() if len(pos) > 1}
    if dups:
        raise duplicate_ids_error(dups)
    return tuple(items)


def not_a_suite(tasks: object) -> WrongType:
    """The error of a value given as a suite that is none (a string, bytes, a mapping...)."""
    return WrongType(f"a suite is a list of AblationTask, got {type(tasks).__name__}")


def not_tasks(bad: Sequence[str]) -> WrongType:
    """The error of suite items that are not :class:`AblationTask` (``bad``: ``"#i (type)"`` of
    each, in order): the first 10, and how many more."""
    more = f" ... and {len(bad) - 10} more" if len(bad) > 10 else ""
    return WrongType("suite items that are not AblationTask: " + ", ".join(bad[:10]) + more)


def duplicate_ids_error(positions: Mapping[str, Sequence[int]]) -> ConfigError:
    """The error of a suite whose ids repeat: ``positions`` maps each repeated id to where it
    occurs. Bounded whatever the suite: the first 10 ids (sorted, each named by
    :func:`shown_name`), the first 10 positions of each and how many there are."""

    def where(pos: Sequence[int]) -> str:
        return f"{list(pos[:10])}" + (f" ... ({len(pos)} in all)" if len(pos) > 10 else "")

    text = "; ".join(
        f"{shown_name(tid, 'task id')!r} at positions {where(pos)}" for tid, pos in sorted(positions.items())[:10]
    )
    more = f" ... and {len(positions) - 10} more repeated ids" if len(positions) > 10 else ""
    return ConfigError(f"duplicate task ids: {text}{more}")


def suite_fingerprint(tasks: Sequence[AblationTask], scorer_names: Sequence[str] = ()) -> str:
    """SHA-256 over what decides a trial's verdict: ids, inputs, expected outputs, verifiers, scorers.

    Task order does not matter. Two suites with the same fingerprint give comparable trials.
    """
    entries = sorted(task_entry(t) for t in tasks)
    return fingerprint_of_entries((json.dumps(e) for e in entries), scorer_names)


def task_entry(t: AblationTask, on_repr: Callable[[Any], object] | None = None) -> tuple[str, ...]:
    """``(task_id, input JSON, expected JSON, verifier name)``, canonical (:func:`to_jsonable`,
    sorted keys): what fingerprints cover. ``on_repr`` as in :func:`to_jsonable`."""
    values = (to_jsonable(v, on_repr=on_repr) for v in (t.input_data, t.expected_output))
    return (t.task_id, *(_sorted_json(v) for v in values), t.verifier_name)


def _sorted_json(value: Any) -> str:
    """``json.dumps(value, sort_keys=True)`` of :func:`to_jsonable` output, the same text."""
    return _SORTED_ENCODER.encode(value) if _SORTED_C is None else "".join(_SORTED_C(value, 0))


def task_digests(tasks: Sequence[AblationTask]) -> dict[str, str]:
    """Per-task digest (:func:`~ablation.digests.entry_digest`), naming what changed on resume."""
    return {t.task_id: entry_digest(task_entry(t)) for t in tasks}


def unstable_task_values(tasks: Sequence[AblationTask]) -> list[tuple[str, str]]:
    """``(task_id, type name)`` of task values whose ``repr`` (their digest) carries an address
    (``<Foo object at 0x...>``): it differs in every process, so no resume could check them."""
    found: dict[tuple[str, str], None] = {}
    for t in tasks:
        task_entry(t, functools.partial(note_unstable, t.task_id, found))
    return list(found)


def note_unstable(task_id: str, found: dict[tuple[str, str], None], value: Any) -> None:
    """Record ``(task_id, type name)`` in ``found`` when ``repr(value)`` carries an address."""
    if _ADDRESS.search(repr(value)):
        found[(task_id, type(value).__name__)] = None
