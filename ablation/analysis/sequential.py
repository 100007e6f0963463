"""Sequential campaigns: the run order, the monitor's settings, and the replay behind the report.

A sequential campaign (``CampaignConfig.sequential``) runs its tasks in a seeded random order and
feeds each finished pair to a :class:`~ablation.stats.SequentialMonitor` in that order; it stops at
the monitor's first decision. Everything here is a pure function of the stored trials, so the live
campaign (:mod:`ablation.run.sequential`), a resumed one, ``ablation report`` and
``ablation compare --sequential-replay`` reach the same decision at the same pair.

Rules (DESIGN.md section 5):

- Order: tasks sorted by ``BLAKE2b(seed, task id)``. The relative order of two tasks does not
  depend on the rest of the suite, so a resume and a replay see the same order.
- A pair's outcome is ``candidate − baseline`` of the task's pass fractions (``runs > 1``: the
  task is the unit); a task excluded for errors (``on_error="exclude"``) is skipped; a task with
  no result in an arm, or fewer than the configured runs stored in an arm (partly run, left out
  of the pairs: :func:`~ablation.analysis.pairing.leave_out_partly_run`), is a gap, and the
  replay waits there like the live campaign, which feeds a task once all its runs are in.
- A non-inferior stop (the one decision that can pass) waits until every critical task of the
  suite has run (the critical gate on): a campaign never passes on critical tasks it did not run.
- After a decision at pair k, the tasks after the deciding one in run order are left out of the
  whole report and listed in ``excluded`` with a reason that starts with :data:`STOPPED_EARLY`
  (the completeness gate ignores those): trials of theirs that finished in flight at the stop are
  dropped from the columns, the failures and every count of the arm summaries (trials, errors,
  timeouts, retried trials, scorer errors, cost), which are recounted from the trials of the kept
  tasks (:attr:`PairedData.totals_of`), so the report depends only on the decision, not on timing.
- Undecided at a gap (interrupted): nothing is left out, ``tasks_run`` and ``agent_calls`` count
  what is stored, and the fixed-n figures are descriptive (the fixed-n test is valid only as the
  planned look once every task ran, STATISTICS.md section 10).
- The stop is a fact of the campaign, decided with the settings in :data:`STOP_SETTINGS`: a
  stored campaign's report replays it with the stored values (:func:`stop_settings_changed`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from ablation import stats
from ablation.analysis.completeness import NOT_RUN_PREFIX
from ablation.analysis.pairing import (
    PARTLY_RUN_PREFIX,
    PairedData,
    leave_out_partly_run,
    restrict_tasks,
)
from ablation.config import CampaignConfig
from ablation.report import Interval, SequentialPoint, SequentialSummary

__all__ = [
    "GAP_REASONS",
    "ORDER_METHOD",
    "STOPPED_EARLY",
    "STOP_SETTINGS",
    "apply_sequential",
    "counted_pairs",
    "keep_tasks",
    "monitor_settings",
    "replay_monitor",
    "sequential_order",
    "stop_settings_changed",
]

#: Start of the excluded reason of every task a sequential campaign did not run.
STOPPED_EARLY = NOT_RUN_PREFIX
ORDER_METHOD = "seeded random order (tasks sorted by BLAKE2b of the seed and the task id)"
#: Excluded reasons of tasks that still lack a result or runs in an arm: the replay waits there.
GAP_REASONS = ("missing", "only in", PARTLY_RUN_PREFIX)
#: The configuration fields (dotted paths) that decide a sequential campaign's stop, with words.
STOP_SETTINGS = {
    "seed": "seed", "alpha": "alpha", "gates.noninferiority_margin": "margin",
    "gates.critical_must_not_regress": "critical gate", "sequential": "sequential policy",
}  # fmt: skip
_MAX_POINTS = 500
_GATE_NAMES = {
    "regression": "no significant regression",
    "margin": "non-inferiority",
    "critical": "critical tasks must not regress",
}


def _key(task_id: str, seed: int) -> bytes:
    return hashlib.blake2b(f"{seed}\x00{task_id}".encode(), digest_size=16).digest()


def sequential_order(task_ids: Iterable[str], seed: int) -> list[str]:
    """The run order of a sequential campaign (a seeded shuffle independent of the suite's order)."""
    return sorted(task_ids, key=lambda tid: (_key(tid, seed), tid))


def stop_settings_changed(
    stored: CampaignConfig, update: Mapping[str, Any]
) -> list[tuple[str, Any, Any]]:
    """The settings that decided a stored sequential campaign's stop which ``update`` changes.

    Args:
        stored: The campaign's stored configuration.
        update: Configuration fields to replace (whole fields, as
            :func:`~ablation.analysis.stored.report_stored_campaign` takes them).

    Returns:
        ``(path, stored value, updated value)`` for each field of :data:`STOP_SETTINGS` that
        differs; empty for a fixed-n campaign, whose report may be judged with other settings.
    """
    if stored.sequential is None:
        return []
    new = stored.model_copy(update=dict(update))
    pairs = [(path, attrgetter(path)(stored), attrgetter(path)(new)) for path in STOP_SETTINGS]
    return [(path, old, value) for path, old, value in pairs if value != old]


def monitor_settings(
    config: CampaignConfig, suite_size: int, critical_total: int = 0
) -> dict[str, Any]:
    """Keyword settings of :class:`~ablation.stats.SequentialMonitor` for a campaign's config.

    The campaign ends at ``suite_size`` pairs. The interval treats the tasks as i.i.d. (the
    population claim of the fixed-n test) unless ``config.sequential.suite_claim`` asks for the
    suite-only claim (sampling without replacement from ``suite_size`` tasks).
    ``critical_total`` counts the suite's critical tasks; with the critical gate on, a
    non-inferior stop (the one that can pass) waits until all of them have run.
    """
    policy = config.sequential
    assert policy is not None
    return {
        "critical_total": critical_total if config.gates.critical_must_not_regress else 0,
        "suite_size": suite_size,
        "alpha": config.alpha,
        "margin": config.gates.noninferiority_margin,
        "n_candidates": policy.candidates,
        "population_size": suite_size if policy.suite_claim else None,
        "futility_after": policy.futility_after,
    }


def replay_monitor(
    outcomes: Sequence[float], critical: Sequence[bool], settings: dict[str, Any]
) -> stats.SequentialMonitor:
    """The monitor after feeding ``outcomes`` in order, frozen at its first decision.

    Equal to calling ``update`` pair by pair and stopping at the decision; the vectorised
    :func:`~ablation.stats.sequential_decisions` finds the deciding pair first, so a long
    campaign replays in one pass.
    """
    d = np.asarray(outcomes, dtype=np.float64)
    crit = np.asarray(critical, dtype=bool)
    start = stats.SequentialMonitor(**settings)
    if d.size == 0:
        return start
    found = stats.sequential_decisions(d[None, :], critical=crit[None, :], **settings)
    stop = int(found.stop[0]) if str(found.gate[0]) != "undecided" else d.size + 1
    before = min(stop - 1, d.size)
    head = start
    if before:
        head = stats.SequentialMonitor(
            **settings,
            regression=stats.SequentialRegressionTest.from_outcomes(d[:before]),
            uplift=stats.UpliftConfidenceSequence.from_outcomes(
                d[:before],
                alpha=2.0 * start.alpha_per_candidate,
                population_size=settings["population_size"],
            ),
            critical_regressions=int(
                np.sum(crit[:before] & (d[:before] <= stats.sequential.CRITICAL_REGRESSION))
            ),
            critical_seen=int(np.sum(crit[:before])),
        )
    for i in range(before, d.size):  # one pair when decided (more only if the two paths differ)
        head = head.update(float(d[i]), critical=bool(crit[i]))
        if head.decided:
            break
    return head


def _universe(data: PairedData) -> list[str]:
    ids = set(data.task_ids)
    ids.update(e.task_id for e in data.excluded if not e.reason.startswith("unknown task id"))
    return list(ids)


def _interval_method(population_size: int | None, n: int) -> str:
    """The anytime-valid interval's method, with the claim it makes (population or suite)."""
    claim = (
        f"without replacement from N = {n} tasks (suite-only claim, opt-in)"
        if population_size is not None
        else "tasks as i.i.d. draws (population claim)"
    )
    return f"anytime-valid betting confidence sequence (Waudby-Smith & Ramdas), {claim}"


def _critical_count(data: PairedData, universe: list[str]) -> int:
    """Critical tasks of the suite: flagged in the paired data or in the suite's tasks."""
    found = {tid for tid, flag in zip(data.task_ids, data.critical, strict=True) if flag}
    found.update(tid for tid in universe if tid in data.tasks and data.tasks[tid].critical)
    return len(found)


def _trajectory(d: np.ndarray, alpha: float, n_pop: int | None) -> list[SequentialPoint]:
    if d.size == 0:
        return []
    cs = stats.uplift_confidence_sequence(d, population_size=n_pop, alpha=alpha)
    keep = np.unique(np.linspace(0, d.size - 1, min(d.size, _MAX_POINTS)).round().astype(int))
    return [
        SequentialPoint(
            pairs=int(i) + 1,
            low=float(cs.lower[i]),
            high=float(cs.upper[i]),
            estimate=float(cs.estimate[i]),
        )
        for i in keep
    ]


def _walk(
    data: PairedData, order: list[str], critical_on: bool
) -> tuple[list[str], list[float], list[bool], bool]:
    """Paired tasks in run order up to the first gap: ids, outcomes, critical flags, gap seen."""
    pos = {tid: i for i, tid in enumerate(data.task_ids)}
    gaps = {e.task_id for e in data.excluded if e.reason.startswith(GAP_REASONS)}
    diff = data.candidate.fraction - data.baseline.fraction
    ids: list[str] = []
    outcomes: list[float] = []
    flags: list[bool] = []
    for tid in order:
        if tid in gaps:
            return ids, outcomes, flags, True
        if tid in pos:
            ids.append(tid)
            outcomes.append(float(diff[pos[tid]]))
            flags.append(critical_on and bool(data.critical[pos[tid]]))
    return ids, outcomes, flags, False


def _undecided(data: PairedData, pairs: int, n: int, runs: int, gap: bool) -> tuple[int, int, int, str]:
    """Tasks run, agent calls, calls saved and the reason of a campaign that decided nothing.

    At a gap (interrupted: tasks lack a result or runs in an arm) nothing is left out, so what ran is
    what is stored: the tasks with a result in either arm and the trials seen (``2 x runs`` per
    task when the data do not count them). Otherwise every task ran (the end of the suite).
    """
    if not gap:
        reason = f"End of suite: all {n} tasks ran ({n - pairs} excluded) and no gate decided."
        return n, 2 * runs * n, 0, reason
    lacking = {e.task_id for e in data.excluded if e.reason.startswith(GAP_REASONS)}
    missing = {e.task_id for e in data.excluded if e.reason.startswith("missing")}
    ran = len(_universe(data)) - len(missing)
    calls = sum(data.trials_seen.values()) if data.trials_seen else 2 * runs * ran
    reason = (
        f"Undecided after {pairs} pairs: {len(lacking)} of {n} tasks lack a result or runs in an arm "
        "(interrupted?), so the fixed-n figures are descriptive."
    )
    return ran, calls, 0, reason


def counted_pairs(data: PairedData, config: CampaignConfig) -> tuple[PairedData, SequentialSummary | None]:
    """The pairs every figure of a report counts, and the sequential summary (``None`` at fixed
    n): the partly-run tasks left out (:func:`~ablation.analysis.pairing.leave_out_partly_run`)
    and, in sequential mode, the tasks after the monitor's decision (:func:`apply_sequential`).
    The report, the viewer's task table and a suite history's figures take their pairs here."""
    if config.sequential is None:
        return leave_out_partly_run(data, config.runs), None
    return apply_sequential(data, config)


def apply_sequential(
    data: PairedData, config: CampaignConfig
) -> tuple[PairedData, SequentialSummary]:
    """Replay a sequential campaign's pairs; return the data it analyses and its summary.

    Args:
        data: Every paired trial of the campaign (or of two result files, for a replay).
        config: The campaign's configuration; ``config.sequential`` must be set.

    Returns:
        The data restricted to the tasks run up to the decision (the rest listed as
        ``"not run (stopped early)"``), and the :class:`~ablation.report.SequentialSummary`.
    """
    policy = config.sequential
    assert policy is not None
    data = leave_out_partly_run(data, config.runs)
    universe = _universe(data)
    order = sequential_order(universe, config.seed)
    n = len(order)
    settings = monitor_settings(config, n, _critical_count(data, universe))
    ids, outcomes, flags, gap = _walk(data, order, config.gates.critical_must_not_regress)
    monitor = replay_monitor(outcomes, flags, settings)
    state = monitor.state
    runs = max(data.runs, config.runs)
    if state.decided:
        cut = order.index(ids[state.pairs - 1]) + 1
        data = keep_tasks(data, set(order[:cut]), order[cut:])
        ran, calls, saved, reason = cut, 2 * runs * cut, 2 * runs * (n - cut), state.reason
    else:
        ran, calls, saved, reason = _undecided(data, state.pairs, n, runs, gap)
    # the fixed-n test is valid only as the planned look once every task ran (STATISTICS.md 10)
    descriptive = ran < n if state.decided else gap
    gate = state.gate or ("undecided" if gap else "end_of_suite")
    a_c = state.alpha_per_candidate
    decided = [_GATE_NAMES["regression"]]
    if settings["margin"] is not None:
        decided.append(_GATE_NAMES["margin"])
    if config.gates.critical_must_not_regress:
        decided.append(_GATE_NAMES["critical"])
    return data, SequentialSummary(
        stopped_early=state.decided and ran < n,
        gate=gate,
        reason=reason,
        pairs=state.pairs,
        tasks_run=ran,
        n_tasks=n,
        runs=runs,
        agent_calls=calls,
        agent_calls_planned=2 * runs * n,
        agent_calls_saved=saved,
        alpha=config.alpha,
        alpha_per_candidate=a_c,
        candidates=policy.candidates,
        margin=settings["margin"],
        futility_after=policy.futility_after,
        regressions=state.regressions,
        improvements=state.improvements,
        e_value=state.e_value,
        interval=Interval(
            low=state.interval.low, high=state.interval.high, confidence_level=1 - 2 * a_c,
            method=_interval_method(settings["population_size"], n),
        ),
        estimate=state.estimate,
        gates_decided=decided,
        fixed_n_descriptive=descriptive,
        order=ORDER_METHOD,
        trajectory=_trajectory(
            np.asarray(outcomes[: state.pairs]), 2 * a_c, settings["population_size"]
        ),
    )



def keep_tasks(data: PairedData, keep: set[str], dropped: Sequence[str]) -> PairedData:
    """``data`` with only the tasks in ``keep``; ``dropped`` (in run order) listed as not run."""
    reason = f"{STOPPED_EARLY}: the sequential campaign had decided before this task"
    return restrict_tasks(data, keep, dropped, reason)
