"""A toy report format: tab-separated ``field<TAB>value`` lines, one per headline figure and gate.

Register it with one line: ``register_format(TSV)``.
"""

from __future__ import annotations

from ablation.render.formats import ReportFormat
from ablation.report import AblationReport


def render_tsv(report: AblationReport, *, details: bool = False, width: int | None = None) -> str:
    """The report's verdict, uplift with its headline interval, and every gate's status."""
    ci = report.uplift.ci
    rows = [
        ("verdict", report.verdict),
        ("uplift", f"{report.uplift.estimate:.6f}"),
        ("ci_low", f"{ci.low:.6f}"),
        ("ci_high", f"{ci.high:.6f}"),
        *((f"gate:{g.name}", g.status) for g in report.gates),
    ]
    return "".join(f"{k}\t{v}\n" for k, v in rows)


TSV = ReportFormat("tsv", render_tsv, media_type="text/tab-separated-values", suffix=".tsv")
