"""The suite's own set-up (tests/conftest.py): rewritten test modules are cached, and the bytecode
flag is the user's again once collection is over."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve()


def test_this_module_was_cached_rewritten_and_the_flag_is_restored() -> None:
    tag = sys.implementation.cache_tag
    cached = list((HERE.parent / "__pycache__").glob(f"{HERE.stem}.{tag}-pytest-{pytest.__version__}.pyc"))
    assert cached, f"no assertion-rewritten cache of {HERE.name} (PYTHONDONTWRITEBYTECODE set?)"
    assert sys.dont_write_bytecode == bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
