"""The report's id lists are set as built (no validation copy), and are what validation gives.

A single category holds copies of the report's regression and improvement lists (equal lists,
never the same objects: editing one must not edit the other); with several categories each lists
its own. Either way the report equals its own JSON read back through validation, so skipping the
validation of the lists changes no value.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.pairing_oracle import pair_arrays

from ablation.analysis.build import build_report
from ablation.config import CampaignConfig
from ablation.report import AblationReport

FAST = CampaignConfig(n_resamples=200)


def _data(n: int, seed: int, categories: list[str] | None = None):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    ids = [f"task-{i:05d}" for i in rng.permutation(n)]  # out of order: the report sorts them
    base, cand = rng.random(n) < 0.6, rng.random(n) < 0.6
    critical = rng.random(n) < 0.3
    data = pair_arrays(ids, base, cand, categories=categories, critical=critical)
    return ids, base, cand, critical, data


def _expected(ids: list[str], mask: np.ndarray) -> list[str]:
    return sorted(i for i, m in zip(ids, mask, strict=True) if m)


def test_a_single_category_copies_the_reports_id_lists() -> None:
    ids, base, cand, critical, data = _data(600, 1)
    report = build_report(data, config=FAST)
    assert report.regressions == _expected(ids, base & ~cand)
    assert report.improvements == _expected(ids, cand & ~base)
    assert report.critical_regressions == _expected(ids, base & ~cand & critical)
    (only,) = report.categories
    assert only.regressions == report.regressions and only.improvements == report.improvements
    assert AblationReport.model_validate_json(report.model_dump_json()) == report
    # the lists were once shared: removing an id from the report removed it from the category
    gone = report.regressions.pop()
    report.improvements.clear()
    assert only.regressions[-1] == gone and only.improvements == _expected(ids, cand & ~base)


@pytest.mark.parametrize("seed", [2, 3])
def test_several_categories_list_their_own_ids(seed: int) -> None:
    n = 900
    labels = [("a", "b", "c")[i % 3] for i in range(n)]
    ids, *_, data = _data(n, seed, categories=labels)
    report = build_report(data, config=FAST)
    by_id = dict(zip(ids, labels, strict=True))
    assert [c.category for c in report.categories] == ["a", "b", "c"]
    for breakdown in report.categories:
        assert breakdown.regressions == [
            i for i in report.regressions if by_id[i] == breakdown.category
        ]
        assert breakdown.improvements == [
            i for i in report.improvements if by_id[i] == breakdown.category
        ]
        assert breakdown.table.regressions == len(breakdown.regressions)
    assert sum(len(c.regressions) for c in report.categories) == len(report.regressions)
    assert AblationReport.model_validate_json(report.model_dump_json()) == report
