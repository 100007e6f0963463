"""Shared test set-up: ``tests/`` is on ``sys.path`` so every test folder can import the shared
fixtures (``report_fixtures``) and helpers (``helpers``)."""
