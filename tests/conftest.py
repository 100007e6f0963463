"""Shared test set-up: ``tests/`` is on ``sys.path`` so every test folder can import the shared
fixtures (``report_fixtures``) and helpers (``helpers``); the longest tests start first."""

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``first`` run before the others (the order is otherwise unchanged).

    With one worker per core, a test lasting tens of seconds that is collected last (most of the
    longest live in ``tests/test_*.py``, collected after every folder) runs alone at the end while
    the other workers wait; started first, it runs beside the short ones.
    """
    items.sort(key=lambda item: item.get_closest_marker("first") is None)
