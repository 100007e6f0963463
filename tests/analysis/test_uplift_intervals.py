"""The uplift's intervals: a list from a registry of methods, and one headline chooser."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from toys.wald_interval import wald

from ablation import AblationTask, CampaignConfig, TaskResult
from ablation.analysis.build import report_from_results
from ablation.analysis.uplift_intervals import (
    INTERVAL_METHODS,
    choose_headline,
    register_interval_method,
)
from ablation.render import render
from ablation.render._summary import summary_data
from ablation.report import CategoryBreakdown, NamedInterval

CONFIG = CampaignConfig(n_resamples=200)


def _report(outcomes: list[tuple[bool, bool]], families: list[str] | None = None, runs: int = 1):  # type: ignore[no-untyped-def]
    tasks = [
        AblationTask(task_id=f"t{i:03d}", family=None if families is None else families[i])
        for i in range(len(outcomes))
    ]
    results = [
        TaskResult(task_id=t.task_id, arm=arm, passed=p, run=r)
        for t, (bp, cp) in zip(tasks, outcomes, strict=True)
        for arm, p in (("baseline", bp), ("candidate", cp))
        for r in range(runs)
    ]
    return report_from_results(results, tasks=tasks, config=CONFIG)


OUTCOMES = [(True, False)] * 6 + [(False, True)] * 2 + [(True, True)] * 20 + [(False, False)] * 12


def test_with_families_the_summary_shows_the_reports_headline() -> None:
    families = [f"f{i // 4}" for i in range(len(OUTCOMES))]  # clusters of four tasks
    report = _report(OUTCOMES, families)
    u = report.uplift
    boot = u.bootstrap_ci
    assert u.headline == "bootstrap" and boot is not None
    assert (u.ci.low, u.ci.high, u.ci.method) == (boot.low, boot.high, boot.method)
    assert u.tango_ci is not None and (u.tango_ci.low, u.tango_ci.high) != (u.ci.low, u.ci.high)
    row = summary_data([report], ["cand"])["rows"][0]
    assert (row["uplift_ci"]["low"], row["uplift_ci"]["high"]) == (u.ci.low, u.ci.high)
    assert row["uplift_ci"]["method"] == u.ci.method


def test_the_list_names_each_method_once_and_holds_the_headline() -> None:
    for report in (_report(OUTCOMES), _report(OUTCOMES, runs=2)):
        u = report.uplift
        names = [iv.name for iv in u.intervals]
        assert len(names) == len(set(names)) and u.headline in names
        chosen = u.interval(u.headline)  # type: ignore[arg-type]
        assert chosen is not None and (chosen.low, chosen.high, chosen.method) == (u.ci.low, u.ci.high, u.ci.method)
    assert [iv.name for iv in _report(OUTCOMES).uplift.intervals] == ["tango", "tango_sparse", "newcombe", "bootstrap"]
    assert [iv.name for iv in _report(OUTCOMES, runs=2).uplift.intervals] == ["t", "betting", "bootstrap"]


def test_method_fields_are_read_from_the_list_not_stored() -> None:
    report = _report(OUTCOMES)
    dumped = report.uplift.model_dump()
    assert not {"tango_ci", "newcombe_ci", "t_ci", "bootstrap_ci"} & set(dumped)
    assert report.uplift.tango_ci == report.uplift.interval("tango")
    assert report.uplift.t_ci is None
    assert report.schema_version == 3
    assert "tango_ci" not in CategoryBreakdown.model_fields  # the interval names its method


def _iv(name: str, low: float, secondary: bool = False) -> NamedInterval:
    return NamedInterval(name=name, low=low, high=low + 0.1, confidence_level=0.95, method=name,
                         secondary=secondary)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(runs=st.integers(1, 4), families=st.booleans(),
       present=st.sets(st.sampled_from(["tango", "tango_sparse", "newcombe", "t", "betting"])))  # fmt: skip
def test_the_chooser_follows_the_documented_rule(runs: int, families: bool, present: set[str]) -> None:
    listed = [_iv(n, -0.1 * i) for i, n in enumerate(sorted(present))] + [_iv("bootstrap", 0.5, True)]
    chosen = choose_headline(listed, runs=runs, has_families=families)
    preferred = "bootstrap" if families else ("tango_sparse" if runs == 1 else "betting")
    assert chosen.name == (preferred if preferred in present or preferred == "bootstrap" else "bootstrap")


@pytest.fixture
def wald_registered() -> Iterator[None]:
    register_interval_method("wald", wald)  # the toy's one registration line
    yield
    INTERVAL_METHODS.pop("wald")


def test_a_toy_interval_method_reaches_the_report_and_its_renderers(wald_registered: None) -> None:
    report = _report(OUTCOMES)
    w = report.uplift.interval("wald")
    assert w is not None and report.uplift.headline == "tango_sparse"
    # Reference: the Wald interval of a paired difference, (c - b)/n +- z sqrt(b + c - (c - b)^2/n)/n.
    b, c, n = 6, 2, len(OUTCOMES)
    half = 1.959963984540054 * math.sqrt(b + c - (c - b) ** 2 / n) / n
    assert w.low == pytest.approx((c - b) / n - half, abs=1e-9)
    assert w.high == pytest.approx((c - b) / n + half, abs=1e-9)
    assert "toy Wald interval" in render(report, "markdown")
