"""Shared test set-up: ``tests/`` is on ``sys.path`` so every test folder can import the shared
fixtures (``report_fixtures``) and helpers (``helpers``); the longest tests start first."""

import compileall
import contextlib
from pathlib import Path

import pytest

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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``first`` run before the others (the order is otherwise unchanged).

    With one worker per core, a test lasting tens of seconds that is collected last (most of the
    longest live in ``tests/test_*.py``, collected after every folder) runs alone at the end while
    the other workers wait; started first, it runs beside the short ones. The mark goes on every
    test of five seconds or more on two workers (``--durations``), so that the end of the run is
    made of short tests only and a worker waits at most a few seconds for the other (the longest
    first, as in longest-processing-time scheduling).
    """
    items.sort(key=lambda item: item.get_closest_marker("first") is None)
