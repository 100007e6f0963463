"""Shared test set-up: ``tests/`` is on ``sys.path`` so every test folder can import the shared
fixtures (``report_fixtures``) and helpers (``helpers``); the longest tests start first."""

import pytest


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
