"""Shared test set-up: ``tests/`` is on ``sys.path`` so every test folder can import the shared
fixtures (``report_fixtures``) and helpers (``helpers``); the longest tests start first."""

import compileall
import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# A test run started in the background by a shell without job control (``cmd &`` in a script)
# inherits SIGINT ignored (POSIX), and Python then installs no KeyboardInterrupt handler: the tests
# that send Ctrl-C to the run, or to a command they start, need the default of a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """Compile the package and the test helpers once, before any test starts a subprocess.

    Hundreds of tests start the command line in a fresh interpreter. Where
    ``PYTHONDONTWRITEBYTECODE`` is set, no ``.pyc`` file is ever written, so each of those starts
    compiled every module it imports again (~0.1-0.2 s a start; a fresh clone's whole run, one
    each: 292 s before, 280 s after). ``compileall`` writes them regardless, into the
    ``__pycache__`` folders git ignores (as ``benchmarks/bench_scale.py`` does before it measures);
    a checkout that cannot be written is left as it is. Only the controller compiles, before the
    workers start.
    """
    if hasattr(config, "workerinput"):  # a pytest-xdist worker
        return
    for folder in (ROOT / "ablation", ROOT / "tests" / "helpers"):
        with contextlib.suppress(OSError):
            compileall.compile_dir(folder, quiet=2)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker per core this process may run on, plus one.

    In the end-to-end folders (faults, run, evaluate, agents, cli, view) a third of a test's time
    is spent waiting, not computing: on the command-line processes it starts, agents' sleeps and
    time-outs, signals, browsers, clusters. With one worker per core that time leaves a core
    idle; the extra worker fills it (two cores, the faults, cli, run and analysis folders: 143 s
    with two workers, 128 s with three; the computing folders gain little). ``--maxprocesses``
    (pyproject) still bounds the count, and ``PYTEST_XDIST_AUTO_NUM_WORKERS``, when set, is left
    to pytest-xdist. Assumes Linux's ``os.sched_getaffinity`` where it exists (the cores this
    process may use), else ``os.cpu_count``.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    """Keep the assertion-rewritten test modules in ``__pycache__`` even where bytecode is off.

    pytest caches a test module rewritten for its assertions only when ``sys.dont_write_bytecode``
    is false; where ``PYTHONDONTWRITEBYTECODE`` is set, every worker of every run rewrites every
    test module again (collection: ~14 against ~7 CPU-seconds a process, reading the cache).
    During collection alone the flag is lifted, so the rewritten modules are written once into
    the ``__pycache__`` folders git ignores, as :func:`pytest_configure` does for the package; a
    cache that cannot be written is skipped by pytest itself. Assumes pytest's rewriting hook
    reads the flag when it executes a module (``_pytest/assertion/rewrite.py``).
    """
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = before


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests of one ``xdist_group`` go to one worker; tests marked ``first`` run before the others.

    Groups: under ``--dist loadgroup`` pytest-xdist names a worker's test ``ID@GROUP`` and hands
    out one group whole. pytest-xdist 3.8 does so by setting ``item._nodeid``, which pytest 9.2
    does not read (an item's id lives in ``item._id``): left so, every group is split across the
    workers and each worker builds the group's module fixtures again (the examples' nine scripts
    run twice). Where the installed pair left the id unchanged, the suffix is added here, in the
    attribute this pytest reads; where pytest-xdist did it, nothing changes. Runs last, after
    pytest-xdist's own hook.

    With one worker per core, a test lasting tens of seconds that is collected last (most of the
    longest live in ``tests/test_*.py``, collected after every folder) runs alone at the end while
    the other workers wait; started first, it runs beside the short ones. The mark goes on every
    test of five seconds or more on two workers (``--durations``), so that the end of the run is
    made of short tests only and a worker waits at most a few seconds for the other (the longest
    first, as in longest-processing-time scheduling).
    """
    if getattr(config.option, "loadgroup", False):  # a pytest-xdist worker under loadgroup
        for item in items:
            _name_group(item)
    items.sort(key=lambda item: item.get_closest_marker("first") is None)


def _name_group(item: pytest.Item) -> None:
    """Give ``item`` the ``@GROUP`` suffix of its ``xdist_group`` marks if it lacks it.

    Assumes the id is ``item._id`` (a ``NodeId`` that parses the suffixed string back to the same
    string) where that attribute exists, else the older ``item._nodeid``.
    """
    names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                    for m in item.iter_markers("xdist_group")})  # fmt: skip
    suffix = "@" + "_".join(names)
    if not names or item.nodeid.endswith(suffix):
        return
    grouped = item.nodeid + suffix
    node_id = getattr(item, "_id", None)
    if node_id is not None and hasattr(type(node_id), "parse"):
        item._id = type(node_id).parse(grouped)  # type: ignore[attr-defined]
    else:
        item._nodeid = grouped  # type: ignore[attr-defined]
    assert item.nodeid == grouped, (item.nodeid, grouped)
