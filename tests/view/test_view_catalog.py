"""The viewer's catalog: a report is built once per campaign state and again when the campaign
changes (a trial appended by a writer, a status set), from a read-only open of the file; the
compare of a campaign's own two arms is that campaign's report."""

from __future__ import annotations

from pathlib import Path

import pytest

from ablation import CampaignConfig
from ablation.analysis.stored import report_stored_campaign
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.catalog import ArmRef, Catalog


def trial(i: int, arm: str) -> TaskResult:
    return TaskResult(task_id=f"t{i}", arm=arm, passed=(i % 3 != 0) or arm == "baseline")


def test_reports_follow_the_campaign_state(tmp_path: Path) -> None:
    writer = RunStore(tmp_path / "runs.db")
    cid = writer.create_campaign(
        config=CampaignConfig(n_resamples=100), suite_fingerprint="f",
        task_digests={f"t{i}": "d" for i in range(9)}, baseline_agent="a", candidate_agent="b",
    )  # fmt: skip
    writer.append_many(cid, [trial(i, arm) for i in range(6) for arm in ("baseline", "candidate")])
    catalog = Catalog(tmp_path / "runs.db")
    assert catalog.store.read_only
    first, _ = catalog.report(cid)
    assert catalog.report(cid)[0] is first  # cached
    assert first.regressions == ["t0", "t3"]
    writer.append_many(cid, [trial(i, arm) for i in range(6, 9) for arm in ("baseline", "candidate")])
    second, record = catalog.report(cid)
    assert second is not first and record.n_trials == 18
    assert second.regressions == ["t0", "t3", "t6"]
    with RunStore(tmp_path / "runs.db", read_only=True) as reader:
        expected = report_stored_campaign(reader, cid)[0]
    assert second.model_dump(exclude={"provenance"}) == expected.model_dump(exclude={"provenance"})
    both = catalog.compare(ArmRef.parse(f"{cid}:baseline"), ArmRef.parse(cid))
    assert both.regressions == expected.regressions and both.mcnemar == expected.mcnemar
    assert both.uplift == expected.uplift and both.verdict == expected.verdict
    writer.set_status(cid, "complete")
    assert catalog.report(cid)[0] is not second  # a status change is a new state
    table, _ = catalog.table(cid)
    assert [str(t) for t, o in zip(table.ids, table.outcome, strict=True) if o == 0] == ["t0", "t3", "t6"]
    catalog.close()
    writer.close()


def test_arm_refs() -> None:
    assert ArmRef.parse("c1:baseline") == ArmRef("c1", "baseline")
    assert ArmRef.parse(" c1:baseline\n") == ArmRef("c1", "baseline")  # pasted: white space around
    assert ArmRef.parse("\tc1 ") == ArmRef("c1", "candidate")
    assert ArmRef.parse("2026-x") == ArmRef("2026-x", "candidate")
    assert str(ArmRef.parse("a:b:baseline")) == "a:b:baseline"
    with pytest.raises(ValueError, match="unknown arm 'other'"):
        ArmRef.parse("c1:other")
