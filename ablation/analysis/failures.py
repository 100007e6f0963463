"""Errors and timeouts of a comparison, named: counts by arm, stage and error type, with tasks.

Every trial seen enters (paired or not), so an arm that errored on every task is visible even
when its tasks left the paired analysis. The completeness gate reads the per-arm counts; the
renderers show the groups in every format by default (no ``--details`` needed).

A quality scorer that raised (or timed out) on a trial is an error too, though the trial
completed and keeps its verdict: the scorer groups (:func:`scorer_error_groups`) count such
trials by arm, scorer and error type. The trials' columns record only *that* a scorer failed;
the error type (the text before ``": "`` of the recorded ``"Type: message"``) and the example
are read through the report's trial lookup, for the trials of the first
:data:`MAX_SCORER_READS` tasks of each arm and scorer (the first run only, where the lookup
offers no other). A trial whose message was not read counts in a group of type
:data:`NOT_READ`, so every failed trial is counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ablation.analysis.pairing import PairedData
from ablation.report import ErrorGroup, ErrorSummary

__all__ = [
    "MAX_ERROR_IDS", "MAX_SCORER_READS", "NOT_READ", "SCORER_STAGE", "error_summary",
    "errored_regressions", "scorer_error_groups", "scorer_failed",
]  # fmt: skip

MAX_ERROR_IDS = 20
"""Task ids listed per error group (the count of all of them is given beside)."""
MAX_SCORER_READS = 1000
"""Tasks per arm and scorer whose trials are read for the scorer's error messages."""
NOT_READ = "message not read"
"""Error type of a scorer error whose message was not read (beyond :data:`MAX_SCORER_READS`
tasks, a later run the lookup does not give, or no lookup)."""
SCORER_STAGE = "scorer"
"""Stage of a scorer error group."""

def error_summary(data: PairedData) -> ErrorSummary:
    """Group the failed trials by ``(arm, stage, error type)``, largest groups first.

    Args:
        data: Paired data whose ``failures`` and ``trials_seen`` were filled by
            :func:`~ablation.analysis.pair_arms.pair_columns`.

    Returns:
        The per-arm trial and completed counts, and the error groups (sorted by arm, then by
        decreasing count, then by stage and type, so the order is reproducible).
    """
    counts: dict[tuple[str, str, str], int] = defaultdict(int)
    tasks: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    example: dict[tuple[str, str, str], str] = {}
    failed_per_arm: dict[str, int] = defaultdict(int)
    for tid, arm, _run, _status, text, stage, error_type in data.failures:
        key = (arm, stage, error_type)
        counts[key] += 1
        tasks[key].add(tid)
        example.setdefault(key, text)
        failed_per_arm[arm] += 1
    order = sorted(counts, key=lambda k: (k[0] != "baseline", -counts[k], k[1], k[2]))
    groups = [
        ErrorGroup(
            arm=arm,
            stage=stage,
            error_type=error_type,
            count=counts[(arm, stage, error_type)],
            n_tasks=len(tasks[(arm, stage, error_type)]),
            task_ids=sorted(tasks[(arm, stage, error_type)])[:MAX_ERROR_IDS],
            example=_short(example[(arm, stage, error_type)]),
        )
        for arm, stage, error_type in order
    ]
    seen = {arm: data.trials_seen.get(arm, 0) for arm in ("baseline", "candidate")}
    return ErrorSummary(
        trials=seen,
        completed={arm: n - failed_per_arm.get(arm, 0) for arm, n in seen.items()},
        groups=groups,
        scorer_groups=scorer_error_groups(data),
    )


def _read(data: PairedData, keys: list[tuple[str, str]]) -> dict[tuple[str, str], list[Any]]:
    """The trials of ``keys`` through the lookup: every run where it offers ``all_runs`` (with
    repeated runs), else the first run, in one read where it offers ``many``."""
    trials: Any = data.trials
    if not keys or not trials:
        return {}
    all_runs = getattr(trials, "all_runs", None)
    if data.runs > 1 and callable(all_runs):
        return dict(all_runs(keys))
    many = getattr(trials, "many", None)
    first = many(keys) if callable(many) else {k: v for k in keys if (v := trials.get(k)) is not None}
    return {key: [value] for key, value in first.items()}


def _error_type(text: str) -> str:
    """The error type of a recorded ``"Type: message"`` (the whole text names no type: ``"error"``)."""
    head = text.split(":", 1)[0].strip()
    return head if ":" in text and head.replace(".", "_").isidentifier() else "error"


def scorer_error_groups(data: PairedData) -> list[ErrorGroup]:
    """The scorer errors by arm, scorer and error type (baseline first, then by scorer name and
    decreasing count), each with its first tasks and one message (see the module docstring)."""
    rows = data.scorer_failures
    order = sorted(rows, key=lambda k: (k[0] != "baseline", k))
    read = {key: sorted(set(rows[key][0].tolist()))[:MAX_SCORER_READS] for key in order}
    keys = list(dict.fromkeys((tid, arm) for (arm, _), ids in read.items() for tid in ids))
    found = _read(data, keys)
    groups: list[ErrorGroup] = []
    for arm, name in order:
        ids, runs = rows[arm, name]
        counts: dict[str, int] = defaultdict(int)
        tasks: dict[str, set[str]] = defaultdict(set)
        example: dict[str, str] = {}
        wanted = set(read[arm, name])
        for tid, run in zip(ids.tolist(), runs.tolist(), strict=True):
            texts = found.get((tid, arm), ()) if tid in wanted else ()
            trial = next((r for r in texts if r.run == run), None)
            text = trial.quality_errors.get(name) if trial is not None else None
            kind = _error_type(text) if text else NOT_READ
            counts[kind] += 1
            tasks[kind].add(tid)
            if text:
                example.setdefault(kind, text)
        groups += [
            ErrorGroup(
                arm=arm, stage=SCORER_STAGE, error_type=kind, count=counts[kind],
                n_tasks=len(tasks[kind]), task_ids=sorted(tasks[kind])[:MAX_ERROR_IDS],
                example=_short(example[kind]) if kind in example else None, scorer=name,
            )
            for kind in sorted(counts, key=lambda k: (k == NOT_READ, -counts[k], k))
        ]  # fmt: skip
    return groups


def scorer_failed(scorer: str, counts: Sequence[tuple[int, int]], example: str | None) -> str:
    """Words saying that quality scorer ``scorer`` failed, as a clause.

    Args:
        scorer: The scorer's name.
        counts: Per arm (baseline, candidate), ``(trials it failed on, trials counted)``.
        example: The first error message shown, or ``None``.
    """
    (b, nb), (c, nc) = counts
    first = f", first: {example}" if example else ""
    return (
        f"quality scorer {scorer!r} failed on {b} of {nb} baseline and {c} of {nc} candidate "
        f"trial(s){first}"
    )


def errored_regressions(data: PairedData, regressions: list[str]) -> list[str]:
    """Regressions whose candidate trial errored or timed out (not a wrong answer)."""
    candidate_failed = {tid for tid, arm, *_ in data.failures if arm == "candidate"}
    if not candidate_failed:  # the usual case: no pass over a million regressions
        return []
    return [tid for tid in regressions if tid in candidate_failed]


def _short(text: str, limit: int = 160) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 3] + "..."
