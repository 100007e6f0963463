"""A ``--metric-margin`` (or ``metric_margins``) naming no metric of the results is a usage error.

Without this check a typo (``helpfulnes=1``) became a metric gate that failed for want of data:
exit 2, a "regression" that is really a misspelt name. One rule decides which names a margin may
use:

- the built-in names (:data:`ablation.analysis.metric_margins.LOWER_IS_BETTER`: ``latency_s``,
  ``latency``, ``cost``, ``tokens``) and the ``--quality`` scorers asked for are always accepted:
  they name what a run measures, and results without any value of them get an inconclusive gate
  saying so (as ``--max-latency-ratio`` does on results without latencies);
- any other name must be a quality score or numeric metric the results hold; otherwise the
  command stops with a usage error (exit 1) listing the metrics the results do hold and the
  built-in ones they lack.

The check runs on the finished report, because an agent's own metrics are known only from its
outputs; a campaign's trials are stored by then, so ``ablation report --metric-margin NAME=VALUE``
judges them again with the right name.
"""

from __future__ import annotations

from typing import Any

from ablation.cli.parser import UsageError

__all__ = ["check_metric_names", "known_metrics"]


def _margin_names(s: dict[str, Any]) -> list[tuple[str, str]]:
    """``(name, settings key)`` of every metric margin the settings give."""
    names = [(str(name), "metric_margins") for name in s.get("metric_margins") or {}]
    names += [(str(item).partition("=")[0].strip(), "metric_margin") for item in s.get("metric_margin") or []]
    return names


def known_metrics(carried: set[str]) -> str:
    """The list a usage error shows: the metrics the results hold, and the built-in ones absent.

    Args:
        carried: The metric names the reports hold (:func:`ablation.analysis.gate_data.carried_metrics`).
    """
    from ablation.analysis.gate_data import LATENCY_NAMES
    from ablation.analysis.metric_margins import LOWER_IS_BETTER

    builtin = sorted(LOWER_IS_BETTER - set(LATENCY_NAMES[1:]))  # an alias is not listed again
    absent = [name for name in builtin if name not in carried]
    held = f"the results hold: {', '.join(sorted(carried))}" if carried else "the results hold no metric"
    if not absent:
        return held
    return f"{held}; the built-in {', '.join(absent)} {'is' if len(absent) == 1 else 'are'} absent from them"


def check_metric_names(reports: list[Any], s: dict[str, Any]) -> None:
    """Raise :class:`UsageError` naming an unknown metric margin and listing the known metrics.

    Args:
        reports: The finished reports (one per candidate).
        s: The merged settings (``metric_margins`` from the file, ``metric_margin`` flags).
    """
    margins = _margin_names(s)
    if not margins:
        return
    from ablation.analysis.gate_data import carried_metrics
    from ablation.analysis.metric_margins import LOWER_IS_BETTER
    from ablation.cli.options import where_set

    carried: set[str] = set()
    for report in reports:
        carried |= carried_metrics(report)
    accepted = carried | LOWER_IS_BETTER | set(s.get("quality") or ())  # a scorer that always failed
    for name, key in margins:
        if name not in accepted:
            raise UsageError(
                f"{where_set(key, s)}: no metric named {name!r} in the results ({known_metrics(carried)})"
            )
