"""Shared by the analysis tests: a command run in this process whose collections skip the test
process's own heap.

``ablation run`` with a store ends with a full ``gc.collect()`` (once the trials are stored the
run's heap is garbage: :func:`ablation.cli.tuning.release_freed_memory`). Run in a test process
(:func:`helpers.cli.run_here`), that collection also walks every object the session holds, the
modules of every package the worker's tests imported among them (0.3 s and more a run in a full
test run), which the command's own process never holds. Inside :func:`own_heap` the objects that
existed before are frozen (:func:`gc.freeze`, as ``main_entry`` freezes before its exit), so the
collector skips them as it would in a fresh process; they are unfrozen after. What the command
made is collected as in its own process.
"""

from __future__ import annotations

import contextlib
import gc
import os
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from helpers import cli, margin_campaign

__all__ = ["margin_run", "own_heap", "run_here"]


@contextlib.contextmanager
def own_heap() -> Iterator[None]:
    """Freeze the objects that exist now for the block (left as they are if some are frozen)."""
    if gc.get_freeze_count():  # a caller froze objects: theirs to unfreeze
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def run_here(
    args: Sequence[str],
    env: Mapping[str, str | os.PathLike[str] | None] | None = None,
    *,
    cwd: Path = cli.REPO,
) -> subprocess.CompletedProcess[str]:
    """:func:`helpers.cli.run_here` inside :func:`own_heap`."""
    with own_heap():
        return cli.run_here(args, env, cwd=cwd)


def margin_run(folder: Path, *extra: str) -> tuple[Path, dict[str, Any]]:
    """:func:`helpers.margin_campaign.run_campaign` inside :func:`own_heap`."""
    with own_heap():
        return margin_campaign.run_campaign(folder, *extra)
