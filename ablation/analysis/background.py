"""Work on a second thread while the caller goes on: a large report's exact MDE, and the
statistics modules a campaign's report will import, loaded while its agents run.

numpy releases the GIL in its loops (the binomial tails' array arithmetic, sorts,
``searchsorted``), so the exact MDE and the rest of a large report overlap on two cores. Nothing
is shared but read-only inputs, so the numbers are the same as in one thread.

:func:`preload` imports modules on a daemon thread. Python's per-module import locks make a
module imported by two threads at once run once; the other thread waits for it (the modules
import each other without cycles, so neither waits for the other). A failed import is left for
the caller's own import to raise, with its traceback where it is used. A fork (an agent's
``multiprocessing`` pool, say) waits for the preloads to end (``os.register_at_fork``): a child
forked mid-import would hold a half-run module whose lock belongs to a thread it does not have,
and hang on its first use. ``subprocess`` (without ``preexec_fn``) starts its children without
the hook and is not held.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

__all__ = ["REPORT_STATISTICS", "import_report_statistics", "in_background", "preload"]

#: The modules a report calls that nothing imports before it: :mod:`ablation.stats` loads its
#: submodules on first use, and numpy its ``random`` package (the bootstrap's and the
#: Hodges-Lehmann selection's seeded generators); with categories and repeated runs also the
#: multiplicity and repeated-runs modules. ~20-30 ms on a first report.
REPORT_STATISTICS = (
    "ablation.stats.binary",
    "ablation.stats.bootstrap",
    "ablation.stats.continuous",
    "ablation.stats.multiplicity",
    "ablation.stats.paired_interval",
    "ablation.stats.repeated",
    "ablation.stats.task_means",
    "numpy.random",
)

#: What a report of at least :data:`LARGE` rows adds: its exact MDE's module, and scipy's
#: binomial tails, which the MDE's bulk tails use at that size.
LARGE_REPORT_STATISTICS = ("ablation.stats.power", "scipy.special")
LARGE = 100_000

T = TypeVar("T")


def import_report_statistics(n_rows: int) -> None:
    """Import the statistics a large report (``n_rows`` rows per arm, at least :data:`LARGE`)
    calls, now, on this thread.

    For a caller about to build its million-entry pairing: an import allocates thousands of
    objects, and each collection of the cyclic collector it triggers walks every container still
    young, such as a fresh list of a million task ids (~0.25 s at 1e6 pairs when these imports
    ran after the pairing). The modules are imported once per process either way.
    """
    if n_rows < LARGE:
        return  # a small report imports what it calls when it calls it (start-up counts)
    for name in (*REPORT_STATISTICS, *LARGE_REPORT_STATISTICS):
        if name not in sys.modules:
            __import__(name)  # the import statement's machinery: ``-X importtime`` lists it


@contextlib.contextmanager
def in_background(call: Callable[[], T], run: bool) -> Iterator[Callable[[], T]]:
    """Start ``call`` on a second thread (when ``run``, else not at all) and yield the getter of
    its result (``call`` itself when not ``run``).

    Leaving the block waits for the thread, also when the block raised; an exception of
    ``call`` is raised by the getter.
    """
    if not run:
        yield call
        return
    from concurrent.futures import ThreadPoolExecutor  # a thread pool only when it is used

    with ThreadPoolExecutor(1, thread_name_prefix="ablation-stats") as pool:
        yield pool.submit(call).result


_preloads: list[threading.Thread] = []


def _finish_preloads() -> None:
    """Before a fork: wait for the preloads still importing (see the module docstring)."""
    for thread in [*_preloads]:
        if thread is not threading.current_thread():  # a module that forks as it is imported
            thread.join(timeout=10)


os.register_at_fork(before=_finish_preloads)


def preload(modules: Sequence[str]) -> threading.Thread | None:
    """Import ``modules`` on a daemon thread, or do nothing when every one is loaded.

    Returns the thread (``None`` when none was started). For imports whose cost a caller can
    hide: a campaign starts it before its agents run, which leave the interpreter idle while
    they wait, so the report's first call does not pay for them.
    """
    missing = [m for m in modules if m not in sys.modules]
    if not missing:
        return None

    def load() -> None:
        try:
            for name in missing:
                with contextlib.suppress(Exception):  # the caller's own import raises it
                    importlib.import_module(name)
        finally:
            with contextlib.suppress(ValueError):
                _preloads.remove(thread)

    thread = threading.Thread(target=load, name="ablation-preload", daemon=True)
    _preloads.append(thread)
    thread.start()
    return thread
