"""``compare`` refuses BEFORE and AFTER that are the same rows (one file, read with the same
options): each trial would be paired with itself, every pair concordant, and the gates would pass
about nothing. The case users meet: an export holds both arms, and ``--where arm=candidate`` alone
filters BEFORE too (``--baseline-where`` picks BEFORE's rows).

The export is written by ``ablation report --export-jsonl`` of a real stored campaign; the
reference for the allowed comparison is ``ablation report``'s own JSON of that campaign.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from helpers.cli_shared import run_here

from ablation import AblationTask, CampaignConfig, run_ablation_campaign

REFUSED = "are the same rows (one file, filtered alike)"


def _export(tmp_path: Path) -> tuple[Path, dict[str, object]]:
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(20)]
    report = run_ablation_campaign(
        lambda x: x, lambda x: x if x % 4 else -1, tasks,
        config=CampaignConfig(n_resamples=200), store=tmp_path / "runs.db",
    )  # fmt: skip
    cid = str(report.provenance.campaign_id)
    export = tmp_path / "export.jsonl"
    done = run_here(["report", cid, "--store", str(tmp_path / "runs.db"), "--export-jsonl", str(export), "-q"])
    assert done.returncode in (0, 2), done.stderr
    return export, json.loads(report.model_dump_json())


def test_an_export_filtered_alike_on_both_sides_is_refused(tmp_path: Path) -> None:
    export, stored = _export(tmp_path)
    link = tmp_path / "link.jsonl"
    os.symlink(export, link)
    for after in (export, link):
        done = run_here(["compare", str(export), str(after), "--where", "arm=candidate", "-q"])
        assert (done.returncode, done.stdout) == (1, ""), done.stderr
        assert REFUSED in done.stderr and "--baseline-where" in done.stderr
        assert done.stderr.count("\n") == 1
    out = tmp_path / "compare.json"
    done = run_here(["compare", str(export), str(export), "--where", "arm=candidate",
                     "--baseline-where", "arm=baseline", "--format", "json", "-o", str(out)])  # fmt: skip
    assert done.returncode == 2, done.stderr  # five regressions: the gate fails, as in the report
    compared = json.loads(out.read_text())
    assert compared["table"] == stored["table"] and compared["regressions"] == stored["regressions"]


def test_a_plain_file_filtered_alike_is_refused_and_named_twice_is_compared(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"id": f"t{i}", "passed": i % 2 == 0, "split": "a"}) + "\n"
                            for i in range(10)))  # fmt: skip
    done = run_here(["compare", str(rows), str(rows), "--where", "split=a", "-q"])
    assert (done.returncode, done.stdout) == (1, "") and REFUSED in done.stderr
    # named twice with no filter: the A/A comparison the user typed
    assert run_here(["compare", str(rows), str(rows), "-q"]).returncode == 0
