"""JSON report: the report model itself, serialised by pydantic.

The JSON document is the contract shared with other tools (``report.model_dump_json()``), so the
renderer adds nothing and drops nothing.
"""

from __future__ import annotations

from ablation.report import AblationReport

__all__ = ["render_json"]


def render_json(report: AblationReport) -> str:
    """Exactly ``report.model_dump_json(indent=2)``."""
    return report.model_dump_json(indent=2)
