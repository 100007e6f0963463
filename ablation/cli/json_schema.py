"""The JSON Schema of every document ``--format json`` writes (``ablation schema``).

``--format json`` writes one of four documents, told apart by their ``document`` property:

- ``"report"``: one :class:`~ablation.report.AblationReport` (``run``, ``compare``, ``report``
  with one candidate). A report written before the property existed has none; it still matches
  this branch alone, since every other branch requires the property.
- ``"candidates"``: several candidates against one baseline (``run --candidate A --candidate B``,
  ``compare BEFORE A B``), :class:`~ablation.render._summary.CandidatesDocument`.
- ``"numeric"``: ``compare --field`` on a numeric field, one AFTER file
  (:class:`NumericDocument`).
- ``"numeric candidates"``: the same with several AFTER files (:class:`NumericCandidatesDocument`).

Each has ``schema_version`` (:data:`~ablation.report.REPORT_SCHEMA_VERSION`). The schema is a
``oneOf`` of the four models' schemas (JSON Schema draft 2020-12), their parts shared under
``$defs``; every model forbids unknown properties, so exactly one branch matches a document.

Assumptions: the models here describe the documents that :mod:`ablation.analysis.numeric` and
:mod:`ablation.render._summary` write as plain data; the command-line tests validate real
outputs of each kind against this schema.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.json_schema import models_json_schema

from ablation.analysis.numeric import NumericComparison
from ablation.render._summary import CandidatesDocument
from ablation.report import REPORT_SCHEMA_VERSION, AblationReport

__all__ = [
    "DOCUMENTS",
    "NumericCandidatesDocument",
    "NumericDocument",
    "NumericHolm",
    "NumericHolmRow",
    "json_schema",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class NumericDocument(NumericComparison):
    """``compare --field`` on a numeric field with one AFTER file: the comparison itself."""

    document: Literal["numeric"]
    schema_version: int = REPORT_SCHEMA_VERSION


class NumericHolmRow(BaseModel):
    """One AFTER file's one-sided p for improvement, and that p Holm-adjusted across the files."""

    model_config = _FROZEN

    name: str
    pvalue: float
    holm_pvalue: float


class NumericHolm(BaseModel):
    """The Holm summary of :func:`ablation.analysis.numeric.numeric_holm`."""

    model_config = _FROZEN

    note: str
    rows: list[NumericHolmRow]


class NumericCandidatesDocument(BaseModel):
    """``compare --field`` on a numeric field with several AFTER files: each comparison by file
    name, the Holm summary of their claims of improvement and the joint verdict."""

    model_config = _FROZEN

    document: Literal["numeric candidates"]
    schema_version: int = REPORT_SCHEMA_VERSION
    candidates: dict[str, NumericComparison]
    summary: NumericHolm
    verdict: Literal["pass", "fail"]


#: The models of the documents ``--format json`` writes, in the schema's ``oneOf`` order.
DOCUMENTS: tuple[type[BaseModel], ...] = (
    AblationReport,
    CandidatesDocument,
    NumericDocument,
    NumericCandidatesDocument,
)


def json_schema() -> dict[str, Any]:
    """The JSON Schema that every ``--format json`` document validates against (one branch each).

    Each model's schema is its validation schema (a property with a default is optional), so a
    document of an older layout that lacks an added property still validates.
    """
    _, top = models_json_schema([(m, "validation") for m in DOCUMENTS], ref_template="#/$defs/{model}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "ablation --format json",
        "description": "One of the documents --format json writes, named by its 'document' "
        "property: report (absent in reports written before it existed), candidates, numeric, "
        "numeric candidates.",
        "oneOf": [{"$ref": f"#/$defs/{m.__name__}"} for m in DOCUMENTS],
        "$defs": top["$defs"],
    }
