"""The compare page lists a comparison's regressions and improvements up to the viewer's one cap,
:data:`~ablation.view.markup.LIST_CAP` (the campaign page's, imported here from there), and says how many it did not
show; a list within the cap has no such note. So does its list of what the pairing left out.
"""

from __future__ import annotations

import re
from pathlib import Path

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.catalog import Catalog
from ablation.view.pages import LIST_CAP
from ablation.view.suite_pages import compare_page

SUITE = "c" * 64
REGRESSED = LIST_CAP + 37
IMPROVED = 3
#: Expected tasks with no trial: the pairing leaves each out, past the cap too.
MISSING = LIST_CAP + 5


def test_regressions_past_the_cap_are_counted_not_listed(tmp_path: Path) -> None:
    tasks = [f"r{i:04d}" for i in range(REGRESSED)] + [f"i{i}" for i in range(IMPROVED)]
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100), suite_fingerprint=SUITE,
            task_digests=dict.fromkeys(tasks + [f"m{i:04d}" for i in range(MISSING)], "d"), baseline_agent="base", candidate_agent="cand",
            campaign_id="c-cap",
        )  # fmt: skip
        store.append_many(cid, [
            TaskResult(task_id=t, arm=arm, passed=(arm == "baseline") == t.startswith("r"))
            for t in tasks for arm in ("baseline", "candidate")
        ])  # fmt: skip
        store.set_status(cid, "complete")
    catalog = Catalog(path)
    try:
        page = compare_page(catalog, {"baseline": "c-cap:baseline", "candidate": "c-cap:candidate"}).html
    finally:
        catalog.close()
    regressions = page[page.index('id="regressions"'):page.index("<h2>Improvements")]
    assert len(re.findall(r'class="task-id"', regressions)) == LIST_CAP
    assert f"and {REGRESSED - LIST_CAP} more not shown ({REGRESSED} in all)" in regressions
    improvements = page[page.index('id="improvements"'):page.index("<h2>Left out")]
    assert len(re.findall(r'class="task-id"', improvements)) == IMPROVED
    assert "more not shown" not in improvements
    # what the pairing left out: the first LIST_CAP, the rest counted; no command is named, as
    # ablation report lists a campaign's, not a comparison's
    left = page[page.index("<h2>Left out"):page.index("<h2>Provenance")]
    assert f"Left out of the pairing ({MISSING})" in left
    assert len(re.findall(r'class="task"', left)) == LIST_CAP
    assert f"and {MISSING - LIST_CAP} more not shown</p>" in left and "ablation report" not in left
