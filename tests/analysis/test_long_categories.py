"""A category of any length is named in the report by a bounded label that says it was cut.

Categories have no length limit: a task labelled with 500,000 characters of text had them copied
into the report's categories, into every drill-down of the category's tasks and into the terminal
report (megabytes of one word per task), and two long categories could only be told apart by
reading them whole.
"""

from __future__ import annotations

import hashlib
import json

from ablation import AblationTask, TaskResult, compare_results, run_ablation_campaign
from ablation.render import render
from ablation.schema import NAME_SHOWN

LONG = "x" * 500_000
CATEGORIES = [LONG + "a", LONG + "b", "short"]


def _results(arm: str) -> list[TaskResult]:
    return [
        TaskResult(task_id=f"t{i}", arm=arm, passed=arm == "baseline" or i % 3 == 0,  # type: ignore[arg-type]
                   category=CATEGORIES[i % 3])
        for i in range(9)
    ]


def _check(names: list[str]) -> None:
    """Each category is named once: a short one as it is, a long one by its start, its length
    and the digest of its whole text, in fewer than twice ``NAME_SHOWN`` characters."""
    assert len(names) == len(CATEGORIES)
    for c in CATEGORIES:
        if len(c) <= NAME_SHOWN:
            assert names.count(c) == 1
            continue
        digest = hashlib.sha256(c.encode()).hexdigest()[:16]
        (name,) = [n for n in names if digest in n]
        assert name.startswith(c[:NAME_SHOWN]) and f"{len(c)} characters" in name
        assert len(name) < 2 * NAME_SHOWN


def test_compare_names_long_categories_by_a_bounded_label() -> None:
    report = compare_results(_results("baseline"), _results("candidate"))
    names = [c.category for c in report.categories]
    _check(names)
    assert {d.category for d in report.details} <= set(names)
    assert [n for n in report.notes if f"longer than {NAME_SHOWN} characters" in n] == [
        f"2 categories are longer than {NAME_SHOWN} characters: named by the first {NAME_SHOWN}, the length "
        "and a SHA-256 digest of the whole text"
    ]
    assert len(report.model_dump_json()) < 100 * NAME_SHOWN * len(CATEGORIES)
    assert len(render(report, "terminal")) < 100 * NAME_SHOWN * len(CATEGORIES)


def test_a_campaign_names_them_as_compare_does() -> None:
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, category=CATEGORIES[i % 3]) for i in range(9)]
    report = run_ablation_campaign(lambda x: None, lambda x: None if x % 3 == 0 else 1, tasks)
    compared = compare_results(_results("baseline"), _results("candidate"))
    assert [c.category for c in report.categories] == [c.category for c in compared.categories]
    assert json.loads(report.model_dump_json())["regressions"] == compared.regressions
