"""Shared by the command-line tests: :func:`helpers.cli.run_here` with the test process's own heap
frozen for the command.

``ablation run`` with a store ends with a full ``gc.collect()`` (once the trials are stored the
run's heap is garbage: :func:`ablation.cli.tuning.release_freed_memory`), and the collector runs
its full collections during any command. In a test worker (:func:`helpers.cli.run_here`) those
collections also walk every object the session holds, the modules of every package the worker's
tests imported among them (0.3 s and more a run late in a full test run), which the command's own
process never holds. Inside :func:`own_heap` the objects that existed before are frozen
(:func:`gc.freeze`, as ``main_entry`` freezes before its exit), so the collector skips them as it
would in a fresh process; they are unfrozen after. What the command makes is collected as in its
own process. Tests of the collector's or the memory hooks' own behaviour call
:func:`helpers.cli.run_here` itself.
"""

from __future__ import annotations

import contextlib
import gc
import os
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from helpers import cli

__all__ = ["own_heap", "run_here"]


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
