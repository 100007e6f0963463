"""Have the pyarrow engine read every file, however small (for tests that run a read both ways)."""

from __future__ import annotations

import pytest

from ablation.sources.readers import engine


def engine_reads_every_file(monkeypatch: pytest.MonkeyPatch, on: bool) -> None:
    """When ``on``: the engine vouches for files of any size (``MIN_BYTES`` 0); pyarrow must be
    installed. When not: nothing changes (small test files take the row path)."""
    if on:
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(engine, "MIN_BYTES", 0)
