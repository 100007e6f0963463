"""What else changed significantly: quality scores and usage, named in the report's notes.

Not a gate (``--metric-margin`` makes a metric one): a reader who did not think of asking about
a quality score or a tool learns that it moved. Each comparison's Wilcoxon signed-rank p-value
(two-sided, on the per-task values, :mod:`ablation.analysis.metrics`) is adjusted by Holm across
every quality score and usage metric of the report, and a change is named when its adjusted
p-value is below ``alpha``. The cost's currency and source are those of every trial with a cost.
"""

from __future__ import annotations

from collections.abc import Iterable

from ablation import stats
from ablation.analysis.gate_data import UNITS_JOINED, mixes_units
from ablation.analysis.pairing import PairedData
from ablation.outputs import TOOL_CALLS_PREFIX, USAGE_METRICS
from ablation.report import AblationReport, ContinuousComparison
from ablation.schema import NAME_SHOWN

__all__ = ["CHANGED", "change_notes", "cost_units", "with_notes"]

_USAGE = frozenset({*USAGE_METRICS, "tokens", "cost"})


def _label(name: str, kind: str) -> str:
    if kind == "quality":
        return f"quality score {name!r}"
    if name.startswith(TOOL_CALLS_PREFIX):
        return f"tool {name[len(TOOL_CALLS_PREFIX):]!r} calls per task"
    return name.replace("_", " ")


def _noted(report: AblationReport) -> list[tuple[str, ContinuousComparison]]:
    """``(label, comparison)`` of the quality scores and usage metrics with a Wilcoxon p."""
    found: list[tuple[str, ContinuousComparison]] = [
        (_label(n, "quality"), c) for n, c in sorted(report.quality.items())
    ]
    found += [
        (_label(n, "metric"), c) for n, c in sorted(report.metrics.items())
        if n in _USAGE or n.startswith(TOOL_CALLS_PREFIX)
    ]  # fmt: skip
    if report.cost is not None:
        found.append(("cost", report.cost))
    return [(label, c) for label, c in found if c.wilcoxon_pvalue is not None]


CHANGED = "Also changed: "
"""The lead of a change note: the notes say what each is, so every renderer shows them as they are
(a currency note is no change)."""


def change_notes(report: AblationReport, alpha: float) -> list[str]:
    """One sentence per quality score or usage metric whose change is significant after Holm,
    led by :data:`CHANGED`.

    A tool call count that fell names the tool's use as dropped ("the candidate calls it less").
    """
    found = _noted(report)
    if not found:
        return []
    adjusted = stats.adjust_pvalues([c.wilcoxon_pvalue or 1.0 for _, c in found], method="holm")
    notes = []
    for (label, c), p in zip(found, adjusted, strict=True):
        if not p < alpha or c.baseline_mean is None or c.candidate_mean is None:
            continue
        went = "fell" if c.candidate_mean < c.baseline_mean else "rose"
        use = ""
        if label.startswith("tool "):
            use = f" (the candidate uses this tool {'less' if went == 'fell' else 'more'})"
        notes.append(
            f"{CHANGED}{label} {went}: {_number(c.baseline_mean)} -> {_number(c.candidate_mean)} "
            f"(Wilcoxon p = {c.wilcoxon_pvalue:.2g}, Holm-adjusted {float(p):.2g}, "
            f"{c.n_pairs} pairs){use}"
        )
    return notes


def _number(x: float) -> str:
    """4 significant digits, in plain decimals below 1e-4 (a cost of ``0.00002945``)."""
    if x == 0 or abs(x) >= 1e-4:
        return f"{x:.4g}"
    return f"{float(f'{x:.4g}'):.12f}".rstrip("0")


def cost_units(data: PairedData, arm: str) -> tuple[str | None, str | None]:
    """``(currency, source)`` of an arm's costs, from every trial with a cost (every task and
    run: :attr:`~ablation.analysis.pairing.PairedData.cost_units`); values that differ are
    joined by :data:`~ablation.analysis.gate_data.UNITS_JOINED`; an unstated currency beside a stated one is ``unstated`` among them (a
    bare number is not known to be in the other trials' currency), and alone is ``None``. A
    currency is an ISO 4217 code, read in upper case (``usd`` and ``USD`` are one currency)."""
    units = data.cost_units.get(arm, frozenset())
    currencies = {(c or "").strip().upper() for c, _ in units}
    if "" in currencies and len(currencies) > 1:
        currencies = (currencies - {""}) | {"unstated"}
    return _joined(currencies), _joined(s or "" for _, s in units)


def _joined(values: Iterable[str]) -> str | None:
    kept = sorted({v for v in values if v})
    return UNITS_JOINED.join(kept) if kept else None


def with_notes(report: AblationReport, data: PairedData, alpha: float) -> AblationReport:
    """``report`` with its change notes and each arm's cost currency and source.

    Costs in different currencies are not comparable: when the arms' stated currencies differ,
    or an arm mixes several, the paired cost comparison and the cost's non-inferiority test are
    dropped (a cost gate then is inconclusive, having nothing to judge) and a note says why; an
    arm that mixes currencies has no total or mean either (its ``cost_trials`` still counts them).
    """
    update: dict[str, object] = {}
    currencies: dict[str, str | None] = {}
    for arm in ("baseline", "candidate"):
        summary = getattr(report, arm)
        if summary.cost_total is not None:
            currency, source = cost_units(data, arm)
            currencies[arm] = currency
            summed = {"cost_total": None, "cost_mean": None} if mixes_units(currency) else {}
            update[arm] = summary.model_copy(update={"cost_currency": currency, "cost_source": source, **summed})
    said = {arm: c or "unstated" for arm, c in currencies.items()}
    mixing = [arm for arm, c in said.items() if mixes_units(c)]
    notes: list[str] = []
    if mixing or (len(said) == 2 and len(set(said.values())) == 2 and any(currencies.values())):
        ni = {k: v for k, v in report.metric_noninferiority.items() if k != "cost"}
        metrics = {k: v for k, v in report.metrics.items() if k != "cost"}
        report = report.model_copy(update={"cost": None, "metrics": metrics, "metric_noninferiority": ni})
        if mixing:
            each = " and ".join(f"the {arm}'s ({said[arm]})" for arm in mixing)
            notes.append(f"Costs mix currencies within an arm, {each}: not summed or compared, and a "
                         "cost gate has nothing to judge")  # fmt: skip
        else:
            notes.append(
                f"Costs are in different currencies (baseline {said['baseline']}, candidate "
                f"{said['candidate']}): not compared, and a cost gate has nothing to judge"
            )
    update["notes"] = notes + _cut_categories(report) + change_notes(report, alpha)
    return report.model_copy(update=update)


def _cut_categories(report: AblationReport) -> list[str]:
    """The note that some categories are named by a cut label (:func:`~ablation.schema.shown_name`):
    the pairing leaves no label longer than :data:`~ablation.schema.NAME_SHOWN` characters but those."""
    n = sum(len(c.category) > NAME_SHOWN for c in report.categories)
    if not n:
        return []
    return [f"{n} {'category is' if n == 1 else 'categories are'} longer than {NAME_SHOWN} characters: "
            f"named by the first {NAME_SHOWN}, the length and a SHA-256 digest of the whole text"]
