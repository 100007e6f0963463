"""``ablation view`` served for a test: the real command in a subprocess, its URL read from the
first line it prints (``--no-browser --port 0``: a free port on 127.0.0.1)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def served(*args: str) -> Iterator[str]:
    """Run ``ablation view ARGS --no-browser --port 0``; yield its URL, stop it after."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ablation.cli import main_entry; main_entry()", "view",
         *args, "--no-browser", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()
        found = re.search(r"http://\S+/", line)
        if found is None:
            proc.kill()
            raise AssertionError(f"no URL from ablation view: {line!r} {proc.stderr.read()!r}")
        yield found.group(0).rstrip("/")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
