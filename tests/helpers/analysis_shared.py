"""Shared by the analysis tests: commands and margin campaigns run in this process whose
collections skip the test process's own heap (:func:`helpers.cli_shared.own_heap`, which says
why)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import margin_campaign
from helpers.cli_shared import own_heap, run_here

__all__ = ["margin_run", "own_heap", "run_here"]


def margin_run(folder: Path, *extra: str) -> tuple[Path, dict[str, Any]]:
    """:func:`helpers.margin_campaign.run_campaign` inside :func:`own_heap`."""
    with own_heap():
        return margin_campaign.run_campaign(folder, *extra)
