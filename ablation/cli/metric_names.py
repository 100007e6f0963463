"""A ``--metric-margin`` (or ``metric_margins``) naming no metric of the results is a usage error.

Without this check a typo (``helpfulnes=1``) became a metric gate that failed for want of data:
exit 2, a "regression" that is really a misspelt name. The names a margin may use are the built-in
ones (:data:`ablation.analysis.metric_margins.LOWER_IS_BETTER`: latency, cost, tokens), the
``--quality`` scorers asked for (one that failed on every trial has no score in the report, and
its gate then fails for want of data), and every quality score and numeric metric the report holds. The check runs on the finished report, because
an agent's own metrics are known only from its outputs; a campaign's trials are stored by then,
so ``ablation report --metric-margin NAME=VALUE`` judges them again with the right name.
"""

from __future__ import annotations

from typing import Any

from ablation.cli.parser import UsageError

__all__ = ["check_metric_names"]


def _margin_names(s: dict[str, Any]) -> list[tuple[str, str]]:
    """``(name, settings key)`` of every metric margin the settings give."""
    names = [(str(name), "metric_margins") for name in s.get("metric_margins") or {}]
    names += [(str(item).partition("=")[0].strip(), "metric_margin") for item in s.get("metric_margin") or []]
    return names


def check_metric_names(reports: list[Any], s: dict[str, Any]) -> None:
    """Raise :class:`UsageError` naming an unknown metric margin and listing the known metrics.

    Args:
        reports: The finished reports (one per candidate).
        s: The merged settings (``metric_margins`` from the file, ``metric_margin`` flags).
    """
    margins = _margin_names(s)
    if not margins:
        return
    from ablation.analysis.metric_margins import LOWER_IS_BETTER
    from ablation.cli.options import where_set

    known = set(LOWER_IS_BETTER) | set(s.get("quality") or ())  # a scorer that always failed
    for report in reports:
        known.update(report.quality, report.metrics)
    for name, key in margins:
        if name not in known:
            raise UsageError(
                f"{where_set(key, s)}: no metric named {name!r} in the results (known: "
                f"{', '.join(sorted(known))})"
            )
