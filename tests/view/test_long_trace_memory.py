"""A task whose every run carries a long trace: its task page and steps pages hold what they show
and one trial at a time, never every run's whole trace at once (tracemalloc's peak while the page
is built, against the size of the task's stored trials), and every figure they show is the whole
trace's: step counts, the first divergence, each step cut naming its full length. The steps a
page reads by range from the store are the ones the decoded trial holds, value for value.
"""

from __future__ import annotations

import re
import sqlite3
import tracemalloc
from pathlib import Path

import pytest

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.catalog import Catalog
from ablation.view.steps import steps_page
from ablation.view.task_page import task_page
from ablation.view.traces import step_text

RUNS, STEPS, SIZE, SPLIT = 3, 800, 2_100, 600


def _trace(arm: str, run: int) -> list[dict[str, object]]:
    return [{"k": k, "text": (f"{arm if k >= SPLIT else 'same'}{run}.{k} " * SIZE)[:SIZE]} for k in range(STEPS)]


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("long") / "runs.db"
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100, seed=3), suite_fingerprint="9" * 64,
            task_digests={"big": "d", "small": "d"}, baseline_agent="m:b", candidate_agent="m:c",
        )  # fmt: skip
        for arm in ("baseline", "candidate"):
            for run in range(RUNS):  # both arms pass: the report's drill-downs do not read the task
                store.append_many(cid, [
                    TaskResult(task_id="big", arm=arm, run=run, passed=True, output=arm, trace=_trace(arm, run)),
                    TaskResult(task_id="small", arm=arm, run=run, passed=True),
                ])  # fmt: skip
        store.set_status(cid, "complete")
    return path, cid


def _stored_bytes(path: Path) -> tuple[int, int]:
    """The largest and the summed length of the task's stored trial texts."""
    with sqlite3.connect(path) as conn:
        sizes = [r[0] for r in conn.execute("SELECT length(result_json) FROM trials WHERE task_id = 'big'")]
    return max(sizes), sum(sizes)


def _peak(build: object) -> tuple[str, int]:
    tracemalloc.start()
    try:
        page = build()  # type: ignore[operator]
        return page, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_task_page_holds_one_trial_at_a_time_and_shows_the_whole_traces_figures(stored: tuple[Path, str]) -> None:
    path, cid = stored
    largest, total = _stored_bytes(path)
    catalog = Catalog(path)
    catalog.report(cid), catalog.table(cid)  # cached, as after the campaign page
    page, peak = _peak(lambda: task_page(catalog, cid, "big"))
    # every run's whole trace decoded at once holds more than the stored texts (6 x 1.7 MB); one
    # trial decoded at a time (its text and its objects) and the page stay under 3.5 of them
    assert peak < 3.5 * largest < total, (peak, largest, total)
    assert f"first divergence at step {SPLIT}" in page and 'id="first-divergence"' in page
    assert re.search(rf"of {STEPS} \(baseline {STEPS}, candidate {STEPS}\)", page)
    assert page.count(f"20 of {STEPS} steps shown, {STEPS - 20} not shown") == 2 * RUNS
    assert page.count(f"All {STEPS} steps, page by page") == 2 * RUNS
    cuts = re.findall(r"\[truncated \d+ of (\d+) chars\]", page)  # each step cut, naming its length
    lengths = {str(len(step_text(s))) for arm in ("baseline", "candidate") for s in _trace(arm, 0)}
    assert len(cuts) == 2 * 100 + 2 * RUNS * 20 and set(cuts) <= lengths
    rows = [int(m) for m in re.findall(r"<tr(?: class=\"diverge\" id=\"[^\"]+\")?><td>(\d+)</td>", page)]
    assert rows == list(range(SPLIT - 20, SPLIT + 80))  # the window holding the divergence
    catalog.close()


def test_a_steps_page_reads_its_steps_alone(stored: tuple[Path, str]) -> None:
    path, cid = stored
    largest, total = _stored_bytes(path)
    catalog = Catalog(path)
    params = {"id": "big", "arm": "candidate", "run": "2", "field": "trace", "page": "4"}
    page, peak = _peak(lambda: steps_page(catalog, cid, params))
    # 200 steps of 2,100 characters read, written and laid out as a page of ~0.45 MB; not the
    # task's six trials (each 1.7 MB as text, more as objects)
    assert peak < 2 * largest < total, (peak, largest, total)
    assert f"Steps 600 to 799 of {STEPS} (page 4 of 4)" in page
    rows = [int(m) for m in re.findall(r'<tr class="step"><td>(\d+)</td>', page)]
    assert rows == list(range(600, 800)) and "candidate2.600 candidate2.600" in page and "2.599 " not in page
    catalog.close()


def test_steps_read_by_range_are_the_decoded_trials_values(tmp_path: Path) -> None:
    steps: list[object] = [
        0.1, 1e-7, 2.5e300, -0.0, 12345678901234567890123, 2**63, -(2**63) - 1, True, False, None, "", "é\n\t\"\\",
        "\u2028 \U0001f600", {"b": [1, {"c": None}], "a": 0.30000000000000004}, [], {}, [[[]]], 7,
    ]
    with RunStore(tmp_path / "runs.db") as store:
        cid = store.create_campaign(
            config=CampaignConfig(), suite_fingerprint="1" * 64, task_digests={"t": "d"},
            baseline_agent="a", candidate_agent="b",
        )  # fmt: skip
        store.append(cid, TaskResult(task_id="t", trace=steps))
        store.append(cid, TaskResult(task_id="t", run=1, trace=[]))
        store.append(cid, TaskResult(task_id="t", run=2))
        whole = store.trial(cid, "t", "baseline", 0)
        assert whole is not None and whole.trace is not None
        n = len(whole.trace)
        assert store.trace_length(cid, "t", "baseline", 0) == n
        assert [store.trace_length(cid, "t", "baseline", r) for r in (1, 2, 3)] == [0, None, None]
        for a, b in ((0, n), (3, 4), (n - 1, n), (5, 5)):
            got = store.trace_steps(cid, "t", "baseline", 0, a, b)
            assert repr(got) == repr(whole.trace[a:b])  # repr: -0.0 and 0.0, 1 and True differ
        assert store.task_runs(cid, "t") == [("baseline", 0), ("baseline", 1), ("baseline", 2)]
        assert store.trial(cid, "t", "candidate", 0) is None
