"""Several candidates against one baseline: their claims of improvement, Holm-adjusted across them.

Each candidate's claim of improvement (its report's one-sided test, H1 "candidate better": the
one-sided exact McNemar test with one run) is Holm-adjusted over all candidates (family-wise
error rate, the right control when the best candidate will be picked). Holm is for these claims
of improvement only; a candidate's own gates are judged unadjusted, so a regression never hides
behind the number of candidates, and a claim of regression stays unadjusted too.

:func:`holm_claims` is the one place the rule is applied: the output of a several-candidate
command (``run``, ``compare``) and the report of one stored campaign of a several-candidate run
(:func:`ablation.analysis.stored.report_stored_campaign`, over the campaigns stored as one family)
both call it, so every renderer, the summary rows, the JSON and ``ablation report`` state the same
claim. A candidate the family planned whose report does not exist (its run was interrupted before
it started) counts with p = 1, which keeps Holm over the planned number valid and conservative.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ablation.report import AblationReport

__all__ = ["holm_claims", "improvement_p"]


def improvement_p(report: AblationReport) -> float:
    """One-sided p for "candidate better": the report's own test, else the exact McNemar tail."""
    if report.uplift_test is not None:
        return report.uplift_test.pvalue_better
    from ablation.stats import mcnemar

    return float(mcnemar(report.mcnemar.b, report.mcnemar.c, alternative="greater").pvalue)


def holm_claims(
    reports: Sequence[AblationReport], others: Sequence[float] = ()
) -> list[AblationReport]:
    """The reports with their claims of improvement Holm-adjusted across the candidates.

    The candidates are the ``reports`` and, for a stored family of which only some reports are
    given, the ``others``. Each report gains ``improvement_holm_pvalue`` (its one-sided p for
    improvement, :func:`improvement_p`, adjusted over all candidates) and
    ``improvement_holm_candidates`` (how many); a ``summary`` of ``"improvement"`` whose adjusted
    p is not below the report's alpha becomes ``"no significant difference"``. A claim of
    regression, the gates and the verdict are left as they are (each is judged at alpha on its
    own).

    The reports are returned unchanged when there are fewer than two candidates in all, and when
    every report already carries an adjustment over at least as many candidates as given here
    (reports adjusted over their whole stored family keep that adjustment when written with
    fewer of its members); so applying it twice gives the same reports.

    Args:
        reports: Reports of candidates against one baseline.
        others: The one-sided p for improvement of the family's other candidates (1 for a
            planned candidate that never ran).
    """
    total = len(reports) + len(others)
    done = all((r.improvement_holm_candidates or 0) >= total for r in reports)
    if total < 2 or done:
        return list(reports)
    from ablation.stats import adjust_pvalues

    pvalues = [improvement_p(r) for r in reports] + [float(p) for p in others]
    holm = [float(x) for x in adjust_pvalues(pvalues, method="holm")][: len(reports)]
    out = []
    for r, adjusted in zip(reports, holm, strict=True):
        alpha = r.uplift_test.alpha if r.uplift_test is not None else r.provenance.alpha
        update: dict[str, Any] = {"improvement_holm_pvalue": adjusted, "improvement_holm_candidates": total}
        if r.summary == "improvement" and not adjusted < alpha:
            update["summary"] = "no significant difference"
        out.append(r.model_copy(update=update))
    return out
