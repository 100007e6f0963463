"""Errors and timeouts of a comparison, named: counts by arm, stage and error type, with tasks.

Every trial seen enters (paired or not), so an arm that errored on every task is visible even
when its tasks left the paired analysis. The completeness gate reads the per-arm counts; the
renderers show the groups in every format by default (no ``--details`` needed).
"""

from __future__ import annotations

from collections import defaultdict

from ablation.analysis.pairing import PairedData
from ablation.report import ErrorGroup, ErrorSummary

__all__ = ["MAX_ERROR_IDS", "error_summary", "errored_regressions"]

MAX_ERROR_IDS = 20
"""Task ids listed per error group (the count of all of them is given beside)."""


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
