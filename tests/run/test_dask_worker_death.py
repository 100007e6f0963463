"""Dask: a worker killed by a trial costs that trial only, and Dask's logs stay off stderr.

End to end through ``ablation run --dask-local 2``: the candidate ends its worker process
(``os._exit(3)``) on one task. That candidate trial is the campaign's only error
(never a baseline trial that shared the dying worker), and stderr holds nothing; with
``--verbose``, Dask's records appear as ``ablation.dask`` diagnostics (checked on the logging
bridge itself, without a cluster).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from helpers.cli import cli_env, run

pytest.importorskip("distributed")

_AGENTS = '''
import os
import time


def ok(x):
    time.sleep(0.02)
    return 3 * x["n"]


def killer(x):
    time.sleep(0.02)
    if x["n"] == 5:
        os._exit(3)
    return 3 * x["n"]
'''


@pytest.mark.first
@pytest.mark.slow
def test_a_dead_worker_is_charged_to_its_own_trial(tmp_path: Path) -> None:
    agents = tmp_path / "agents.py"
    agents.write_text(_AGENTS)
    proc = run(
        ["run", "tests/helpers/slow_suite.py", "--baseline", f"{agents}:ok", "--candidate",
         f"{agents}:killer", "--dask-local", "2", "--no-store", "--no-progress", "--format",
         "json", "--fail-fast", "0"],
        cli_env(SLOW_SUITE_TASKS="24"),
        timeout=180,
    )  # fmt: skip
    assert proc.returncode in (0, 2), proc.stderr
    report = json.loads(proc.stdout)
    groups = report["errors"]["groups"]
    assert [(g["arm"], g["error_type"], g["task_ids"]) for g in groups] == [
        ("candidate", "KilledWorker", ["t005"])
    ]
    assert report["baseline"]["errors"] == 0
    assert report["improvements"] == []
    assert proc.stderr == ""


@pytest.mark.parametrize("level", [logging.DEBUG, logging.WARNING])
def test_dask_records_are_ablation_debug_records(
    caplog: pytest.LogCaptureFixture, level: int
) -> None:
    from ablation.run.scaleout import _dask_logs_as_debug

    logging.getLogger("ablation").setLevel(level)
    try:
        with caplog.at_level(level, logger="ablation"), _dask_logs_as_debug():
            logging.getLogger("distributed.scheduler").error("Task x marked as failed")
    finally:
        logging.getLogger("ablation").setLevel(logging.NOTSET)
    seen = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    if level == logging.DEBUG:
        assert seen == [
            ("ablation.dask", logging.DEBUG, "distributed.scheduler: ERROR: Task x marked as failed")
        ]
    else:
        assert seen == []
