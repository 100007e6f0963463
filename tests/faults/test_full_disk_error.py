"""A run stopped by a full disk says so: the write that failed, then what failed after it.

When the store cannot write a trial (a full disk; here a real ``RLIMIT_FSIZE`` on a real
``ablation run`` process, with ``SIGXFSZ`` ignored so that SQLite gets ``EFBIG``), the run stops
and tries to mark its campaign interrupted, which fails on the same disk. Only that second
failure reached the user ("cannot set a campaign status: disk I/O error"), hiding the write that
stopped the run. The line now starts with the first error and names the later one after it.
"""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
from pathlib import Path

LIMIT = 150_000  # bytes a file of the run may reach: the store is created, the trials do not fit


def _capped() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def test_the_failed_write_comes_first(tmp_path: Path) -> None:
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"task_id": f"t{i}", "input_data": "x" * 200 + str(i),
                                         "expected_output": "x" * 200 + str(i)}) + "\n" for i in range(400)))  # fmt: skip
    (tmp_path / "agents.py").write_text("def baseline(x):\n    return x\n\n\ndef candidate(x):\n    return x\n")
    done = subprocess.run(
        [sys.executable, "-c", "from ablation.cli import main_entry; main_entry()", "run", str(suite),
         "--baseline", "agents.py:baseline", "--candidate", "agents.py:candidate", "--store", "s.db", "--no-progress"],
        capture_output=True, text=True, cwd=tmp_path, preexec_fn=_capped, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    store = tmp_path / "s.db"
    assert lines[0].startswith(f"ablation: error: run store {store}: cannot append trials: "), lines[0]
    assert f"; then StoreError: run store {store}: cannot set a campaign status: " in lines[0]
