"""Parts of a report: drill-down views of trials, error groups, the headline test, intervals, gates and the sequential summary.

Re-exported by :mod:`ablation.report`, whose :class:`~ablation.report.AblationReport` holds them.
"""

# No ``from __future__ import annotations``: pydantic reads the fields' types without parsing.

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ablation.spans import SpanSummary

__all__ = [
    "GATE_HOLDING",
    "DiffSegment",
    "ErrorGroup",
    "ErrorSummary",
    "GateResult",
    "Interval",
    "NamedInterval",
    "PairDetail",
    "SequentialPoint",
    "SequentialSummary",
    "TrialView",
    "UpliftTest",
    "stop_words",
]

#: The config of every report model. A non-finite float goes to JSON as the string "Infinity",
#: "-Infinity" or "NaN", which validation reads back as the float (JSON numbers cannot hold it;
#: ``null`` would not read back). Each nested model serialises with its own config, so all share it.
FROZEN = ConfigDict(frozen=True, extra="forbid", ser_json_inf_nan="strings")
_FROZEN = FROZEN


def no_items() -> list[Any]:
    """A new empty list: the default of the report's list fields.

    ``Field(default_factory=no_items)`` makes pydantic read ``list``'s text signature when the
    model is built, and the first such read compiles the tokenizer's regular expression (a cost
    in every command's start-up); a Python function's signature is read from its code.
    """
    return []


class ErrorGroup(BaseModel):
    """Trials of one arm that ended in the same way: stage and error type, with their tasks.

    A group of scorer errors (``ErrorSummary.scorer_groups``) has stage ``"scorer"`` and names
    the quality scorer in ``scorer``; its trials completed (a scorer error leaves the verdict).
    """

    model_config = _FROZEN

    arm: str
    stage: str
    error_type: str
    count: int
    n_tasks: int
    task_ids: list[str] = Field(default_factory=no_items)
    example: str | None = None
    scorer: str | None = None


class ErrorSummary(BaseModel):
    """Errors and timeouts of a comparison, by arm, stage and error type (every trial seen).

    ``trials`` and ``completed`` count each arm's trials and those that completed (not error,
    not timeout); ``task_ids`` of a group hold its first 20 tasks, ``n_tasks`` the count.
    ``scorer_groups``: the quality scorers that failed on a trial, by arm, scorer and error type
    (those trials completed: they are not in ``groups`` nor short of ``completed``).
    """

    model_config = _FROZEN

    trials: dict[str, int] = Field(default_factory=dict)
    completed: dict[str, int] = Field(default_factory=dict)
    groups: list[ErrorGroup] = Field(default_factory=no_items)
    scorer_groups: list[ErrorGroup] = Field(default_factory=no_items)


class TrialView(BaseModel):
    """What a reviewer needs of one trial in a drill-down."""

    model_config = _FROZEN

    status: str
    passed: bool | None
    output: Any = None
    error: str | None = None
    note: str | None = None
    latency_s: float | None = None
    quality: dict[str, float] = Field(default_factory=dict)
    attempts: int = 1
    run: int | None = Field(default=None, description="the run this trial belongs to")
    tools: list[str] = Field(
        default_factory=no_items,
        description="the tools the trial called, in order (from its trace)",
    )
    usage: dict[str, Any] | None = Field(
        default=None, description="token counts, model requests, tool calls and model id"
    )
    spans: SpanSummary | None = Field(
        default=None,
        description="what the trial's OpenTelemetry spans say: model calls, tools in order, "
        "errors, tokens, durations (when spans were collected)",
    )


class DiffSegment(BaseModel):
    """One piece of the word-level diff of two outputs: kept, only in the baseline's output
    (``delete``) or only in the candidate's (``insert``)."""

    model_config = _FROZEN

    op: Literal["equal", "delete", "insert"]
    text: str


class PairDetail(BaseModel):
    """A regressed or improved task, with both arms' trials side by side."""

    model_config = _FROZEN

    task_id: str
    kind: Literal["regression", "improvement"]
    category: str | None = None
    critical: bool = False
    run: int | None = None
    expected_output: Any = Field(
        default=None,
        description="the task's expected output: the suite's, else as the result files recorded it",
    )
    baseline: TrialView | None = None
    candidate: TrialView | None = None
    input: Any = Field(
        default=None, description="the task input: the suite's, else as the result files recorded it"
    )
    baseline_runs: list[TrialView] = Field(
        default_factory=no_items, description="every run of the task in the baseline, by run"
    )
    candidate_runs: list[TrialView] = Field(
        default_factory=no_items, description="every run of the task in the candidate, by run"
    )
    diff: list[DiffSegment] = Field(
        default_factory=no_items,
        description="word-level diff of the shown baseline output against the candidate's",
    )


class UpliftTest(BaseModel):
    """One test of "did the pass rate change", read by the sentence, the gate and the JSON.

    ``pvalue_worse`` is the one-sided p-value for H1 "candidate worse" (the significant-regression
    gate fails when it is below ``alpha``, and the summary then says ``"regression"``);
    ``pvalue_better`` the one-sided p-value for H1 "candidate better" (the summary says
    ``"improvement"`` when it is below ``alpha``). Each claim is one-sided at ``alpha``; the two
    cannot both hold for ``alpha < 1/2``.
    """

    model_config = _FROZEN

    method: str
    pvalue_worse: float
    pvalue_better: float
    alpha: float


class Interval(BaseModel):
    """A confidence interval with its level and the method that produced it."""

    model_config = _FROZEN

    low: float
    high: float
    confidence_level: float
    method: str

    @property
    def figure(self) -> tuple[str, float, float, float]:
        """What a reader sees of the interval: its method, level and bounds. Two intervals with
        the same figure (Tango's and the headline's when the sparse-table rule did not widen it)
        are shown once."""
        return (self.method, self.confidence_level, self.low, self.high)


class NamedInterval(Interval):
    """An interval of the uplift, with the name of the registered method that produced it.

    ``name`` is the method's key (``"tango"``, ``"newcombe"``, ``"t"``, ``"betting"``,
    ``"bootstrap"`` or a registered extension); ``secondary`` marks a figure shown only as a
    labelled secondary one (the bootstrap).
    """

    name: str
    secondary: bool = False


#: The statuses of a gate that does not fail the verdict: it passed, or the caller turned it off.
GATE_HOLDING = frozenset({"pass", "off"})


class GateResult(BaseModel):
    """One release gate: did it hold, and on what evidence.

    ``"fail"`` and ``"inconclusive"`` (a test that could not run) fail the verdict; ``"pass"``
    and ``"off"`` hold (:data:`GATE_HOLDING`, read through :attr:`holds` everywhere).
    """

    model_config = _FROZEN

    name: str
    status: Literal["pass", "fail", "inconclusive", "off"]
    evidence: str
    pvalue: float | None = None
    adjusted_pvalue: float | None = None
    tasks: list[str] = Field(default_factory=no_items)

    @property
    def passed(self) -> bool:
        """True only when the gate ran and passed (a gate turned off holds, but did not pass)."""
        return self.status == "pass"

    @property
    def holds(self) -> bool:
        """True when the gate does not fail the verdict: it passed or was turned off."""
        return self.status in GATE_HOLDING


class SequentialPoint(BaseModel):
    """The anytime-valid interval for the uplift after some pairs (one point of the plot)."""

    model_config = _FROZEN

    pairs: int
    low: float
    high: float
    estimate: float


class SequentialSummary(BaseModel):
    """What a sequential campaign decided, when, why and at what cost (DESIGN.md section 5).

    ``gate`` is the deciding rule (``critical_regression``, ``regression``, ``inferior``,
    ``non_inferior``, ``futility``, ``end_of_suite``) or ``"undecided"`` (tasks still missing).
    ``pairs`` counts the pairs the monitor saw (excluded pairs are skipped); ``tasks_run`` the
    tasks up to the deciding one in run order, or, undecided before every task ran, the tasks with a
    stored result. ``agent_calls`` is 2 x runs per task run (calls for later tasks made while
    earlier ones were in flight, then discarded, are not counted; undecided: the stored trials);
    ``agent_calls_planned`` that of the whole suite. ``e_value`` is the regression e-value (it rejects at ``1/alpha_per_candidate``, with
    ``alpha_per_candidate = alpha / candidates``, Bonferroni); ``interval`` the anytime-valid
    interval for the uplift at the stop. When ``fixed_n_descriptive`` is set the stop was
    data-dependent and the fixed-n p-values and intervals elsewhere are descriptive only.
    ``trajectory`` holds the interval after every pair (at most 500 points, evenly thinned).
    """

    model_config = _FROZEN

    stopped_early: bool
    gate: str
    reason: str
    pairs: int
    tasks_run: int
    n_tasks: int
    runs: int = 1
    agent_calls: int
    agent_calls_planned: int
    agent_calls_saved: int
    alpha: float
    alpha_per_candidate: float
    candidates: int = 1
    margin: float | None = None
    futility_after: int | None = None
    regressions: int
    improvements: int
    e_value: float
    interval: Interval
    estimate: float
    gates_decided: list[str] = Field(default_factory=no_items)
    fixed_n_descriptive: bool
    order: str
    trajectory: list[SequentialPoint] = Field(default_factory=no_items)


#: Each stop of a sequential campaign (``SequentialSummary.gate``) in the words that follow "the
#: campaign stopped", one table for the summary sentence, the sequential section and the gates'
#: evidence (:func:`stop_words`).
SEQUENTIAL_STOPS = {
    "regression": "on a significant regression",
    "critical_regression": "on a regression of a critical task",
    "inferior": "inferior",
    "non_inferior": "non-inferior",
    "futility": "at its futility limit, as inconclusive",
    "end_of_suite": "at the end of the suite",
    "undecided": "undecided",
}


def stop_words(s: SequentialSummary) -> str:
    """How the campaign stopped, in the words after "the campaign stopped": the entry of
    :data:`SEQUENTIAL_STOPS`, with the futility limit's pair count; a stop the table lacks (a
    rule added later) is its name with spaces."""
    if s.gate == "futility" and s.futility_after is not None:
        return f"at its futility limit of {s.futility_after} pairs, as inconclusive"
    return SEQUENTIAL_STOPS.get(s.gate, s.gate.replace("_", " "))
